/* Command-line options shared by every profiler (-e -C -a -p -t -G -i -m --duration --format -o
 * --order -v, -- CMD). */
#ifndef PERFSCOPE_COMMON_OPTIONS_H
#define PERFSCOPE_COMMON_OPTIONS_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

enum out_format {
	FORMAT_TEXT,
	FORMAT_JSON,
};

#define CLI_MAX_TASKS 64 /* -p/-t list entries */
#define CLI_MAX_POSITIONAL 16 /* operands */
#define CLI_MAX_EVENT_ARGS 16 /* -e options whose start is remembered */

struct cli_opts {
	const char *events; /* -e, NULL when absent; -e given again adds to the list, as in perf */
	const char *cpus; /* -C list; NULL = all online */
	bool all_cpus; /* -a */
	pid_t pid; /* -p, 0 = none: the first of pids */
	pid_t tid; /* -t, 0 = none: the first of tids */
	pid_t pids[CLI_MAX_TASKS], tids[CLI_MAX_TASKS]; /* -p PID,PID... and -t TID,TID... */
	int nr_pids, nr_tids;
	const char *tasks_text; /* the -p or -t list as given, for titles */
	const char *cgroup; /* -G, path under the cgroup2 mount or absolute */
	long interval_ms; /* -i, 0 = none */
	double duration_s; /* --duration, 0 = until stopped */
	unsigned int mmap_pages; /* -m, 0 = default; power of two */
	int watermark_pct; /* --watermark 1..100: wake up at this fill of a ring; 0 = default, -1:
			      every event (--watermark 0) */
	bool order; /* --order */
	bool no_order; /* --no-order */
	bool inherit; /* --inherit, --ptrace: follow new tasks; a COMMAND's always are */
	bool callchain; /* -g */
	/* --call-graph dwarf[,SIZE], --user-callchain=dwarf: user stacks unwound from a copy of the
	 * stack (PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER), not frame pointers */
	bool dwarf;
	unsigned int stack_dump_size; /* bytes of user stack copied per sample with dwarf */
	int user_callchain; /* --user-callchain 1, --no-user-callchain 0, -1 not given */
	int kernel_callchain; /* --kernel-callchain 1, --no-kernel-callchain 0, -1 not given */
	const char *flame_graph; /* --flame-graph FILE: folded stacks written there */
	bool overwrite; /* --overwrite: flight recorder rings, read when the run ends */
	unsigned long long exit_n; /* -N: stop after N events, 0 = no limit */
	unsigned long sampling_limit; /* --sampling-limit: events per second and CPU, 0 = all */
	/* --perfeval-cpus LIST, --perfeval-pids TID,...: the events sampled in those contexts */
	const char *perfeval_cpus, *perfeval_pids_text;
	pid_t perfeval_pids[CLI_MAX_TASKS];
	int nr_perfeval_pids;
	long usage_self_ms; /* --usage-self MS: perfscope's own CPU use every MS, 0 = never */
	bool quiet; /* -q: no statistics lines unless something was lost */
	bool per_cpu; /* --per-cpu */
	enum out_format format; /* --format */
	const char *output; /* -o FILE: the profiler's output goes there; NULL = stdout */
	unsigned long output_queue_mib; /* --output-queue: bound on what waits for the reader; 0:
					   the default */
	int verbose; /* -v, repeatable */
	char **command; /* after --, NULL-terminated; NULL when none */
	/* CLI_OPT_POSITIONAL: the operands before any "--", NULL-terminated; NULL when none */
	char **positional;
	int nr_positional;
	char *positional_buf[CLI_MAX_POSITIONAL + 1];
	char events_joined[4096]; /* several -e: their lists joined by ','; events points here */
	/* where each -e began in events (multi-trace's groups: a spec's text_pos tells its -e) */
	int nr_event_args;
	int event_arg_pos[CLI_MAX_EVENT_ARGS];
};

/*
 * Which shared options a profiler accepts; the rest are refused with a usage error. The shared
 * options are a table of the same type as a profiler's own (struct prof_opt), each entry's `flag`
 * saying which of these enables it. perf-prof's common options keep its names and meaning.
 */
enum cli_opt_flags {
	CLI_OPT_EVENTS = 1 << 0,
	CLI_OPT_CPUS = 1 << 1, /* -C, -a */
	CLI_OPT_TARGET = 1 << 2, /* -p, -t, -G, -- COMMAND */
	CLI_OPT_INTERVAL = 1 << 3,
	CLI_OPT_DURATION = 1 << 4,
	CLI_OPT_MMAP = 1 << 5, /* -m, --watermark */
	CLI_OPT_FORMAT = 1 << 6,
	/* operands that are not a command (list's GLOB, expr's EXPR), between the options; with
	 * CLI_OPT_TARGET a command follows "--" */
	CLI_OPT_POSITIONAL = 1 << 7,
	CLI_OPT_PER_CPU = 1 << 8, /* --per-cpu: only where it changes the output (stat) */
	CLI_OPT_OUTPUT = 1 << 9, /* -o FILE */
	CLI_OPT_ORDER = 1 << 10, /* --order, --no-order; perf-prof's --monotonic, --inherit, --ptrace */
	/* -g, --call-graph fp|dwarf[,SIZE], --[no-]user-callchain[=fp|dwarf],
	 * --[no-]kernel-callchain */
	CLI_OPT_CALLCHAIN = 1 << 11,
	CLI_OPT_FLAME = 1 << 12, /* --flame-graph FILE */
	CLI_OPT_OVERWRITE = 1 << 13, /* --overwrite */
	CLI_OPT_EXIT_N = 1 << 14, /* -N */
	CLI_OPT_SAMPLING_LIMIT = 1 << 15, /* --sampling-limit */
	CLI_OPT_USAGE_SELF = 1 << 16, /* --usage-self */
	CLI_OPT_QUIET = 1 << 17, /* -q */
	/*
	 * -p/-t become filters on system-wide events that match the threads as they come (new ones
	 * too), so perf-prof's --ptrace/--inherit with -p/-t means what it says (task-state)
	 */
	CLI_OPT_IDS_FOLLOW = 1 << 18,
	/* --output-queue MIB: memory for what a slow reader of a pipe has not taken yet */
	CLI_OPT_OUTPUT_QUEUE = 1 << 19,
};

/*
 * What a profiler of events read from rings takes, as perf-prof's do: the events, where (-C,
 * -p/-t/-G, a COMMAND), how long (-i, --duration, -N), the rings (-m, time order) and where its
 * results go (--format, -o, -q, --usage-self). A declaration adds its own to these.
 */
#define CLI_OPTS_EVENT_RUN                                                                      \
	(CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL | CLI_OPT_DURATION | \
	 CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_ORDER | CLI_OPT_EXIT_N |       \
	 CLI_OPT_QUIET | CLI_OPT_USAGE_SELF)

/* --call-graph dwarf: the stack copied by default, and the most the kernel takes (sample_stack_user
 * must be below USHRT_MAX, a multiple of 8: a sample's size is a 16-bit field) */
#define CLI_STACK_DUMP_DEFAULT 8192
#define CLI_STACK_DUMP_MAX 65528

/* How an option's value is parsed into the field at its offset. */
enum prof_opt_type {
	PROF_OPT_FLAG, /* bool at offset */
	PROF_OPT_LONG, /* long at offset, min..max */
	PROF_OPT_DOUBLE, /* double at offset, > min */
	PROF_OPT_STRING, /* const char * at offset, not empty */
	PROF_OPT_FN, /* parse(prof, base, arg) */
	PROF_OPT_TEXT, /* const char * at offset, any text (an empty one too) */
	/* uint64_t nanoseconds at offset: a time, "10ms", "1.5s", "100us", a bare number ns */
	PROF_OPT_DURATION,
	PROF_OPT_PERCENT, /* double at offset: "25" or "25%", above 0 and at most 100 */
	/*
	 * const char * at offset: an integer expression over each event (a field, or any EXPR),
	 * compiled against an event's format with prof__opt_expr, a caret under a mistake
	 */
	PROF_OPT_EXPR,
	/* const char * at offset: the SVG file a heatmap is written to at the end; its folder
	 * must exist, so that a mistyped path does not lose the run's heatmap */
	PROF_OPT_HEATMAP,
};

/* Whether an option takes a value; AUTO: from its metavariable, "[...]" meaning optional. */
enum prof_opt_has_arg {
	PROF_ARG_AUTO,
	PROF_ARG_NONE,
	PROF_ARG_REQUIRED,
	PROF_ARG_OPTIONAL,
};

/*
 * One option, of the shared table or of a profiler's own: parsing, --help, the man-page check and
 * `help --table` (the option sweep) come from these entries. An entry without help is a
 * spelling --help lists after the entry before it (-C, --cpu, --cpus).
 */
struct prof;
struct prof_opt {
	const char *name; /* long name */
	int short_name; /* 0: none */
	const char *arg; /* metavariable ("N", "FILE"); NULL for a flag */
	enum prof_opt_type type;
	size_t offset; /* into the table's base: the profiler's priv, or struct cli_opts */
	long min, max;
	/* PROF_OPT_FN: 0, or prints the problem and returns 2 */
	int (*parse)(struct prof *p, void *base, const char *arg);
	const char *help; /* may hold '\n' for more lines */
	unsigned int flag; /* the shared table's: the CLI_OPT_* that enables it */
	enum prof_opt_has_arg has_arg;
	/* PROF_OPT_GIVEN(type, field): the value as given is kept there too (a const char *), to
	 * show it as typed or to tell it was given; 0: not kept */
	size_t given;
};

#define PROF_OPT_GIVEN(type, field) (offsetof(type, field) + 1)

/* The shared options, in --help order, ending with a zero entry (opts_shared.c). */
extern const struct prof_opt cli_shared_opts[];

/* getopt's has_arg of an entry. */
int prof_opt__has_arg(const struct prof_opt *o);

/*
 * Parses argv (argv[0] is the command's name) against the shared options in flags, into *o, and
 * the table own (NULL: none), into own_base; p is what FN entries get and usage errors name (its
 * name). A name in own takes over a shared spelling of the same name. Prints help and returns 1
 * for --help/-h (caller exits 0), returns 0 on success, or prints "perfscope NAME: <what>; see
 * 'perfscope help NAME'" and returns 2 on a usage error.
 */
int opts__parse(struct prof *p, struct cli_opts *o, unsigned int flags, const struct prof_opt *own,
		void *own_base, int argc, char **argv, const char *help);

/* "perfscope VERSION (libperfscope VERSION)": --version, and -V after a profiler's name. */
void cli_print_version(FILE *f);
/* opts__parse with only shared options, for a command without a profiler's instance. */
int cli_opts_parse(struct cli_opts *o, int argc, char **argv, unsigned int flags,
		   const char *help);

/*
 * The --help lines of table (shared: the entries in flags; an own table: flags ~0u), as
 * "  -e, --event EVENTS       text". events_help, when given, replaces the text under -e; a
 * spelling own takes over (after a short name or another spelling) is left out. Calls emit per
 * line.
 */
void opts__help(const struct prof_opt *table, unsigned int flags, const char *events_help,
		const struct prof_opt *own, void (*emit)(void *ctx, const char *line), void *ctx);

/*
 * The shared options in flags, one call each, in --help order (for `perfscope help --table
 * --format json`): the long name, the short letter (0: none), the metavariable (NULL: none), and
 * getopt's has_arg. listed is false for a spelling --help does not show on its own (an alias, or
 * one of perf-prof's options that a listed one explains).
 */
void cli_opts_each(unsigned int flags,
		   void (*fn)(void *ctx, const char *name, int short_name, const char *arg,
			      int has_arg, bool listed),
		   void *ctx);

/* Installs the library log callback writing "perfscope: ..." to stderr at the -v level (< 0:
 * none). */
void cli_setup_log(int verbose);

/*
 * Adds an event list to o->events as one more -e does: the first is kept as given (it must
 * outlive o), the next are joined with ',' into o->events_joined, and where each begins is
 * remembered (event_arg_pos: multi-trace's groups). Returns that position, or -E2BIG when the
 * lists together would not fit.
 */
int cli_opts_add_events(struct cli_opts *o, const char *events);

/* The target the command line names (-a/-C/-p/-t/-G/-- COMMAND), for target_setup. */
struct target_spec;
void cli_opts_target_spec(const struct cli_opts *o, struct target_spec *spec);
/* target_spec__tasks of that target: -p, -t or a COMMAND, not whole CPUs. */
bool cli_opts_task_target(const struct cli_opts *o);

#endif
