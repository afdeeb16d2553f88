/* loss_watch: which rings may have lost records that their LOST record has not told yet. */
#include "loss_watch.h"

#include <errno.h>
#include <stdlib.h>

int loss_watch__init(struct loss_watch *w, int nr_rings)
{
	*w = (struct loss_watch){ .nr = nr_rings };
	w->tail = calloc(nr_rings > 0 ? nr_rings : 1, sizeof(*w->tail));
	return w->tail ? 0 : -ENOMEM;
}

void loss_watch__exit(struct loss_watch *w)
{
	free(w->tail);
	*w = (struct loss_watch){ 0 };
}

bool loss_watch__check(struct loss_watch *w, int i, const struct psc_ring *ring)
{
	uint64_t tail, used;

	if (i < 0 || i >= w->nr || psc_ring__is_overwrite(ring))
		return false;
	/* the tail first: the head, read after it, is never behind it */
	tail = psc_ring__data_tail(ring);
	used = psc_ring__data_head(ring) - w->tail[i];
	w->tail[i] = tail;
	return used + LOSS_WATCH_MARGIN > psc_ring__data_size(ring);
}
