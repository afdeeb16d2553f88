/* Unit tests of the ring reader on synthetic buffers: wrap-around, LOST, overwrite, bogus sizes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "internal.h"
#include "ring_fake.h"

#ifdef TEST_RING_FAST
/* unit_ring_fast: every test through the inline fast paths, which must behave the same */
#define psc_ring__next psc_ring__next_fast
#define psc_ring__consume psc_ring__consume_fast
#endif

/* A test record: header + sequence number + filler words derived from it, `words` u64 long. */
static struct perf_event_header *make_rec(struct rec_builder *b, uint64_t seq, size_t words)
{
	rb_start(b, PERF_RECORD_SAMPLE, 0);
	rb_u64(b, seq);
	for (size_t i = 2; i < words; i++)
		rb_u64(b, seq * 1000 + i);
	return rb_finish(b);
}

static void check_rec(const struct perf_event_header *h, uint64_t seq, size_t words)
{
	const uint64_t *w = (const uint64_t *)h;

	assert_int_equal(h->type, PERF_RECORD_SAMPLE);
	assert_int_equal(h->size, words * 8);
	assert_int_equal(w[1], seq);
	for (size_t i = 2; i < words; i++)
		assert_int_equal(w[i], seq * 1000 + i);
}

static bool in_data(const struct fake_ring *f, const void *p)
{
	const unsigned char *c = p;

	return c >= f->rd + f->page && c < f->rd + f->page + f->size;
}

static void test_empty(void **state)
{
	struct fake_ring f;
	struct psc_ring *ring;
	struct psc_ring_stats st;

	assert_int_equal(fake_ring_init(&f, 256, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	assert_non_null(ring);
	assert_int_equal(psc_ring__read_init(ring), -EAGAIN);
	assert_int_equal(psc_ring__fd(ring), -1);
	assert_int_equal(psc_ring__cpu(ring), -1);
	assert_int_equal(psc_ring__data_size(ring), 256);
	assert_false(psc_ring__is_overwrite(ring));
	assert_int_equal(psc_ring__pause(ring), -EBADF);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.records, 0);
	psc_ring__delete(ring);
	psc_ring__delete(NULL);
	fake_ring_fini(&f);
}

static void test_in_order_zero_copy(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;
	const struct perf_event_header *h;
	struct psc_ring_stats st;

	assert_int_equal(fake_ring_init(&f, 4096, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	for (uint64_t i = 0; i < 10; i++)
		assert_true(fake_ring_write(&f, make_rec(&b, i, 2 + i), (2 + i) * 8));
	assert_int_equal(psc_ring__pending(ring), f.head);
	assert_int_equal(psc_ring__read_init(ring), 0);
	for (uint64_t i = 0; i < 10; i++) {
		h = psc_ring__next(ring);
		assert_non_null(h);
		/* next is a peek: the same record until consumed */
		assert_ptr_equal(psc_ring__next(ring), h);
		assert_true(in_data(&f, h));
		check_rec(h, i, 2 + i);
		psc_ring__consume(ring);
	}
	errno = 42;
	assert_null(psc_ring__next(ring));
	assert_int_equal(errno, 0);
	/* data_tail moves only at read_done */
	assert_int_equal(f.pc->data_tail, 0);
	psc_ring__read_done(ring);
	assert_int_equal(f.pc->data_tail, f.head);
	assert_int_equal(psc_ring__pending(ring), 0);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.records, 10);
	assert_int_equal(st.bytes, f.head);
	assert_int_equal(st.wrapped, 0);
	assert_int_equal(st.corrupt, 0);
	assert_int_equal(psc_ring__read_init(ring), -EAGAIN);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/* Only what was published at read_init belongs to the batch. */
static void test_batch_snapshot(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;

	assert_int_equal(fake_ring_init(&f, 1024, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	fake_ring_write(&f, make_rec(&b, 1, 4), 32);
	assert_int_equal(psc_ring__read_init(ring), 0);
	fake_ring_write(&f, make_rec(&b, 2, 4), 32);
	check_rec(psc_ring__next(ring), 1, 4);
	psc_ring__consume(ring);
	assert_null(psc_ring__next(ring));
	psc_ring__read_done(ring);
	assert_int_equal(f.pc->data_tail, 32);
	assert_int_equal(psc_ring__read_init(ring), 0);
	check_rec(psc_ring__next(ring), 2, 4);
	psc_ring__consume(ring);
	psc_ring__read_done(ring);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/*
 * release mid-batch hands back consumed records once they fill an eighth of the buffer, so the
 * writer finds room while the reader is still in a long batch; never the unconsumed record.
 */
static void test_release_mid_batch(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;
	uint64_t i;

	assert_int_equal(fake_ring_init(&f, 1024, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	for (i = 0; i < 32; i++) /* 32 x 32 bytes: the buffer is full */
		assert_true(fake_ring_write(&f, make_rec(&b, i, 4), 32));
	assert_false(fake_ring_write(&f, make_rec(&b, 99, 4), 32));
	assert_int_equal(psc_ring__read_init(ring), 0);
	for (i = 0; i < 3; i++) {
		check_rec(psc_ring__next(ring), i, 4);
		psc_ring__consume(ring);
		psc_ring__release(ring); /* 96 bytes consumed: under an eighth (128), kept */
	}
	assert_int_equal(f.pc->data_tail, 0);
	check_rec(psc_ring__next(ring), 3, 4);
	psc_ring__release(ring); /* the peeked record is not consumed: not released */
	assert_int_equal(f.pc->data_tail, 0);
	psc_ring__consume(ring);
	psc_ring__release(ring);
	assert_int_equal(f.pc->data_tail, 128);
	/* the writer has room again, inside the same batch */
	for (i = 32; i < 36; i++)
		assert_true(fake_ring_write(&f, make_rec(&b, i, 4), 32));
	assert_false(fake_ring_write(&f, make_rec(&b, 99, 4), 32));
	for (i = 4; i < 32; i++) {
		check_rec(psc_ring__next(ring), i, 4);
		psc_ring__consume(ring);
	}
	assert_null(psc_ring__next(ring)); /* the batch ends where read_init saw the head */
	psc_ring__read_done(ring);
	assert_int_equal(f.pc->data_tail, 1024);
	assert_int_equal(psc_ring__read_init(ring), 0);
	for (i = 32; i < 36; i++) {
		check_rec(psc_ring__next(ring), i, 4);
		psc_ring__consume(ring);
	}
	psc_ring__read_done(ring);
	psc_ring__delete(ring);
	fake_ring_fini(&f);

	/* an overwrite ring is mapped read-only: release must not write (it would fault) */
	assert_int_equal(fake_ring_init(&f, 1024, true, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, true);
	for (i = 0; i < 8; i++)
		fake_ring_write(&f, make_rec(&b, i, 4), 32);
	assert_int_equal(psc_ring__read_init(ring), 0);
	for (i = 0; i < 8; i++) {
		assert_non_null(psc_ring__next(ring));
		psc_ring__consume(ring);
		psc_ring__release(ring);
	}
	psc_ring__read_done(ring);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/*
 * Every start offset of a 256-byte buffer, records of every size from 16 to 96 bytes: each must
 * come back intact, in place when it does not wrap and copied aside when it does.
 */
static void test_wrap_every_offset(void **state)
{
	const size_t size = 256;

	for (uint64_t start = 0; start < size; start += 8) {
		for (size_t words = 2; words <= 12; words++) {
			struct rec_builder b;
			struct fake_ring f;
			struct psc_ring *ring;
			struct psc_ring_stats st;
			uint64_t seq = 0, expect_wraps = 0;

			/* also far into the u64 space, so counters wrap around 2^64 */
			uint64_t base = (words & 1) ? 0 - 4 * size : 7 * size;

			assert_int_equal(fake_ring_init(&f, size, false, base + start), 0);
			ring = psc_ring__new_mem(f.rd, f.len, false);
			assert_non_null(ring);
			for (int round = 0; round < 6; round++) {
				uint64_t first = seq;

				while (fake_ring_write(&f, make_rec(&b, seq, words), words * 8)) {
					size_t off = (f.head - words * 8) & (size - 1);

					expect_wraps += off + words * 8 > size;
					seq++;
				}
				assert_int_equal(psc_ring__read_init(ring), 0);
				for (uint64_t s = first; s < seq; s++) {
					const struct perf_event_header *h = psc_ring__next(ring);

					assert_non_null(h);
					check_rec(h, s, words);
					psc_ring__consume(ring);
				}
				assert_null(psc_ring__next(ring));
				psc_ring__read_done(ring);
			}
			psc_ring__stats(ring, &st);
			assert_int_equal(st.records, seq);
			assert_int_equal(st.wrapped, expect_wraps);
			assert_int_equal(st.corrupt, 0);
			psc_ring__delete(ring);
			fake_ring_fini(&f);
		}
	}
}

/* A record whose header sits in the last 8 bytes and whose body starts the buffer again. */
static void test_straddle(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;
	const struct perf_event_header *h;
	struct psc_ring_stats st;

	assert_int_equal(fake_ring_init(&f, 128, false, 120), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	assert_true(fake_ring_write(&f, make_rec(&b, 77, 6), 48));
	assert_int_equal(psc_ring__read_init(ring), 0);
	h = psc_ring__next(ring);
	assert_non_null(h);
	assert_false(in_data(&f, h));
	check_rec(h, 77, 6);
	psc_ring__consume(ring);
	psc_ring__read_done(ring);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.wrapped, 1);
	assert_int_equal(f.pc->data_tail, 168);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/* A record as large as the whole buffer, wrapping. */
static void test_full_buffer_record(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;

	assert_int_equal(fake_ring_init(&f, 64, false, 40), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	assert_true(fake_ring_write(&f, make_rec(&b, 5, 8), 64));
	assert_int_equal(psc_ring__read_init(ring), 0);
	check_rec(psc_ring__next(ring), 5, 8);
	psc_ring__consume(ring);
	psc_ring__read_done(ring);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

static void test_lost_records(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;
	const struct perf_event_header *h;
	struct psc_ring_stats st;
	int n = 0;

	assert_int_equal(fake_ring_init(&f, 1024, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	fake_ring_write(&f, make_rec(&b, 1, 3), 24);
	rb_start(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 1234); /* id */
	rb_u64(&b, 17); /* lost */
	fake_ring_write(&f, rb_finish(&b), 24);
	rb_start(&b, PERF_RECORD_LOST_SAMPLES, 0);
	rb_u64(&b, 5);
	rb_u64(&b, 1234); /* sample_id_all trailer: IDENTIFIER */
	fake_ring_write(&f, rb_finish(&b), 24);
	fake_ring_write(&f, make_rec(&b, 2, 3), 24);

	assert_int_equal(psc_ring__read_init(ring), 0);
	while ((h = psc_ring__next(ring))) {
		/* LOST records reach the caller, they are not swallowed */
		if (n == 1)
			assert_int_equal(h->type, PERF_RECORD_LOST);
		if (n == 2)
			assert_int_equal(h->type, PERF_RECORD_LOST_SAMPLES);
		psc_ring__consume(ring);
		n++;
	}
	psc_ring__read_done(ring);
	assert_int_equal(n, 4);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.lost, 22);
	assert_int_equal(st.lost_samples, 5);
	assert_int_equal(st.lost_records, 2);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/* Writes a header with a bogus size after one good record; checks the reader stops there. */
static void expect_corrupt_after_good(uint16_t bogus_size)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;
	struct psc_ring_stats st;
	struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = bogus_size };
	uint64_t pad[4] = { 0 };

	assert_int_equal(fake_ring_init(&f, 256, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	fake_ring_write(&f, make_rec(&b, 1, 2), 16);
	memcpy(pad, &bad, sizeof(bad));
	/* publish 32 bytes after the good record, whatever the bogus header claims */
	fake_ring_write(&f, pad, 32);
	assert_int_equal(psc_ring__read_init(ring), 0);
	check_rec(psc_ring__next(ring), 1, 2);
	psc_ring__consume(ring);
	errno = 0;
	assert_null(psc_ring__next(ring));
	assert_int_equal(errno, EBADMSG);
	/* the batch is over: the rest is skipped and released */
	assert_null(psc_ring__next(ring));
	psc_ring__read_done(ring);
	assert_int_equal(f.pc->data_tail, 48);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.corrupt, 1);
	assert_int_equal(st.records, 1);
	/* the ring keeps working after it */
	fake_ring_write(&f, make_rec(&b, 2, 2), 16);
	assert_int_equal(psc_ring__read_init(ring), 0);
	check_rec(psc_ring__next(ring), 2, 2);
	psc_ring__consume(ring);
	psc_ring__read_done(ring);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

static void test_bogus_sizes(void **state)
{
	expect_corrupt_after_good(0); /* would loop forever */
	expect_corrupt_after_good(4); /* smaller than a header */
	expect_corrupt_after_good(12); /* not a multiple of 8 */
	expect_corrupt_after_good(40); /* beyond what was published */
	expect_corrupt_after_good(512); /* beyond the buffer */
	expect_corrupt_after_good(65528); /* far beyond it */
}

static void test_bogus_head(void **state)
{
	struct fake_ring f;
	struct psc_ring *ring;
	struct psc_ring_stats st;

	assert_int_equal(fake_ring_init(&f, 256, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	/* more published than the buffer can hold */
	f.pc->data_head = 4096;
	assert_int_equal(psc_ring__read_init(ring), -EAGAIN);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.corrupt, 1);
	assert_int_equal(f.pc->data_tail, 4096);
	/* a misaligned head */
	f.pc->data_head = 4096 + 12;
	assert_int_equal(psc_ring__read_init(ring), 0);
	assert_null(psc_ring__next(ring));
	assert_int_equal(errno, EBADMSG);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/* A reader started on a ring an earlier reader left: it resumes at data_tail. */
static void test_resume_at_tail(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;

	assert_int_equal(fake_ring_init(&f, 256, false, 64), 0);
	fake_ring_write(&f, make_rec(&b, 9, 3), 24);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	assert_int_equal(psc_ring__read_init(ring), 0);
	check_rec(psc_ring__next(ring), 9, 3);
	psc_ring__consume(ring);
	psc_ring__read_done(ring);
	assert_int_equal(f.pc->data_tail, 88);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

static void test_overwrite_partial(void **state)
{
	struct rec_builder b;
	struct fake_ring f;
	struct psc_ring *ring;
	const struct perf_event_header *h;

	assert_int_equal(fake_ring_init(&f, 512, true, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, true);
	assert_non_null(ring);
	assert_true(psc_ring__is_overwrite(ring));
	assert_int_equal(psc_ring__read_init(ring), -EAGAIN);
	for (uint64_t i = 0; i < 5; i++)
		fake_ring_write(&f, make_rec(&b, i, 4), 32);
	assert_int_equal(psc_ring__read_init(ring), 0);
	/* newest first */
	for (uint64_t i = 5; i-- > 0;) {
		h = psc_ring__next(ring);
		assert_non_null(h);
		check_rec(h, i, 4);
		psc_ring__consume(ring);
	}
	assert_null(psc_ring__next(ring));
	assert_int_equal(errno, 0);
	/* read-only mapping: read_done must not touch data_tail (it would fault) */
	psc_ring__read_done(ring);
	assert_int_equal(psc_ring__read_init(ring), -EAGAIN);
	/* only what came since the last read */
	fake_ring_write(&f, make_rec(&b, 5, 4), 32);
	fake_ring_write(&f, make_rec(&b, 6, 4), 32);
	assert_int_equal(psc_ring__read_init(ring), 0);
	check_rec(psc_ring__next(ring), 6, 4);
	psc_ring__consume(ring);
	check_rec(psc_ring__next(ring), 5, 4);
	psc_ring__consume(ring);
	assert_null(psc_ring__next(ring));
	psc_ring__read_done(ring);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/*
 * The kernel went round the buffer many times: the reader returns the newest records, each
 * intact, back to the oldest one that was not partly overwritten, at every record size.
 */
static void test_overwrite_wrapped(void **state)
{
	const size_t size = 256;

	for (size_t words = 2; words <= 12; words++) {
		for (uint64_t total = 1; total < 90; total += 7) {
			struct rec_builder b;
			struct fake_ring f;
			struct psc_ring *ring;
			const struct perf_event_header *h;
			struct psc_ring_stats st;
			uint64_t expect, got = 0;

			assert_int_equal(fake_ring_init(&f, size, true, 0), 0);
			ring = psc_ring__new_mem(f.rd, f.len, true);
			for (uint64_t i = 0; i < total; i++)
				fake_ring_write(&f, make_rec(&b, i, words), words * 8);
			expect = total * words * 8 <= size ? total : size / (words * 8);
			assert_int_equal(psc_ring__read_init(ring), 0);
			while ((h = psc_ring__next(ring))) {
				check_rec(h, total - 1 - got, words);
				psc_ring__consume(ring);
				got++;
			}
			assert_int_equal(errno, 0);
			assert_int_equal(got, expect);
			psc_ring__read_done(ring);
			psc_ring__stats(ring, &st);
			assert_int_equal(st.corrupt, 0);
			psc_ring__delete(ring);
			fake_ring_fini(&f);
		}
	}
}

/* In overwrite mode a zero or bogus size inside an exact range is corruption, not the end. */
static void test_overwrite_bogus(void **state)
{
	struct fake_ring f;
	struct psc_ring *ring;
	struct psc_ring_stats st;
	uint64_t junk[4] = { 0 };
	struct perf_event_header bad = { .type = PERF_RECORD_SAMPLE, .size = 13 };

	assert_int_equal(fake_ring_init(&f, 256, true, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, true);
	memcpy(junk, &bad, sizeof(bad));
	fake_ring_write(&f, junk, 32);
	assert_int_equal(psc_ring__read_init(ring), 0);
	assert_null(psc_ring__next(ring));
	assert_int_equal(errno, EBADMSG);
	psc_ring__read_done(ring);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.corrupt, 1);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

static void test_new_mem_validation(void **state)
{
	static uint64_t mem[1024];
	struct perf_event_mmap_page *pc = (struct perf_event_mmap_page *)mem;
	struct psc_ring *ring;

	pc->data_offset = sizeof(*pc);
	pc->data_size = 1000; /* not a power of two */
	errno = 0;
	assert_null(psc_ring__new_mem(mem, sizeof(mem), false));
	assert_int_equal(errno, EINVAL);
	pc->data_size = 8192; /* beyond the memory given */
	assert_null(psc_ring__new_mem(mem, sizeof(mem), false));
	pc->data_size = 4096;
	pc->data_offset = 16; /* inside the control page */
	assert_null(psc_ring__new_mem(mem, sizeof(mem), false));
	pc->data_offset = sizeof(*pc);
	assert_null(psc_ring__new_mem((char *)mem + 4, sizeof(mem) - 4, false)); /* misaligned */
	assert_null(psc_ring__new_mem(NULL, sizeof(mem), false));
	ring = psc_ring__new_mem(mem, sizeof(mem), false);
	assert_non_null(ring);
	assert_int_equal(psc_ring__data_size(ring), 4096);
	psc_ring__delete(ring);
}

static void test_new_fd_validation(void **state)
{
	PSC_OPTS(psc_ring_opts, o, .cpu = 0);

	errno = 0;
	assert_null(psc_ring__new_fd(0, 3, &o));
	assert_int_equal(errno, EINVAL);
	assert_null(psc_ring__new_fd(0, 0, NULL));
	assert_int_equal(errno, EINVAL);
	assert_null(psc_ring__new_fd(-1, 8, NULL));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_in_order_zero_copy),
		cmocka_unit_test(test_batch_snapshot),
		cmocka_unit_test(test_release_mid_batch),
		cmocka_unit_test(test_wrap_every_offset),
		cmocka_unit_test(test_straddle),
		cmocka_unit_test(test_full_buffer_record),
		cmocka_unit_test(test_lost_records),
		cmocka_unit_test(test_bogus_sizes),
		cmocka_unit_test(test_bogus_head),
		cmocka_unit_test(test_resume_at_tail),
		cmocka_unit_test(test_overwrite_partial),
		cmocka_unit_test(test_overwrite_wrapped),
		cmocka_unit_test(test_overwrite_bogus),
		cmocka_unit_test(test_new_mem_validation),
		cmocka_unit_test(test_new_fd_validation),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
