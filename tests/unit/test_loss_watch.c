/* Unit tests of common/loss_watch: a ring is read for its lost counts only when it came near full. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <perfscope/ring.h>

#include "loss_watch.h"
#include "ring_fake.h"

#define SIZE (1u << 20) /* 1 MiB of data: the margin is a sixteenth of it */

struct fixture {
	struct fake_ring f;
	struct psc_ring *ring;
	struct loss_watch w;
};

static int setup(void **state)
{
	struct fixture *x = calloc(1, sizeof(*x));

	if (!x || fake_ring_init(&x->f, SIZE, false, 0))
		return -1;
	x->ring = psc_ring__new_mem(x->f.rd, x->f.len, false);
	if (!x->ring || loss_watch__init(&x->w, 1))
		return -1;
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *x = *state;

	loss_watch__exit(&x->w);
	psc_ring__delete(x->ring);
	fake_ring_fini(&x->f);
	free(x);
	return 0;
}

/* the kernel's view: head moved by what it wrote, tail by what the reader released */
static void kernel_wrote(struct fixture *x, uint64_t bytes)
{
	x->f.pc->data_head += bytes;
}

static void reader_released(struct fixture *x, uint64_t bytes)
{
	x->f.pc->data_tail += bytes;
}

static void test_room_left(void **state)
{
	struct fixture *x = *state;

	assert_false(loss_watch__check(&x->w, 0, x->ring)); /* empty */
	kernel_wrote(x, SIZE / 2);
	assert_false(loss_watch__check(&x->w, 0, x->ring));
	/*
	 * The reader keeps up: each round releases all there was, and a quarter comes meanwhile.
	 * Two rounds' worth is what the watch must allow for (it cannot tell whether the writes
	 * came before the release or after it), half the ring: never near full.
	 */
	reader_released(x, SIZE / 2);
	for (int i = 0; i < 100; i++) {
		kernel_wrote(x, SIZE / 4);
		assert_false(loss_watch__check(&x->w, 0, x->ring));
		reader_released(x, SIZE / 4);
	}
	/* three quarters more while a round is read: with the quarter before, it may have filled */
	kernel_wrote(x, SIZE / 4 * 3);
	assert_true(loss_watch__check(&x->w, 0, x->ring));
}

static void test_near_full(void **state)
{
	struct fixture *x = *state;

	kernel_wrote(x, SIZE - LOSS_WATCH_MARGIN + 1);
	assert_true(loss_watch__check(&x->w, 0, x->ring));
	/* nothing more written, nothing released: it may still lose (the next record may not fit) */
	assert_true(loss_watch__check(&x->w, 0, x->ring));
	reader_released(x, SIZE - LOSS_WATCH_MARGIN + 1);
	/* released after the check: a loss before the release is still possible until the next */
	assert_true(loss_watch__check(&x->w, 0, x->ring));
	assert_false(loss_watch__check(&x->w, 0, x->ring));
}

/*
 * The tail that counts is the one of the previous check: a reader that released everything
 * after it does not hide that the ring was full in between (the kernel wrote up to the end
 * before the release).
 */
static void test_full_between_checks(void **state)
{
	struct fixture *x = *state;

	assert_false(loss_watch__check(&x->w, 0, x->ring));
	kernel_wrote(x, SIZE);
	reader_released(x, SIZE);
	assert_true(loss_watch__check(&x->w, 0, x->ring));
	assert_false(loss_watch__check(&x->w, 0, x->ring));
}

/* A ring smaller than the largest record is always near full once anything was written. */
static void test_small_ring(void **state)
{
	struct fake_ring f;
	struct psc_ring *ring;
	struct loss_watch w;

	(void)state;
	assert_int_equal(fake_ring_init(&f, 4096, false, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, false);
	assert_non_null(ring);
	assert_int_equal(loss_watch__init(&w, 2), 0);
	assert_true(loss_watch__check(&w, 1, ring));
	/* out of range: never */
	assert_false(loss_watch__check(&w, 2, ring));
	assert_false(loss_watch__check(&w, -1, ring));
	loss_watch__exit(&w);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

/* An overwrite ring loses by design and has no LOST records: never read for them. */
static void test_overwrite(void **state)
{
	struct fake_ring f;
	struct psc_ring *ring;
	struct loss_watch w;

	(void)state;
	assert_int_equal(fake_ring_init(&f, 4096, true, 0), 0);
	ring = psc_ring__new_mem(f.rd, f.len, true);
	assert_non_null(ring);
	assert_int_equal(loss_watch__init(&w, 1), 0);
	f.pc->data_head -= 4096;
	assert_false(loss_watch__check(&w, 0, ring));
	loss_watch__exit(&w);
	psc_ring__delete(ring);
	fake_ring_fini(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_room_left, setup, teardown),
		cmocka_unit_test_setup_teardown(test_near_full, setup, teardown),
		cmocka_unit_test_setup_teardown(test_full_between_checks, setup, teardown),
		cmocka_unit_test(test_small_ring),
		cmocka_unit_test(test_overwrite),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
