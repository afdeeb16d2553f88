/* A profiler declared as data (cli/profilers/<name>.c), and the engine that runs it (prof.c). */
#ifndef PERFSCOPE_COMMON_PROF_H
#define PERFSCOPE_COMMON_PROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <perfscope/parse.h>
#include <perfscope/record.h>
#include <perfscope/tp.h>

#include "options.h"
#include "prof_embed.h"
#include "output.h"
#include "say.h"
#include "target.h"

struct evprint;
struct evprint_event;
struct expr;
struct ksyms;
struct prof;
struct prof_event;
struct session;
struct psc_evlist;
struct psc_evsel;

/*
 * What the engine prepares before the hooks run. A streaming profiler (PROF_RINGS) gets every
 * -e event sampled into per-CPU rings and its samples one by one; a counting one gets the counters
 * opened (perf's groups kept) and reads them in its interval and report hooks.
 */
enum prof_needs {
	PROF_EVENTS = 1 << 0, /* -e is required (unless default_groups) */
	PROF_RINGS = 1 << 1, /* sampled, streamed through rings; else counting */
	PROF_ORDER = 1 << 2, /* time order across CPUs by default (--no-order turns it off) */
	PROF_COMM = 1 << 3, /* thread names: prof__comm() */
	PROF_TP_FORMAT = 1 << 4, /* every tracepoint's format loaded (ev->fmt) */
	PROF_STACKS = 1 << 5, /* -g and stack ATTRs mean something: callchains printed/folded */
	/*
	 * Text results go to standard error unless -o FILE is given, as perf stat's do: they do
	 * not mix with a COMMAND's own output, and `prof -- cmd > /dev/null` still shows them.
	 * Other formats (--format json) stay on standard output, for pipes.
	 */
	PROF_TEXT_STDERR = 1 << 6,
	/*
	 * A summary profiler: it prints tables (at the end, or every -i), not a stream of events.
	 * With a COMMAND (which shares standard output) and no -o, its text goes to standard
	 * error, as perf trace -s and strace -c do: `prof -- cmd > /dev/null` still shows it.
	 * JSON stays on standard output. Its results also say when they are incomplete: the
	 * table footer and a JSON "incomplete" field (prof__incomplete_*).
	 */
	PROF_SUMMARY = 1 << 7,
	/*
	 * -p/-t/-- COMMAND bound the run, the events stay system wide (a task is woken from
	 * another's context, a request completes in an interrupt): the skeleton gives the events no
	 * -p/-t (a COMMAND's run on every CPU, or -C's), the session watches the -p/-t tasks (their
	 * pidfds) and ends the run, cleanly and without a word, once all are gone. The profiler
	 * filters on p->opts.pids/tids itself.
	 */
	PROF_WATCH_TASKS = 1 << 8,
	/*
	 * The stack printer (prof__callchain) and the mmaps it needs even without -g or a stack
	 * ATTR: the profiler names single addresses (page-faults' ip) with callchain__frame.
	 */
	PROF_SYMBOLS = 1 << 9,
};

/* How the value of a profiler's ATTR is checked and bound, once, before anything opens. */
enum prof_attr_kind {
	PROF_ATTR_FLAG, /* no value: untraced */
	PROF_ATTR_FIELD, /* a field of the tracepoint: key=pid (checked against its format) */
	PROF_ATTR_STRING, /* any text */
	PROF_ATTR_NUM, /* a positive whole number */
	/* an expression over the event (key=(_cpu<<16)|pid), compiled against its format: expr.h */
	PROF_ATTR_EXPR,
};

struct prof_attr {
	const char *name;
	enum prof_attr_kind kind;
	bool repeat; /* may be given more than once (top-by=a/top-by=b/) */
	const char *help; /* "key=FIELD: ...", for --help and errors */
	/* PROF_ATTR_EXPR: a string value is fine too (comm=, printkey=); else a number is needed */
	bool any_type;
	/* PROF_ATTR_EXPR: more names the profiler sets per run (expr__set_var): "key" */
	const char *const *vars;
};

/* One ATTR of an event as the profiler sees it: checked, bound to the format. */
struct prof_attr_val {
	const struct prof_attr *decl;
	const char *value; /* NULL for a flag */
	const struct psc_tp_field *field; /* PROF_ATTR_FIELD */
	uint64_t num; /* PROF_ATTR_NUM */
	struct expr *expr; /* PROF_ATTR_EXPR: run it with expr__eval(expr, raw, size, sample) */
};

/* One -e event. */
struct prof_event {
	int idx; /* in prof->events */
	const struct psc_event_spec *spec;
	struct psc_evsel *evsel;
	const char *name; /* alias or canonical name */
	struct psc_tp_format *fmt; /* tracepoints, when loaded (PROF_TP_FORMAT or a FIELD ATTR) */
	struct prof_attr_val *attrs;
	int nr_attrs;
	void *priv; /* ev_priv_size bytes, zeroed */
	struct evprint_event *print; /* prof__use_printer: how it is printed */
	/* a /filter/ the kernel refused, run by the engine before the sample hook (prof_expr.c) */
	struct expr *filter;
	uint64_t filter_seen, filter_dropped, filter_errors;
	uint64_t out_dropped; /* dropped: the output queue and the raw backlog were full */
};

/* The first value of ATTR name on ev, NULL when not given. */
const struct prof_attr_val *prof_event__attr(const struct prof_event *ev, const char *name);

/* What a profiler's int hook returns, or -errno for a runtime failure. */
enum prof_ret {
	PROF_GO = 0, /* go on */
	/*
	 * stop cleanly: from a hook that runs while the events are on, the run stops and reports;
	 * from the start hook or before, it ends there (nothing is reported) with exit status 0
	 */
	PROF_DONE = 1,
	PROF_USAGE = 2, /* a usage error, said (prof_usage): exit status 2 */
};

/*
 * The declaration. Hooks are optional; an int hook returns an enum prof_ret: PROF_GO, PROF_DONE,
 * PROF_USAGE, or -errno for a runtime failure. A profiler with `run` set is a plain command (list, exporter): the engine
 * only dispatches to it, and `help` is its whole help text.
 */
struct profiler {
	const char *name;
	const char *summary; /* one line for `perfscope help` */
	const char *usage; /* after "usage: perfscope NAME " */
	const char *description; /* paragraphs after the usage line */
	const char *events_help; /* what -e takes here, under -e in --help */
	const char *notes; /* after the options: stop conditions, exit status */
	const char *examples; /* one per line, without "perfscope " */
	unsigned int shared_opts; /* CLI_OPT_* it takes */
	const struct prof_opt *opts; /* ends with a zero entry; NULL: none */
	unsigned int needs; /* enum prof_needs */
	const struct prof_attr *attrs; /* ATTRs it gives meaning to, zero entry last */
	/*
	 * The events when -e is not given, one string per -e (multi-trace's groups: starts, then
	 * ends), NULL last: in p->opts.events before the check hook, as if typed.
	 */
	const char *const *default_groups;
	const char *conformance_args; /* output within a second, runs until stopped (tests) */
	size_t priv_size, ev_priv_size;

	int (*check)(struct prof *p, void *priv); /* options parsed, before the events */
	int (*event)(struct prof *p, void *priv, struct prof_event *ev,
		     struct perf_event_attr *attr); /* each event, before open */
	int (*start)(struct prof *p, void *priv); /* opened, before the events are enabled */
	int (*sample)(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		      const struct psc_sample *s);
	int (*record)(struct prof *p, void *priv, const struct psc_record *rec); /* side band */
	/* events lost on cpu; n = 0: a loss at this point of the stream, counted later (session.h) */
	void (*lost)(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);
	int (*interval)(struct prof *p, void *priv, uint64_t now_ns); /* -i */
	int (*sigusr1)(struct prof *p, void *priv); /* absent: interval's job */
	/* SIGINT/SIGTERM: 1 to finish first and prof__stop() later (a second one stops now) */
	int (*stop_signal)(struct prof *p, void *priv, int signo);
	/*
	 * After each run, the counters still open and read-able: once, or p->repeat times when the
	 * check hook set it (-r N: the command is run again on fresh counters, and report comes
	 * after the last run). p->run_idx says which.
	 */
	int (*run_end)(struct prof *p, void *priv);
	int (*report)(struct prof *p, void *priv); /* at the end */
	void (*teardown)(struct prof *p, void *priv);

	/*
	 * Optional: this profiler as an event source in another's -e list (NAME/OPTS/ATTR.../):
	 * writes the event it samples for OPTS as EVENT/FILTER/ATTR.../[:MODS] into buf; nonzero,
	 * with why, for an option it cannot express (prof_embed.c).
	 */
	int (*as_event)(const char *opts, char *buf, size_t len, char *why, size_t why_len);

	int (*run)(int argc, char **argv); /* plain commands only */
	const char *help; /* plain commands only */
};

/* The running instance, for the hooks. */
struct prof {
	const struct profiler *decl;
	const char *name;
	struct cli_opts opts;
	void *priv;
	struct psc_event_list *specs;
	const char *events; /* the event list parsed: p->opts.events, or its rewrite (prof_embed) */
	struct psc_evlist *evlist;
	struct prof_event *events_arr;
	int nr_events;
	struct target target;
	char title[256]; /* "'CMD ARGS'", "process 12", "system wide" */
	struct session *session;
	struct out *out; /* the profiler's results: stdout or -o FILE */
	struct json json; /* over out, for --format json */
	bool json_fmt;
	bool order;
	bool callchain; /* -g, or a stack ATTR */
	uint64_t nr_samples; /* delivered to the sample hook */
	uint64_t limited; /* dropped by --sampling-limit */
	uint64_t out_dropped; /* dropped: the output queue and the raw backlog were full */
	uint64_t out_unwritten; /* waited raw, then the output failed (EPIPE, a stop) */
	uint64_t flame_dropped; /* stacks --flame-graph could not keep (no memory) */
	uint64_t start_ns; /* CLOCK_MONOTONIC when the events were enabled (this run) */
	int repeat; /* runs of the COMMAND, set by a check hook (-r N); 0 or 1: one */
	int run_idx; /* the run going on, from 0 */
	int stop_fd; /* signalfd of SIGINT/SIGTERM watched by out */
	struct ksyms *ksyms; /* the kernel's symbols, loaded once an expression calls ksymbol() */
	struct prof_state *state; /* the engine's own */
};

/*
 * Hits the kernel counted but dropped silently before they reached a ring (kdrop.h), over every
 * event: known once the run ended (in the report hook), 0 before.
 */
uint64_t prof__kernel_dropped(const struct prof *p);
/*
 * Ends a JSON counts line (p->json) of a report: the last one of the run (final) also gets
 * "kernel_dropped" and "final": true, so a reader knows the run's own counts are complete.
 */
void prof__json_end_counts(struct prof *p, bool final);
/*
 * Where the results go without -o: STDERR_FILENO for text when PROF_TEXT_STDERR, or
 * PROF_SUMMARY with a COMMAND; else STDOUT_FILENO. -1 with -o FILE. Known once options parsed.
 */
int prof__report_fd(const struct prof *p);
/* The thread's name (PROF_COMM). */
const char *prof__comm(struct prof *p, uint32_t pid, uint32_t tid);
/*
 * A per-instance row's label (--perins): "comm/tid" as perf and top users read it, or the bare
 * tid when the name is not known (PROF_COMM). Returns buf.
 */
const char *prof__tid_label(struct prof *p, uint32_t tid, char *buf, size_t len);
/* Prints a sample's stack lines (PROF_STACKS) after an event's text or as a JSON value. */
void prof__stack_text(struct prof *p, const struct psc_sample *s);
void prof__stack_json(struct prof *p, const struct psc_sample *s);
/* The stack printer (PROF_STACKS and stacks asked for), NULL otherwise. */
struct callchain *prof__callchain(struct prof *p);
/* Where an engine the profiler makes says its lines: "perfscope NAME: line" on stderr. */
const struct say *prof__say(struct prof *p);
/*
 * The event printer (evprint.h), one for the run, for a profiler that prints events as trace
 * does. Asked for in the check hook; the engine then prepares each event's print format as it
 * sets the event up (ev->print), prints stacks once there is a stack printer, and frees it all
 * at the end. 0 or -errno.
 */
int prof__use_printer(struct prof *p);
/* The printer (set up by prof__use_printer, else NULL): e.g. to give it a string source. */
struct evprint *prof__printer(struct prof *p);
/* Sample s of ev seen on cpu: its text line (and stack), or its JSON object with --format json. */
void prof__print(struct prof *p, const struct prof_event *ev, int cpu, const struct psc_sample *s);
/* Its text line alone, without its stack (prof__stack_text prints that). */
void prof__print_line(struct prof *p, const struct prof_event *ev, int cpu,
		      const struct psc_sample *s);
/* The same as members of the JSON object the profiler has begun (p->json), its stack included. */
void prof__print_members(struct prof *p, const struct prof_event *ev, int cpu,
			 const struct psc_sample *s);

/*
 * --flame-graph FILE, one implementation for every profiler that takes it (prof_flame.c).
 * prof__flame_path: the file it names, perf-prof's FILE.folded (FILE when it ends so), or with
 * -i the slice seq's FILE.0001.folded (seq 0: not sliced); NULL when out of memory.
 * prof__flame_open: opened for writing (before the run, so that an unwritable FILE is said at
 * once), or NULL, said. prof__flame_write: fl into f (opened here when NULL; closed), then
 * "N UNIT in M stacks folded into PATH" said (unit: what a count is, "samples", "bytes"); 0, or
 * 1 when it could not, said.
 */
struct flame;
char *prof__flame_path(const char *arg, uint64_t seq);
FILE *prof__flame_open(struct prof *p, const char *path);
int prof__flame_write(struct prof *p, const struct flame *fl, FILE *f, const char *path,
		      const char *unit);

/*
 * Prints the event text with a caret under err->pos and the message, then the CLI's hint for
 * ret (psc_parse_events' return; the library's messages give no CLI advice); for every profiler.
 */
void cli_report_parse_error(const char *prof, const char *input,
			    const struct psc_parse_error *err, int ret);
/* The CLI's advice for an error of psc_parse_events, or NULL: 'perfscope list', tracefs. */
const char *cli_parse_hint(int ret, const struct psc_parse_error *err);
/*
 * A file descriptor for the session's loop to poll beside the rings (a BPF ring buffer, a
 * timer): cb runs as session__add_fd says (session.h), from the hooks' thread.
 */
int prof__add_fd(struct prof *p, int fd, uint32_t epoll_events,
		 int (*cb)(void *ctx, int fd, uint32_t revents), void *ctx);
/* Switches the events on CPU cpu on or off while the run goes on. 0 or -errno. */
int prof__enable_cpu(struct prof *p, int cpu, bool on);
/* Seconds since the events were enabled. */
double prof__elapsed(const struct prof *p);
/*
 * For a profiler whose sample hook only prints each event (trace), called from its start hook:
 * while the output waits for a slow reader of a pipe, events are kept as raw records (rawq.h)
 * and given to the sample hook when the reader takes the text, which holds about 3.5 times more
 * in the same --output-queue memory (an eighth of it for text, the rest raw); past it they are
 * dropped and counted by event. The hook then sees an event later than it happened: not for
 * events with stacks (their symbols must be looked up while the process lives), left as they
 * were. 0 or -errno.
 */
int prof__defer_output(struct prof *p);
/*
 * The one way a profiler sets its events (a list it builds from its options), from its check
 * hook: prof__add_events adds text as one more -e would (joined by ','; text must outlive the
 * run), *pos (may be NULL) receiving where it begins in p->opts.events, as a spec's text_pos
 * tells; 0, or PROF_USAGE said when the lists get too long. prof__set_events replaces the list's
 * text by a rewrite of the same layout (each -e where it was: stat's duration_time placeholders).
 */
int prof__add_events(struct prof *p, const char *text, int *pos);
void prof__set_events(struct prof *p, const char *text);
/* Asks the engine to stop after the current event. */
void prof__stop(struct prof *p);

/*
 * What expressions on ev are compiled with (expr.h): its format, and ksymbol() and comm_get()
 * through the engine (the kernel's symbols loaded once, its thread names). The caller adds
 * vars and want_int.
 */
struct expr_opts;
void prof__expr_opts(struct prof *p, const struct prof_event *ev, struct expr_opts *o);
/*
 * text, the EXPR of an option (what: how the user gave it, "-k"), compiled against ev's format
 * into *out (an integer one if want_int). 0; 2 after printing why not, with a caret under text
 * and, for an unknown name, the names it may use; -ENOMEM.
 */
struct expr;
int prof__expr_compile(struct prof *p, struct prof_event *ev, const char *what, const char *text,
		       bool want_int, struct expr **out);
/*
 * The value of the profiler's own PROF_OPT_EXPR option name, compiled against ev as
 * prof__expr_compile does (an integer, "-k" or "--name" in the message): 0 with *out NULL when
 * it was not given; 2 (said), -ENOMEM, or -EINVAL for a name that is no such option.
 */
int prof__opt_expr(struct prof *p, struct prof_event *ev, const char *name, struct expr **out);
/* A usage error in the engine's form ("perfscope NAME: what\nSee 'perfscope help NAME'."):
 * returns PROF_USAGE, for a hook to return. */
int prof_usage(const struct prof *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Runs a declaration: argv[0] is the profiler's name. find looks the others up (-e NAME/OPTS/:
 * a profiler as an event source); NULL: none can be. Returns the process exit status.
 */
int prof__main(const struct profiler *decl, prof_find_fn find, int argc, char **argv);
/* Writes the --help text of a declaration (generated for declared profilers). */
void prof__help(const struct profiler *decl, FILE *out);

#endif
