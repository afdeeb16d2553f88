/* multi-trace and its presets (syscalls, rundelay): -e groups paired by key over
 * common/pair/pair.h. */
#ifndef PERFSCOPE_CLI_MULTI_TRACE_H
#define PERFSCOPE_CLI_MULTI_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "evprint.h"
#include "hist.h"
#include "keymap.h"
#include "pair.h"
#include "profiler.h"
#include "stage_watch.h"

#define MT_MAX_GROUPS CLI_MAX_EVENT_ARGS

enum mt_impl {
	MT_DELAY,
	MT_PAIR,
	MT_SYSCALLS,
	MT_KMEMPROF,
	MT_CALL,
	MT_CALL_DELAY,
};

/* What a preset changes in the shared logic. */
enum mt_preset {
	MT_MULTI,
	MT_PRESET_SYSCALLS,
	MT_PRESET_RUNDELAY,
};

/* Latency statistics: since the start and since the last interval. Heap only (hist alignment). */
struct mt_stat {
	struct hist total, ival;
	uint64_t over, ival_over; /* above --than (or below --lower) */
	uint64_t errors, ival_errors; /* syscalls: ret < 0 */
	uint64_t id; /* syscalls: the number; --perins: the key */
	uint64_t tid; /* syscalls --perins: the thread (the pair's key) */
};

/* One pair of groups: starts of group from, ends of group to. */
struct mt_link {
	int from, to;
	char name[192]; /* "sys_enter_nanosleep -> sys_exit_nanosleep" */
	struct pair *pr;
	struct mt_stat *all;
	struct keymap by; /* per key (--perins) or per syscall id: struct mt_stat * */
	struct heatmap *hm;
	struct mt *mt;
	struct mt_stat *last; /* the row of the last pair (syscalls come in runs) */
	uint64_t dropped; /* latencies without a row: no memory */
	struct mt_kmem *kmem; /* --impl kmemprof */
	uint64_t ival_counts[PAIR_NR_OUTCOMES]; /* outcome counts at the last interval */
};

/* A copy of one sample for printing later (outliers, --detail). */
struct mt_copy {
	struct psc_sample s;
	int ev_idx;
	int cpu;
	uint64_t key;
	size_t bytes; /* of the allocation */
	/* the sample's parts follow (sample_keep.h) */
};

/* Per -e event (ev_priv). */
struct mt_ev {
	int group;
	struct expr *key;
	bool own_key;
	struct expr *role; /* role=EXPR: bit 0 start, bit 1 end; NULL: both where possible */
	bool untraced;
	bool trigger; /* trigger ATTR: each of its events prints the tables, as -i does */
	struct evprint_event print;
	bool print_ok;
	const struct psc_tp_field *sc_id, *sc_ret; /* syscalls: id and ret of the end event */
	struct expr *size; /* kmemprof: the bytes of an allocation (size=, else bytes_alloc) */
	bool own_size;
	bool call_exit; /* --impl call: the second event of its group (the function's exit) */
	struct expr *pass; /* a preset's own condition (rundelay: prev_state, --filter, -p) */
	bool key_tid; /* keyed by the thread (no key=, no -k): --perins rows say comm/tid */
	uint64_t key_errors, role_errors, pass_errors;
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
	const char *filter_comm; /* rundelay --filter */
	char pids[1024]; /* rundelay -p/-t: "12,34", filters on the events (system wide) */
	struct stage_watch watch; /* rundelay: -p/-t, it stops when they are all gone */
	/* state */
	enum mt_preset preset;
	enum mt_impl impl;
	bool print_outliers; /* --than, --only-than or --lower */
	bool ival; /* -i: interval histograms are kept too */
	int nr_groups;
	struct mt_link links[MT_MAX_GROUPS];
	int nr_links;
	struct evprint *ep;
	struct mt_detail *dt;
	struct mt_call *call; /* --impl call, call-delay */
	uint64_t outliers;
	uint64_t lost_windows;
	uint64_t last_time; /* of the newest event seen */
	uint64_t ival_start;
	char events_buf[4096]; /* presets: the events they generate */
	char keybuf[64];
	int label_width; /* of the tables' first column */
};

extern const struct prof_opt mt_opts[];
extern const struct prof_opt mt_rundelay_opts[];
extern const struct prof_attr mt_attrs[];

int mt_check(struct prof *p, void *priv);
int mt_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *attr);
int mt_start(struct prof *p, void *priv);
int mt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s);
void mt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);
int mt_interval(struct prof *p, void *priv, uint64_t now_ns);
int mt_report(struct prof *p, void *priv);
void mt_teardown(struct prof *p, void *priv);

/*
 * A copy of s kept past its ring round, owning all its parts (sample_keep.h); free() it. The
 * event's text or JSON members from a copy or a live sample.
 */
struct mt_copy *mt_copy__new(const struct psc_sample *s, int ev_idx, int cpu, uint64_t key);
void mt_print_event(struct prof *p, struct mt *mt, int ev_idx, int cpu,
		    const struct psc_sample *s, const char *indent);
void mt_json_event(struct prof *p, struct mt *mt, int ev_idx, int cpu,
		   const struct psc_sample *s);
/* The key as text (printkey= when given). */
const char *mt_key_str(struct prof *p, struct mt *mt, int ev_idx, uint64_t key);

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
	struct mt_copy *copy; /* the start event, when outliers are printed */
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

/* multi_trace.c's statistics and mt_report.c's printing, shared with mt_call.c. */
struct mt_stat *mt_stat_new(uint64_t id);
void mt_stat_delete(struct mt_stat *st);
void mt_stat_add(struct mt_stat *st, uint64_t delta, bool over, bool ival);
void mt_stat_json(struct prof *p, struct mt *mt, const struct hist *h, uint64_t over);
void mt_print_stat_header(struct prof *p, struct mt *mt, const char *first);
void mt_print_stat_row(struct prof *p, struct mt *mt, const char *label, const struct hist *h,
		       uint64_t over);
void mt_outlier(struct mt_link *lk, const struct pair_entry *start, const struct mt_data *d,
		const struct pair_event *end, uint64_t delta);
const char *mt_short_name(const struct prof_event *ev);

/* mt_report.c: a pair's table (the interval's or the totals), text or JSON; the heatmap files. */
void mt_print_link(struct prof *p, struct mt *mt, struct mt_link *lk, bool final);
int mt_write_heatmaps(struct prof *p, struct mt *mt);

/* rundelay.c: the key of its sched events by name and group, and its own condition. */
const char *mt_rundelay_key(const struct prof_event *ev, int group);
bool mt_rundelay_pass(struct prof *p, struct mt *mt, struct prof_event *ev,
		      const struct psc_sample *s);

/* --detail (mt_detail.c): a bounded backlog of recent events printed around outliers. */
int mt_detail__parse(struct prof *p, struct mt *mt, const char *arg);
int mt_detail__init(struct prof *p, struct mt *mt);
void mt_detail__add(struct prof *p, struct mt *mt, int ev_idx, int cpu,
		    const struct psc_sample *s, uint64_t key);
/* Keeps copies of an outlier's start (a copy of its copy) and end, printed with the events around
 * it later; one that cannot be copied is counted (nomem). */
void mt_detail__outlier(struct prof *p, struct mt *mt, const struct mt_copy *start,
			const struct pair_event *end);
void mt_detail__flush(struct prof *p, struct mt *mt, bool all);
void mt_detail__report(struct prof *p, struct mt *mt);
void mt_detail__delete(struct mt_detail *d);

#endif
