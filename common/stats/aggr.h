/* aggr: counters summed per unit of CPUs: the whole target, each CPU, each core or each socket. */
#ifndef PERFSCOPE_COMMON_AGGR_H
#define PERFSCOPE_COMMON_AGGR_H

#include <stdbool.h>

#include <perfscope/perfscope.h>

/* What one unit stands for. */
enum aggr_mode {
	AGGR_GLOBAL, /* one unit: every CPU */
	AGGR_CPU, /* one per CPU */
	AGGR_CORE, /* one per core (socket, die, core) */
	AGGR_SOCKET, /* one per socket */
};

struct aggr_unit {
	int cpu; /* AGGR_CPU */
	int socket, die, core; /* AGGR_CORE (all three), AGGR_SOCKET (socket) */
	int nr_cpus; /* CPUs counted in it */
};

/* The units of a CPU map, in perf stat's order (socket, die, core). Not thread-safe. */
struct aggr {
	enum aggr_mode mode;
	struct aggr_unit *units;
	int nr_units;
	int *unit_of; /* [CPU number]: its unit */
	int max_cpu;
};

/*
 * The units of cpus by mode; sysfs_root NULL is /sys (psc_cpu__topology). 0, -ENOMEM, or the -errno of
 * a CPU whose topology cannot be read (AGGR_CORE, AGGR_SOCKET), that CPU in *bad_cpu.
 */
int aggr__init(struct aggr *a, enum aggr_mode mode, struct psc_cpumap *cpus, const char *sysfs_root,
	       int *bad_cpu);
void aggr__exit(struct aggr *a);
/* The unit a count read on cpu adds to (0: AGGR_GLOBAL, or a CPU outside the map). */
int aggr__unit(const struct aggr *a, int cpu);
/* The unit of cpu, -1 when the map does not hold it (AGGR_GLOBAL: 0, every CPU counts). */
int aggr__find(const struct aggr *a, int cpu);
/* The CPU of an AGGR_CPU unit; -1 in the other modes (the unit spans several CPUs). */
int aggr__unit_cpu(const struct aggr *a, int unit);
/* Whether a counter open on cpus counts in unit (a PMU's events exist on some CPUs only). */
bool aggr__covers(const struct aggr *a, struct psc_cpumap *cpus, int unit);
/*
 * The counts evsel holds (read by psc_evlist__read), each CPU's summed over its threads into
 * sum[its unit]: sum has nr_units entries, added to. A closed evsel adds nothing.
 */
void aggr__add_counts(const struct aggr *a, struct psc_evsel *evsel, struct psc_counts *sum);

#endif
