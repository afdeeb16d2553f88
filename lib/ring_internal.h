/* Layout of struct psc_ring, shared by ring.c and evlist_mmap.c only. */
#ifndef PERFSCOPE_RING_INTERNAL_H
#define PERFSCOPE_RING_INTERNAL_H

#include "internal.h"

/* Called by consume for each LOST / LOST_SAMPLES record, with the lost count it carries. */
typedef void (*psc_ring_lost_fn)(void *ctx, const struct perf_event_header *hdr, uint64_t lost);

struct psc_ring {
	/* first: the inline psc_ring__next_fast / __consume_fast of ring.h read it through ring */
	struct psc_ring_pos pos;
	struct perf_event_mmap_page *pc;
	void *map; /* psc_ring__new_fd: the mapping, unmapped by delete */
	size_t map_len;
	int fd, cpu;
	pid_t tid;
	bool overwrite;

	/* the batch between read_init and read_done */
	uint64_t head; /* data_head at read_init */
	uint64_t prev; /* overwrite: data_head at the previous read_done */
	uint64_t released; /* forward: the data_tail last stored */
	bool clamped; /* overwrite: the range was cut to one buffer (oldest may be torn) */

	unsigned char *side; /* wrapped records are copied here */
	size_t side_len;

	psc_ring_lost_fn on_lost;
	void *lost_ctx;
};

#endif
