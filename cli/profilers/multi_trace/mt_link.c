/* multi-trace's links: a pair of groups' engine, rows and heatmap, set up and released. */
#include "multi_trace.h"

#include <errno.h>

#include "heatmap.h"

int mt_link__init(struct prof *p, struct mt *mt, struct mt_link *lk, const struct pair_impl *impl)
{
	struct pair_opts po = { .impl = impl,
				.ctx = lk,
				.max_pending = (size_t)mt->max_pending,
				.unordered = !p->order };

	lk->mt = mt;
	lk->pr = pair__new(&po);
	lk->all = lat_row__new(0);
	if (!lk->pr || !lk->all || lat_rows__init(&lk->by))
		return -ENOMEM;
	if (mt->heatmap) {
		lk->hm = heatmap__new(NULL);
		if (!lk->hm)
			return -errno;
	}
	return 0;
}

void mt_link__exit(struct mt_link *lk)
{
	pair__delete(lk->pr);
	lat_row__delete(lk->all);
	lat_rows__exit(&lk->by);
	heatmap__delete(lk->hm);
	mt_kmem__delete(lk->kmem);
}
