/* Unit tests of common/duration: perf-prof's time arguments parsed to nanoseconds, and what is
 * refused (units it does not know, negatives, non-numbers, more than a u64 holds). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "duration.h"

static uint64_t ok(const char *arg)
{
	uint64_t ns = 12345;

	assert_int_equal(duration__parse(arg, &ns), 0);
	return ns;
}

static void refused(const char *arg)
{
	uint64_t ns = 777;

	assert_int_equal(duration__parse(arg, &ns), -EINVAL);
	/* a refused argument leaves the value as it was (the option's default stays) */
	assert_int_equal(ns, 777);
}

static void test_units(void **state)
{
	(void)state;
	assert_int_equal(ok("20ms"), 20000000ull);
	assert_int_equal(ok("1.5s"), 1500000000ull);
	assert_int_equal(ok("100us"), 100000ull);
	assert_int_equal(ok("500ns"), 500ull);
	/* a bare number is nanoseconds */
	assert_int_equal(ok("500"), 500ull);
	assert_int_equal(ok("0"), 0ull);
	assert_int_equal(ok("0s"), 0ull);
}

static void test_rounding(void **state)
{
	(void)state;
	/* fractions round to the nearest nanosecond */
	assert_int_equal(ok("1.4"), 1ull);
	assert_int_equal(ok("1.6"), 2ull);
	assert_int_equal(ok("0.0015ms"), 1500ull);
	assert_int_equal(ok("2.5us"), 2500ull);
}

static void test_refused(void **state)
{
	(void)state;
	refused("");
	refused("ms");
	refused("-1");
	refused("-1ms");
	refused("10m");
	refused("10sec");
	refused("10 ms");
	refused("10msx");
	refused("abc");
	refused("inf");
	refused("nan");
	/* more nanoseconds than a u64 holds: its conversion would be undefined */
	refused("1e30");
	refused("1e12s");
}

static void test_large(void **state)
{
	(void)state;
	/* a year fits easily */
	assert_int_equal(ok("31536000s"), 31536000000000000ull);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_rounding),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
