/* Layout of struct psc_ring, shared by ring.c and evlist_mmap.c only. */
#ifndef PERFSCOPE_RING_INTERNAL_H
#define PERFSCOPE_RING_INTERNAL_H

#include "internal.h"

/* Called by consume for each LOST / LOST_SAMPLES record, with the lost count it carries. */
typedef void (*psc_ring_lost_fn)(void *ctx, const struct perf_event_header *hdr, uint64_t lost);

struct psc_ring {
	struct perf_event_mmap_page *pc;
	unsigned char *data;
	uint64_t mask; /* data_size - 1 */
	size_t data_size;
	void *map; /* psc_ring__new_fd: the mapping, unmapped by delete */
	size_t map_len;
	int fd, cpu;
	pid_t tid;
	bool overwrite;

	/* the batch between read_init and read_done */
	uint64_t start; /* local tail: where the next record starts */
	uint64_t end; /* forward: data_head at read_init; overwrite: end of the range */
	uint64_t head; /* data_head at read_init */
	uint64_t prev; /* overwrite: data_head at the previous read_done */
	uint64_t released; /* forward: the data_tail last stored */
	bool clamped; /* overwrite: the range was cut to one buffer (oldest may be torn) */
	const struct perf_event_header *cur; /* returned by next, not yet consumed */

	unsigned char *side; /* wrapped records are copied here */
	size_t side_len;

	struct psc_ring_stats stats;
	psc_ring_lost_fn on_lost;
	void *lost_ctx;
};

#endif
