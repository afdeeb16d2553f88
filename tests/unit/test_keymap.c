/* Unit tests of common/keymap: collisions, wrap-around runs, growth, removal, iteration, keys 0
 * and UINT64_MAX, against a brute-force model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "keymap.h"

struct val {
	uint64_t a;
	uint32_t b;
};

/* Every entry is reachable: no empty slot between its home and where it sits. */
static void check_runs(const struct keymap *m)
{
	size_t i, j, n = m->has_zero;

	for (i = 0; i <= m->mask; i++) {
		uint64_t key = *keymap__slot(m, i);

		if (!key)
			continue;
		n++;
		for (j = keymap__home(m, key); j != i; j = (j + 1) & m->mask)
			assert_true(*keymap__slot(m, j) != 0);
		assert_ptr_equal(keymap__find(m, key), keymap__slot(m, i) + 1);
	}
	assert_int_equal(n, keymap__nr(m));
}

/* n keys (never 0) whose home is slot `home` of m's current table. */
static void colliding_keys(const struct keymap *m, size_t home, uint64_t *keys, int n)
{
	uint64_t k = 1;

	for (int i = 0; i < n; k++)
		if (keymap__home(m, k) == home)
			keys[i++] = k;
}

static void t_basic(void **state)
{
	struct keymap m;
	struct val *v;
	bool created;

	(void)state;
	assert_int_equal(keymap__init(&m, sizeof(struct val), 0), 0);
	assert_null(keymap__find(&m, 42));
	v = keymap__insert(&m, 42, &created);
	assert_non_null(v);
	assert_true(created);
	assert_int_equal(v->a, 0);
	assert_int_equal(v->b, 0);
	assert_int_equal((uintptr_t)v % 8, 0);
	v->a = 7;
	v->b = 8;
	v = keymap__insert(&m, 42, &created);
	assert_false(created);
	assert_int_equal(v->a, 7);
	assert_int_equal(keymap__nr(&m), 1);
	assert_ptr_equal(keymap__find(&m, 42), v);
	assert_null(keymap__find(&m, 43));
	assert_true(keymap__remove(&m, 42));
	assert_false(keymap__remove(&m, 42));
	assert_null(keymap__find(&m, 42));
	assert_int_equal(keymap__nr(&m), 0);
	/* a removed key comes back zeroed */
	v = keymap__insert(&m, 42, NULL);
	assert_int_equal(v->a, 0);
	keymap__exit(&m);
}

static void t_zero_and_max(void **state)
{
	struct keymap m;
	uint64_t *v;
	bool created;

	(void)state;
	assert_int_equal(keymap__init(&m, sizeof(uint64_t), 4), 0);
	assert_null(keymap__find(&m, 0));
	assert_false(keymap__remove(&m, 0));
	v = keymap__insert(&m, 0, &created);
	assert_true(created);
	assert_int_equal(*v, 0);
	*v = 100;
	v = keymap__insert(&m, UINT64_MAX, &created);
	assert_true(created);
	*v = 200;
	assert_int_equal(*(uint64_t *)keymap__find(&m, 0), 100);
	assert_int_equal(*(uint64_t *)keymap__find(&m, UINT64_MAX), 200);
	assert_int_equal(keymap__nr(&m), 2);
	v = keymap__insert(&m, 0, &created);
	assert_false(created);
	assert_int_equal(*v, 100);
	check_runs(&m);
	assert_true(keymap__remove(&m, 0));
	assert_null(keymap__find(&m, 0));
	assert_int_equal(*(uint64_t *)keymap__find(&m, UINT64_MAX), 200);
	assert_int_equal(keymap__nr(&m), 1);
	keymap__clear(&m);
	assert_int_equal(keymap__nr(&m), 0);
	assert_null(keymap__find(&m, UINT64_MAX));
	keymap__exit(&m);
}

/* Five keys with one home: removing any of them leaves the other four found. */
static void t_collisions(void **state)
{
	uint64_t keys[5];

	(void)state;
	for (int del = 0; del < 5; del++) {
		struct keymap m;

		assert_int_equal(keymap__init(&m, sizeof(uint64_t), 16), 0);
		colliding_keys(&m, 3, keys, 5);
		for (int i = 0; i < 5; i++)
			*(uint64_t *)keymap__insert(&m, keys[i], NULL) = keys[i] * 3;
		/* no growth happened: they really share a home */
		for (int i = 0; i < 5; i++)
			assert_int_equal(keymap__home(&m, keys[i]), 3);
		check_runs(&m);
		assert_true(keymap__remove(&m, keys[del]));
		check_runs(&m);
		for (int i = 0; i < 5; i++) {
			uint64_t *v = keymap__find(&m, keys[i]);

			if (i == del) {
				assert_null(v);
			} else {
				assert_non_null(v);
				assert_int_equal(*v, keys[i] * 3);
			}
		}
		keymap__exit(&m);
	}
}

/* keymap__remove_value: a run's middle entry by its value, key 0, and a stale value. */
static void t_remove_value(void **state)
{
	struct keymap m;
	uint64_t keys[4], *v;

	(void)state;
	assert_int_equal(keymap__init(&m, sizeof(uint64_t), 16), 0);
	colliding_keys(&m, 5, keys, 4);
	for (int i = 0; i < 4; i++)
		*(uint64_t *)keymap__insert(&m, keys[i], NULL) = keys[i];
	*(uint64_t *)keymap__insert(&m, 0, NULL) = 7;
	keymap__remove_value(&m, keys[1], keymap__find(&m, keys[1]));
	check_runs(&m);
	assert_null(keymap__find(&m, keys[1]));
	for (int i = 0; i < 4; i++)
		if (i != 1)
			assert_int_equal(*(uint64_t *)keymap__find(&m, keys[i]), keys[i]);
	keymap__remove_value(&m, 0, keymap__find(&m, 0));
	assert_null(keymap__find(&m, 0));
	/* keys[3] moved back when keys[2] went: the old pointer is stale, the key decides */
	v = keymap__find(&m, keys[3]);
	keymap__remove(&m, keys[2]);
	keymap__remove_value(&m, keys[3], v);
	check_runs(&m);
	assert_null(keymap__find(&m, keys[3]));
	assert_non_null(keymap__find(&m, keys[0]));
	assert_int_equal(keymap__nr(&m), 1);
	keymap__exit(&m);
}

/*
 * A run that wraps from the last slot to the first, mixed with keys whose home is slot 0: removal
 * must move back only what may move (a key homed at 0 must not move to the last slot).
 */
static void t_wrap(void **state)
{
	uint64_t last[3], first[2];
	struct keymap m;

	(void)state;
	assert_int_equal(keymap__init(&m, 0, 0), 0);
	assert_int_equal(m.mask, 7);
	colliding_keys(&m, 7, last, 3);
	colliding_keys(&m, 0, first, 2);
	keymap__insert(&m, first[0], NULL); /* slot 0 */
	keymap__insert(&m, last[0], NULL); /* slot 7 */
	keymap__insert(&m, last[1], NULL); /* slot 1 */
	keymap__insert(&m, first[1], NULL); /* slot 2 */
	keymap__insert(&m, last[2], NULL); /* slot 3 */
	assert_int_equal(*keymap__slot(&m, 0), first[0]);
	assert_int_equal(*keymap__slot(&m, 7), last[0]);
	assert_int_equal(*keymap__slot(&m, 3), last[2]);
	check_runs(&m);
	assert_true(keymap__remove(&m, last[0]));
	check_runs(&m);
	/* last[1] moved back to 7; first[0] stayed at its home */
	assert_int_equal(*keymap__slot(&m, 7), last[1]);
	assert_int_equal(*keymap__slot(&m, 0), first[0]);
	assert_true(keymap__remove(&m, first[0]));
	check_runs(&m);
	assert_non_null(keymap__find(&m, first[1]));
	assert_non_null(keymap__find(&m, last[1]));
	assert_non_null(keymap__find(&m, last[2]));
	assert_int_equal(keymap__nr(&m), 3);
	keymap__exit(&m);
}

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Sequential, strided (pointer-like) and high-bits-only keys through many doublings. */
static void t_growth(void **state)
{
	static const uint64_t kinds[][2] = { { 1, 1 },
					     { 0x7f0000001000ull, 64 },
					     { 0, 1ull << 40 } };
	const uint64_t n = 50000;

	(void)state;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct keymap m;
		size_t max_probe = 0;

		assert_int_equal(keymap__init(&m, sizeof(uint64_t), 0), 0);
		for (uint64_t i = 0; i < n; i++)
			*(uint64_t *)keymap__insert(&m, kinds[k][0] + i * kinds[k][1], NULL) = i;
		assert_int_equal(keymap__nr(&m), n);
		assert_true(m.mask + 1 >= n * 10 / 7);
		check_runs(&m);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t key = kinds[k][0] + i * kinds[k][1];
			uint64_t *v = keymap__find(&m, key);
			size_t d;

			assert_non_null(v);
			assert_int_equal(*v, i);
			if (!key)
				continue; /* kept apart from the slots */
			d = ((size_t)(v - 1 - keymap__slot(&m, 0)) / (m.stride / 8) -
			     keymap__home(&m, key)) &
			    m.mask;
			if (d > max_probe)
				max_probe = d;
		}
		/* a pattern the hash clusters would show as runs of thousands */
		assert_true(max_probe < 100);
		for (uint64_t i = 0; i < n; i += 2)
			assert_true(keymap__remove(&m, kinds[k][0] + i * kinds[k][1]));
		check_runs(&m);
		for (uint64_t i = 0; i < n; i++)
			assert_int_equal(!keymap__find(&m, kinds[k][0] + i * kinds[k][1]),
					 i % 2 == 0);
		assert_int_equal(keymap__nr(&m), n / 2);
		keymap__exit(&m);
	}
}

/* Random inserts and removals over a small key space (many collisions) against an array. */
static void t_model(void **state)
{
	enum { SPACE = 600 };
	static uint64_t model[SPACE]; /* value + 1; 0: absent */
	struct keymap m;

	(void)state;
	memset(model, 0, sizeof(model));
	assert_int_equal(keymap__init(&m, sizeof(uint64_t), 0), 0);
	for (int op = 0; op < 200000; op++) {
		uint64_t r = rnd(), idx = r % SPACE;
		/* keys 0 and UINT64_MAX among them */
		uint64_t key = idx == 0 ? 0 : idx == 1 ? UINT64_MAX : idx * 0x10000;

		if ((r >> 32) % 3) {
			bool created;
			uint64_t *v = keymap__insert(&m, key, &created);

			assert_non_null(v);
			assert_int_equal(created, !model[idx]);
			if (!created)
				assert_int_equal(*v + 1, model[idx]);
			*v = r;
			model[idx] = r + 1;
		} else {
			assert_int_equal(keymap__remove(&m, key), model[idx] != 0);
			model[idx] = 0;
		}
		if (op % 10000 == 0)
			check_runs(&m);
	}
	check_runs(&m);
	for (uint64_t idx = 0; idx < SPACE; idx++) {
		uint64_t key = idx == 0 ? 0 : idx == 1 ? UINT64_MAX : idx * 0x10000;
		uint64_t *v = keymap__find(&m, key);

		if (model[idx]) {
			assert_non_null(v);
			assert_int_equal(*v + 1, model[idx]);
		} else {
			assert_null(v);
		}
	}
	keymap__exit(&m);
}

/* Every entry once, key 0 included; removing during the walk still visits every other once. */
static void t_iterate(void **state)
{
	enum { N = 3000 };
	static unsigned char seen[N];
	struct keymap_iter it;
	struct keymap m;
	uint64_t key, *v;
	size_t visits = 0;

	(void)state;
	assert_int_equal(keymap__init(&m, sizeof(uint64_t), 0), 0);
	for (uint64_t i = 0; i < N; i++)
		*(uint64_t *)keymap__insert(&m, i, NULL) = i; /* key 0 is i == 0 */
	memset(seen, 0, sizeof(seen));
	keymap__for_each(&m, &it, key, v)
	{
		assert_int_equal(*v, key);
		seen[key]++;
		visits++;
		/* remove the odd ones and key 0 as they come */
		if (key % 2 || !key) {
			keymap__iter_remove(&m, &it);
			keymap__iter_remove(&m, &it); /* a second call removes nothing more */
		}
	}
	assert_int_equal(visits, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(keymap__nr(&m), N / 2 - 1);
	check_runs(&m);
	visits = 0;
	keymap__for_each(&m, &it, key, v)
	{
		assert_true(key && key % 2 == 0);
		visits++;
	}
	assert_int_equal(visits, N / 2 - 1);
	keymap__exit(&m);
}

/* A walk removing all of a run that wraps around the end of the table. */
static void t_iterate_wrap(void **state)
{
	uint64_t keys[5], key;
	struct keymap_iter it;
	struct keymap m;
	void *v;
	int visits = 0;

	(void)state;
	assert_int_equal(keymap__init(&m, 0, 0), 0);
	colliding_keys(&m, 6, keys, 5); /* slots 6, 7, 0, 1, 2 */
	for (int i = 0; i < 5; i++)
		keymap__insert(&m, keys[i], NULL);
	keymap__for_each(&m, &it, key, v)
	{
		visits++;
		keymap__iter_remove(&m, &it);
		check_runs(&m);
	}
	assert_int_equal(visits, 5);
	assert_int_equal(keymap__nr(&m), 0);
	keymap__exit(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_basic),	  cmocka_unit_test(t_zero_and_max),
		cmocka_unit_test(t_collisions),	  cmocka_unit_test(t_wrap),
		cmocka_unit_test(t_growth),	  cmocka_unit_test(t_model),
		cmocka_unit_test(t_iterate),	  cmocka_unit_test(t_iterate_wrap),
		cmocka_unit_test(t_remove_value),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
