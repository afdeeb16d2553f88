/* perfscope profile's parts: its state and stacks, shared by its options, writers and --than. */
#ifndef PERFSCOPE_PROFILE_H
#define PERFSCOPE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bpf_filter.h"
#include "bpf_stacks.h"
#include "callchain.h"
#include "keymap.h"
#include "prof.h"
#include "stack_table.h"

#define MAX_FRAMES CALLCHAIN_MAX_FRAMES

enum pf_format { PF_TEXT, PF_FOLDED, PF_JSON, PF_SVG, PF_PPROF };
extern const char *const profile_format_names[]; /* by enum pf_format */

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
	struct stack_table stacks;
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
	struct frame frames[MAX_FRAMES];
	char fold[STACK_FOLD_MAX];
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

/* profile_setup.c: the event and start hooks (the attrs, BPF programs, --than's windows) */
int profile_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *a);
int profile_start(struct prof *p, void *priv);

/* profile_sample.c: samples counted by stack, and what --bpf and the filters counted */
int profile_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		   const struct psc_sample *s);
void profile_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);
int profile_pull_bpf(struct prof *p, struct profile *pf);
void profile_pull_filter(struct profile *pf);

/* profile_as_event.c: profile's options as another profiler's -e event */
int profile_as_event(const char *opts, char *buf, size_t len, char *why, size_t why_len);

/* part of whole in percent; 0 of nothing */
static inline double profile_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* profile_opts.c: the options the table (profile.c) points at, and the check hook */
int profile_opt_format(struct prof *p, void *priv, const char *arg);
int profile_opt_exclude_pid(struct prof *p, void *priv, const char *arg);
int profile_opt_nr_min(struct prof *p, void *priv, const char *arg);
int profile_opt_nr_max(struct prof *p, void *priv, const char *arg);
int profile_opt_irqs(struct prof *p, void *priv, const char *arg);
int profile_opt_resched(struct prof *p, void *priv, const char *arg);
int profile_opt_policy(struct prof *p, void *priv, const char *arg);
int profile_opt_prio(struct prof *p, void *priv, const char *arg);
int profile_opt_top(struct prof *p, void *priv, const char *arg);
int profile_check(struct prof *p, void *priv);

/* profile_funcs.c: stacks symbolized, and the functions' self and total samples */
int profile_resolve(struct prof *p, struct profile *pf, const struct stack_ent *e);
size_t profile_fold(struct profile *pf, const struct stack_ent *e, int n, bool ksuffix);
void profile_funcs_count(struct profile *pf, const struct stack_ent *e, int n, uint64_t seq);
void profile_funcs_sort(struct profile *pf);
void profile_funcs_clear(struct profile *pf);

/* profile_write.c: the profile counted up to now written in its format, then a new one begun */
int profile_write(struct prof *p, struct profile *pf, uint64_t now);

/* profile_describe.c: what every format's header says of the profile */
bool profile_time_event(const char *ev);
void profile_describe(struct prof *p, struct profile *pf, char *buf, size_t len);

/* profile_text.c, profile_json.c: the stream formats */
void profile_write_text(struct prof *p, struct profile *pf, struct out *o, double secs);
void profile_write_json(struct prof *p, struct profile *pf, struct out *o, double secs,
			struct stack_ent **arr, size_t nr);

/* profile_files.c: the formats written whole to a file (folded, svg, pprof), one per -i slice */
bool profile_file_format(enum pf_format f);
struct flame;
struct pprof;
void profile_stack_add(struct profile *pf, const struct stack_ent *e, int n, struct flame *fl,
		       struct pprof *pp);
struct pprof *profile_pprof_new(struct profile *pf, double secs);
void profile_pprof_comments(struct prof *p, struct profile *pf, struct pprof *pp);
int profile_write_file(struct prof *p, struct profile *pf, enum pf_format fmt,
		       const struct flame *fl, struct pprof *pp, size_t nr, FILE *f,
		       const char *what);

/* profile_than.c */
void profile_than_sample(struct prof *p, struct profile *pf, int cpu, const struct psc_sample *s,
			 struct stack_ent *e);
void profile_than_flush(struct prof *p, struct profile *pf, uint64_t now);

#endif
