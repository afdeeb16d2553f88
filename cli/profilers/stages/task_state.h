/* task-state's parts: its priv, events and rows, shared by its setup, filters, samples, tables. */
#ifndef PERFSCOPE_CLI_TASK_STATE_H
#define PERFSCOPE_CLI_TASK_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "stages.h"
#include "tstate.h"

/*
 * One pair engine keyed by the thread id follows each task through its states:
 *
 *   switch-in (next_pid)          starts "R"  (on CPU)
 *   switch-out (prev_pid)         ends R; starts the class of prev_state: S, D, T, I ... (a
 *                                 sleep), or "RD" when it stays runnable (prev_state R or R+)
 *   wakeup (pid)                  ends a sleep, starts RD (waiting for a CPU)
 *   switch-in                     ends RD (or a sleep whose wakeup was not seen)
 *
 * So a pair's latency is the time spent in the state its start entered, and the stack of a
 * sleep's start (the switch-out) says where the task slept. A switch-out whose pending state is
 * not R (its switch-in was missed) replaces it, counted as replaced; a wakeup of a task that is
 * running or runnable changes nothing. The letters come from this kernel's format (tstate.h).
 */

/* Row ids: the sleep classes are tstate classes 1..32; these go around them. */
enum { ROW_RUN = 0, ROW_UNKNOWN = 40, ROW_RD = 41 };

enum { TS_OTHER, TS_SWITCH, TS_WAKEUP };

struct ts_ev {
	struct stage_ev se; /* first: stages.h */
	int kind;
	/* switch: prev_pid, next_pid, prev_state; wakeup: pid (read through the format) */
	const struct psc_tp_field *a, *b, *state;
	struct expr *pass_a, *pass_b; /* --filter/-t on each side, NULL: all */
};

struct ts {
	struct stage_core c; /* first: stages.h */
	/* options */
	const char *filter;
	bool only_s, only_d, no_s, no_d, perins;
	/* state */
	struct tstate_map map;
	bool map_ok;
	int cls_s, cls_d;
	uint64_t shown; /* rows shown and eligible for outliers: bit per row id < 64 */
	/* c.rows: by row id; with --perins (tid << 8 | row) too */
	/* -p/-t (the session watches them: PROF_WATCH_TASKS), and a COMMAND's process */
	pid_t pids[CLI_MAX_TASKS + 1], tids[CLI_MAX_TASKS];
	int nr_pids, nr_tids;
	struct keymap member; /* -p: tid -> 1 of the processes, 2 not */
	/* --flame-graph FILE: the stacks of the stays over --than */
	const char *flame_arg;
	char *flame_path, *fold;
	struct flame *fl;
	FILE *flame_file;
};

/* What a start carries: its row and, for --than, a copy of the event. */
struct ts_data {
	struct pair_copy *copy; /* first: stage_release_copy */
	int row;
};

struct ts_ctx {
	struct prof *p;
	int row;
};

/* ts_table.c: a row's name (R, RD, ?, or the state's letter); whether it is shown. */
const char *ts_row_name(const struct ts *ts, int row);
static inline bool ts_row_shown(const struct ts *ts, int row)
{
	return row < 64 && (ts->shown >> row) & 1;
}
int ts_interval(struct prof *p, void *priv, uint64_t now_ns);
int ts_report(struct prof *p, void *priv);

/*
 * ts_filter.c: --filter and -t as a condition on one side of an event ("" when none), the
 * kernel filters made of them, and whether a task passes them and -p in user space.
 */
void ts_side_cond(const struct ts *ts, const char *comm, const char *pid, char *buf, size_t len);
void ts_apply_filters(struct prof *p, struct ts *ts);
bool ts_side_pass(struct ts *ts, struct ts_ev *te, struct expr *pass, uint64_t tid,
		  const struct psc_sample *s);

/* ts_sample.c: a sample to the task's states, a stay to its rows and outliers. */
extern const struct pair_impl ts_impl;
int ts_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s);
void ts_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);

/* ts_flame.c: --flame-graph FILE. check: 0 or 2 (said); start: 0, 1 (said) or -errno; add: a
 * stay over --than; report: 0, or 1 when the file could not be written (said). */
int ts_flame_check(struct prof *p, struct ts *ts);
int ts_flame_start(struct prof *p, struct ts *ts);
void ts_flame_add(struct prof *p, struct ts *ts, const struct pair_entry *start,
		  const struct ts_data *d);
int ts_flame_report(struct prof *p, struct ts *ts);
void ts_flame_exit(struct ts *ts);

#endif
