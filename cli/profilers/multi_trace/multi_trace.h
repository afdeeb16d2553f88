/* multi-trace and its presets (syscalls, rundelay): -e groups paired by key over
 * common/pair/pair.h. */
#ifndef PERFSCOPE_CLI_MULTI_TRACE_H
#define PERFSCOPE_CLI_MULTI_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hist.h"
#include "keymap.h"
#include "lat_row.h"
#include "pair.h"
#include "pair_copy.h"
#include "profiler.h"

#define MT_MAX_GROUPS CLI_MAX_EVENT_ARGS

enum mt_impl {
	MT_DELAY,
	MT_PAIR,
	MT_SYSCALLS,
	MT_KMEMPROF,
	MT_CALL,
	MT_CALL_DELAY,
};

struct mt;

/*
 * How a preset (rundelay) plugs into the engine: its priv begins with the struct mt that its
 * check hook points at these hooks. Either may be NULL.
 */
struct mt_hooks {
	/* The key of an event without key= or -k, as an expression's text; NULL: the thread. */
	const char *(*key)(const struct prof_event *ev, int group);
	/* Whether s goes on to pairing: 1 yes, 0 no, < 0 it cannot say (left out, counted). */
	int (*pass)(struct prof *p, struct mt *mt, struct prof_event *ev,
		    const struct psc_sample *s);
};

/*
 * A row of a pair's table (lat_row.h): over counts above --than (or below --lower), errors a
 * system call's ret < 0; id is the key (--perins) or the system call, tid the thread (syscalls
 * --perins: the pair's key).
 */

/* One pair of groups: starts of group from, ends of group to. */
struct mt_link {
	int from, to;
	char name[192]; /* "sys_enter_nanosleep -> sys_exit_nanosleep" */
	struct pair *pr;
	struct lat_row *all;
	struct lat_rows by; /* per key (--perins) or per syscall id */
	struct heatmap *hm;
	struct mt *mt;
	struct lat_row *last; /* the row of the last pair (syscalls come in runs) */
	uint64_t dropped; /* latencies without a row: no memory */
	struct mt_kmem *kmem; /* --impl kmemprof */
	uint64_t ival_counts[PAIR_NR_OUTCOMES]; /* outcome counts at the last interval */
};

/* Per -e event (ev_priv). */
struct mt_ev {
	int group;
	struct expr *key;
	bool own_key;
	struct expr *role; /* role=EXPR: bit 0 start, bit 1 end; NULL: both where possible */
	bool untraced;
	bool trigger; /* trigger ATTR: each of its events prints the tables, as -i does */
	const struct psc_tp_field *sc_id, *sc_ret; /* syscalls: id and ret of the end event */
	struct expr *size; /* kmemprof: the bytes of an allocation (size=, else bytes_alloc) */
	bool own_size;
	bool call_exit; /* --impl call: the second event of its group (the function's exit) */
	bool key_tid; /* keyed by the thread (no key=, no -k): --perins rows say comm/tid */
	uint64_t key_errors, role_errors, pass_errors; /* pass: the hook could not say */
};

struct mt_detail;

/* The priv of multi-trace, syscalls and rundelay. */
struct mt {
	/* options */
	const char *key_text; /* -k */
	const char *impl_text;
	uint64_t than, only_than, lower;
	bool perins, cycle;
	bool key_cpu; /* --cycle system-wide: the default key is the CPU, as perf-prof's */
	const char *heatmap;
	const char *detail_text;
	bool detail;
	long max_pending;
	/* state */
	const struct mt_hooks *hooks; /* a preset's, NULL: none */
	enum mt_impl impl;
	bool print_outliers; /* --than, --only-than or --lower */
	bool ival; /* -i: interval histograms are kept too */
	int nr_groups;
	struct mt_link links[MT_MAX_GROUPS];
	int nr_links;
	struct mt_detail *dt;
	struct mt_call *call; /* --impl call, call-delay */
	uint64_t outliers;
	uint64_t lost_windows;
	uint64_t last_time; /* of the newest event seen */
	uint64_t ival_start;
	char keybuf[64];
	int label_width; /* of the tables' first column */
};

/* multi-trace's options, the first rows of a preset's table too. */
/* clang-format off */
#define MT_OPTS \
	{ "key", 'k', "EXPR", PROF_OPT_EXPR, offsetof(struct mt, key_text), 0, 0, NULL, \
	  "the key of events without key=: a field or any EXPR\n" \
	  "(default: the thread; idle tasks apart per CPU)" }, \
	{ "impl", 0, "IMPL", PROF_OPT_STRING, offsetof(struct mt, impl_text), 0, 0, NULL, \
	  "what pairs mean: delay (latency statistics, default),\n" \
	  "pair (what never paired), syscalls (latency and errors per\n" \
	  "system call of the end event's id and ret), kmemprof\n" \
	  "(bytes allocated, freed, not freed, by allocation stack),\n" \
	  "call (nested calls, each -e ENTER,EXIT one function: the\n" \
	  "call tree per thread), call-delay (the tree with each\n" \
	  "call path's latency statistics)" }, \
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct mt, than), 0, 0, NULL, \
	  "print each pair whose latency is above T (s, ms, us, ns)\n" \
	  "and count them in the tables (over_than)" }, \
	{ "only-than", 0, "T", PROF_OPT_DURATION, offsetof(struct mt, only_than), 0, 0, NULL, \
	  "as --than, but print only those pairs: no tables" }, \
	{ "lower", 0, "T", PROF_OPT_DURATION, offsetof(struct mt, lower), 0, 0, NULL, \
	  "print each pair whose latency is below T" }, \
	{ "perins", 0, NULL, PROF_OPT_FLAG, offsetof(struct mt, perins), 0, 0, NULL, \
	  "statistics per key (per thread by default: comm/tid;\n" \
	  "syscalls: per thread and call) too" }, \
	{ "heatmap", 0, "FILE", PROF_OPT_HEATMAP, offsetof(struct mt, heatmap), 0, 0, NULL, \
	  "write a latency heatmap (SVG) of the first pair to FILE,\n" \
	  "of the next ones to FILE.2, FILE.3 ..." }, \
	{ "detail", 0, "[=SPEC]", PROF_OPT_FN, 0, 0, 0, mt_opt_detail, \
	  "with --than: print the events around each outlier:\n" \
	  "-N before the start, +N after the end (times: 1ms),\n" \
	  "samecpu, samepid, sametid, samekey (1, 2: as the start\n" \
	  "or the end only), hide<N (hide gaps below N), comma\n" \
	  "separated; untraced events included" }, \
	{ "cycle", 0, NULL, PROF_OPT_FLAG, offsetof(struct mt, cycle), 0, 0, NULL, \
	  "pair the last group back to the first one too; system-wide\n" \
	  "(no -p, -t or COMMAND) events without key= pair by CPU" }, \
	{ "max-pending", 0, "N", PROF_OPT_LONG, offsetof(struct mt, max_pending), 1, 1L << 30, \
	  NULL, \
	  "starts kept waiting for their end per pair (default\n" \
	  "262144): past it the oldest is evicted and counted" },
/* clang-format on */

extern const struct prof_opt mt_opts[];
extern const struct prof_attr mt_attrs[];

/* What multi-trace and its presets declare alike: the engine's options, state and hooks. */
#define MT_PROFILER_ENGINE                                                                         \
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_CALLCHAIN, .opts = mt_opts, .attrs = mt_attrs, \
	.priv_size = sizeof(struct mt), .ev_priv_size = sizeof(struct mt_ev), .event = mt_event,   \
	.start = mt_start, .sample = mt_sample, .lost = mt_lost, .interval = mt_interval,          \
	.report = mt_report, .teardown = mt_teardown

/* mt_opts.c: the options taking a value of their own, for a preset's table (MT_OPTS). */
int mt_opt_detail(struct prof *p, void *priv, const char *arg);

/* The lifecycle hooks (multi_trace.c: setup; mt_opts.c: options and events; mt_pair.c: samples;
 * mt_report.c: tables), a preset's too around its own. */
int mt_check(struct prof *p, void *priv);
int mt_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *attr);
int mt_start(struct prof *p, void *priv);
int mt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s);
void mt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);
int mt_interval(struct prof *p, void *priv, uint64_t now_ns);
int mt_report(struct prof *p, void *priv);
void mt_teardown(struct prof *p, void *priv);

/* mt_event.c: the event's text or JSON members from a copy (pair_copy.h) or a live sample. */
void mt_print_event(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s,
		    const char *indent);
void mt_json_event(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s);
/* The key as text (printkey= when given). */
const char *mt_key_str(struct prof *p, struct mt *mt, int ev_idx, uint64_t key);
/* An event's name in a pair's: its alias=, else its name without the system. */
const char *mt_short_name(const struct prof_event *ev);

/* kmemprof (mt_kmemprof.c): bytes allocated, freed and not freed, by allocation stack. */
struct mt_kmem;
struct mt_data;
int mt_kmem__new(struct mt_link *lk);
void mt_kmem__delete(struct mt_kmem *k);
void mt_kmem__alloc(struct prof *p, struct mt_link *lk, struct mt_data *d,
		    const struct pair_event *ev);
void mt_kmem__free(struct mt_link *lk, const struct mt_data *d);
void mt_kmem__print(struct prof *p, struct mt_link *lk);

/* What a pending start keeps (the pair engine's per-entry data). */
struct mt_data {
	struct pair_copy *copy; /* the start event, when outliers are printed */
	uint64_t size; /* kmemprof: bytes */
	void *group; /* kmemprof: its allocation stack's group */
	uint64_t call_key; /* call, call-delay: the key of its stack (the entry's is its frame's) */
};

/* --impl call, call-delay (mt_call.c): nested enter/exit pairs as a call tree per key. */
struct mt_call;
int mt_call__start(struct prof *p, struct mt *mt, int *nr_traced);
void mt_call__sample(struct mt *mt, struct mt_ev *me, struct pair_event *pe);
void mt_call__print(struct prof *p, struct mt *mt, bool final);
void mt_call__delete(struct mt_call *c);

/* The columns of the tables (lat_row.h): total and errors for syscalls, the outliers' count. */
static inline struct lat_cols mt_cols(const struct mt *mt)
{
	return (struct lat_cols){
		.width = mt->label_width,
		.total_width = mt->impl == MT_SYSCALLS ? 10 : 0,
		.over = mt->lower  ? "outliers"
			: mt->than ? "over_than"
				   : NULL,
		.errors = mt->impl == MT_SYSCALLS,
	};
}

/* mt_link.c: a link's engine over impl, its rows and heatmap; everything it holds released. */
int mt_link__init(struct prof *p, struct mt *mt, struct mt_link *lk, const struct pair_impl *impl);
void mt_link__exit(struct mt_link *lk);

/* mt_pair.c: what a pair does (its start's copy, its latency to the rows, an outlier). */
extern const struct pair_impl mt_pair_impl;

/* mt_outlier.c: a pair above --than (below --lower): printed now, or kept for --detail. */
void mt_outlier(struct mt_link *lk, const struct pair_entry *start, const struct mt_data *d,
		const struct pair_event *end, uint64_t delta);

/* --detail (mt_detail.c): a bounded backlog of recent events printed around outliers. */
int mt_detail__parse(struct prof *p, struct mt *mt, const char *arg);
int mt_detail__init(struct prof *p, struct mt *mt);
void mt_detail__add(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s,
		    uint64_t key);
/* Keeps copies of an outlier's start (a copy of its copy) and end, printed with the events around
 * it later; one that cannot be copied is counted (nomem). */
void mt_detail__outlier(struct prof *p, struct mt *mt, const struct pair_copy *start,
			const struct pair_event *end);
void mt_detail__flush(struct prof *p, struct mt *mt, bool all);
void mt_detail__report(struct prof *p, struct mt *mt);
void mt_detail__delete(struct mt_detail *d);

#endif
