/* Unit tests of common/base/bsearch.h: edges, equal keys, struct members at an offset, and random
 * arrays
 * against a linear scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "bsearch.h"

struct sym {
	const char *name;
	uint64_t addr; /* at offset 8, in a 24-byte element */
	uint32_t size;
};

static void t_edges(void **state)
{
	const uint64_t a[] = { 10, 20, 20, 20, 30, UINT64_MAX };

	(void)state;
	assert_int_equal(bsearch_last_le(a, 0, 8, 0, 10), -1);
	assert_int_equal(bsearch_last_le(NULL, 0, 24, 8, 10), -1); /* an empty table not allocated */
	assert_int_equal(bsearch_last_le(a, 1, 8, 0, 9), -1);
	assert_int_equal(bsearch_last_le(a, 1, 8, 0, 10), 0);
	assert_int_equal(bsearch_last_le(a, 1, 8, 0, UINT64_MAX), 0);
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, 0), -1);
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, 10), 0);
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, 19), 0);
	/* equal keys: the last of them */
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, 20), 3);
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, 29), 3);
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, 30), 4);
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, UINT64_MAX - 1), 4);
	assert_int_equal(bsearch_last_le(a, 6, 8, 0, UINT64_MAX), 5);
	assert_int_equal(bsearch_last_le(a, 5, 8, 0, UINT64_MAX), 4);
}

static void t_members(void **state)
{
	const struct sym syms[] = {
		{ "a", 0x1000, 16 }, { "b", 0x1010, 16 }, { "c", 0x2000, 1 }, { "d", 0x2000, 8 }
	};

	(void)state;
	assert_int_equal(sizeof(syms[0]), 24);
	assert_int_equal(BSEARCH_LAST_LE(syms, 4, addr, 0xfff), -1);
	assert_int_equal(BSEARCH_LAST_LE(syms, 4, addr, 0x1000), 0);
	assert_int_equal(BSEARCH_LAST_LE(syms, 4, addr, 0x100f), 0);
	assert_int_equal(BSEARCH_LAST_LE(syms, 4, addr, 0x1010), 1);
	assert_int_equal(BSEARCH_LAST_LE(syms, 4, addr, 0x1fff), 1);
	assert_int_equal(BSEARCH_LAST_LE(syms, 4, addr, 0x2000), 3);
	assert_int_equal(BSEARCH_LAST_LE(syms, 4, addr, 0x9999), 3);
	assert_int_equal(BSEARCH_LAST_LE(syms, 3, addr, 0x2004), 2);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void t_random(void **state)
{
	static uint64_t a[1000];
	uint64_t r = 0x2545f4914f6cdd1dull;

	(void)state;
	for (int round = 0; round < 200; round++) {
		size_t nr = (size_t)(round * 5) % 1000;

		for (size_t i = 0; i < nr; i++) {
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			a[i] = r % 5000; /* duplicates */
		}
		qsort(a, nr, sizeof(a[0]), cmp_u64);
		for (uint64_t key = 0; key < 5100; key += 7) {
			ptrdiff_t want = -1;

			for (size_t i = 0; i < nr; i++)
				if (a[i] <= key)
					want = (ptrdiff_t)i;
			assert_int_equal(bsearch_last_le(a, nr, 8, 0, key), want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_edges),
		cmocka_unit_test(t_members),
		cmocka_unit_test(t_random),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
