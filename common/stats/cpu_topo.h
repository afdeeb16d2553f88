/* cpu_topo: where a CPU sits (socket, die, core), from sysfs, for counts per core or socket. */
#ifndef PERFSCOPE_COMMON_CPU_TOPO_H
#define PERFSCOPE_COMMON_CPU_TOPO_H

struct cpu_topo {
	int socket; /* physical_package_id */
	int die; /* die_id; 0 before Linux 5.2, which has none */
	int core; /* core_id: unique within its socket and die, not across them */
};

/*
 * Reads <root>/devices/system/cpu/cpu<cpu>/topology (root NULL: /sys). 0, or -errno when the CPU
 * has no topology there (-ENOENT: offline or absent).
 */
int cpu_topo__read(const char *root, int cpu, struct cpu_topo *t);

#endif
