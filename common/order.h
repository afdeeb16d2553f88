/* Cross-CPU time order: a k-way merge of ring heads (min-heap by timestamp) up to a watermark. */
#ifndef PERFSCOPE_COMMON_ORDER_H
#define PERFSCOPE_COMMON_ORDER_H

#include <stdbool.h>
#include <stdint.h>

#include <perfscope/record.h>

struct psc_ring;
struct psc_evsel;

/* One ring as the merge sees it: its head record, decoded once, and that record's time. */
struct order_ring {
	struct psc_ring *ring;
	int idx, cpu;
	bool in_batch; /* read_init succeeded this round */
	uint64_t time; /* of the head; 0 = no timestamp (delivered at once) */
	struct psc_evsel *evsel; /* of the head, NULL when unknown */
	struct psc_record rec; /* the head, decoded */
};

struct order {
	struct order_ring **heap;
	int nr, cap;
	uint64_t last_time; /* newest timestamp delivered */
	uint64_t out_of_order; /* delivered although older than last_time */
};

int order__init(struct order *o, int nr_rings);
void order__exit(struct order *o);

/*
 * Callbacks of a merge. peek decodes the record at r's tail into r (time, rec, evsel) and
 * returns false at the end of r's batch; deliver hands r's head to the profiler and returns
 * false to stop the merge. The merge consumes each delivered record.
 */
struct order_ops {
	bool (*peek)(void *ctx, struct order_ring *r);
	bool (*deliver)(void *ctx, struct order_ring *r);
	void *ctx;
};

/*
 * One round over rings[0..nr): read_init each, deliver every record stamped at or before wm in
 * time order (ties in ring order), read_done each. Records after wm stay in their ring for the
 * next round. Returns true when such records were left.
 */
bool order__merge(struct order *o, struct order_ring *rings, int nr, uint64_t wm,
		      const struct order_ops *ops);

#endif
