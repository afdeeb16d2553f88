/* Example: system-wide counting on every online CPU, one counter per CPU, printed per CPU each
 * second. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

int main(int argc, char **argv)
{
	const char *events = "context-switches,cpu-migrations,cpu-clock";
	int seconds = argc > 1 ? atoi(argv[1]) : 1;
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs = NULL;
	struct psc_evlist *evlist = NULL;
	struct psc_cpumap *cpus = NULL;
	struct psc_threadmap *threads = NULL;
	struct psc_evsel *evsel;
	int err, i, ret = 1;

	if (seconds < 1) {
		fprintf(stderr,
			"usage: per_cpu [SECONDS]  (a whole number of seconds, at least 1)\n");
		return 2;
	}
	if (psc_parse_events(events, NULL, &specs, &perr)) {
		fprintf(stderr, "per_cpu: %s\n", perr.msg);
		return 1;
	}
	/*
	 * System-wide: every online CPU, and the "any thread" map (tid -1). Each event gets one
	 * fd per CPU, so the counts can be read per CPU. Needs root or CAP_PERFMON (or
	 * perf_event_paranoid <= 0).
	 */
	evlist = psc_evlist__new();
	cpus = psc_cpumap__new_online();
	threads = psc_threadmap__new_any();
	if (!evlist || !cpus || !threads || psc_evlist__add_specs(evlist, specs, false) ||
	    psc_evlist__set_maps(evlist, cpus, threads)) {
		fprintf(stderr, "per_cpu: cannot set up the counters: %s\n", strerror(errno));
		goto out;
	}
	err = psc_evlist__open(evlist, NULL);
	if (err) {
		char msg[512];

		fprintf(stderr, "per_cpu: %s\n", psc_strerror_open(err, events, msg, sizeof(msg)));
		goto out;
	}

	for (int s = 1; s <= seconds; s++) {
		/* reset + enable + sleep + disable: each second is counted from zero */
		if ((err = psc_evlist__reset(evlist)) || (err = psc_evlist__enable(evlist)))
			goto fail;
		sleep(1);
		if ((err = psc_evlist__disable(evlist)) || (err = psc_evlist__read(evlist)))
			goto fail;
		printf("second %d:\n", s);
		for (int c = 0; c < psc_cpumap__nr(cpus); c++) {
			printf("  CPU%-3d", psc_cpumap__cpu(cpus, c));
			psc_evlist__for_each(evlist, i, evsel)
			{
				struct psc_counts counts;

				/*
				 * (cpu index, thread index): thread index 0 is the "any thread"
				 * slot. cpu-clock counts nanoseconds, the others events.
				 */
				psc_evsel__counts(evsel, c, 0, &counts);
				printf("  %s=%.0f", psc_evsel__name(evsel),
				       psc_counts__scaled(&counts));
			}
			printf("\n");
		}
	}
	ret = 0;
	goto out;
fail:
	fprintf(stderr, "per_cpu: the counters failed: %s\n", strerror(-err));
out:
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	psc_event_list__delete(specs);
	return ret;
}
