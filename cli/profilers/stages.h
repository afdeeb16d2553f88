/* stages: latency rows of the state-machine presets (task-state, blktrace) over the pair engine. */
#ifndef PERFSCOPE_CLI_STAGES_H
#define PERFSCOPE_CLI_STAGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hist.h"
#include "keymap.h"
#include "pair.h"
#include "profiler.h"

/*
 * task-state and blktrace follow one thing (a task, a block request) through a sequence of
 * states with one pair engine keyed by it: each event ends the pending state of its key (the
 * time spent in it goes to that state's row) and starts the next one. A row is a log-linear
 * histogram since the start and since the last interval, and the count over --than.
 */
struct stage_row {
	struct hist total, ival;
	uint64_t over, ival_over;
	uint64_t id;
};

struct stage_rows {
	struct keymap map; /* id -> struct stage_row * (heap: hist alignment) */
};

int stage_rows__init(struct stage_rows *r);
void stage_rows__exit(struct stage_rows *r);
/* The row of id, created empty; NULL when out of memory. */
struct stage_row *stage_rows__get(struct stage_rows *r, uint64_t id);
/* The rows by id, ascending; free() the array. NULL when out of memory. */
struct stage_row **stage_rows__sorted(struct stage_rows *r, size_t *nr);
void stage_rows__reset_ival(struct stage_rows *r);
void stage_row__add(struct stage_row *row, uint64_t delta, bool over);

/* Table text: "LABEL calls total min mean p50 p95 p99 p99.9 max [over_than]". */
void stage_header_text(struct prof *p, int width, const char *first, bool than);
void stage_row_text(struct prof *p, int width, const char *label, const struct hist *h, bool than,
		    uint64_t over);
/* count, min_ns ... p999_ns, total_ns, over_than as members of the open object. */
void stage_row_json(struct prof *p, const struct hist *h, uint64_t over);
/* The engine's outcomes: "  outcomes: paired N, ...; pending N (peak N, bound N)". */
void stage_outcomes_text(struct prof *p, struct pair *pr, const uint64_t *c);
void stage_outcomes_json(struct prof *p, struct pair *pr, const uint64_t *c);

/* perf-prof's time arguments: a number and an optional unit s, ms, us or ns (the default). */
uint64_t stage_monotonic_ns(void);

#endif

/*
 * -p/-t/-- COMMAND for presets whose events stay system wide (a wakeup comes from another
 * task, a completion from an interrupt): stage_watch__take moves the ids out of the options
 * (they would make the events per task) and makes a COMMAND run system wide; the profiler
 * filters on them itself. stage_watch__start stops the run, cleanly, once every -p/-t task has
 * exited (a 100 ms timer on /proc), as a followed target does.
 */
struct stage_watch {
	pid_t ids[CLI_MAX_TASKS];
	bool is_pid[CLI_MAX_TASKS]; /* -p (a process: its threads), else -t */
	int nr;
	int fd;
};

void stage_watch__take(struct prof *p, struct stage_watch *w);
int stage_watch__start(struct prof *p, struct stage_watch *w);
void stage_watch__close(struct stage_watch *w);
