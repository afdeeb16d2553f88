/* The k-way merge behind --order: a binary min-heap of ring heads keyed by (time, ring index). */
#include "order.h"

#include <errno.h>
#include <stdlib.h>

#include <perfscope/ring.h>

int order__init(struct order *o, int nr_rings)
{
	*o = (struct order){ 0 };
	o->heap = calloc(nr_rings > 0 ? nr_rings : 1, sizeof(*o->heap));
	if (!o->heap)
		return -ENOMEM;
	o->cap = nr_rings;
	return 0;
}

void order__exit(struct order *o)
{
	free(o->heap);
	o->heap = NULL;
	o->nr = o->cap = 0;
}

static inline bool before(const struct order_ring *a, const struct order_ring *b)
{
	return a->time < b->time || (a->time == b->time && a->idx < b->idx);
}

static void sift_down(struct order *o, int i)
{
	struct order_ring *x = o->heap[i];
	int c;

	while ((c = 2 * i + 1) < o->nr) {
		if (c + 1 < o->nr && before(o->heap[c + 1], o->heap[c]))
			c++;
		if (!before(o->heap[c], x))
			break;
		o->heap[i] = o->heap[c];
		i = c;
	}
	o->heap[i] = x;
}

static void push(struct order *o, struct order_ring *r)
{
	int i = o->nr++, p;

	while (i > 0 && before(r, o->heap[p = (i - 1) / 2])) {
		o->heap[i] = o->heap[p];
		i = p;
	}
	o->heap[i] = r;
}

static void pop(struct order *o)
{
	if (--o->nr > 0) {
		o->heap[0] = o->heap[o->nr];
		sift_down(o, 0);
	}
}

bool order__merge(struct order *o, struct order_ring *rings, int nr, uint64_t wm,
		      const struct order_ops *ops)
{
	struct order_ring *r;
	bool pending;
	int i;

	o->nr = 0;
	for (i = 0; i < nr && i < o->cap; i++) {
		r = &rings[i];
		r->in_batch = psc_ring__read_init(r->ring) == 0;
		if (r->in_batch && ops->peek(ops->ctx, r))
			push(o, r);
	}
	while (o->nr && (r = o->heap[0])->time <= wm) {
		if (r->time) {
			if (r->time < o->last_time)
				o->out_of_order++;
			else
				o->last_time = r->time;
		}
		if (!ops->deliver(ops->ctx, r)) {
			psc_ring__consume(r->ring);
			break;
		}
		psc_ring__consume(r->ring);
		/* The ring's next record replaces its head: one sift instead of pop + push. */
		if (ops->peek(ops->ctx, r))
			sift_down(o, 0);
		else
			pop(o);
	}
	pending = o->nr > 0;
	for (i = 0; i < nr && i < o->cap; i++) {
		if (rings[i].in_batch)
			psc_ring__read_done(rings[i].ring);
		rings[i].in_batch = false;
	}
	return pending;
}
