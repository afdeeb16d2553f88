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

static void test_print(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	kdrop__print(f, "trace", "sched:sched_wakeup", 1, -1, 40);
	kdrop__print(f, "trace", "sched:sched_wakeup", -1, 4242, 3);
	fclose(f);
	assert_non_null(strstr(buf,
			       "perfscope trace: sched:sched_wakeup: the kernel counted 40 hits "
			       "on cpu 1 that never reached the ring"));
	assert_non_null(strstr(buf, "counted 3 hits on thread 4242"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_applies),
		cmocka_unit_test(test_shortfall),
		cmocka_unit_test(test_weighs),
		cmocka_unit_test(test_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
