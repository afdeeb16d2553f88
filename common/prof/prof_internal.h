/* The profiler engine's own parts, shared by prof*.c. */
#ifndef PERFSCOPE_COMMON_PROF_INTERNAL_H
#define PERFSCOPE_COMMON_PROF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof.h"

/* "stack, max-stack=N, ..., key=FIELD": the ATTRs decl takes, for error messages. */
void prof_attrs_list(const struct profiler *decl, char *buf, size_t len);

/* A caret at POS of p->events under the -e text as typed (prof_embed.c rewrites some). */
void prof_events_caret(const struct prof *p, int pos);

/* The --help text (malloc'd), NULL when out of memory. */
char *prof_help_text(const struct profiler *decl);

/* Parses argv into p->opts and the profiler's own options (in p->priv). 0, 1 (--help), 2. */
int prof_opts__parse(struct prof *p, int argc, char **argv);
/* No -e given: the declaration's default_groups become the list, as -e's would. 0 or 2. */
int prof_event_list__defaults(struct prof *p);

/*
 * One prof_event per parsed spec: filters checked against the format, ATTRs checked and bound,
 * evsels created (sampled for PROF_RINGS, perf's groups kept for counting) and the event hook
 * run. 0, 2 (usage, printed), 1 (runtime, printed), or PROF_SETUP_DONE (the event hook asked
 * to end there: exit 0).
 */
/* Where the previous note counted from: an interval's note tells that interval's losses. */
struct prof_incomplete {
	uint64_t samples, lost;
};
/*
 * Under a PROF_SUMMARY table (an interval's, or the run's when final): a footer line, or a JSON
 * {"incomplete": {"lost", "kernel_dropped", "seen", "share", "final",
 * "worst": {"event", "missing", "of"}}} line, when events were missing. A stream of events
 * (trace) gets the JSON line at its end only, with "output_dropped" too (its text says it on
 * stderr).
 */
void prof_incomplete__note(struct prof *p, struct prof_incomplete *at, bool final);

#define PROF_SETUP_DONE 3
int prof_events__setup(struct prof *p);
void prof_events__free(struct prof *p);

/*
 * Expressions on events (prof_expr.c). bind: an EXPR ATTR compiled against ev's format, 0 or 2
 * (printed, with a caret in the event list). filter: spec->filter, which the kernel refused
 * (perr says why), compiled to run in user space instead; 0 (ev->filter set, said once) or 2
 * (neither takes it: both reasons printed). pass: false when ev->filter drops the sample.
 */
int prof_expr__bind(struct prof *p, struct prof_event *ev, const struct psc_event_attr *in,
		    struct prof_attr_val *out);
int prof_expr__filter(struct prof *p, struct prof_event *ev, const struct psc_parse_error *perr);
bool prof_expr__pass(struct prof_event *ev, const struct psc_sample *s);
/* What the user-space filters dropped, at the end (stderr). */
void prof_expr__report(struct prof *p);
void prof_expr__free(struct prof *p);



#include <stdio.h>

#include "callchain.h"
#include "comm.h"
#include "flame.h"
#include "prof_embed.h"
#include "rawq.h"

/* The engine's own state, beside what struct prof shows the hooks. */
struct prof_state {
	prof_find_fn find; /* the CLI's table: prof__main's find */
	struct say say; /* prof__say */
	struct comm_cache comm;
	bool comm_ready;
	struct callchain *cc;
	struct evprint *ep; /* prof__use_printer */
	struct flame *flame; /* --flame-graph */
	char *flame_path; /* FILE.folded */
	FILE *flame_file; /* opened before the run: an unwritable FILE is said at once */
	char fold[STACK_FOLD_MAX];
	/* --usage-self: its timer, and the CPU time and clock at the last line */
	int usage_fd;
	uint64_t usage_user_ns, usage_sys_ns;
	uint64_t usage_at;
	/* --sampling-limit: per CPU, the second being counted and the events in it */
	uint64_t *limit_sec;
	uint64_t *limit_nr;
	int limit_cpus;
	struct prof_perfeval *perfeval; /* --perfeval-cpus/--perfeval-pids (prof_perfeval.c) */
	struct psc_probes *probes; /* uprobe:/kprobe: events made for this run */
	struct prof_embed embed; /* -e with another profiler in it, rewritten to its event */
	const char *typed; /* the -e text before that */
	struct prof_incomplete inc; /* what the last interval's footer counted */
	/* prof__defer_output: events kept raw while the output waits for its reader at its bound */
	struct rawq *backlog;
	/* the attr that parses the COMM/FORK records queued in the backlog among the events */
	const struct perf_event_attr *backlog_sideband;
};

/* prof_print.c: an event's print format prepared, when the profiler uses the printer. 0/-errno */
int prof_print__event(struct prof *p, struct prof_event *ev);

/* The backlog's tag of a side-band record (thread names), kept in order among the events. */
#define BACKLOG_SIDEBAND UINT16_MAX


/* prof_backlog.c: the raw backlog of a late reader's events (prof__defer_output) */
uint64_t prof_defer_queue_bytes(const struct prof *p);
/* An event the output could not take: counted by event, said at the end. */
void prof_out_drop(struct prof *p, struct prof_event *ev, uint64_t n);
/* Formats what waits raw while the output has room (all: everything, at the end). */
void prof_backlog_format(struct prof *p, bool all);
/* A COMM/FORK queued behind the events waiting raw; false: take it now. */
bool prof_backlog_sideband(struct prof *p, struct psc_evsel *evsel, int cpu,
			   const struct psc_record *rec);

/* prof_report.c: the end of a run */
uint64_t prof_total_lost(const struct prof *p);
int prof_write_flame(struct prof *p);

/* prof_perfeval.c: --perfeval-cpus/--perfeval-pids. init: 0, 2 (usage, said) or -ENOMEM; report:
 * its lines on stderr, 1 when over --sampling-limit (the run stops). */
int prof_perfeval__init(struct prof *p);
void prof_perfeval__sample(struct prof *p, int cpu, uint32_t tid);
int prof_perfeval__report(struct prof *p, bool final);
void prof_report_stats(struct prof *p);
/* What happened to the output, on stderr; 1 when the results were not written. */
int prof_report_output(struct prof *p);
/* The run ended by a stop signal (its command killed by one too): no more runs (-r). */
bool prof_stopped_by_user(const struct prof *p);

/* prof_usage.c: --usage-self's timer */
int prof_start_usage_self(struct prof *p);

#endif
