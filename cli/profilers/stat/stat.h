/* perfscope stat's parts: its state, its events as shown, the figures of a row, the writers. */
#ifndef PERFSCOPE_CLI_STAT_H
#define PERFSCOPE_CLI_STAT_H

#include <stdbool.h>
#include <stdint.h>

#include <perfscope/parse.h>

#include "aggr.h"
#include "prof.h"
#include "stat_derived.h"

enum stat_out {
	STAT_OUT_TEXT,
	STAT_OUT_CSV, /* -x SEP */
	STAT_OUT_JSON,
};

/* One -e event as stat shows it. */
struct stat_event {
	char *name; /* as typed (cs, cycles:u); ":u" added when the kernel is left out */
	const char *canonical; /* the library's name (context-switches) */
	bool wildcard; /* matched by a glob: its zero counts are left out unless --all */
	bool duration; /* duration_time: the wall clock; its counter is a placeholder */
	bool user_only; /* the kernel left out: this user may not count it */
	enum stat_kind kind;
	unsigned int ctx;
};

/* One row's figures: a run, an interval, the totals so far, or the mean of runs. */
struct stat_fig {
	double value; /* the count scaled for multiplexing (ns for clocks and duration_time) */
	double raw, ena, run; /* the kernel's count and times (means over runs) */
	double noise_pct; /* -r: perf's ( +- N% ); 0 for one run */
	bool counted; /* it ran: value means something */
};

/* Sums over the runs of one row (-r). */
struct stat_acc {
	struct stat_stats value;
	double raw, ena, run;
	int counted; /* runs in which it ran */
};

struct stat_ctx {
	/* options */
	long repeat; /* -r */
	const char *sep; /* -x */
	bool per_core, per_socket, all;
	enum stat_out out;
	/* events */
	char *events_text; /* -e with each duration_time made a placeholder of the same length */
	int *dur_pos; /* where each duration_time starts in it */
	int nr_dur;
	struct stat_event *ev; /* [p->nr_events] */
	int nr_ev;
	int no_kernel; /* -1: not asked yet; 1: the kernel may not be counted by this user */
	/* what one line stands for: the whole target, a CPU (--per-cpu), a core, a socket */
	struct aggr aggr;
	int unit_width; /* of the unit column (msec, Joules) */
	/* figures, [event * nr_units + unit] */
	struct psc_counts *now, *prev; /* read now; at the last interval line */
	struct stat_fig *figs;
	struct stat_acc *acc;
	struct stat_counter *cs; /* [event]: one unit's figures, for the derived ones */
	struct stat_stats wall; /* ns, over runs */
	int runs; /* runs accounted in acc */
	double last_interval; /* s since the start, at the last interval line */
	int intervals; /* interval lines printed: the header again every 25 */
	double user_s, sys_s; /* the command's CPU time (its children's too), summed over runs */
	double children_user, children_sys; /* RUSAGE_CHILDREN at the last run's end */
	uint64_t hidden; /* zero rows of wildcard events left out */
	/* --period: the counters read every period_ns, a line of slots_per_line slots each -i */
	struct prof *p;
	uint64_t period_ns;
	int slots_per_line, nr_slots;
	uint64_t *slots; /* [(event * nr_units + unit) * slots_per_line + slot] */
	uint64_t failed_reads;
};

/* stat_events.c */

/* The name of spec as typed in text (the -e list): "cs", "cycles:u"; *wildcard when a glob
 * matched it. malloc'd, NULL when out of memory. */
char *stat_typed_name(const char *text, const struct psc_event_spec *spec, bool *wildcard);
/*
 * duration_time is no kernel counter: each one in the -e list is replaced by a software event
 * (dummy) padded with spaces to the same length, so that the parser's positions (its error
 * carets, stat_typed_name) stay right. Returns 0 (s->events_text NULL when there was none), 2 on
 * a usage error (printed against the list as given), or -errno on a runtime one (printed).
 */
int stat_duration_prepare(struct prof *p, struct stat_ctx *s, const char *events);
bool stat_is_duration(const struct stat_ctx *s, const struct psc_event_spec *spec);

/* stat_counts.c */

/* The command's CPU time (its children's too) so far: RUSAGE_CHILDREN, in seconds. */
void stat_children_time(double *user, double *sys);
/* -r: the figures as the mean of the runs, with perf's spread. */
void stat_mean_figs(struct stat_ctx *s);
/* The run_end hook: each run's counts into the sums of the runs, its wall-clock and CPU time. */
int stat_run_end(struct prof *p, void *priv);
/* One interval's lines: what was counted since the last one. */
void stat_print_interval(struct prof *p, struct stat_ctx *s);
/* The totals of this run so far, as the final report shows them (SIGUSR1, a run without -r). */
void stat_print_totals(struct prof *p, struct stat_ctx *s);

/* stat_period.c */

/* From the check hook: --period's limits, and its line length. 0 or 2 (printed). */
int stat_period_check(struct prof *p, struct stat_ctx *s);
/* From the start hook: the slot timer. 0 or -errno. */
int stat_period_start(struct prof *p, struct stat_ctx *s);
/* The report: the last slot and line. */
int stat_period_report(struct prof *p, struct stat_ctx *s);

/* stat_print.c */

/*
 * Every row: figs (s->figs) over wall_ns of wall-clock time (the run, the interval).
 * interval_s >= 0: an interval line's timestamp; else totals, between stat_print_header and
 * stat_print_footer.
 */
void stat_print_rows(struct prof *p, struct stat_ctx *s, double wall_ns, double interval_s);
/* runs > 1: "(N runs)" */
void stat_print_header(struct prof *p, struct stat_ctx *s, int runs);
/* elapsed: seconds, the mean of runs (> 1: with sd, its standard error); user_sys: the
 * command's CPU time too. */
void stat_print_footer(struct prof *p, struct stat_ctx *s, double elapsed, double sd, int runs,
		       bool user_sys);

#endif
