/* Unit tests of common/order: k-way merge of synthetic rings by time, watermark, out-of-order
 * counting. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <perfscope/ring.h>

#include "order.h"

#define DATA_SIZE 4096

/* A memory ring: control page + DATA_SIZE bytes; records are {header, u64 time} (16 bytes). */
struct fake {
	void *mem;
	size_t page;
	uint64_t head;
	struct psc_ring *ring;
};

static void fake_init(struct fake *f)
{
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	assert_int_equal(posix_memalign(&f->mem, f->page, f->page + DATA_SIZE), 0);
	memset(f->mem, 0, f->page + DATA_SIZE);
	f->head = 0;
	f->ring = psc_ring__new_mem(f->mem, f->page + DATA_SIZE, false);
	assert_non_null(f->ring);
}

static void fake_exit(struct fake *f)
{
	psc_ring__delete(f->ring);
	free(f->mem);
}

static void fake_put(struct fake *f, uint64_t time)
{
	struct perf_event_mmap_page *pc = f->mem;
	char *data = (char *)f->mem + f->page;
	struct perf_event_header h = { .type = PERF_RECORD_SAMPLE, .size = 16 };
	char rec[16];
	size_t i;

	memcpy(rec, &h, 8);
	memcpy(rec + 8, &time, 8);
	/* byte by byte so that a record may straddle the end of the buffer */
	for (i = 0; i < sizeof(rec); i++)
		data[(f->head + i) % DATA_SIZE] = rec[i];
	f->head += sizeof(rec);
	__atomic_store_n(&pc->data_head, f->head, __ATOMIC_RELEASE);
}

struct collect {
	uint64_t times[256];
	int nr;
	int stop_after; /* 0: never */
};

static bool t_peek(void *ctx, struct order_ring *r)
{
	const struct perf_event_header *h = psc_ring__next(r->ring);

	(void)ctx;
	if (!h)
		return false;
	memcpy(&r->time, (const char *)h + 8, 8);
	r->rec.type = h->type;
	return true;
}

static bool t_deliver(void *ctx, struct order_ring *r)
{
	struct collect *c = ctx;

	c->times[c->nr++] = r->time;
	return !(c->stop_after && c->nr >= c->stop_after);
}

static void setup_rings(struct fake *f, struct order_ring *rings, int nr)
{
	for (int i = 0; i < nr; i++) {
		fake_init(&f[i]);
		memset(&rings[i], 0, sizeof(rings[i]));
		rings[i].ring = f[i].ring;
		rings[i].idx = i;
		rings[i].cpu = i;
	}
}

static void test_merge_all(void **state)
{
	struct fake f[3];
	struct order_ring rings[3];
	struct order o;
	struct collect c = { 0 };
	const struct order_ops ops = { t_peek, t_deliver, &c };
	uint64_t want[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };

	setup_rings(f, rings, 3);
	fake_put(&f[0], 1);
	fake_put(&f[0], 4);
	fake_put(&f[0], 9);
	fake_put(&f[1], 2);
	fake_put(&f[1], 3);
	fake_put(&f[1], 8);
	fake_put(&f[2], 5);
	fake_put(&f[2], 6);
	fake_put(&f[2], 7);
	assert_int_equal(order__init(&o, 3), 0);
	assert_false(order__merge(&o, rings, 3, UINT64_MAX, &ops));
	assert_int_equal(c.nr, 9);
	assert_memory_equal(c.times, want, sizeof(want));
	assert_int_equal(o.out_of_order, 0);
	/* everything consumed and released */
	for (int i = 0; i < 3; i++) {
		assert_int_equal(psc_ring__pending(f[i].ring), 0);
		fake_exit(&f[i]);
	}
	order__exit(&o);
}

static void test_watermark_holds_back(void **state)
{
	struct fake f[2];
	struct order_ring rings[2];
	struct order o;
	struct collect c = { 0 };
	const struct order_ops ops = { t_peek, t_deliver, &c };

	setup_rings(f, rings, 2);
	fake_put(&f[0], 10);
	fake_put(&f[0], 30);
	fake_put(&f[1], 20);
	fake_put(&f[1], 40);
	assert_int_equal(order__init(&o, 2), 0);
	assert_true(order__merge(&o, rings, 2, 25, &ops));
	assert_int_equal(c.nr, 2);
	assert_int_equal(c.times[0], 10);
	assert_int_equal(c.times[1], 20);
	/* a record older than 30 arriving late on ring 1 still comes out in order */
	fake_put(&f[1], 28);
	order__merge(&o, rings, 2, UINT64_MAX, &ops);
	assert_int_equal(c.nr, 5);
	assert_int_equal(c.times[2], 30);
	assert_int_equal(c.times[3], 40);
	assert_int_equal(c.times[4], 28); /* ring 1 holds 40 before 28: its own order is kept */
	assert_int_equal(o.out_of_order, 1);
	for (int i = 0; i < 2; i++)
		fake_exit(&f[i]);
	order__exit(&o);
}

static void test_wrap_and_many(void **state)
{
	struct fake f[2];
	struct order_ring rings[2];
	struct order o;
	struct collect c = { 0 };
	const struct order_ops ops = { t_peek, t_deliver, &c };
	uint64_t t = 1;
	int round, i;

	setup_rings(f, rings, 2);
	assert_int_equal(order__init(&o, 2), 0);
	/* 8 rounds of 32 records of 16 bytes: 4 KiB each, the data area wraps repeatedly */
	for (round = 0; round < 8; round++) {
		c.nr = 0;
		for (i = 0; i < 32; i++, t++)
			fake_put(&f[t % 2], t);
		order__merge(&o, rings, 2, UINT64_MAX, &ops);
		assert_int_equal(c.nr, 32);
		for (i = 1; i < 32; i++)
			assert_true(c.times[i] == c.times[i - 1] + 1);
	}
	assert_int_equal(o.out_of_order, 0);
	for (i = 0; i < 2; i++)
		fake_exit(&f[i]);
	order__exit(&o);
}

static void test_stop_midway(void **state)
{
	struct fake f[2];
	struct order_ring rings[2];
	struct order o;
	struct collect c = { .stop_after = 2 };
	const struct order_ops ops = { t_peek, t_deliver, &c };

	setup_rings(f, rings, 2);
	fake_put(&f[0], 1);
	fake_put(&f[1], 2);
	fake_put(&f[0], 3);
	assert_int_equal(order__init(&o, 2), 0);
	order__merge(&o, rings, 2, UINT64_MAX, &ops);
	assert_int_equal(c.nr, 2);
	/* the stopped-at record was consumed, the rest is still there */
	c.stop_after = 0;
	order__merge(&o, rings, 2, UINT64_MAX, &ops);
	assert_int_equal(c.nr, 3);
	assert_int_equal(c.times[2], 3);
	for (int i = 0; i < 2; i++)
		fake_exit(&f[i]);
	order__exit(&o);
}

static void test_ties_in_ring_order(void **state)
{
	struct fake f[3];
	struct order_ring rings[3];
	struct order o;
	struct collect c = { 0 };
	const struct order_ops ops = { t_peek, t_deliver, &c };

	setup_rings(f, rings, 3);
	fake_put(&f[2], 5);
	fake_put(&f[1], 5);
	fake_put(&f[0], 5);
	fake_put(&f[0], 0); /* no timestamp: delivered at once, never counted out of order */
	assert_int_equal(order__init(&o, 3), 0);
	order__merge(&o, rings, 3, UINT64_MAX, &ops);
	assert_int_equal(c.nr, 4);
	assert_int_equal(o.out_of_order, 0);
	for (int i = 0; i < 3; i++)
		fake_exit(&f[i]);
	order__exit(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_all),
		cmocka_unit_test(test_watermark_holds_back),
		cmocka_unit_test(test_wrap_and_many),
		cmocka_unit_test(test_stop_midway),
		cmocka_unit_test(test_ties_in_ring_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
