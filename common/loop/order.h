/* Cross-CPU time order: a k-way merge of ring heads (min-heap by timestamp) up to a watermark,
 * with a bounded in-memory backlog per ring so that what waits for its turn leaves the ring. */
#ifndef PERFSCOPE_COMMON_ORDER_H
#define PERFSCOPE_COMMON_ORDER_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfscope/record.h>

#include <perfscope/ring.h>

struct psc_evsel;

/*
 * Records copied out of a ring, oldest first: a list of chunks (ORDER_CHUNK bytes each, one
 * malloc per chunk, never per record), records 8-byte aligned and contiguous, so a record is
 * decoded where it lies, as in the ring.
 */
#define ORDER_CHUNK (64u * 1024) /* > the largest record (header.size is a u16) */

struct order_chunk {
	struct order_chunk *next;
	uint32_t rd, wr; /* offsets of the first record not yet consumed, and of the free space */
	uint64_t data[ORDER_CHUNK / 8]; /* u64: records stay 8-byte aligned */
};

struct order_fifo {
	struct order_chunk *head, *tail;
	uint64_t bytes; /* of the records held */
	uint64_t records;
};

#define ORDER_ID_SLOTS \
	8 /* direct-mapped by identifier: a ring's ids of one evlist differ in their low bits */

/*
 * One ring as the merge sees it: its source is its backlog, then its ring (per-ring order is
 * kept), and its head record, decoded once, and that record's time.
 */
struct order_ring {
	struct psc_ring *ring;
	int idx, cpu;
	bool in_batch; /* between the ring's read_init and read_done */
	bool in_heap; /* order__merge: its head is in the heap */
	uint64_t time; /* of the head; 0 = no timestamp (delivered at once) */
	struct psc_evsel *evsel; /* of the head, NULL when unknown */
	int evsel_idx; /* the session's row of evsel (its evlist index; unknown: the last row) */
	const struct perf_event_attr *attr; /* what the head was decoded with; NULL: none yet */
	/* what samples' identifiers were found to be: a ring's samples come from a few events */
	struct order_id_slot {
		uint64_t id;
		struct psc_evsel *evsel;
		const struct perf_event_attr *attr;
		int evsel_idx;
		bool ok;
	} ids[ORDER_ID_SLOTS];
	unsigned int peeks; /* records decoded from this source (the session's release pacing) */
	struct psc_record rec; /* the head, decoded */
	bool rec_ok; /* rec decoded without error: psc_record__parse_again may follow */
	struct order_fifo backlog; /* records taken out of the ring that wait for their turn */
};

/*
 * Default bound on the memory of all backlogs together: 64 MiB. At the ~100 to 300 bytes of a
 * tracepoint or stack sample that is 200,000 to 650,000 records, a quarter of a second or more
 * of the highest rates one consumer thread keeps up with (1 to 3 million events per second
 * here), against 7 ms for perf's 512 KiB ring: a consumer stalled that long (a page-in, a
 * burst of slow output, a loaded machine) loses nothing. It is held only while records wait,
 * and it is small beside perf script, which reads a whole perf.data (178 MiB for 2 M events).
 */
#define ORDER_BACKLOG_DEFAULT (64ull << 20)

struct order {
	struct order_ring **heap;
	int nr, cap;
	uint64_t last_time; /* newest timestamp delivered */
	uint64_t out_of_order; /* delivered although older than last_time */

	/* the backlogs: set mem_max (0: ORDER_BACKLOG_DEFAULT) after order__init */
	uint64_t mem_max; /* bound on the chunk memory of every backlog together */
	uint64_t mem; /* chunk memory in use */
	uint64_t mem_peak;
	uint64_t held_bytes, held_peak; /* record bytes waiting in backlogs, and their peak */
	uint64_t copied_bytes, copied_records; /* taken out of rings into a backlog */
	uint64_t full; /* times records had to stay in their ring: mem_max reached */
	uint64_t corrupt; /* bogus records met while copying (the rest of that batch skipped) */
	uint64_t check_ns; /* how often a long merge looks at the rings' fill; 0: 250 us */
	uint64_t spill_left; /* after a merge, a ring is spilled down to less than this; 0: 1/4 */
	uint64_t last_check;
	unsigned int since_check; /* deliveries since the last look at the clock */
	struct order_chunk *spare; /* freed chunks kept for reuse */
	int nr_spare;
};

int order__init(struct order *o, int nr_rings);
/* Frees the heap and the chunks of the spare list; backlogs are freed by order_ring__exit. */
void order__exit(struct order *o);
/* Frees r's backlog (its records are dropped). */
void order_ring__exit(struct order *o, struct order_ring *r);

/*
 * Reading one ring's source: begin starts a batch of the ring (read_init) and says whether the
 * backlog or the ring holds anything; next returns the front record (the backlog's first,
 * else the ring's next; NULL at the end, errno EBADMSG on a bogus ring record), without
 * removing it; consume removes it; end ends the ring's batch (read_done).
 */
bool order_ring__begin(struct order_ring *r);
void order_ring__end(struct order_ring *r);
void order_fifo__pop_slow(struct order *o, struct order_fifo *f);

/* Removes the front record of f; inline but for the last record of a chunk. */
static inline void order_fifo__pop(struct order *o, struct order_fifo *f)
{
	struct order_chunk *c = f->head;
	const struct perf_event_header *hdr = (const void *)((const char *)c->data + c->rd);
	uint32_t size = hdr->size;

	if (__builtin_expect(c->rd + size >= c->wr, 0)) {
		order_fifo__pop_slow(o, f);
		return;
	}
	c->rd += size;
	f->bytes -= size;
	f->records--;
	o->held_bytes -= size;
}

/* Inline: once per record, and what they add to the ring's own calls must stay a branch. */
static inline const struct perf_event_header *order_ring__next(struct order_ring *r)
{
	const struct order_chunk *c = r->backlog.head;

	if (c)
		return (const struct perf_event_header *)((const char *)c->data + c->rd);
	if (r->in_batch)
		return psc_ring__next_fast(r->ring);
	errno = 0;
	return NULL;
}

static inline void order_ring__consume(struct order *o, struct order_ring *r)
{
	/*
	 * The front is the backlog's whenever it holds anything: a spill between next and consume
	 * moved the ring's record (the one next returned) to the backlog's front.
	 */
	if (r->backlog.head)
		order_fifo__pop(o, &r->backlog);
	else
		psc_ring__consume_fast(r->ring);
}

/*
 * Copies records of r's ring, from its next one on, to the end of its backlog and consumes them,
 * until less than keep bytes are left in the ring (keep 0 or 1: all of them); then hands the
 * ring's space back to the kernel (read_done) and does the same once more for what the kernel
 * wrote meanwhile. The oldest go, as the merge needs them first; the newest stay, to be decoded
 * in place later: a copy costs the record a memmove and the process memory, so only what takes
 * room the kernel may need is moved. Stops where the bound would be passed (counted in full):
 * those records stay in the ring. Returns the number of records copied.
 */
uint64_t order__spill(struct order *o, struct order_ring *r, uint64_t keep);

/*
 * While delivering a long batch (the merge, or a plain drain of each ring in turn), call this
 * between records: every 64 calls it reads the clock, and every check_ns it spills each ring
 * that is half full or more (a ring being read is a quarter full when it wakes us up), so a slow
 * consumer does not let the kernel lose what memory can hold. Rings whose decoded head (in the
 * merge's heap) was in the ring are peeked again.
 */
struct order_ops;
void order__keep_drained_slow(struct order *o, struct order_ring *rings, int nr,
			      const struct order_ops *ops);
#define ORDER_CHECK_EVERY 64
static inline void order__keep_drained(struct order *o, struct order_ring *rings, int nr,
				       const struct order_ops *ops)
{
	if (__builtin_expect(++o->since_check >= ORDER_CHECK_EVERY, 0))
		order__keep_drained_slow(o, rings, nr, ops);
}

/*
 * Callbacks of a merge. peek decodes the record at the front of r's source (order_ring__next)
 * into r (time, rec, evsel) and returns false at its end; deliver hands r's head to the
 * profiler and returns false to stop the merge. The merge consumes each delivered record.
 */
struct order_ops {
	bool (*peek)(void *ctx, struct order_ring *r);
	bool (*deliver)(void *ctx, struct order_ring *r);
	void *ctx;
};

/*
 * One round over rings[0..nr): begin each, deliver every record stamped at or before wm in
 * time order (ties in ring order), taking each ring's backlog before its ring; then end each,
 * and move the oldest of what is left in a ring (newer than wm) to its backlog (order__spill)
 * until less than a quarter of the ring (spill_left) waits in it, so that the kernel has the
 * ring for new events. The rest stays where it is, to be decoded in place later: the ring is
 * then three quarters free and its next wakeup comes a quarter later, while copying all the
 * slack of a steady stream (2 ms of it) would cost every event a copy and the process that much
 * memory, for nothing: at a million 56-byte events a second, 2 ms is 112 KiB, about a quarter of
 * a 512 KiB ring.
 * Returns true when records are left for a later round (in backlogs or rings).
 */
bool order__merge(struct order *o, struct order_ring *rings, int nr, uint64_t wm,
		  const struct order_ops *ops);

#endif
