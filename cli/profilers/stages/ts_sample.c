/* task-state's samples: each moves its tasks between states; a stay goes to its rows. */
#include "task_state.h"

#include <errno.h>
#include <stdlib.h>

#include "pair_copy.h"

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct ts *ts = ctx;
	struct ts_data *d = data;
	const struct ts_ctx *c = ev->ctx;

	d->row = c->row;
	if (!ts->c.than || !ev->sample || !ts_row_shown(ts, c->row))
		return 0;
	d->copy = pair_copy__new(ev->sample, ev->idx, ev->cpu, ev->key);
	return d->copy ? 0 : -ENOMEM;
}

static void print_outlier(struct prof *p, struct ts *ts, const struct pair_entry *start,
			  const struct ts_data *d, const struct pair_event *end, uint64_t delta)
{
	const char *comm = prof__comm(p, (uint32_t)start->key, (uint32_t)start->key);
	char lat[32];

	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outlier");
		json__bool(&p->json, true);
		JSON_KEY(&p->json, "tid");
		json__u64(&p->json, start->key);
		JSON_KEY(&p->json, "comm");
		json__str(&p->json, comm);
		JSON_KEY(&p->json, "state");
		json__str(&p->json, ts_row_name(ts, d->row));
		JSON_KEY(&p->json, "latency_ns");
		json__u64(&p->json, delta);
		stage_outlier_events(p, &ts->c, d->copy, end, true);
		json__end_line(&p->json);
		return;
	}
	hist_fmt(lat, sizeof(lat), delta, "ns");
	out__printf(p->out, "task-state: %llu %s in %s for %s (%llu ns)\n",
		    (unsigned long long)start->key, comm, ts_row_name(ts, d->row), lat,
		    (unsigned long long)delta);
	stage_outlier_events(p, &ts->c, d->copy, end, false);
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct ts *ts = ctx;
	struct ts_data *d = data;
	const struct ts_ctx *c = end->ctx;
	bool over = ts->c.than && delta > ts->c.than && ts_row_shown(ts, d->row);
	struct lat_row *row;

	if (!ts_row_shown(ts, d->row))
		return;
	row = lat_rows__get(&ts->c.rows, (uint64_t)d->row);
	if (row)
		lat_row__add(row, delta, over, false, true);
	if (ts->perins) {
		row = lat_rows__get(&ts->c.rows, (start->key + 1) << 8 | (uint64_t)d->row);
		if (row)
			lat_row__add(row, delta, over, false, true);
	}
	if (over) {
		ts->c.outliers++;
		print_outlier(c->p, ts, start, d, end, delta);
		ts_flame_add(c->p, ts, start, d);
	}
}

const struct pair_impl ts_impl = {
	.name = "task-state",
	.data_size = sizeof(struct ts_data),
	.start = impl_start,
	.paired = impl_paired,
	.release = stage_release_copy,
};

static bool field(struct ts_ev *te, const struct psc_tp_field *f, const struct psc_sample *s,
		  uint64_t *out)
{
	if (psc_tp_field__u64(f, s->raw.data, s->raw.size, out)) {
		te->se.errors++;
		return false;
	}
	return true;
}

/* The task enters row: ends its pending state (when it is one of ends_mask), starts row. */
static void enter(struct ts *ts, struct pair_event *pe, struct ts_ctx *c, uint64_t ends_mask,
		  int row)
{
	struct pair_entry *e = pair__find(ts->c.pr, pe->key);

	if (e) {
		const struct ts_data *d = pair_entry__cdata(e);

		if (d->row < 64 && (ends_mask >> d->row) & 1)
			pair__end(ts->c.pr, pe);
	}
	c->row = row;
	pair__start(ts->c.pr, pe); /* a pending state left as it was is replaced: counted */
}

int ts_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s)
{
	struct ts *ts = priv;
	struct ts_ev *te = ev->priv;
	struct ts_ctx c = { .p = p };
	struct pair_event pe = { .time = s->time, .cpu = cpu, .pid = s->pid, .tid = s->tid,
				 .idx = ev->idx, .sample = s, .ctx = &c };
	uint64_t a, b, state;

	stage_core__seen(&ts->c, s->time);
	if (!field(te, te->a, s, &a))
		return 0;
	if (te->kind == TS_WAKEUP) {
		struct pair_entry *e;

		if (!ts_side_pass(ts, te, te->pass_a, a, s))
			return 0;
		pe.key = a;
		e = pair__find(ts->c.pr, a);
		if (e) {
			const struct ts_data *d = pair_entry__cdata(e);

			if (d->row == ROW_RUN || d->row == ROW_RD)
				return 0; /* woken while running or runnable: no change */
		}
		enter(ts, &pe, &c, ~((1ull << ROW_RUN) | (1ull << ROW_RD)), ROW_RD);
		return 0;
	}
	if (!field(te, te->b, s, &b) || !field(te, te->state, s, &state))
		return 0;
	if (ts_side_pass(ts, te, te->pass_a, a, s)) {
		int cls = tstate_map__class(&ts->map, state);
		int row = cls < 0 ? ROW_UNKNOWN : cls == TSTATE_RUNNABLE ? ROW_RD : cls;

		pe.key = a;
		enter(ts, &pe, &c, 1ull << ROW_RUN, row);
	}
	if (ts_side_pass(ts, te, te->pass_b, b, s)) {
		pe.key = b;
		enter(ts, &pe, &c, ~(1ull << ROW_RUN), ROW_RUN);
	}
	return 0;
}

/* A loss: no state that began before it is measured (pair.h, lost windows). */
void ts_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	stage_core__lost(p, priv);
}
