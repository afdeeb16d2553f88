/* Unit tests of common/order: k-way merge of synthetic rings by time, watermark, out-of-order
 * counting, the backlogs that keep rings drained, and their bound. */
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
#include "ring_fake.h"

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
	const struct perf_event_header *h = order_ring__next(r);

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

/* ---- backlogs: fake rings whose writer fails when the reader has not freed the space ---- */

#define KRING 4096 /* 256 records of 16 bytes */

/* A record {header, time} as the kernel would write it; false when the ring is full (lost). */
static bool kput(struct fake_ring *f, uint64_t time)
{
	struct rec_builder b;

	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, time);
	return fake_ring_write(f, rb_finish(&b), 16);
}

static void ksetup(struct fake_ring *f, struct order_ring *rings, int nr)
{
	for (int i = 0; i < nr; i++) {
		assert_int_equal(fake_ring_init(&f[i], KRING, false, 0), 0);
		memset(&rings[i], 0, sizeof(rings[i]));
		rings[i].ring = psc_ring__new_mem(f[i].rd, f[i].len, false);
		assert_non_null(rings[i].ring);
		rings[i].idx = i;
		rings[i].cpu = i;
	}
}

static void kteardown(struct order *o, struct fake_ring *f, struct order_ring *rings, int nr)
{
	for (int i = 0; i < nr; i++) {
		order_ring__exit(o, &rings[i]);
		psc_ring__delete(rings[i].ring);
		fake_ring_fini(&f[i]);
	}
	order__exit(o);
	assert_int_equal(o->mem, 0);
}

/* Counts deliveries, checks time never goes back; optionally plays the kernel meanwhile. */
struct seq {
	uint64_t n, last, unordered;
	/* every delivery writes `feed` records with the next times into ring `into` */
	struct fake_ring *into;
	int feed;
	uint64_t next_time, fed, feed_lost, feed_until;
};

static bool s_deliver(void *ctx, struct order_ring *r)
{
	struct seq *q = ctx;

	if (r->time < q->last)
		q->unordered++;
	q->last = r->time;
	q->n++;
	for (int i = 0; q->into && i < q->feed && q->next_time < q->feed_until; i++) {
		if (kput(q->into, q->next_time++))
			q->fed++;
		else
			q->feed_lost++;
	}
	return true;
}

/* After a round, what is newer than the watermark waits in memory and the rings are empty. */
static void test_backlog_drains_rings(void **state)
{
	struct fake_ring f[2];
	struct order_ring rings[2];
	struct order o;
	struct collect c = { 0 };
	const struct order_ops ops = { t_peek, t_deliver, &c };

	ksetup(f, rings, 2);
	assert_int_equal(order__init(&o, 2), 0);
	o.spill_left = 1; /* whatever is left */
	kput(&f[0], 10);
	kput(&f[0], 30);
	kput(&f[0], 50);
	kput(&f[1], 20);
	kput(&f[1], 40);
	assert_true(order__merge(&o, rings, 2, 25, &ops));
	assert_int_equal(c.nr, 2);
	/* 30, 50 and 40 left their rings: the kernel has every byte back */
	assert_int_equal(psc_ring__pending(rings[0].ring), 0);
	assert_int_equal(psc_ring__pending(rings[1].ring), 0);
	assert_int_equal(rings[0].backlog.records, 2);
	assert_int_equal(rings[1].backlog.records, 1);
	assert_int_equal(o.copied_records, 3);
	assert_int_equal(o.held_bytes, 48);
	/* newer records land in the rings behind their backlogs: each ring's order is kept, and
	 * the merge interleaves backlogs and rings by time */
	kput(&f[0], 60);
	kput(&f[1], 45);
	kput(&f[1], 35); /* older than 45 on the same ring: delivered after it, counted */
	assert_false(order__merge(&o, rings, 2, UINT64_MAX, &ops));
	assert_int_equal(c.nr, 8);
	assert_int_equal(c.times[2], 30);
	assert_int_equal(c.times[3], 40);
	assert_int_equal(c.times[4], 45);
	assert_int_equal(c.times[5], 35);
	assert_int_equal(c.times[6], 50);
	assert_int_equal(c.times[7], 60);
	assert_int_equal(o.out_of_order, 1);
	assert_int_equal(o.held_bytes, 0);
	assert_int_equal(o.held_peak, 48);
	assert_int_equal(o.mem, 0); /* empty chunks are given back at once */
	kteardown(&o, f, rings, 2);
}

/*
 * By default what is left after a round stays in the ring while it is less than a quarter of
 * it (a steady stream's slack, decoded in place later); more is copied out.
 */
static void test_backlog_only_when_it_matters(void **state)
{
	struct fake_ring f[1];
	struct order_ring rings[1];
	struct order o;
	struct seq q = { 0 };
	const struct order_ops ops = { t_peek, s_deliver, &q };
	uint64_t t;

	ksetup(f, rings, 1);
	assert_int_equal(order__init(&o, 1), 0);
	for (t = 1; t <= 60; t++)
		kput(&f[0], t);
	assert_true(order__merge(&o, rings, 1, 0, &ops));
	assert_int_equal(o.copied_records, 0);
	assert_int_equal(psc_ring__pending(rings[0].ring), 60 * 16);
	for (; t <= 70; t++) /* 1120 bytes: a quarter of 4096 is 1024 */
		kput(&f[0], t);
	/* the oldest go, until less than a quarter is left: 7 records, 112 bytes */
	assert_true(order__merge(&o, rings, 1, 0, &ops));
	assert_int_equal(o.copied_records, 7);
	assert_int_equal(psc_ring__pending(rings[0].ring), 63 * 16);
	assert_false(order__merge(&o, rings, 1, UINT64_MAX, &ops));
	assert_int_equal(q.n, 70);
	assert_int_equal(q.unordered, 0);
	kteardown(&o, f, rings, 1);
}

/*
 * A ring filled to three quarters again and again within the slack: without backlogs the second
 * fill would be lost (the ring holds 256 records); with them every record arrives, in order
 * across rings, and only what had to leave the rings was copied.
 */
static void test_backlog_many_rounds_in_order(void **state)
{
	struct fake_ring f[3];
	struct order_ring rings[3];
	struct order o;
	struct seq q = { 0 };
	const struct order_ops ops = { t_peek, s_deliver, &q };
	uint64_t t = 1, lost = 0;
	int round, i;

	ksetup(f, rings, 3);
	assert_int_equal(order__init(&o, 3), 0);
	for (round = 0; round < 40; round++) {
		/* three quarters of a ring each, all newer than the watermark */
		for (i = 0; i < 192 * 3; i++, t++)
			lost += !kput(&f[t % 3], t);
		assert_true(order__merge(&o, rings, 3, 0, &ops));
		assert_int_equal(q.n, 0);
		for (i = 0; i < 3; i++)
			assert_true(psc_ring__pending(rings[i].ring) < KRING / 4);
	}
	assert_int_equal(lost, 0);
	/* what is left in the rings (63 records each, under a quarter) was never copied */
	assert_int_equal(o.copied_records, t - 1 - 3 * 63);
	assert_false(order__merge(&o, rings, 3, UINT64_MAX, &ops));
	assert_int_equal(q.n, t - 1);
	assert_int_equal(q.unordered, 0);
	assert_int_equal(o.out_of_order, 0);
	kteardown(&o, f, rings, 3);
}

/*
 * The bound: past mem_max records stay in their ring and the kernel loses what does not fit
 * there, as without a backlog; what was kept is delivered, in order, backlog before ring.
 */
static void test_backlog_bound(void **state)
{
	struct fake_ring f[1];
	struct order_ring rings[1];
	struct order o;
	struct seq q = { 0 };
	const struct order_ops ops = { t_peek, s_deliver, &q };
	uint64_t t = 1, written = 0, lost = 0;
	int round, i;

	ksetup(f, rings, 1);
	assert_int_equal(order__init(&o, 1), 0);
	o.mem_max = ORDER_CHUNK + 1024; /* one chunk: 4096 records of 16 bytes */
	for (round = 0; round < 30; round++) {
		for (i = 0; i < 192; i++, t++) {
			if (kput(&f[0], t))
				written++;
			else
				lost++;
		}
		order__merge(&o, rings, 1, 0, &ops);
	}
	/* the chunk fills, then the ring: 5760 written, 4096 + 256 kept, the rest lost */
	assert_int_equal(rings[0].backlog.records, 4096);
	assert_true(o.full > 0);
	assert_int_equal(o.mem_peak, o.mem);
	assert_true(o.mem <= o.mem_max);
	assert_int_equal(written, 4096 + 256);
	assert_int_equal(lost, 30 * 192 - 4096 - 256);
	assert_int_equal(psc_ring__pending(rings[0].ring), KRING);
	order__merge(&o, rings, 1, UINT64_MAX, &ops);
	assert_int_equal(q.n, written);
	assert_int_equal(q.unordered, 0);
	assert_int_equal(psc_ring__pending(rings[0].ring), 0);
	kteardown(&o, f, rings, 1);
}

/*
 * A slow consumer: while a long merge delivers ring 0, the "kernel" writes four ringfuls into
 * ring 1. order__keep_drained moves them to ring 1's backlog as the ring fills, so none is lost.
 */
static void test_keep_drained_during_merge(void **state)
{
	struct fake_ring f[2];
	struct order_ring rings[2];
	struct order o;
	struct seq q = { 0 };
	const struct order_ops ops = { t_peek, s_deliver, &q };
	uint64_t i;

	ksetup(f, rings, 2);
	assert_int_equal(order__init(&o, 2), 0);
	o.check_ns = 1; /* look at the rings every 64 deliveries */
	for (i = 1; i <= 256; i++)
		assert_true(kput(&f[0], i));
	q.into = &f[1];
	q.feed = 4;
	q.next_time = 1000;
	q.feed_until = 1000 + 4 * 256;
	assert_true(order__merge(&o, rings, 2, 999, &ops));
	assert_int_equal(q.n, 256);
	assert_int_equal(q.fed, 4 * 256);
	assert_int_equal(q.feed_lost, 0);
	assert_true(psc_ring__pending(rings[1].ring) < KRING / 4);
	order__merge(&o, rings, 2, UINT64_MAX, &ops);
	assert_int_equal(q.n, 256 + 4 * 256);
	assert_int_equal(q.unordered, 0);
	kteardown(&o, f, rings, 2);
}

/*
 * The same while the head of the ring being merged was decoded in place: spilling that ring
 * mid-merge moves its head to the backlog, where it is decoded again (peek), not read from
 * space handed back to the kernel.
 */
static void test_keep_drained_own_ring(void **state)
{
	struct fake_ring f[1];
	struct order_ring rings[1];
	struct order o;
	struct seq q = { 0 };
	const struct order_ops ops = { t_peek, s_deliver, &q };
	uint64_t i;

	ksetup(f, rings, 1);
	assert_int_equal(order__init(&o, 1), 0);
	o.check_ns = 1;
	for (i = 1; i <= 100; i++)
		kput(&f[0], i);
	/*
	 * each delivery adds two, and t_peek never hands consumed space back mid-batch
	 * (psc_ring__release): without a spill mid-merge the ring is full after 78
	 */
	q.into = &f[0];
	q.feed = 2;
	q.next_time = 101;
	q.feed_until = 2101;
	for (i = 0; i < 100 && q.n < 2100; i++)
		order__merge(&o, rings, 1, UINT64_MAX, &ops);
	assert_int_equal(q.feed_lost, 0);
	assert_int_equal(q.n, 2100);
	assert_int_equal(q.unordered, 0);
	assert_true(o.copied_records > 0);
	kteardown(&o, f, rings, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_all),
		cmocka_unit_test(test_watermark_holds_back),
		cmocka_unit_test(test_wrap_and_many),
		cmocka_unit_test(test_stop_midway),
		cmocka_unit_test(test_ties_in_ring_order),
		cmocka_unit_test(test_backlog_drains_rings),
		cmocka_unit_test(test_backlog_only_when_it_matters),
		cmocka_unit_test(test_backlog_many_rounds_in_order),
		cmocka_unit_test(test_backlog_bound),
		cmocka_unit_test(test_keep_drained_during_merge),
		cmocka_unit_test(test_keep_drained_own_ring),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
