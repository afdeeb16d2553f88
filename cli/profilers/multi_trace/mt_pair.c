/* multi-trace's samples: each to the pairs of its group, and a pair's latency to its rows. */
#include "multi_trace.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>

#include "expr.h"
#include "heatmap.h"

/* ---- the impl: what a pair does ---- */

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct mt_link *lk = ctx;
	struct mt_data *d = data;

	if (lk->kmem)
		mt_kmem__alloc(ev->ctx, lk, d, ev);
	if (!lk->mt->print_outliers || !ev->sample)
		return 0;
	d->copy = pair_copy__new(ev->sample, ev->idx, ev->cpu, ev->key);
	return d->copy ? 0 : -ENOMEM;
}

static void impl_release(void *ctx, void *data)
{
	struct mt_data *d = data;

	/* not free(NULL) per pair: a call into libc per event, and a trap when free is probed */
	if (d->copy) {
		free(d->copy);
		d->copy = NULL;
	}
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct mt_link *lk = ctx;
	struct mt *mt = lk->mt;
	struct prof *p = end->ctx;
	bool over = (mt->than && delta > mt->than) || (mt->lower && delta < mt->lower);
	bool error = false;

	if (lk->kmem)
		mt_kmem__free(lk, data);
	if (mt->impl == MT_SYSCALLS) {
		/* per system call only: the pair's total is their sum, merged when printed */
		struct mt_ev *me = p->events_arr[end->idx].priv;
		const struct psc_sample *s = end->sample;
		uint64_t id = UINT64_MAX, ret;
		struct lat_row *st;

		if (me->sc_id && s && !psc_tp_field__u64(me->sc_id, s->raw.data, s->raw.size, &ret))
			id = ret;
		if (me->sc_ret && s &&
		    !psc_tp_field__u64(me->sc_ret, s->raw.data, s->raw.size, &ret))
			error = (int64_t)ret < 0;
		/* --perins: a row per thread and call, the thread (the pair's key) above the id */
		if (mt->perins)
			st = lk->last && lk->last->id == id && lk->last->tid == start->key
				     ? lk->last
				     : lat_rows__get(&lk->by, start->key << 20 | (id & 0xfffff));
		else
			st = lk->last && lk->last->id == id ? lk->last : lat_rows__get(&lk->by, id);
		if (st && mt->perins) {
			st->id = id;
			st->tid = start->key;
		}
		if (st) {
			lk->last = st;
			lat_row__add(st, delta, over, error, mt->ival);
		} else {
			lk->dropped++;
		}
	} else {
		if (mt->perins) {
			struct lat_row *st = lat_rows__get(&lk->by, start->key);

			if (st)
				lat_row__add(st, delta, over, false, mt->ival);
			else
				lk->dropped++;
		}
		lat_row__add(lk->all, delta, over, error, mt->ival);
	}
	if (lk->hm)
		heatmap__add(lk->hm, end->time, delta);
	if (over) {
		mt->outliers++;
		mt_outlier(lk, start, data, end, delta);
	}
}

const struct pair_impl mt_pair_impl = {
	.name = "multi-trace",
	.data_size = sizeof(struct mt_data),
	.start = impl_start,
	.paired = impl_paired,
	.release = impl_release,
};

/* ---- events ---- */

static bool eval_u64(struct expr *e, const struct psc_sample *s, uint64_t *out, uint64_t *errors)
{
	struct expr_val v;

	if (expr__eval(e, s->raw.data, s->raw.size, s, &v)) {
		(*errors)++;
		return false;
	}
	*out = v.i;
	return true;
}

int mt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s)
{
	struct mt *mt = priv;
	struct mt_ev *me = ev->priv;
	struct pair_event pe = { .time = s->time,
				 .cpu = cpu,
				 .pid = s->pid,
				 .tid = s->tid,
				 .idx = ev->idx,
				 .sample = s,
				 .ctx = p };
	uint64_t role = 3;
	int g = me->group;

	if (s->time > mt->last_time)
		mt->last_time = s->time;
	if (mt->hooks && mt->hooks->pass) {
		int pass = mt->hooks->pass(p, mt, ev, s);

		if (pass <= 0) {
			me->pass_errors += pass < 0;
			return 0;
		}
	}
	/* the thread; the idle tasks are all tid 0, one per CPU: told apart by their CPU */
	pe.key = s->tid ? s->tid : (1ull << 63) | (uint32_t)cpu;
	if (mt->key_cpu)
		pe.key = (uint32_t)cpu;
	if (me->key && !eval_u64(me->key, s, &pe.key, &me->key_errors))
		return 0;
	if (mt->dt)
		mt_detail__add(p, mt, ev->idx, cpu, s, pe.key);
	if (me->untraced)
		return me->trigger ? mt_interval(p, mt, s->time) : 0;
	if (me->role && !eval_u64(me->role, s, &role, &me->role_errors))
		return 0;
	if (mt->call) {
		mt_call__sample(mt, me, &pe);
		role = 0;
	}
	/* the end of the pair into this group first, then the start of the pair out of it */
	if (role & 2) {
		int l = g - 1 < 0 ? (mt->cycle ? mt->nr_groups - 1 : -1) : g - 1;

		if (l >= 0 && l < mt->nr_links)
			pair__end(mt->links[l].pr, &pe);
	}
	if ((role & 1) && g < mt->nr_links)
		pair__start(mt->links[g].pr, &pe);
	if (mt->dt)
		mt_detail__flush(p, mt, false);
	/* perf-prof's trigger: the event, not a timer, says when the interval's tables come */
	if (me->trigger)
		return mt_interval(p, mt, s->time);
	return 0;
}

/*
 * A loss: the kernel dropped events before now. No start older than now may pair any more (its
 * end may be among those lost); the sample clock is CLOCK_MONOTONIC (session.c).
 */
void mt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct mt *mt = priv;
	uint64_t barrier = mono_ns();

	mt->lost_windows++;
	for (int l = 0; l < mt->nr_links; l++)
		pair__lost(mt->links[l].pr, barrier);
}
