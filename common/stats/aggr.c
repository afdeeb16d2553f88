/* Counters summed per unit of CPUs (aggr.h): the units from the CPUs' topology (the library's
 * psc_cpu__topology), the sums. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aggr.h"

static int cmp_unit(const void *a, const void *b)
{
	const struct aggr_unit *x = a, *y = b;

	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (x->die != y->die)
		return x->die < y->die ? -1 : 1;
	return x->core < y->core ? -1 : x->core > y->core;
}

/* The unit of a CPU at t among the units so far (core: socket, die, core; socket: socket) */
static int find_unit(const struct aggr *a, const struct psc_cpu_topology *t)
{
	for (int k = 0; k < a->nr_units; k++) {
		const struct aggr_unit *u = &a->units[k];

		if (u->socket == t->socket &&
		    (a->mode == AGGR_SOCKET || (u->die == t->die && u->core == t->core)))
			return k;
	}
	return -1;
}

/* AGGR_CORE, AGGR_SOCKET: a unit per place topo[] names, in perf's order, each CPU to its own. */
static int by_topology(struct aggr *a, struct psc_cpumap *cpus, struct psc_cpu_topology *topo,
		       const char *root, int *bad_cpu)
{
	int n = psc_cpumap__nr(cpus);

	for (int i = 0; i < n; i++) {
		int cpu = psc_cpumap__cpu(cpus, i), err;

		topo[i].sz = sizeof(topo[i]);
		err = psc_cpu__topology(cpu, root, &topo[i]);
		if (err) {
			*bad_cpu = cpu;
			return err;
		}
		if (find_unit(a, &topo[i]) < 0)
			a->units[a->nr_units++] = (struct aggr_unit){
				.cpu = -1,
				.socket = topo[i].socket,
				.die = a->mode == AGGR_CORE ? topo[i].die : 0,
				.core = a->mode == AGGR_CORE ? topo[i].core : 0,
			};
	}
	qsort(a->units, (size_t)a->nr_units, sizeof(*a->units), cmp_unit);
	for (int i = 0; i < n; i++) {
		int k = find_unit(a, &topo[i]);

		a->unit_of[psc_cpumap__cpu(cpus, i)] = k;
		a->units[k].nr_cpus++;
	}
	return 0;
}

int aggr__init(struct aggr *a, enum aggr_mode mode, struct psc_cpumap *cpus, const char *sysfs_root,
	       int *bad_cpu)
{
	int n = psc_cpumap__nr(cpus), err = 0;
	struct psc_cpu_topology *topo = NULL;

	memset(a, 0, sizeof(*a));
	a->mode = mode;
	for (int i = 0; i < n; i++)
		if (psc_cpumap__cpu(cpus, i) > a->max_cpu)
			a->max_cpu = psc_cpumap__cpu(cpus, i);
	a->unit_of = calloc((size_t)a->max_cpu + 1, sizeof(*a->unit_of));
	a->units = calloc((size_t)n, sizeof(*a->units));
	if (mode == AGGR_CORE || mode == AGGR_SOCKET)
		topo = calloc((size_t)n, sizeof(*topo));
	if (!a->unit_of || !a->units || ((mode == AGGR_CORE || mode == AGGR_SOCKET) && !topo)) {
		free(topo);
		return -ENOMEM;
	}
	/* a CPU number the map does not hold is in no unit (aggr__find says so) */
	for (int cpu = 0; cpu <= a->max_cpu; cpu++)
		a->unit_of[cpu] = -1;
	switch (mode) {
	case AGGR_GLOBAL:
		a->nr_units = 1;
		a->units[0].nr_cpus = n;
		break;
	case AGGR_CPU:
		for (int i = 0; i < n; i++) {
			int cpu = psc_cpumap__cpu(cpus, i);

			a->units[i] = (struct aggr_unit){ .cpu = cpu, .nr_cpus = 1 };
			if (cpu >= 0) /* "any CPU" (-1): a unit no CPU number finds */
				a->unit_of[cpu] = i;
		}
		a->nr_units = n;
		break;
	case AGGR_CORE:
	case AGGR_SOCKET:
		err = by_topology(a, cpus, topo, sysfs_root, bad_cpu);
		break;
	}
	free(topo);
	return err;
}

void aggr__exit(struct aggr *a)
{
	free(a->units);
	free(a->unit_of);
	a->units = NULL;
	a->unit_of = NULL;
	a->nr_units = 0;
}

int aggr__find(const struct aggr *a, int cpu)
{
	if (a->mode == AGGR_GLOBAL)
		return 0;
	if (cpu < 0 || cpu > a->max_cpu)
		return -1;
	return a->unit_of[cpu];
}

int aggr__unit(const struct aggr *a, int cpu)
{
	int u = aggr__find(a, cpu);

	return u < 0 ? 0 : u;
}

int aggr__unit_cpu(const struct aggr *a, int unit)
{
	return a->mode == AGGR_CPU ? a->units[unit].cpu : -1;
}

bool aggr__covers(const struct aggr *a, struct psc_cpumap *cpus, int unit)
{
	if (a->mode == AGGR_GLOBAL)
		return true;
	for (int ci = 0; ci < psc_cpumap__nr(cpus); ci++) {
		int cpu = psc_cpumap__cpu(cpus, ci);

		if (cpu < 0 || cpu > a->max_cpu || aggr__unit(a, cpu) == unit)
			return true;
	}
	return false;
}

void aggr__add_counts(const struct aggr *a, struct psc_evsel *evsel, struct psc_counts *sum)
{
	struct psc_cpumap *cpus;
	int nc, nt;

	if (!psc_evsel__is_open(evsel))
		return;
	cpus = psc_evsel__cpus(evsel);
	nc = psc_cpumap__nr(cpus);
	nt = psc_threadmap__nr(psc_evsel__threads(evsel));
	for (int ci = 0; ci < nc; ci++) {
		struct psc_counts *c = &sum[aggr__unit(a, psc_cpumap__cpu(cpus, ci))];

		for (int th = 0; th < nt; th++) {
			struct psc_counts t;

			if (psc_evsel__counts(evsel, ci, th, &t))
				continue; /* a slot it was not opened on */
			c->val += t.val;
			c->ena += t.ena;
			c->run += t.run;
		}
	}
}
