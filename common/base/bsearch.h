/* bsearch: the one binary search over arrays sorted by address (symbols, maps). */
#ifndef PERFSCOPE_COMMON_BSEARCH_H
#define PERFSCOPE_COMMON_BSEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * The index of the last of nr elements, stride bytes apart from base and sorted ascending by the
 * u64 at offset in each, whose u64 is <= key (among equal ones, the last); -1 when none is (nr is
 * 0 or key is below the first). The element found is the one that may contain key; whether it
 * does (its size, its end) is for the caller to say.
 */
static inline ptrdiff_t bsearch_last_le(const void *base, size_t nr, size_t stride, size_t offset,
					uint64_t key)
{
	size_t lo = 0, hi = nr;
	const char *b;
	uint64_t v;

	if (!nr)
		return -1; /* before any arithmetic: base may be NULL then */
	b = (const char *)base + offset;
	memcpy(&v, b, sizeof(v));
	if (v > key)
		return -1;
	/* element lo is <= key; every element from hi on is > key */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		memcpy(&v, b + mid * stride, sizeof(v));
		if (v <= key)
			lo = mid;
		else
			hi = mid;
	}
	return (ptrdiff_t)lo;
}

/* The same over an array of structs by the name of their u64 member (checked to be 8 bytes). */
#define BSEARCH_LAST_LE(arr, nr, member, key)                                          \
	bsearch_last_le((arr), (nr), sizeof(*(arr)),                                   \
			offsetof(__typeof__(*(arr)), member) +                         \
				0 * sizeof(char[sizeof((arr)->member) == 8 ? 1 : -1]), \
			(key))

#endif
