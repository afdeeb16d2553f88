/* hash: a u64 keymap key made of several values (a stack's addresses, a name and its module). */
#ifndef PERFSCOPE_COMMON_HASH_H
#define PERFSCOPE_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

/* h with v mixed in (boost's hash_combine, then a 64-bit multiply to spread the bits). */
static inline uint64_t hash__mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

/* FNV-1a's 64-bit offset basis: the h to start hash__fnv with. */
#define HASH_FNV_BASIS 0xcbf29ce484222325ull

/*
 * FNV-1a, 64 bits, of the n bytes at p, continuing from h (HASH_FNV_BASIS, or a previous
 * result to hash several parts as one): texts of stacks, a stack's addresses.
 */
static inline uint64_t hash__fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ull;
	return h;
}

/*
 * The first n bytes of s, or up to its NUL (a fixed-size comm): FNV-1a's multiply. Its start
 * value is not FNV's offset basis; kept because a table's order (ties in a profile) follows it.
 */
static inline uint64_t hash__str(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n && s[i]; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

#endif
