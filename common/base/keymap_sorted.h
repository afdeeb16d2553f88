/* keymap_sorted: a keymap's entries as an array in the caller's order, for reports. */
#ifndef PERFSCOPE_COMMON_KEYMAP_SORTED_H
#define PERFSCOPE_COMMON_KEYMAP_SORTED_H

#include <stddef.h>
#include <stdint.h>

#include "keymap.h"

struct keymap_entry {
	uint64_t key;
	void *value; /* in the keymap: valid until it changes */
};

/*
 * Every entry of m, sorted by cmp (qsort_r's, on two struct keymap_entry, ctx its third
 * argument; NULL: by key, ascending); their number in *nr. malloc'd (for no entry too), NULL with
 * errno ENOMEM.
 */
struct keymap_entry *keymap__sorted(const struct keymap *m,
				    int (*cmp)(const void *, const void *, void *), void *ctx,
				    size_t *nr);

#endif
