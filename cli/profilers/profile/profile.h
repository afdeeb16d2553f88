/* perfscope profile's parts: its state and stacks, shared by its options, writers and --than. */
#ifndef PERFSCOPE_PROFILE_H
#define PERFSCOPE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf_filter.h"
#include "bpf_stacks.h"
#include "callchain.h"
#include "keymap.h"
#include "prof.h"

#define MAX_FRAMES CALLCHAIN_MAX_FRAMES

enum pf_format { PF_TEXT, PF_FOLDED, PF_JSON, PF_SVG, PF_PPROF };
extern const char *const profile_format_names[]; /* by enum pf_format */

/*
 * One distinct stack: the sampled addresses as the kernel gave them (markers included), and who
 * ran them. Symbolized only when a profile is written: a sample costs a hash of its ips.
 */
struct stack_ent {
	struct stack_ent *next; /* same hash */
	uint64_t count; /* samples */
	uint64_t period; /* sum of their periods (ns for cpu-clock) */
	uint32_t pid, tid;
	char comm[16];
	uint32_t nr;
	uint64_t ips[];
};

/* --than: one CPU's samples in the current window, and its stacks there. */
struct cpu_win {
	uint64_t start; /* sample time the window began */
	uint64_t n;
	struct keymap stacks; /* struct stack_ent * -> samples in the window */
};

/* A function in the text/JSON report: its self and total samples. */
struct func {
	char *name;
	const char *dso;
	uint64_t self, total;
	uint64_t last; /* the stack that last counted total: recursion counts once */
};

struct profile {
	/* options */
	long freq, period;
	const char *format_arg, *output, *flame_graph;
	bool exclude_user, exclude_kernel, exclude_guest, per_pid, per_thread;
	int kernel_refused; /* user_only__apply's state: -1 not asked yet */
	bool user_only; /* the kernel may not be sampled by this user: user space only */
	double than;
	long top; /* text rows; 0: all */
	bool top_set;
	/* what runs */
	enum pf_format fmt;
	const char *event; /* what was sampled, as the output says */
	const char *why_event; /* why not cycles, or NULL */
	bool use_freq; /* sample_freq applied (else period) */
	long freq_used, period_used;
	struct keymap stacks; /* hash -> struct stack_ent * */
	size_t nr_stacks;
	uint64_t samples, period_sum, dropped, lost;
	uint64_t seq; /* profiles written */
	uint64_t slice_start_ns; /* CLOCK_MONOTONIC at the start of this profile */
	int64_t slice_wall_ns; /* and CLOCK_REALTIME, for pprof's time_nanos */
	struct out *file; /* -o FILE for text/json (one stream); NULL: stdout (p->out) */
	/* --than */
	struct cpu_win *wins;
	int nr_wins;
	uint64_t than_window_ns;
	uint64_t hot_windows;
	/* report-time scratch */
	struct cc_frame frames[MAX_FRAMES];
	char fold[16384];
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct keymap func_idx; /* name hash -> index + 1 chain head */
	uint64_t truncated; /* samples whose user stack stops early, this profile */
	uint64_t truncated_total;
	/* --bpf: samples counted by stack in the kernel, pulled in when a profile is written */
	bool bpf;
	long bpf_stacks; /* --bpf-stacks: stack-trace map entries */
	struct bpf_stacks *bs;
	struct bpf_stacks_drops bpf_seen; /* its drop counts at the last pull */
	uint64_t bpf_kstack_lost, bpf_ustack_lost, bpf_keys_full; /* this profile's */
	/* perf-prof's sample filters, run in the kernel (bpf/filter.bpf.h) */
	struct filter_cfg filt;
	bool nr_min_set, nr_max_set;
	struct bpf_filter *bf; /* the ring path's; --bpf runs them in its own program */
	struct filter_counts filt_seen; /* the counts at the last profile */
	struct filter_counts filt_now; /* this profile's */
};

/* The hash of the stacks table (profile.c) and of the functions' index (profile_write.c). */
static inline uint64_t profile_mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static inline uint64_t profile_str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n && s[i]; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* profile.c: the stacks table and what --bpf and the filters counted in the kernel */
int profile_pull_bpf(struct prof *p, struct profile *pf);
void profile_pull_filter(struct profile *pf);
void profile_free_stacks(struct profile *pf);

/* profile_opts.c: the options the table (profile.c) points at, and the check hook */
int profile_opt_format(struct prof *p, void *priv, const char *arg);
int profile_opt_than(struct prof *p, void *priv, const char *arg);
int profile_opt_exclude_pid(struct prof *p, void *priv, const char *arg);
int profile_opt_nr_min(struct prof *p, void *priv, const char *arg);
int profile_opt_nr_max(struct prof *p, void *priv, const char *arg);
int profile_opt_irqs(struct prof *p, void *priv, const char *arg);
int profile_opt_resched(struct prof *p, void *priv, const char *arg);
int profile_opt_policy(struct prof *p, void *priv, const char *arg);
int profile_opt_prio(struct prof *p, void *priv, const char *arg);
int profile_opt_top(struct prof *p, void *priv, const char *arg);
int profile_check(struct prof *p, void *priv);

/* profile_write.c */
int profile_resolve(struct prof *p, struct profile *pf, const struct stack_ent *e);
size_t profile_fold(struct profile *pf, const struct stack_ent *e, int n, bool ksuffix);
void profile_funcs_clear(struct profile *pf);
double profile_pct(uint64_t part, uint64_t whole);
bool profile_file_format(enum pf_format f);
bool profile_ends_with(const char *s, const char *suffix);
char *profile_slice_name(const char *path, uint64_t seq);
int64_t profile_wall_ns(void);
int profile_write(struct prof *p, struct profile *pf);

/* profile_than.c */
void profile_than_sample(struct prof *p, struct profile *pf, int cpu, const struct psc_sample *s,
			 struct stack_ent *e);
void profile_than_flush(struct prof *p, struct profile *pf, uint64_t now);

#endif
