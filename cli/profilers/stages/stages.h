/* stages: latency rows of the state-machine presets (task-state, blktrace) over the pair engine. */
#ifndef PERFSCOPE_CLI_STAGES_H
#define PERFSCOPE_CLI_STAGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hist.h"
#include "keymap.h"
#include "lat_row.h"
#include "pair.h"
#include "pair_copy.h"
#include "profiler.h"

struct expr;

/*
 * task-state and blktrace follow one thing (a task, a block request) through a sequence of
 * states with one pair engine keyed by it: each event ends the pending state of its key (the
 * time spent in it goes to that state's row) and starts the next one. A row is a latency row
 * (lat_row.h) with the count over --than; its text has a total column.
 */

/*
 * What task-state and blktrace share around their own logic: the pair engine, the rows, --than
 * with its outliers' events, -p/-t, losses, intervals and the final report. It is the first
 * member of each preset's priv (so the hooks' priv is a struct stage_core too), and struct
 * stage_ev the first member of each event's priv.
 */
struct stage_core {
	uint64_t than;
	long max_pending;
	bool inited; /* rows */
	struct pair *pr;
	struct lat_rows rows; /* by row id */
	uint64_t ival_counts[PAIR_NR_OUTCOMES];
	uint64_t outliers, lost_windows, last_time;
};

struct stage_ev {
	uint64_t errors; /* fields that could not be read: skipped, reported */
};

/* The check hook's part: the printer under --than (prof__use_printer), the rows. */
int stage_core__init(struct prof *p, struct stage_core *c);
/* The start hook's part: the pair engine over impl (ctx: the preset), stacks in the printer. */
int stage_core__start(struct prof *p, struct stage_core *c, const struct pair_impl *impl,
		      void *ctx);
/* text as ev's kernel filter; refused (said under -v): the samples are filtered in user space. */
void stage_apply_filter(struct prof *p, struct prof_event *ev, const char *text);
/* An integer expression over ev; an error says which fields the event has. 0 or -errno. */
int stage_compile(struct prof *p, struct prof_event *ev, const char *text, struct expr **out);
/* pair_impl.release for start data whose first member is a struct pair_copy * (the --than copy). */
void stage_release_copy(void *ctx, void *data);
/* A sample's time, kept for the lost-window barrier of an unordered run. */
static inline void stage_core__seen(struct stage_core *c, uint64_t time)
{
	if (time > c->last_time)
		c->last_time = time;
}
/* The lost hook: nothing begun before the loss is measured (pair.h, lost windows). */
void stage_core__lost(struct prof *p, struct stage_core *c);
/* An outlier's two events after its own members: "start" and "end" (JSON) or indented lines. */
void stage_outlier_events(struct prof *p, struct stage_core *c, const struct pair_copy *start,
			  const struct pair_event *end, bool json);

/* How a preset names its rows in the table. */
struct stage_table {
	int width; /* of the first column */
	const char *head; /* its header */
	void *ctx; /* the preset */
	/* the members naming a row (JSON) / its label (text) */
	void (*json_row)(struct prof *p, void *ctx, const struct lat_row *r);
	void (*text_label)(struct prof *p, void *ctx, const struct lat_row *r, char *buf,
			   size_t len);
	/* the members naming the outcomes line (JSON) */
	void (*json_outcomes)(struct prof *p, void *ctx);
};

/* The interval hook: a time line (text), the interval's rows and outcomes, then a new interval. */
int stage_core__interval(struct prof *p, struct stage_core *c, const struct stage_table *t);
/* The report hook: the rows since the start, outliers, lost windows (what: "states" ...) and
 * the events skipped. */
int stage_core__report(struct prof *p, struct stage_core *c, const struct stage_table *t,
		       const char *what);
/* The teardown hook's part: the engine, the rows, the events' printers. */
void stage_core__exit(struct prof *p, struct stage_core *c);

#endif
