/* prof_perfeval: --perfeval-cpus/--perfeval-pids, perf-prof's performance evaluation: how many of
 * the events sampled happened on those CPUs or threads, the cost the run adds to them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <perfscope/cpumap.h>

#include "clock.h"
#include "prof_internal.h"

/* One kind (CPUs or threads): the ids watched, their events since the last line. */
struct pe_kind {
	const char *list; /* as given */
	int ids[CLI_MAX_TASKS * 4];
	uint64_t hits[CLI_MAX_TASKS * 4];
	int nr;
	uint64_t sampled, matched;
};

struct prof_perfeval {
	struct pe_kind k[2]; /* cpus, tids */
	uint64_t since_ns;
};

int prof_perfeval__init(struct prof *p)
{
	struct prof_perfeval *pe;
	struct psc_cpumap *cpus = NULL;

	if (!p->opts.perfeval_cpus && !p->opts.nr_perfeval_pids)
		return 0;
	pe = calloc(1, sizeof(*pe));
	if (!pe)
		return -ENOMEM;
	if (p->opts.perfeval_cpus) {
		struct psc_parse_error err = { 0 };

		cpus = psc_cpumap__parse(p->opts.perfeval_cpus, &err);
		if (!cpus) {
			free(pe);
			return prof_usage(p, "--perfeval-cpus takes a CPU list (0-3,6), not '%s'",
					  p->opts.perfeval_cpus);
		}
		pe->k[0].list = p->opts.perfeval_cpus;
		for (int i = 0; i < psc_cpumap__nr(cpus) && pe->k[0].nr < CLI_MAX_TASKS * 4; i++)
			pe->k[0].ids[pe->k[0].nr++] = psc_cpumap__cpu(cpus, i);
		psc_cpumap__put(cpus);
	}
	pe->k[1].list = p->opts.perfeval_pids_text;
	for (int i = 0; i < p->opts.nr_perfeval_pids; i++)
		pe->k[1].ids[pe->k[1].nr++] = p->opts.perfeval_pids[i];
	pe->since_ns = mono_ns();
	p->state->perfeval = pe;
	return 0;
}

void prof_perfeval__sample(struct prof *p, int cpu, uint32_t tid)
{
	struct prof_perfeval *pe = p->state->perfeval;
	int id[2] = { cpu, (int)tid };

	for (int i = 0; i < 2; i++) {
		struct pe_kind *k = &pe->k[i];

		if (!k->list)
			continue;
		k->sampled++;
		for (int j = 0; j < k->nr; j++) {
			if (k->ids[j] == id[i]) {
				k->hits[j]++;
				k->matched++;
				break;
			}
		}
	}
}

/*
 * One line per kind: events per second sampled, those in the watched contexts, on how many of
 * them. With --sampling-limit, more per second and instance than it stops the run (perf-prof's
 * rule), naming each instance's count. 1 when it must stop.
 */
int prof_perfeval__report(struct prof *p, bool final)
{
	struct prof_perfeval *pe = p->state->perfeval;
	uint64_t now = mono_ns();
	double secs = (double)(now - pe->since_ns) / 1e9;
	int stop = 0;

	if (secs <= 0)
		secs = 1e-9;
	for (int i = 0; i < 2; i++) {
		struct pe_kind *k = &pe->k[i];
		int ins = 0;
		bool over;

		if (!k->list)
			continue;
		for (int j = 0; j < k->nr; j++)
			ins += k->hits[j] > 0;
		over = !final && p->opts.sampling_limit && ins &&
		       (double)k->matched / secs / ins > (double)p->opts.sampling_limit;
		fprintf(stderr,
			"perfscope %s: perfeval %s(%s)%s: sampled %.0f events/s, matched %.0f/s on %d "
			"instances (%llu of %llu events)%s\n",
			p->name, i ? "pids" : "cpus", k->list,
			!final ? "" : p->opts.interval_ms ? " (the last interval)" : " over the run",
			(double)k->sampled / secs, (double)k->matched / secs, ins,
			(unsigned long long)k->matched, (unsigned long long)k->sampled,
			over ? ", over --sampling-limit per instance: stopping" : "");
		for (int j = 0; j < k->nr; j++) {
			if (over && k->hits[j])
				fprintf(stderr, "perfscope %s: perfeval: %s %d sampled %llu events\n",
					p->name, i ? "tid" : "cpu", k->ids[j],
					(unsigned long long)k->hits[j]);
			k->hits[j] = 0;
		}
		k->sampled = k->matched = 0;
		stop |= over;
	}
	pe->since_ns = now;
	return stop;
}
