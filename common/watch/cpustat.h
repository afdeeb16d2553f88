/* cpustat: per-CPU and per-process time shares (user, sys, busy, iowait) from /proc, cheaply. */
#ifndef PERFSCOPE_COMMON_CPUSTAT_H
#define PERFSCOPE_COMMON_CPUSTAT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What a condition can be about, as shares of the time between two readings, in percent. */
enum cpustat_kind {
	CPUSTAT_USER, /* user + nice */
	CPUSTAT_SYS, /* system (as top's %sy: interrupts are not in it) */
	CPUSTAT_BUSY, /* everything but idle and iowait */
	CPUSTAT_IOWAIT,
	CPUSTAT_NR,
};

/* One CPU's (or the machine's) clock ticks since boot, as /proc/stat counts them. */
struct cpustat_ticks {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
	bool seen; /* the CPU had a line in the last reading (offline CPUs have none) */
};

/*
 * Keeps /proc/stat open: each reading is one pread of the file (a few microseconds on small
 * machines), no open/close. cpus[] is indexed by CPU number, total is the "cpu " line.
 * Not thread-safe.
 */
struct cpustat {
	int fd;
	int nr_cpus; /* entries of cpus[]: possible CPUs */
	struct cpustat_ticks *cpus, *prev;
	struct cpustat_ticks total, prev_total;
	char *buf;
	size_t buf_len;
};

/* 0 or -errno. */
int cpustat__init(struct cpustat *cs, int nr_cpus);
void cpustat__exit(struct cpustat *cs);
/* Reads the counters now; the previous reading becomes the base of the shares. 0 or -errno. */
int cpustat__read(struct cpustat *cs);
/*
 * The share of kind in the time between the last two readings of cpu (-1: the machine), in
 * percent (0..100), or a negative value when there is nothing to compare (first reading, CPU
 * offline, no tick elapsed).
 */
double cpustat__share(const struct cpustat *cs, int cpu, enum cpustat_kind kind);
/* Parses /proc/stat text (for tests). Lines of CPUs >= nr_cpus are ignored. */
void cpustat__parse(struct cpustat *cs, const char *text);
/* "user", "sys", "cpu", "iowait": the option names. */
const char *cpustat__kind_name(enum cpustat_kind kind);

/*
 * A process's user and system time in clock ticks (utime, stime of /proc/PID/stat: every
 * thread, alive or exited, not its children). 0 or -errno (-ESRCH: gone).
 */
int cpustat__task(pid_t pid, uint64_t *user, uint64_t *sys);

/* A process's shares between two readings: its previous times, kept by cpustat__task_shares. */
struct cpustat_task {
	pid_t pid;
	long clk_tck; /* sysconf(_SC_CLK_TCK): /proc/PID/stat counts in these */
	uint64_t user, sys;
};

/* Watches pid (its clock tick read once, here). */
void cpustat__task_init(struct cpustat_task *ct, pid_t pid);
/*
 * Reads pid's times now and sets share[CPUSTAT_NR] to its user, sys and busy shares over the dt_s
 * seconds since the previous reading, in percent of one CPU (a process with threads on several
 * may go over 100); -1 where unknown: iowait always, everything on the first reading (first) or
 * when the process is gone.
 */
void cpustat__task_shares(struct cpustat_task *ct, bool first, double dt_s, double *share);

#endif
