/* pair_copy: an event kept past its ring round, with its origin (see pair_copy.h). */
#include "pair_copy.h"

#include <stdlib.h>

#include "sample_keep.h"

struct pair_copy *pair_copy__new(const struct psc_sample *s, int ev_idx, int cpu, uint64_t key)
{
	size_t parts = sample_keep__bytes(s);
	struct pair_copy *c = malloc(sizeof(*c) + parts);

	if (!c)
		return NULL;
	/* printed later: it owns what printing reads (the user stack and registers with dwarf) */
	sample_keep__into(&c->s, s, c + 1);
	c->ev_idx = ev_idx;
	c->cpu = cpu;
	c->key = key;
	c->bytes = sizeof(*c) + parts;
	return c;
}
