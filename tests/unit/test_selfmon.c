/* Unit tests of the rdpmc self-monitoring reader (lib/selfmon.h) over a synthetic mmap page. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "selfmon.h"

/* The fake hardware: what rdpmc and rdtsc return, and what they saw. */
static uint64_t pmc_value, tsc_value;
static uint32_t pmc_asked;
static int pmc_calls;
/* When set, the first rdpmc plays the kernel updating the page under the reader. */
static struct perf_event_mmap_page *update_page;

static uint64_t fake_rdpmc(uint32_t counter)
{
	pmc_asked = counter;
	if (pmc_calls++ == 0 && update_page) {
		update_page->lock += 2; /* a whole update happened meanwhile */
		update_page->offset = 5000;
		update_page->time_enabled = 7000;
		update_page->time_running = 7000;
	}
	return pmc_value;
}

static uint64_t fake_rdtsc(void)
{
	return tsc_value;
}

/* A page as the kernel fills it for a counter on the PMU: rdpmc allowed, 48-bit counters. */
static struct perf_event_mmap_page *new_page(void)
{
	struct perf_event_mmap_page *pc = calloc(1, sizeof(*pc));

	assert_non_null(pc);
	pc->lock = 4;
	pc->index = 3; /* hardware counter 2, plus one */
	pc->offset = 1000;
	pc->pmc_width = 48;
	pc->cap_user_rdpmc = 1;
	pc->cap_user_time = 1;
	/* time_mult/2^time_shift = 1: one TSC tick is one nanosecond */
	pc->time_mult = 1 << 10;
	pc->time_shift = 10;
	pc->time_offset = 0;
	pc->time_enabled = 2000;
	pc->time_running = 2000;
	pmc_value = 0;
	tsc_value = 0;
	pmc_calls = 0;
	pmc_asked = ~0u;
	update_page = NULL;
	return pc;
}

static void test_offset_plus_counter(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct psc_counts c = { 0 };

	pmc_value = 234;
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(pmc_asked, 2); /* rdpmc takes index - 1 */
	assert_int_equal(c.val, 1234);
	free(pc);
}

/* The counter is pmc_width bits wide: bits above are noise and bit width-1 is its sign. */
static void test_width_sign_extension(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct psc_counts c = { 0 };

	pmc_value = 0xffff000000000010ull; /* garbage above bit 47, +16 below */
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(c.val, 1016);

	/* -16 in 48 bits: the kernel programs counters with negative starts */
	pmc_value = 0x0000fffffffffff0ull;
	pc->offset = 100016;
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(c.val, 100000);

	/* a full 64-bit counter is taken as it is (no shift by 64) */
	pc->pmc_width = 64;
	pc->offset = 10;
	pmc_value = 0xfffffffffffffffeull; /* -2 */
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(c.val, 8);

	/* a 32-bit counter */
	pc->pmc_width = 32;
	pc->offset = 0;
	pmc_value = 0x123456789ull;
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(c.val, 0x23456789ull);
	free(pc);
}

/* The times since the last update come from the TSC and are added to both enabled and running. */
static void test_times_brought_up_to_date(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct psc_counts c = { 0 };

	/* multiplexed before: ran half of the time it was enabled */
	pc->time_enabled = 2000;
	pc->time_running = 1000;
	pc->time_offset = (uint64_t)-500000; /* the kernel's offset is minus the TSC-ns at update */
	tsc_value = 500300; /* 300 ns since the update */
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(c.ena, 2300);
	assert_int_equal(c.run, 1300);
	/* scaling still says what it should: the counter ran 1300 of 2300 ns */
	c.val = 1300;
	assert_true(psc_counts__scaled(&c) > 2299.9 && psc_counts__scaled(&c) < 2300.1);

	/* a mult/shift that is not 1: 3 ticks per 2 ns (mult 2/3 * 2^20), large TSC values */
	pc->time_shift = 20;
	pc->time_mult = (uint32_t)((2ull << 20) / 3);
	pc->time_offset = 0;
	pc->time_enabled = pc->time_running = 0;
	tsc_value = 3000000000000ull; /* quot * mult would overflow as tsc * mult */
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	uint64_t want = (tsc_value >> 20) * pc->time_mult +
			(((tsc_value & ((1u << 20) - 1)) * pc->time_mult) >> 20);
	assert_int_equal(c.ena, want);
	assert_int_equal(c.run, want);
	assert_true(want > 1999990000000ull &&
		    want <= 2000000000000ull); /* 2/3 of the ticks in ns */
	free(pc);
}

/* cap_user_time_short: the TSC is truncated to time_mask around time_cycles (uapi header). */
static void test_time_short(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct psc_counts c = { 0 };

	pc->cap_user_time_short = 1;
	pc->time_cycles = 0x1000;
	pc->time_mask = 0xffff;
	pc->time_offset = (uint64_t)-0x1000;
	pc->time_enabled = pc->time_running = 0;
	tsc_value = 0xabcd0000ull + 0x1010; /* 0x10 ticks after time_cycles, high bits ignored */
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(c.ena, 0x10);
	assert_int_equal(c.run, 0x10);
	free(pc);
}

/* The kernel changed the page during the read: the reader retries and uses the new fields. */
static void test_retry_on_update(void **state)
{
	struct perf_event_mmap_page *pc = new_page();
	struct psc_counts c = { 0 };

	update_page = pc;
	pmc_value = 7;
	assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), 0);
	assert_int_equal(pmc_calls, 2);
	assert_int_equal(c.val, 5007);
	assert_int_equal(c.ena, 7000);
	assert_int_equal(c.run, 7000);
	free(pc);
}

/* Each case where user space cannot read the counter now: -EAGAIN, rdpmc never executed. */
static void expect_fallback(const char *why, struct perf_event_mmap_page *pc)
{
	struct psc_counts c = { 11, 22, 33, 44 };

	pmc_calls = 0;
	if (psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc) != -EAGAIN || pmc_calls) {
		print_message("# %s: read from user space anyway\n", why);
		fail();
	}
	/* the caller's counts are left for read(2) to fill */
	assert_int_equal(c.val, 11);
	assert_int_equal(c.ena, 22);
	assert_int_equal(c.run, 33);
	free(pc);
}

static void test_falls_back_to_read(void **state)
{
	struct perf_event_mmap_page *pc;

	pc = new_page();
	pc->cap_user_rdpmc = 0;
	expect_fallback("kernel refuses rdpmc (cap_user_rdpmc 0)", pc);
	pc = new_page();
	pc->index = 0;
	expect_fallback("counter not on the PMU (index 0: disabled or multiplexed out)", pc);
	pc = new_page();
	pc->cap_user_time = 0;
	expect_fallback("no cap_user_time: times cannot be brought up to date", pc);
	pc = new_page();
	pc->pmc_width = 0;
	expect_fallback("pmc_width 0", pc);
	pc = new_page();
	pc->pmc_width = 65;
	expect_fallback("pmc_width above 64", pc);
	pc = new_page();
	pc->time_shift = 64;
	pmc_calls = 0;
	{
		struct psc_counts c = { 0 };

		assert_int_equal(psc_selfmon_read(pc, &c, fake_rdpmc, fake_rdtsc), -EAGAIN);
	}
	free(pc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_offset_plus_counter),
		cmocka_unit_test(test_width_sign_extension),
		cmocka_unit_test(test_times_brought_up_to_date),
		cmocka_unit_test(test_time_short),
		cmocka_unit_test(test_retry_on_update),
		cmocka_unit_test(test_falls_back_to_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
