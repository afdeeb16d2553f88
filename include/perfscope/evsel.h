/* libperfscope: one event (an attr) opened over cpus x threads, its fds, ids and counts. Not
 * thread-safe. */
#ifndef PERFSCOPE_EVSEL_H
#define PERFSCOPE_EVSEL_H

#include <stdbool.h>
#include <linux/perf_event.h>
#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct psc_evsel;
struct psc_cpumap;
struct psc_threadmap;
struct psc_event_spec;

/*
 * One reading: raw value, time the event was enabled/running (ns), its kernel id, and, when the
 * read_format has PERF_FORMAT_LOST (Linux 6.0+, which a sampling session adds), the records the
 * kernel dropped from this fd's ring buffer.
 */
struct psc_counts {
	uint64_t val;
	uint64_t ena;
	uint64_t run;
	uint64_t id;
	uint64_t lost;
};

/*
 * The value a counter would have reached had it run all the time it was enabled (perf's
 * multiplexing scaling, val * ena / run). 0 when it never ran.
 */
PSC_API double psc_counts__scaled(const struct psc_counts *c);
/* Percentage of enabled time the counter was on the PMU (100 when not multiplexed). */
PSC_API double psc_counts__running_pct(const struct psc_counts *c);

/*
 * Can this machine open attr? Opens it on the calling thread (any CPU) and closes it at once.
 * Returns 0 or the -errno perf_event_open gave; psc_strerror_open() explains it.
 */
PSC_API int psc_attr__probe(const struct perf_event_attr *attr);

/* attr is copied; read_format gets TOTAL_TIME_ENABLED|RUNNING|ID added. name may be NULL. */
PSC_API struct psc_evsel *psc_evsel__new(const struct perf_event_attr *attr, const char *name);
/* Builds from a parsed spec: attr, name (or alias), filter, scale and unit. */
PSC_API struct psc_evsel *psc_evsel__new_spec(const struct psc_event_spec *spec);
/* Closes what is open. NULL is a no-op. */
PSC_API void psc_evsel__delete(struct psc_evsel *evsel);

/* Makes evsel a member of leader's group (before opening). A leader is its own leader. */
PSC_API int psc_evsel__set_leader(struct psc_evsel *evsel, struct psc_evsel *leader);
PSC_API struct psc_evsel *psc_evsel__leader(const struct psc_evsel *evsel);
PSC_API bool psc_evsel__is_leader(const struct psc_evsel *evsel);

struct psc_evsel_open_opts {
	size_t sz;
	int cgroup_fd; /* > 0: count only tasks of this cgroup (needs per-CPU maps) */
	bool inherit; /* follow children created after open */
	bool enable_on_exec;
};
/* The last field of psc_evsel_open_opts; a newer caller's bytes after it must be 0 (PSC_OPTS). */
#define psc_evsel_open_opts__last_field enable_on_exec
/*
 * Opens one fd per cpu x thread. Members open after their leader, with the leader's fd on the
 * same cpu/thread as group_fd. A thread of the map that has exited since the map was read leaves
 * its slots closed (psc_evsel__fd gives -1, its counts stay 0); -ESRCH when every thread is gone.
 * A failure closes everything this call opened and returns -errno.
 */
PSC_API int psc_evsel__open(struct psc_evsel *evsel, struct psc_cpumap *cpus,
			    struct psc_threadmap *threads, const struct psc_evsel_open_opts *opts);
PSC_API void psc_evsel__close(struct psc_evsel *evsel);

PSC_API int psc_evsel__enable(struct psc_evsel *evsel);
PSC_API int psc_evsel__disable(struct psc_evsel *evsel);
PSC_API int psc_evsel__reset(struct psc_evsel *evsel);
/*
 * Enables or disables the fds of one CPU (cpu_idx in the evsel's cpu map; every thread there),
 * as libperf's perf_evsel__enable_cpu: a tool watching one CPU at a time (a trigger) switches
 * the others off without closing them. -EINVAL for a cpu_idx outside the map, -EBADF when not
 * open.
 */
PSC_API int psc_evsel__enable_cpu(struct psc_evsel *evsel, int cpu_idx);
PSC_API int psc_evsel__disable_cpu(struct psc_evsel *evsel, int cpu_idx);
/* Kernel ftrace filter on every fd (tracepoints only); -EINVAL when the kernel rejects it. */
PSC_API int psc_evsel__apply_filter(struct psc_evsel *evsel, const char *filter);

/* One read(2) of this evsel's fd at (cpu_idx, thread_idx); -EBADF when that slot is closed. */
PSC_API int psc_evsel__read(struct psc_evsel *evsel, int cpu_idx, int thread_idx,
			    struct psc_counts *out);
/*
 * A leader with PERF_FORMAT_GROUP: one read(2) fills the counts of every member at
 * (cpu_idx, thread_idx); fetch them with psc_evsel__counts(). An inherited group (opened with
 * inherit, without PERF_FORMAT_GROUP) is read one fd per member. Plain evsels: same as read.
 */
PSC_API int psc_evsel__read_group(struct psc_evsel *leader, int cpu_idx, int thread_idx);
/* The last value read at (cpu_idx, thread_idx), or summed over all of them with -1, -1. */
PSC_API int psc_evsel__counts(const struct psc_evsel *evsel, int cpu_idx, int thread_idx,
			      struct psc_counts *out);

PSC_API const char *psc_evsel__name(const struct psc_evsel *evsel);
PSC_API const struct perf_event_attr *psc_evsel__attr(const struct psc_evsel *evsel);
/* Changeable until open, for profilers that add sample bits. */
PSC_API struct perf_event_attr *psc_evsel__attr_mut(struct psc_evsel *evsel);
PSC_API int psc_evsel__fd(const struct psc_evsel *evsel, int cpu_idx, int thread_idx);
/* Kernel id of the fd at (cpu_idx, thread_idx) (PERF_EVENT_IOC_ID), 0 when not open. */
PSC_API uint64_t psc_evsel__id(const struct psc_evsel *evsel, int cpu_idx, int thread_idx);
PSC_API struct psc_cpumap *psc_evsel__cpus(const struct psc_evsel *evsel);
/*
 * The CPUs its spec's cpus=LIST names (psc_evsel__new_spec), NULL when none: psc_evlist__open
 * opens it on those of the evlist's CPUs only (on those CPUs when the evlist follows threads on
 * any CPU). No reference taken.
 */
PSC_API struct psc_cpumap *psc_evsel__own_cpus(const struct psc_evsel *evsel);
PSC_API struct psc_threadmap *psc_evsel__threads(const struct psc_evsel *evsel);
PSC_API bool psc_evsel__is_open(const struct psc_evsel *evsel);
/* Sysfs scale and unit of PMU events (1.0 and NULL otherwise). */
PSC_API double psc_evsel__scale(const struct psc_evsel *evsel);
PSC_API const char *psc_evsel__unit(const struct psc_evsel *evsel);

/* When an open with skip_unsupported failed for this evsel: its errno (positive), else 0. */
PSC_API int psc_evsel__open_errno(const struct psc_evsel *evsel);
PSC_API void psc_evsel__set_priv(struct psc_evsel *evsel, void *priv);
PSC_API void *psc_evsel__priv(const struct psc_evsel *evsel);
/* Its position in the evlist it was added to (psc_evlist__at), -1 when in none. */
PSC_API int psc_evsel__idx(const struct psc_evsel *evsel);

#ifdef __cplusplus
}
#endif
#endif
