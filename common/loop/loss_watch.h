/* loss_watch: which rings may have lost records that their LOST record has not told yet. */
#ifndef PERFSCOPE_LOSS_WATCH_H
#define PERFSCOPE_LOSS_WATCH_H

#include <stdbool.h>
#include <stdint.h>

#include <perfscope/ring.h>

/*
 * The kernel tells a ring's loss by a LOST record that it writes only at that ring's next event:
 * until that CPU writes again, a two-event profiler reading the other rings would pair a start
 * and an end across the loss. Reading the kernel's lost counts (PERF_FORMAT_LOST) before every
 * round closes that gap but costs a read(2) per event and CPU (40% per event in multi-trace).
 *
 * A ring loses a record only when the record does not fit: when data_head - data_tail, the tail
 * being the one released before the loss, is within the largest record of the end. So if the
 * head read now minus the tail released before the previous check leaves room for the largest
 * record, the ring lost nothing between the two checks; only the rings that came that close are
 * read. The tail of the previous check is the right one: a record consumed since then was not
 * yet released when a loss between the checks happened.
 */

/*
 * The kernel refuses a record when the free space (size - 1 - used) is less than it plus the
 * LOST record it writes first: the largest record is 65528 bytes (a u16 size, 8-aligned), a LOST
 * record 24 bytes and a sample_id of at most 48. So with used + 65608 <= size nothing was lost.
 */
#define LOSS_WATCH_MARGIN (65528u + 24u + 48u + 8u)

struct loss_watch {
	int nr;
	uint64_t *tail; /* per ring: data_tail at the previous check (0 at the mapping, as the kernel's) */
};

int loss_watch__init(struct loss_watch *w, int nr_rings);
void loss_watch__exit(struct loss_watch *w);
/*
 * May ring i have lost records since the previous check of it? Takes its tail for the next one.
 * An overwrite ring is never said to (it loses by design, and has no LOST records).
 */
bool loss_watch__check(struct loss_watch *w, int i, const struct psc_ring *ring);

#endif
