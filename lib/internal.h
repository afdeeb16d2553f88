/* libperfscope internals shared by lib/ sources only: object layouts, logging, option checks. */
#ifndef PERFSCOPE_INTERNAL_H
#define PERFSCOPE_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

/* Logging through the user's callback (psc_set_log); never printf. */
void psc_log(enum psc_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define pr_warn(fmt, ...) psc_log(PSC_LOG_WARN, "libperfscope: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) psc_log(PSC_LOG_INFO, "libperfscope: " fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) psc_log(PSC_LOG_DEBUG, "libperfscope: " fmt, ##__VA_ARGS__)

/*
 * Option structs (libbpf's OPTS_VALID/OPTS_GET): a caller built against an older header passes a
 * smaller sz and gets defaults past it; a newer caller may pass a larger one only if every byte
 * after the end of our last field (<type>__last_field, not sizeof: tail padding could hold a
 * later field) is zero. psc_opts_valid logs why it refused; callers then fail with EINVAL.
 */
#define offsetofend(TYPE, FIELD) (offsetof(TYPE, FIELD) + sizeof(((TYPE *)0)->FIELD))
bool psc_opts_valid(const void *opts, size_t known_sz, const char *type_name);
#define OPTS_VALID(opts, type) \
	(!(opts) || psc_opts_valid(opts, offsetofend(struct type, type##__last_field), #type))
#define OPTS_HAS(opts, field) ((opts) && (opts)->sz >= offsetofend(__typeof__(*(opts)), field))
#define OPTS_GET(opts, field, fallback) (OPTS_HAS(opts, field) ? (opts)->field : (fallback))

/* Set errno from a negative return and pass it through: `return psc_err_ptr(-ENOMEM);` style. */
static inline void *psc_errno_null(int err)
{
	errno = err < 0 ? -err : err;
	return NULL;
}

/* perf_event_open(2); psc_ like every global of the library, even hidden ones (the static archive
 * exposes them all to the program it is linked into). */
int psc_sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags);

struct psc_cpumap {
	int refcnt;
	int nr;
	int cpus[];
};

/* A sysfs CPU list file ("0-3,8"), NULL when missing or empty. */
struct psc_cpumap *psc_cpumap__read_sysfs(const char *path);
/* The CPUs of a in b, in a's order (may be empty). NULL on ENOMEM. */
struct psc_cpumap *psc_cpumap__intersect(const struct psc_cpumap *a, const struct psc_cpumap *b);
/* The CPUs the PMU with this attr.type counts on (pmu_cpus.c), NULL when it names none. */
struct psc_cpumap *psc_pmu__cpus_of_type(uint32_t type);

struct psc_threadmap {
	int refcnt;
	int nr;
	pid_t tids[];
};

struct psc_evsel {
	struct perf_event_attr attr;
	char *name;
	char *filter;
	char *unit;
	double scale;
	struct psc_evsel *leader;
	struct psc_evsel **members; /* leaders of groups: every member, itself first */
	int nr_members; /* leaders: members including itself */
	struct psc_cpumap *cpus;
	struct psc_threadmap *threads;
	struct psc_cpumap *own_cpus; /* cpus=LIST: opened only on these (of the evlist's) */
	int *fds; /* [cpu_idx * nr_threads + thread_idx], -1 when closed */
	uint64_t *ids;
	struct psc_counts *counts;
	int open_errno;
	void *priv;
	int evlist_idx;
	uint64_t lost; /* events lost, from LOST / LOST_SAMPLES records (evlist_mmap.c) */
	int *bpf; /* per slot: a bpf_link fd, or -1 none, -2 attached by ioctl (bpf.c) */
};

#define EVSEL_SLOT(evsel, cpu_idx, thread_idx) \
	((cpu_idx)*psc_threadmap__nr((evsel)->threads) + (thread_idx))
/* ioctl(req, arg) on every open fd of evsel; -errno of the first failure. */
int psc_evsel__ioctl_all(struct psc_evsel *evsel, unsigned long req, unsigned long arg);
/* Closes the BPF links of evsel (bpf.c); before its fds, which a link would keep alive. */
void psc_evsel__bpf_close(struct psc_evsel *evsel);

struct psc_evlist {
	struct psc_evsel **entries;
	int nr, alloc;
	struct psc_cpumap *cpus;
	struct psc_threadmap *threads;
	/* id -> evsel, open addressing, rebuilt after open */
	struct psc_id_slot {
		uint64_t id;
		struct psc_evsel *evsel;
	} * id_table;
	unsigned int id_mask;
	/* rings (ring.h), owned by evlist_mmap.c */
	struct psc_ring **rings;
	int nr_rings;
	struct psc_evsel *only_evsel; /* the single open evsel at mmap time, else NULL */
	bool ids_all; /* every open evsel has IDENTIFIER + sample_id_all */
	uint64_t lost, lost_unattributed;
};

/* Rebuilds the id table from every open fd (evlist.c). */
int psc_evlist__index_ids(struct psc_evlist *evlist);

#endif
