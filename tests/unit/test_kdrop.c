/* Unit tests of common/kdrop: which events' counts are their hits (so that a shortfall against
 * the samples read is a silent drop), the shortfall itself, and the message naming CPU or thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kdrop.h"

static struct perf_event_attr attr(uint32_t type, uint64_t config, uint64_t period, bool freq)
{
	struct perf_event_attr a = { .type = type, .config = config, .sample_period = period };

	a.freq = freq;
	return a;
}

static void test_applies(void **state)
{
	struct perf_event_attr a;

	(void)state;
	a = attr(PERF_TYPE_TRACEPOINT, 316, 1, false);
	assert_true(kdrop__applies(&a, 0));
	/* a BPF program may drop samples on purpose */
	assert_false(kdrop__applies(&a, 1));
	a = attr(PERF_TYPE_TRACEPOINT, 316, 2, false);
	assert_false(kdrop__applies(&a, 0));
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1, false);
	assert_true(kdrop__applies(&a, 0));
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 1, false);
	assert_true(kdrop__applies(&a, 0));
	/* clocks count nanoseconds, not hits */
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1, false);
	assert_false(kdrop__applies(&a, 0));
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1, false);
	assert_false(kdrop__applies(&a, 0));
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, 1, false);
	assert_false(kdrop__applies(&a, 0));
	/* a frequency: the period moves */
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1, true);
	assert_false(kdrop__applies(&a, 0));
	a = attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1, false);
	assert_false(kdrop__applies(&a, 0));
	assert_false(kdrop__applies(NULL, 0));
}

static void test_shortfall(void **state)
{
	(void)state;
	assert_int_equal(kdrop__shortfall(43, 2, 0), 41);
	assert_int_equal(kdrop__shortfall(43, 2, 41), 0);
	assert_int_equal(kdrop__shortfall(40, 30, 5), 5);
	/* more read than counted (an inherited child's count not folded back yet): nothing */
	assert_int_equal(kdrop__shortfall(10, 12, 0), 0);
	assert_int_equal(kdrop__shortfall(0, 0, 0), 0);
	assert_int_equal(kdrop__shortfall(UINT64_MAX, UINT64_MAX - 1, 0), 1);
}

static void test_weighs(void **state)
{
	(void)state;
	assert_true(kdrop__weighs("sched:sched_stat_runtime"));
	assert_true(kdrop__weighs("sched:sched_stat_sleep"));
	assert_false(kdrop__weighs("sched:sched_switch"));
	assert_false(kdrop__weighs("sched:sched_stat"));
	assert_false(kdrop__weighs(NULL));
}

/* The lines said, one after the other, into a memory stream. */
static void to_stream(void *ctx, const char *line)
{
	fprintf(ctx, "%s\n", line);
}

static void test_print(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct say to = { to_stream, f };

	(void)state;
	assert_non_null(f);
	kdrop__say(&to, "sched:sched_wakeup", 1, -1, 40);
	kdrop__say(&to, "sched:sched_wakeup", -1, 4242, 3);
	kdrop__say(NULL, "sched:sched_wakeup", -1, 4242, 3); /* silent */
	fclose(f);
	assert_non_null(strstr(buf, "sched:sched_wakeup: the kernel counted 40 hits "
				    "on cpu 1 that never reached the ring"));
	assert_non_null(strstr(buf, "counted 3 hits on thread 4242"));
	assert_null(strstr(strstr(buf, "4242") + 4, "4242")); /* said once: NULL is silent */
	free(buf);
}

static void test_clock(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000, true);

	(void)state;
	a.sample_type = PERF_SAMPLE_PERIOD;
	assert_true(kdrop__clock_applies(&a, 0));
	assert_false(kdrop__clock_applies(&a, 1)); /* a BPF program may drop on purpose */
	a.exclude_user = 1; /* user time counted, never sampled */
	assert_false(kdrop__clock_applies(&a, 0));
	a.exclude_user = 0;
	a.exclude_idle = 1;
	assert_false(kdrop__clock_applies(&a, 0));
	a.exclude_idle = 0;
	a.sample_type = 0; /* no periods to add up */
	assert_false(kdrop__clock_applies(&a, 0));
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1, false);
	a.sample_type = PERF_SAMPLE_PERIOD;
	assert_false(kdrop__clock_applies(&a, 0));
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 1000000, false);
	a.sample_type = PERF_SAMPLE_PERIOD;
	assert_true(kdrop__clock_applies(&a, 0));
	assert_int_equal(kdrop__nominal_ns(&a), 1000000);
	a = attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, 1000, true);
	assert_int_equal(kdrop__nominal_ns(&a), 1000000);
	a.sample_freq = 0;
	assert_int_equal(kdrop__nominal_ns(&a), 0);
}

static void test_clock_shortfall(void **state)
{
	const uint64_t ms = 1000000;

	(void)state;
	/* 2 s counted, 0.98 s of 1 ms samples read: about 1020 missing, less the running one */
	assert_int_equal(kdrop__clock_shortfall(2000 * ms, 980 * ms, 980, 0, ms, 1), 1019);
	/* the lost samples stood for time too */
	assert_int_equal(kdrop__clock_shortfall(2000 * ms, 980 * ms, 980, 19, ms, 1), 1000);
	/* every sample there, the last period still running: nothing */
	assert_int_equal(kdrop__clock_shortfall(2000 * ms + ms / 2, 2000 * ms, 2000, 0, ms, 1), 0);
	/* late timers on a loaded VM: under 2% of the samples the count stands for */
	assert_int_equal(kdrop__clock_shortfall(2000 * ms, 1970 * ms, 1970, 0, ms, 1), 0);
	assert_int_equal(kdrop__clock_shortfall(2000 * ms, 1900 * ms, 1900, 0, ms, 1), 99);
	/* no sample at all: the nominal period scales it */
	assert_int_equal(kdrop__clock_shortfall(1000 * ms, 0, 0, 0, ms, 1), 999);
	assert_int_equal(kdrop__clock_shortfall(1000 * ms, 0, 0, 0, 0, 1), 0);
	/* one period per fd (threads of -p on one CPU's ring) */
	assert_int_equal(kdrop__clock_shortfall(1000 * ms, 0, 0, 0, ms, 4), 996);
	/* fewer than 10 samples: their mean is not trusted, the nominal period is used */
	assert_int_equal(kdrop__clock_shortfall(1000 * ms, 5 * 3 * ms, 5, 0, ms, 1), 984);
	/* a count behind the periods (read before the last samples' time was added): nothing */
	assert_int_equal(kdrop__clock_shortfall(10 * ms, 12 * ms, 12, 0, ms, 1), 0);
}

static void test_print_clock(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct say to = { to_stream, f };

	(void)state;
	assert_non_null(f);
	kdrop__say_clock(&to, "cpu-clock", 1, -1, 1700);
	fclose(f);
	assert_non_null(strstr(buf, "cpu-clock: the kernel counted the time of "
				    "about 1700 more samples on cpu 1 than reached the ring"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_applies),
		cmocka_unit_test(test_shortfall),
		cmocka_unit_test(test_weighs),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_clock),
		cmocka_unit_test(test_clock_shortfall),
		cmocka_unit_test(test_print_clock),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
