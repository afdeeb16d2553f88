/* A keymap's entries sorted (keymap_sorted.h). */
#include <stdlib.h>

#include "keymap_sorted.h"

static int by_key(const void *a, const void *b, void *ctx)
{
	const struct keymap_entry *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

struct keymap_entry *keymap__sorted(const struct keymap *m,
				    int (*cmp)(const void *, const void *, void *), void *ctx,
				    size_t *nr)
{
	size_t total = keymap__nr(m), n = 0;
	struct keymap_entry *v = malloc((total ? total : 1) * sizeof(*v));
	struct keymap_iter it;
	uint64_t key;
	void *value;

	*nr = 0;
	if (!v)
		return NULL;
	keymap__for_each(m, &it, key, value)
	{
		v[n].key = key;
		v[n++].value = value;
	}
	qsort_r(v, n, sizeof(*v), cmp ? cmp : by_key, ctx);
	*nr = n;
	return v;
}
