/* cpuprof: the exporter's always-on CPU sampler, a rolling window of stack counts, as pprof. */
#ifndef PERFSCOPE_EXPORTER_CPUPROF_H
#define PERFSCOPE_EXPORTER_CPUPROF_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keymap.h"
#include "stack_table.h"

struct expo;
struct psc_cpumap;
struct psc_evlist;
struct bpf_stacks;
struct callchain;

#define CPUPROF_DEFAULT_HZ 19
#define CPUPROF_DEFAULT_SECONDS 30 /* Go's net/http/pprof default */
#define CPUPROF_DEFAULT_MAX_SECONDS 60
#define CPUPROF_DEFAULT_MAX_STACKS 65536

struct cpuprof_config {
	struct psc_cpumap *cpus; /* where to sample (a reference is taken) */
	unsigned int hz; /* samples per second per CPU */
	unsigned int max_seconds; /* longest profile served; the window holds that many seconds */
	size_t max_stacks; /* distinct (stack, process) entries over the whole window */
	bool no_bpf; /* the ring path even when BPF is there */
};

/*
 * One second of samples: the stacks counted while it lasted. The window is a ring of
 * max_seconds + 1 of them, indexed by the second (CLOCK_MONOTONIC) modulo its size.
 */
struct cpuprof_bucket {
	int64_t sec; /* the second it holds; -1: none */
	struct stack_table stacks;
	uint64_t samples;
};

/* A profile asked for: served once the seconds [first, end) are complete. */
struct cpuprof_req {
	struct cpuprof_req *next; /* on cp->waiting until woken */
	int64_t first, end;
	bool ready, cancelled;
	void (*wake)(void *arg);
	void *arg;
};

struct cpuprof_stats {
	uint64_t samples; /* counted into the window */
	uint64_t lost; /* the kernel's ring had no room (ring path) */
	uint64_t dropped_full; /* max_stacks reached: not counted */
	uint64_t bpf_dropped; /* the BPF maps had no room for a stack or a key */
	uint64_t evicted; /* counted, then aged out of the window */
	uint64_t requests, refused, served;
	uint64_t build_ns; /* time spent building profiles */
	uint64_t bytes; /* gzipped profile bytes served */
	size_t stacks; /* entries held now */
};

/*
 * Everything behind one lock: the sampler thread counts and rotates under it, a request builds
 * its profile under it (symbolizing with the sampler's callchain, which is not thread-safe).
 */
struct cpuprof {
	struct cpuprof_config cfg;
	pthread_mutex_t lock;
	pthread_t thread;
	bool running, stop;
	int wake_fd; /* eventfd: stops the thread's poll */
	struct psc_evlist *evlist;
	struct bpf_stacks *bs;
	uint64_t bpf_seen_drops;
	struct callchain *cc;
	struct cpuprof_bucket *buckets;
	int nr_buckets;
	int64_t cur; /* the second being counted */
	int64_t wall_off_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC at the start */
	int64_t exits_at; /* when held exited processes' maps were last let go of */
	int64_t trimmed_at; /* when the BPF stack map was last trimmed */
	struct cpuprof_req *waiting;
	struct keymap cgroups; /* pid -> struct cpuprof_cg * */
	int64_t cg_swept_at;
	struct cpuprof_stats st;
	char mode[8]; /* "bpf" or "ring" */
};

/* Opens the events (and the BPF program): NULL with err filled (errno: EINVAL for bad config). */
struct cpuprof *cpuprof_new(const struct cpuprof_config *cfg, char *err, size_t errlen);
/* Starts sampling in a thread of its own. 0 or -errno. */
int cpuprof_start(struct cpuprof *cp);
/* Wakes every waiting request (cancelled), stops the thread, frees. NULL is a no-op. */
void cpuprof_delete(struct cpuprof *cp);
/* Wakes every waiting request, cancelled: before the HTTP server stops. */
void cpuprof_cancel_all(struct cpuprof *cp);

/*
 * A request for `seconds` (1..max_seconds): the whole seconds starting with the one in progress,
 * so that requests arriving in the same second get the same profile. wake(arg) is called (from
 * the sampler thread, without the lock) when it is complete. NULL with why filled when refused
 * (errno EINVAL: too long; ENOMEM).
 */
struct cpuprof_req *cpuprof_req_new(struct cpuprof *cp, long seconds, void (*wake)(void *),
				    void *arg, char *why, size_t whylen);
/* A request refused by the server for its length, counted. */
void cpuprof_refused(struct cpuprof *cp);
/* Forgets r (waiting or not). NULL is a no-op. */
void cpuprof_req_free(struct cpuprof *cp, struct cpuprof_req *r);
/* The profile of r's seconds, gzipped pprof in *buf (malloc'ed). 0 or -errno (-ECANCELED). */
int cpuprof_req_build(struct cpuprof *cp, const struct cpuprof_req *r, char **buf, size_t *len);

/* The sampler's figures as Prometheus metrics (perfscope_exporter_profile_*). */
void cpuprof_metrics(struct cpuprof *cp, struct expo *e);

/* cpuprof_labels.c: a process's cgroup path and the container id it names, cached by pid */
struct cpuprof_cg {
	int64_t seen; /* the second it was last needed */
	char comm[16]; /* the process's name (/proc/PID/comm) */
	char *cgroup; /* "" when unknown */
	char container[65]; /* "" when the path names none */
};
const struct cpuprof_cg *cpuprof_cgroup(struct cpuprof *cp, uint32_t pid);
/* pid exec'ed or exited: read again when next needed. */
void cpuprof_cgroup_forget(struct cpuprof *cp, uint32_t pid);
/* Lets go of processes not seen for a window's length. */
void cpuprof_cgroup_sweep(struct cpuprof *cp);
void cpuprof_cgroup_exit(struct cpuprof *cp);
/* The 64-hex-digit container id a cgroup path names (docker, containerd, CRI-O, podman), or "". */
void cpuprof_container_id(const char *path, char out[65]);

#endif
