/* The k-way merge's loop, inline: a caller with constant ops gets its peek and deliver inlined. */
#ifndef PERFSCOPE_COMMON_ORDER_MERGE_H
#define PERFSCOPE_COMMON_ORDER_MERGE_H

#include "order.h"

#define ORDER_HOT static inline __attribute__((always_inline))

ORDER_HOT bool order_before(const struct order_ring *a, const struct order_ring *b)
{
	return a->time < b->time || (a->time == b->time && a->idx < b->idx);
}

ORDER_HOT void order_sift_down(struct order *o, int i)
{
	struct order_ring *x = o->heap[i];
	int c;

	while ((c = 2 * i + 1) < o->nr) {
		if (c + 1 < o->nr && order_before(o->heap[c + 1], o->heap[c]))
			c++;
		if (!order_before(o->heap[c], x))
			break;
		o->heap[i] = o->heap[c];
		i = c;
	}
	o->heap[i] = x;
}

ORDER_HOT void order_push(struct order *o, struct order_ring *r)
{
	int i = o->nr++, p;

	while (i > 0 && order_before(r, o->heap[p = (i - 1) / 2])) {
		o->heap[i] = o->heap[p];
		i = p;
	}
	o->heap[i] = r;
	r->in_heap = true;
}

ORDER_HOT void order_pop(struct order *o)
{
	o->heap[0]->in_heap = false;
	if (--o->nr > 0) {
		o->heap[0] = o->heap[o->nr];
		order_sift_down(o, 0);
	}
}

/* Ends a round: each ring's batch, and the spill of what is left (order__merge). */
bool order__merge_end(struct order *o, struct order_ring *rings, int nr);

/*
 * Defines NAME(o, rings, nr, wm, ops), order__merge (order.h) with PEEK(ops, r) and
 * DELIVER(ops, r) called by name: a caller whose PEEK and DELIVER call its own static functions
 * gets them inlined into the loop, where through the ops' pointers they would be two indirect
 * calls per record. (ops still serves order__keep_drained, off the per-record path.)
 */
#define ORDER_MERGE_DEFINE(NAME, PEEK, DELIVER)                                                  \
	static bool NAME(struct order *o, struct order_ring *rings, int nr, uint64_t wm,         \
			 const struct order_ops *ops)                                            \
	{                                                                                        \
		struct order_ring *r;                                                            \
		int i;                                                                           \
                                                                                                 \
		if (nr > o->cap)                                                                 \
			nr = o->cap;                                                             \
		o->nr = 0;                                                                       \
		for (i = 0; i < nr; i++) {                                                       \
			r = &rings[i];                                                           \
			r->in_heap = false;                                                      \
			if (order_ring__begin(r) && PEEK(ops, r))                                \
				order_push(o, r);                                                \
		}                                                                                \
		while (o->nr) {                                                                  \
			order__keep_drained(o, rings, nr, ops);                                  \
			r = o->heap[0];                                                          \
			if (r->time > wm)                                                        \
				break;                                                           \
			if (r->time) {                                                           \
				if (r->time < o->last_time)                                      \
					o->out_of_order++;                                       \
				else                                                             \
					o->last_time = r->time;                                  \
			}                                                                        \
			if (!DELIVER(ops, r)) {                                                  \
				order_ring__consume(o, r);                                       \
				break;                                                           \
			}                                                                        \
			order_ring__consume(o, r);                                               \
			/* the ring's next record replaces its head: one sift, not pop + push */ \
			if (!PEEK(ops, r))                                                       \
				order_pop(o);                                                    \
			else if (o->nr > 1)                                                      \
				order_sift_down(o, 0);                                           \
		}                                                                                \
		return order__merge_end(o, rings, nr);                                           \
	}

#endif
