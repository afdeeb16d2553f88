/* libperfscope: CPU maps, the list of CPUs an event is opened on. Refcounted; not thread-safe. */
#ifndef PERFSCOPE_CPUMAP_H
#define PERFSCOPE_CPUMAP_H

#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct psc_cpumap;

/* The CPUs online now (/sys/devices/system/cpu/online). */
PSC_API struct psc_cpumap *psc_cpumap__new_online(void);
/* One entry, cpu -1: "any CPU", used when following threads. */
PSC_API struct psc_cpumap *psc_cpumap__new_any(void);
/*
 * Parses "0-3,6,8-10" (perf's -C syntax; also "0-7:2" strides as node_exporter accepts).
 * Strict: ranges must go up, CPUs must exist and be online, no duplicates, no empty items.
 * NULL + errno=EINVAL and *err filled on bad input.
 */
PSC_API struct psc_cpumap *psc_cpumap__parse(const char *list, struct psc_parse_error *err);
/* Parse without checking the CPUs against this machine (syntax only); for tests and tools. */
PSC_API struct psc_cpumap *psc_cpumap__parse_syntax(const char *list, struct psc_parse_error *err);
PSC_API struct psc_cpumap *psc_cpumap__get(struct psc_cpumap *map);
PSC_API void psc_cpumap__put(struct psc_cpumap *map);
PSC_API int psc_cpumap__nr(const struct psc_cpumap *map);
PSC_API int psc_cpumap__cpu(const struct psc_cpumap *map, int idx);
/* Index of cpu in map, or -1. */
PSC_API int psc_cpumap__idx(const struct psc_cpumap *map, int cpu);
/*
 * The CPUs the PMU named pmu (its sysfs name: "power", "uncore_imc_0", "cpu_core") counts on,
 * from its cpumask or cpus file: RAPL and uncore counters exist once per package, so they are
 * read on one CPU of each. NULL + errno ENOENT when the PMU names none (every CPU counts).
 * psc_evlist__open uses it for system-wide events.
 */
PSC_API struct psc_cpumap *psc_cpumap__new_pmu(const char *pmu);
/* Highest CPU number that can ever be online (/sys/devices/system/cpu/possible) + 1. */
PSC_API int psc_cpu__nr_possible(void);

/*
 * Where a CPU sits, for counts per core or socket (perf stat --per-core, --per-socket). Declare
 * it with PSC_OPTS(psc_cpu_topology, t): the library fills the fields sz covers, so a program
 * built against an older header gets what it knows, and fields are only added at the end.
 */
struct psc_cpu_topology {
	size_t sz;
	int socket; /* physical_package_id; 0 where the firmware says -1, as perf shows it */
	int die; /* die_id; 0 before Linux 5.2, which has none */
	int core; /* core_id: unique within its socket and die, not across them */
};
#define psc_cpu_topology__last_field core

/*
 * Reads the topology of cpu from <sysfs_root>/devices/system/cpu/cpu<cpu>/topology (sysfs_root
 * NULL: /sys; another root reads a copy of that tree, a container's or a test's). Thread-safe.
 * 0, or -errno: -ENOENT the CPU has no topology there (offline or absent), -EINVAL a bad cpu,
 * topo or sz, or a file that holds no number; *topo is then unchanged.
 */
PSC_API int psc_cpu__topology(int cpu, const char *sysfs_root, struct psc_cpu_topology *topo);

#ifdef __cplusplus
}
#endif
#endif
