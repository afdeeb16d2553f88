/* Unit tests of common/pair: every outcome on synthetic events, the bound, lost windows, the
 * impl hooks and their per-entry data, against a model under random churn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pair.h"

/* What the hooks saw. */
struct seen {
	uint64_t paired, delta_sum, last_delta, last_key;
	uint64_t unpaired[PAIR_NR_OUTCOMES];
	uint64_t no_start, started, released;
	long live; /* data allocated and not yet released */
	int fail_start;
};

struct data {
	uint64_t *size; /* heap: a leak finder's copy, freed in release */
	uint64_t tag;
};

static int h_start(void *ctx, struct pair_entry *e, void *d, const struct pair_event *ev)
{
	struct seen *s = ctx;
	struct data *dd = d;

	(void)e;
	if (s->fail_start)
		return -12;
	assert_null(dd->size); /* zeroed */
	dd->size = malloc(sizeof(uint64_t));
	*dd->size = ev->key * 10;
	dd->tag = ev->time;
	s->started++;
	s->live++;
	return 0;
}

static void h_paired(void *ctx, const struct pair_entry *st, void *d, const struct pair_event *end,
		     uint64_t delta)
{
	struct seen *s = ctx;
	struct data *dd = d;

	assert_int_equal(st->key, end->key);
	assert_int_equal(*dd->size, st->key * 10); /* the start's own data */
	assert_int_equal(dd->tag, st->time);
	assert_int_equal(delta, end->time - st->time);
	s->paired++;
	s->delta_sum += delta;
	s->last_delta = delta;
	s->last_key = st->key;
}

static void h_unpaired(void *ctx, const struct pair_entry *st, void *d, enum pair_outcome why)
{
	struct seen *s = ctx;

	(void)st;
	(void)d;
	assert_true(why != PAIR_PAIRED && why != PAIR_NO_START);
	s->unpaired[why]++;
}

static void h_no_start(void *ctx, const struct pair_event *end)
{
	(void)end;
	((struct seen *)ctx)->no_start++;
}

static void h_release(void *ctx, void *d)
{
	struct seen *s = ctx;
	struct data *dd = d;

	free(dd->size);
	dd->size = NULL;
	s->released++;
	s->live--;
}

static const struct pair_impl impl = {
	.name = "test",
	.data_size = sizeof(struct data),
	.start = h_start,
	.paired = h_paired,
	.unpaired = h_unpaired,
	.no_start = h_no_start,
	.release = h_release,
};

static struct pair_event ev(uint64_t key, uint64_t time)
{
	return (struct pair_event){ .key = key, .time = time, .cpu = (int)(key % 4), .tid = 7 };
}

static struct pair *new_pair(struct seen *s, size_t max)
{
	struct pair_opts o = { .impl = &impl, .ctx = s, .max_pending = max };
	struct pair *pr = pair__new(&o);

	assert_non_null(pr);
	return pr;
}

static void t_names(void **state)
{
	(void)state;
	assert_string_equal(pair_outcome__name(PAIR_PAIRED), "paired");
	assert_string_equal(pair_outcome__name(PAIR_NO_START), "no_start");
	assert_string_equal(pair_outcome__name(PAIR_LOST), "lost");
	for (int o = 0; o < PAIR_NR_OUTCOMES; o++) {
		assert_non_null(pair_outcome__name(o));
		assert_non_null(pair_outcome__help(o));
	}
	assert_string_equal(pair_outcome__name(PAIR_NR_OUTCOMES), "?");
}

/* Each outcome once, with the hooks called as documented. */
static void t_outcomes(void **state)
{
	struct seen s = { 0 };
	struct pair *pr = new_pair(&s, 0);
	struct pair_event e;

	(void)state;
	/* paired */
	e = ev(1, 100);
	assert_int_equal(pair__start(pr, &e), 0);
	e = ev(1, 350);
	assert_int_equal(pair__end(pr, &e), 1);
	assert_int_equal(s.last_delta, 250);
	/* no_start: the same end again */
	assert_int_equal(pair__end(pr, &e), 0);
	assert_int_equal(s.no_start, 1);
	/* replaced: a newer start of key 2 replaces the older; the pair measures from the newer */
	e = ev(2, 400);
	pair__start(pr, &e);
	e = ev(2, 500);
	pair__start(pr, &e);
	assert_int_equal(pair__nr_pending(pr), 1);
	e = ev(2, 510);
	assert_int_equal(pair__end(pr, &e), 1);
	assert_int_equal(s.last_delta, 10);
	/* reversed: an end older than its start */
	e = ev(3, 600);
	pair__start(pr, &e);
	e = ev(3, 590);
	assert_int_equal(pair__end(pr, &e), 0);
	/* open at the end */
	e = ev(4, 700);
	pair__start(pr, &e);
	e = ev(5, 710);
	pair__start(pr, &e);
	pair__finish(pr);
	assert_int_equal(pair__nr_pending(pr), 0);

	assert_int_equal(pair__count(pr, PAIR_PAIRED), 2);
	assert_int_equal(pair__count(pr, PAIR_NO_START), 1);
	assert_int_equal(pair__count(pr, PAIR_REPLACED), 1);
	assert_int_equal(pair__count(pr, PAIR_REVERSED), 1);
	assert_int_equal(pair__count(pr, PAIR_OPEN), 2);
	assert_int_equal(pair__count(pr, PAIR_EVICTED), 0);
	assert_int_equal(pair__count(pr, PAIR_LOST), 0);
	assert_int_equal(s.paired, 2);
	assert_int_equal(s.unpaired[PAIR_REPLACED], 1);
	assert_int_equal(s.unpaired[PAIR_REVERSED], 1);
	assert_int_equal(s.unpaired[PAIR_OPEN], 2);
	/* every start's data released exactly once */
	assert_int_equal(s.started, 6);
	assert_int_equal(s.released, 6);
	assert_int_equal(s.live, 0);
	pair__delete(pr);
}

/* The bound: the oldest start is evicted, counted, and the table never grows past it. */
static void t_bound(void **state)
{
	struct seen s = { 0 };
	struct pair *pr = new_pair(&s, 100);
	struct pair_event e;

	(void)state;
	for (uint64_t k = 0; k < 1000; k++) {
		e = ev(k, 1000 + k);
		pair__start(pr, &e);
		assert_true(pair__nr_pending(pr) <= 100);
	}
	assert_int_equal(pair__count(pr, PAIR_EVICTED), 900);
	assert_int_equal(s.unpaired[PAIR_EVICTED], 900);
	assert_int_equal(pair__peak_pending(pr), 100);
	/* the oldest went: keys 0..899 have no start, 900..999 do */
	assert_null(pair__find(pr, 899));
	assert_non_null(pair__find(pr, 900));
	e = ev(5, 5000);
	assert_int_equal(pair__end(pr, &e), 0);
	e = ev(950, 5000);
	assert_int_equal(pair__end(pr, &e), 1);
	assert_int_equal(s.last_delta, 5000 - 1950);
	pair__delete(pr); /* releases the 99 left without counting them */
	assert_int_equal(s.live, 0);
}

/* A loss invalidates the starts older than it, and starts older than it delivered later. */
static void t_lost(void **state)
{
	struct seen s = { 0 };
	struct pair *pr = new_pair(&s, 0);
	struct pair_event e;

	(void)state;
	for (uint64_t k = 1; k <= 10; k++) {
		e = ev(k, k * 100); /* 100 .. 1000 */
		pair__start(pr, &e);
	}
	pair__lost(pr, 550); /* starts at 100..500 may have lost their ends */
	assert_int_equal(pair__count(pr, PAIR_LOST), 5);
	assert_int_equal(s.unpaired[PAIR_LOST], 5);
	assert_int_equal(pair__nr_pending(pr), 5);
	/* their ends now find no start: no latency across the loss */
	e = ev(3, 2000);
	assert_int_equal(pair__end(pr, &e), 0);
	/* a start older than the barrier arriving late (it waited in the order backlog) */
	e = ev(42, 540);
	assert_int_equal(pair__start(pr, &e), 1);
	assert_int_equal(pair__count(pr, PAIR_LOST), 6);
	assert_null(pair__find(pr, 42));
	/* starts after the loss pair normally */
	e = ev(8, 2000);
	assert_int_equal(pair__end(pr, &e), 1);
	assert_int_equal(s.last_delta, 1200);
	/* UINT64_MAX: everything pending */
	pair__lost(pr, UINT64_MAX);
	assert_int_equal(pair__nr_pending(pr), 0);
	assert_int_equal(pair__count(pr, PAIR_LOST), 10);
	assert_int_equal(s.live, 0);
	pair__delete(pr);
}

/* Unordered starts: a loss walks every entry, not only the oldest ones. */
static void t_lost_unordered(void **state)
{
	struct seen s = { 0 };
	struct pair_opts o = { .impl = &impl, .ctx = &s, .unordered = true };
	struct pair *pr = pair__new(&o);
	struct pair_event e;

	(void)state;
	e = ev(1, 900);
	pair__start(pr, &e);
	e = ev(2, 100); /* older, inserted later */
	pair__start(pr, &e);
	pair__lost(pr, 500);
	assert_non_null(pair__find(pr, 1));
	assert_null(pair__find(pr, 2));
	assert_int_equal(pair__count(pr, PAIR_LOST), 1);
	pair__finish(pr);
	pair__delete(pr);
}

/* A start the impl refuses is counted as nomem and leaves no entry. */
static void t_start_fails(void **state)
{
	struct seen s = { .fail_start = 1 };
	struct pair *pr = new_pair(&s, 0);
	struct pair_event e = ev(1, 10);

	(void)state;
	assert_int_equal(pair__start(pr, &e), 1);
	assert_int_equal(pair__count(pr, PAIR_NOMEM), 1);
	assert_int_equal(pair__nr_pending(pr), 0);
	e = ev(1, 20);
	assert_int_equal(pair__end(pr, &e), 0);
	assert_int_equal(s.released, 0);
	pair__delete(pr);
}

/* pair__cancel: the start leaves as unwound, told and released; a missing key changes nothing. */
static void t_cancel(void **state)
{
	struct seen s = { 0 };
	struct pair *pr = new_pair(&s, 0);
	struct pair_event a = ev(1, 10), b = ev(2, 20);

	(void)state;
	pair__start(pr, &a);
	pair__start(pr, &b);
	assert_int_equal(pair__cancel(pr, 1), 1);
	assert_int_equal(pair__cancel(pr, 1), 0);
	assert_int_equal(pair__cancel(pr, 3), 0);
	assert_int_equal(pair__count(pr, PAIR_UNWOUND), 1);
	assert_int_equal(s.unpaired[PAIR_UNWOUND], 1);
	assert_int_equal(s.released, 1);
	assert_null(pair__find(pr, 1));
	assert_int_equal(pair__nr_pending(pr), 1);
	b = ev(2, 25);
	assert_int_equal(pair__end(pr, &b), 1); /* the other one still pairs */
	assert_string_equal(pair_outcome__name(PAIR_UNWOUND), "unwound");
	pair__finish(pr);
	assert_int_equal(s.live, 0);
	pair__delete(pr);
}

/* Without an impl the engine still counts, with keys 0 and UINT64_MAX like any other. */
static void t_no_impl(void **state)
{
	struct pair *pr = pair__new(NULL);
	struct pair_event e;

	(void)state;
	assert_non_null(pr);
	e = ev(0, 1);
	pair__start(pr, &e);
	e = ev(UINT64_MAX, 2);
	pair__start(pr, &e);
	e = ev(0, 5);
	assert_int_equal(pair__end(pr, &e), 1);
	e = ev(UINT64_MAX, 5);
	assert_int_equal(pair__end(pr, &e), 1);
	assert_int_equal(pair__count(pr, PAIR_PAIRED), 2);
	assert_int_equal(pair__max_pending(pr), PAIR_DEFAULT_MAX_PENDING);
	assert_true(pair__memory(pr) > 0);
	pair__delete(pr);
	pair__delete(NULL);
}

static void collect(void *arg, const struct pair_entry *e, const void *data)
{
	uint64_t *prev = arg;

	(void)data;
	assert_true(e->time >= *prev); /* oldest first */
	*prev = e->time;
}

/* Position of k in the model's pending list (oldest first), -1 when absent. */
static int find_key(const uint64_t *keys, int n, uint64_t k)
{
	for (int i = 0; i < n; i++)
		if (keys[i] == k)
			return i;
	return -1;
}

static void remove_at(uint64_t *keys, uint64_t *times, int *n, int i)
{
	memmove(keys + i, keys + i + 1, (size_t)(*n - i - 1) * sizeof(*keys));
	memmove(times + i, times + i + 1, (size_t)(*n - i - 1) * sizeof(*times));
	(*n)--;
}

/*
 * Random churn against a model (a list of pending keys, oldest first, bounded as the engine
 * is): the same outcome for every event, the same latencies, and the counts add up.
 */
static void t_model(void **state)
{
	enum { KEYS = 64, N = 200000, MAX = 40 };
	struct seen s = { 0 };
	struct pair *pr = new_pair(&s, MAX);
	uint64_t keys[MAX + 1], times[MAX + 1];
	int n = 0;
	uint64_t starts = 0, ends = 0, t = 1, prev = 0;
	uint64_t exp[PAIR_NR_OUTCOMES] = { 0 };
	unsigned int seed = 12345;

	(void)state;
	for (int i = 0; i < N; i++) {
		uint64_t k = (uint64_t)(rand_r(&seed) % KEYS);
		struct pair_event e = ev(k, t++);
		int at = find_key(keys, n, k);

		if (rand_r(&seed) & 1) {
			starts++;
			if (at >= 0) {
				exp[PAIR_REPLACED]++;
				remove_at(keys, times, &n, at);
			} else if (n == MAX) {
				exp[PAIR_EVICTED]++;
				remove_at(keys, times, &n, 0);
			}
			keys[n] = k;
			times[n++] = e.time;
			assert_int_equal(pair__start(pr, &e), 0);
		} else {
			ends++;
			if (at >= 0) {
				exp[PAIR_PAIRED]++;
				assert_int_equal(pair__end(pr, &e), 1);
				assert_int_equal(s.last_delta, e.time - times[at]);
				remove_at(keys, times, &n, at);
			} else {
				exp[PAIR_NO_START]++;
				assert_int_equal(pair__end(pr, &e), 0);
			}
		}
		assert_int_equal(pair__nr_pending(pr), n);
	}
	pair__for_each_pending(pr, collect, &prev);
	pair__finish(pr);
	exp[PAIR_OPEN] = (uint64_t)n;
	for (int o = 0; o < PAIR_NR_OUTCOMES; o++)
		assert_int_equal(pair__count(pr, o), exp[o]);
	/* each start ends as paired, replaced, evicted or open; each end as paired or no_start */
	assert_int_equal(exp[PAIR_PAIRED] + exp[PAIR_REPLACED] + exp[PAIR_EVICTED] + exp[PAIR_OPEN],
			 starts);
	assert_int_equal(exp[PAIR_PAIRED] + exp[PAIR_NO_START], ends);
	assert_true(exp[PAIR_EVICTED] > 0 && exp[PAIR_REPLACED] > 0);
	assert_int_equal(s.live, 0);
	pair__delete(pr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_names),	    cmocka_unit_test(t_outcomes),
		cmocka_unit_test(t_bound),	    cmocka_unit_test(t_lost),
		cmocka_unit_test(t_lost_unordered), cmocka_unit_test(t_start_fails),
		cmocka_unit_test(t_no_impl),	    cmocka_unit_test(t_model),
		cmocka_unit_test(t_cancel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
