/* The k-way merge behind --order: a binary min-heap of ring heads keyed by (time, ring index), and
 * the per-ring backlogs that keep the rings drained while records wait for their turn. */
#include "order.h"
#include "order_merge.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <perfscope/ring.h>

/* Chunks freed when their records are consumed are kept for reuse, up to this many. */
#define MAX_SPARE 8
#define DEFAULT_CHECK_NS (250 * 1000ull)

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
	struct order_chunk *c;

	free(o->heap);
	o->heap = NULL;
	o->nr = o->cap = 0;
	while ((c = o->spare)) {
		o->spare = c->next;
		free(c);
	}
	o->nr_spare = 0;
}

/* ---- the backlog ---- */

static struct order_chunk *chunk_get(struct order *o)
{
	struct order_chunk *c = o->spare;

	if (o->mem + sizeof(*c) > (o->mem_max ? o->mem_max : ORDER_BACKLOG_DEFAULT))
		return NULL;
	if (c) {
		o->spare = c->next;
		o->nr_spare--;
	} else if (!(c = malloc(sizeof(*c)))) {
		return NULL;
	}
	c->next = NULL;
	c->rd = c->wr = 0;
	o->mem += sizeof(*c);
	if (o->mem > o->mem_peak)
		o->mem_peak = o->mem;
	return c;
}

static void chunk_put(struct order *o, struct order_chunk *c)
{
	o->mem -= sizeof(*c);
	if (o->nr_spare < MAX_SPARE) {
		c->next = o->spare;
		o->spare = c;
		o->nr_spare++;
	} else {
		free(c);
	}
}

/* Appends a copy of hdr; false when the bound (or malloc) says no. */
static bool fifo_push(struct order *o, struct order_fifo *f, const struct perf_event_header *hdr)
{
	struct order_chunk *c = f->tail;
	uint32_t size = hdr->size;

	if (!c || ORDER_CHUNK - c->wr < size) {
		c = chunk_get(o);
		if (!c)
			return false;
		if (f->tail)
			f->tail->next = c;
		else
			f->head = c;
		f->tail = c;
	}
	memcpy((char *)c->data + c->wr, hdr, size);
	c->wr += size;
	f->bytes += size;
	f->records++;
	o->held_bytes += size;
	if (o->held_bytes > o->held_peak)
		o->held_peak = o->held_bytes;
	o->copied_bytes += size;
	o->copied_records++;
	return true;
}

static inline const struct perf_event_header *fifo_front(const struct order_fifo *f)
{
	return (const struct perf_event_header *)((const char *)f->head->data + f->head->rd);
}

void order_fifo__pop_slow(struct order *o, struct order_fifo *f)
{
	struct order_chunk *c = f->head;
	uint32_t size = fifo_front(f)->size;

	c->rd += size;
	f->bytes -= size;
	f->records--;
	o->held_bytes -= size;
	if (c->rd == c->wr) {
		/* an empty chunk goes back at once: idle rings hold no memory */
		f->head = c->next;
		if (!f->head)
			f->tail = NULL;
		chunk_put(o, c);
	}
}

void order_ring__exit(struct order *o, struct order_ring *r)
{
	struct order_chunk *c;

	while ((c = r->backlog.head)) {
		r->backlog.head = c->next;
		o->held_bytes -= c->wr - c->rd;
		chunk_put(o, c);
	}
	r->backlog = (struct order_fifo){ 0 };
}

/* ---- one ring's source: its backlog, then its ring ---- */

bool order_ring__begin(struct order_ring *r)
{
	if (!r->in_batch)
		r->in_batch = psc_ring__read_init(r->ring) == 0;
	return r->in_batch || r->backlog.records;
}

void order_ring__end(struct order_ring *r)
{
	if (r->in_batch)
		psc_ring__read_done(r->ring);
	r->in_batch = false;
}

uint64_t order__spill(struct order *o, struct order_ring *r, uint64_t keep)
{
	const struct perf_event_header *hdr;
	uint64_t n = 0;
	int pass;

	for (pass = 0; pass < 2; pass++) {
		if (!r->in_batch && psc_ring__read_init(r->ring))
			break;
		r->in_batch = true;
		/* the front goes first: what stays is the newest, needed last */
		while (psc_ring__batch_left(r->ring) >= keep) {
			hdr = psc_ring__next_fast(r->ring);
			if (!hdr) {
				if (errno == EBADMSG)
					o->corrupt++;
				break;
			}
			if (!fifo_push(o, &r->backlog, hdr)) {
				/* past the bound: the rest stays in the ring, where the kernel may
				 * lose events once it is full, and says so as without a backlog */
				o->full++;
				return n;
			}
			psc_ring__consume_fast(r->ring);
			n++;
		}
		psc_ring__read_done(r->ring);
		r->in_batch = false;
	}
	return n;
}

void order__keep_drained_slow(struct order *o, struct order_ring *rings, int nr,
			      const struct order_ops *ops)
{
	uint64_t now;
	int i;

	o->since_check = 0;
	now = mono_ns();
	if (now - o->last_check < (o->check_ns ? o->check_ns : DEFAULT_CHECK_NS))
		return;
	o->last_check = now;
	for (i = 0; i < nr; i++) {
		struct order_ring *r = &rings[i];
		bool head_in_ring = !r->backlog.records;

		/* the consumer falls behind: all of it goes, the kernel gets the whole ring */
		if (psc_ring__pending(r->ring) < psc_ring__data_size(r->ring) / 2)
			continue;
		/* a decoded head that lay in the ring now lies in the backlog: decode it there */
		if (order__spill(o, r, 0) && r->in_heap && head_in_ring && ops)
			ops->peek(ops->ctx, r);
	}
}

/* ---- the merge: its loop is inline (order_merge.h), the round's end is here ---- */

bool order__merge_end(struct order *o, struct order_ring *rings, int nr)
{
	struct order_ring *r;
	bool pending = false;
	int i;

	/* What waits for a later round leaves the ring when it takes room the kernel may need. */
	for (i = 0; i < nr; i++) {
		uint64_t left, keep;

		r = &rings[i];
		r->in_heap = false;
		order_ring__end(r);
		left = psc_ring__pending(r->ring);
		keep = o->spill_left ? o->spill_left : psc_ring__data_size(r->ring) / 4;
		if (left && left >= keep)
			order__spill(o, r, keep);
		if (r->backlog.records || psc_ring__pending(r->ring))
			pending = true;
	}
	o->nr = 0;
	return pending;
}

#define OPS_PEEK(ops, r) (ops)->peek((ops)->ctx, r)
#define OPS_DELIVER(ops, r) (ops)->deliver((ops)->ctx, r)
ORDER_MERGE_DEFINE(merge_via_ops, OPS_PEEK, OPS_DELIVER)

bool order__merge(struct order *o, struct order_ring *rings, int nr, uint64_t wm,
		  const struct order_ops *ops)
{
	return merge_via_ops(o, rings, nr, wm, ops);
}
