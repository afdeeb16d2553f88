/* ratecount: one event counted by the kernel (not sampled) per CPU or for a process, read as a sum.
 */
#include <errno.h>

#include "ratecount.h"

struct psc_evsel *ratecount__open(const struct psc_event_spec *spec, struct psc_cpumap *cpus,
				  struct psc_threadmap *threads)
{
	struct psc_evsel *evsel = psc_evsel__new_spec(spec);
	struct perf_event_attr *a;
	int err;

	if (!evsel)
		return NULL;
	/* a count is all a rate needs: no ring, no sample, no wake-up */
	a = psc_evsel__attr_mut(evsel);
	a->sample_period = 0;
	a->sample_freq = 0;
	a->freq = 0;
	a->disabled = 0;
	if (threads) {
		struct psc_cpumap *any = psc_cpumap__new_any();
		PSC_OPTS(psc_evsel_open_opts, oo, .inherit = true);

		err = psc_evsel__open(evsel, any, threads, &oo);
		psc_cpumap__put(any);
	} else {
		struct psc_threadmap *none = psc_threadmap__new_any();

		err = psc_evsel__open(evsel, cpus, none, NULL);
		psc_threadmap__put(none);
	}
	if (err) {
		psc_evsel__delete(evsel);
		errno = -err;
		return NULL;
	}
	return evsel;
}

uint64_t ratecount__read(struct psc_evsel *evsel, int cpu)
{
	struct psc_cpumap *cpus = psc_evsel__cpus(evsel);
	int nr_threads = psc_threadmap__nr(psc_evsel__threads(evsel));
	uint64_t total = 0;

	for (int ci = 0; ci < psc_cpumap__nr(cpus); ci++) {
		struct psc_counts cnt;

		if (cpu >= 0 && psc_cpumap__cpu(cpus, ci) != cpu)
			continue;
		for (int ti = 0; ti < nr_threads; ti++)
			if (!psc_evsel__read(evsel, ci, ti, &cnt))
				total += cnt.val;
	}
	return total;
}
