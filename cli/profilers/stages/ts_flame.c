/* task-state --flame-graph FILE: the stacks of the stays over --than, folded (perf-prof's). */
#include "task_state.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callchain.h"
#include "flame.h"
#include "pair_copy.h"

int ts_flame_check(struct prof *p, struct ts *ts)
{
	if (!ts->flame_arg)
		return 0;
	if (!ts->c.than)
		return prof_usage(p, "--flame-graph folds the stacks of the stays longer than --than "
				     "T (as perf-prof's task-state): give --than, e.g. --than 10ms");
	p->callchain = true; /* a flame graph is made of stacks: -g implied */
	return 0;
}

int ts_flame_start(struct prof *p, struct ts *ts)
{
	if (!ts->flame_arg)
		return 0;
	ts->flame_path = prof__flame_path(ts->flame_arg, 0);
	ts->fl = flame__new();
	ts->fold = malloc(STACK_FOLD_MAX);
	if (!ts->flame_path || !ts->fl || !ts->fold)
		return -ENOMEM;
	ts->flame_file = prof__flame_open(p, ts->flame_path);
	return ts->flame_file ? 0 : 1;
}

/* A stay over --than: the stack of the event that began it, its thread's name as the root. */
void ts_flame_add(struct prof *p, struct ts *ts, const struct pair_entry *start,
		  const struct ts_data *d)
{
	int n;

	if (!ts->fl || !d->copy || !(d->copy->s.sample_type & PERF_SAMPLE_CALLCHAIN))
		return;
	n = callchain__fold(prof__callchain(p), &d->copy->s,
			    prof__comm(p, (uint32_t)start->key, (uint32_t)start->key), ts->fold,
			    STACK_FOLD_MAX);
	if (n >= STACK_FOLD_MAX)
		n = STACK_FOLD_MAX - 1; /* cut at the leaf end: still one stack */
	if (n > 0 && flame__add(ts->fl, ts->fold, (size_t)n, 1))
		p->flame_dropped++;
}

int ts_flame_report(struct prof *p, struct ts *ts)
{
	int err;

	if (!ts->fl || !ts->flame_file)
		return 0;
	err = prof__flame_write(p, ts->fl, ts->flame_file, ts->flame_path, "stays");
	ts->flame_file = NULL; /* closed by the write */
	return err;
}

void ts_flame_exit(struct ts *ts)
{
	if (ts->flame_file)
		fclose(ts->flame_file);
	flame__delete(ts->fl);
	free(ts->flame_path);
	free(ts->fold);
}
