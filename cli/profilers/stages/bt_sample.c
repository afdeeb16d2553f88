/* blktrace's samples: each ends its request's earlier stage and starts its own; rows, outliers. */
#include "blktrace.h"

#include <errno.h>
#include <stdio.h>

#include "expr.h"
#include "pair_copy.h"

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct bt *bt = ctx;
	struct bt_data *d = data;
	const struct bt_ctx *c = ev->ctx;

	d->stage = c->stage;
	d->first = c->first;
	if (!bt->c.than || !ev->sample)
		return 0;
	d->copy = pair_copy__new(ev->sample, ev->idx, ev->cpu, ev->key);
	return d->copy ? 0 : -ENOMEM;
}

static void print_outlier(struct prof *p, struct bt *bt, const struct pair_entry *start,
			  const struct bt_data *d, const struct pair_event *end, uint64_t id,
			  uint64_t delta)
{
	char name[64], lat[32];

	bt_row_name(id, name, sizeof(name));
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outlier");
		json__bool(&p->json, true);
		JSON_KEY(&p->json, "stage");
		json__str(&p->json, name);
		JSON_KEY(&p->json, "sector");
		json__u64(&p->json, start->key);
		JSON_KEY(&p->json, "latency_ns");
		json__u64(&p->json, delta);
		stage_outlier_events(p, &bt->c, d->copy, end, true);
		json__end_line(&p->json);
		return;
	}
	hist_fmt(lat, sizeof(lat), delta, "ns");
	out__printf(p->out, "blktrace: sector %llu %s %s (%llu ns)\n",
		    (unsigned long long)start->key, name, lat, (unsigned long long)delta);
	stage_outlier_events(p, &bt->c, d->copy, end, false);
}

static void add(struct bt *bt, struct prof *p, const struct pair_entry *start,
		const struct bt_data *d, const struct pair_event *end, uint64_t id, uint64_t delta)
{
	struct lat_row *row = lat_rows__get(&bt->c.rows, id);
	bool over = bt->c.than && delta > bt->c.than;

	if (row)
		lat_row__add(row, delta, over, false, true);
	if (over) {
		bt->c.outliers++;
		print_outlier(p, bt, start, d, end, id, delta);
	}
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct bt *bt = ctx;
	struct bt_data *d = data;
	const struct bt_ctx *c = end->ctx;

	add(bt, c->p, start, d, end, (uint64_t)(d->stage * BT_NR_STAGES + c->stage), delta);
	if (c->stage == BT_NR_STAGES - 1 && end->time >= d->first)
		add(bt, c->p, start, d, end, BT_ROW_TOTAL, end->time - d->first);
}

const struct pair_impl bt_impl = {
	.name = "blktrace",
	.data_size = sizeof(struct bt_data),
	.start = impl_start,
	.paired = impl_paired,
	.release = stage_release_copy,
};

int bt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s)
{
	struct bt *bt = priv;
	struct bt_ev *be = ev->priv;
	struct bt_ctx c = { .p = p, .stage = be->stage, .first = s->time };
	struct pair_event pe = { .time = s->time, .cpu = cpu, .pid = s->pid, .tid = s->tid,
				 .idx = ev->idx, .sample = s, .ctx = &c };
	struct expr_val v;
	struct pair_entry *e;
	bool ours = false;

	stage_core__seen(&bt->c, s->time);
	if (expr__eval(be->dev, s->raw.data, s->raw.size, s, &v)) {
		be->se.errors++;
		return 0;
	}
	for (int d = 0; d < (be->stage == 0 ? bt->nr_devs : 1); d++)
		ours |= v.i == bt->devs[d];
	if (!ours) {
		bt->other_dev++; /* the kernel did not take the filter */
		return 0;
	}
	if (expr__eval(be->key, s->raw.data, s->raw.size, s, &v)) {
		be->se.errors++;
		return 0;
	}
	pe.key = v.i;
	e = pair__find(bt->c.pr, pe.key);
	if (e) {
		const struct bt_data *d = pair_entry__cdata(e);

		if (d->stage < be->stage) {
			c.first = d->first;
			pair__end(bt->c.pr, &pe);
		}
		/* else a stage again or backwards (a requeue, a new request): replaced, counted */
	} else if (be->stage == BT_NR_STAGES - 1) {
		pair__end(bt->c.pr, &pe); /* counted as no_start: it began before the run */
		return 0;
	}
	if (be->stage < BT_NR_STAGES - 1)
		pair__start(bt->c.pr, &pe);
	return 0;
}

void bt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	stage_core__lost(p, priv);
}
