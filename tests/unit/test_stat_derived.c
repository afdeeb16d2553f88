/* Unit tests of stat's derived figures (cli/profilers/stat/stat_derived.c): perf stat's CPUs
 * utilized, rates, IPC and miss ratios from counts this machine's missing PMU cannot give, the mean
 * and spread of repeated runs (the topology reader is tested with the aggregation, test_aggr.c). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "stat_derived.h"

#define HW(c)                                                           \
	{                                                               \
		.type = PERF_TYPE_HARDWARE, .config = PERF_COUNT_HW_##c \
	}
#define CACHE(id, op, res)                                                                \
	{                                                                                 \
		.type = PERF_TYPE_HW_CACHE,                                               \
		.config = PERF_COUNT_HW_CACHE_##id | (PERF_COUNT_HW_CACHE_OP_##op << 8) | \
			  ((uint64_t)PERF_COUNT_HW_CACHE_RESULT_##res << 16)              \
	}

static void t_kinds(void **state)
{
	struct perf_event_attr tc = { .type = PERF_TYPE_SOFTWARE,
				      .config = PERF_COUNT_SW_TASK_CLOCK },
			       cc = { .type = PERF_TYPE_SOFTWARE,
				      .config = PERF_COUNT_SW_CPU_CLOCK },
			       cs = { .type = PERF_TYPE_SOFTWARE,
				      .config = PERF_COUNT_SW_CONTEXT_SWITCHES },
			       cyc = HW(CPU_CYCLES), ins = HW(INSTRUCTIONS),
			       br = HW(BRANCH_INSTRUCTIONS), bm = HW(BRANCH_MISSES),
			       l1 = CACHE(L1D, READ, MISS), l1a = CACHE(L1D, READ, ACCESS),
			       llc = CACHE(LL, READ, MISS), dtlb = CACHE(DTLB, READ, MISS),
			       itlba = CACHE(ITLB, READ, ACCESS),
			       l1w = CACHE(L1D, WRITE, MISS), /* no metric for stores */
		tp = { .type = PERF_TYPE_TRACEPOINT, .config = 42 };

	(void)state;
	assert_int_equal(stat_kind_of(&tc), STAT_TASK_CLOCK);
	assert_int_equal(stat_kind_of(&cc), STAT_CPU_CLOCK);
	assert_int_equal(stat_kind_of(&cs), STAT_OTHER);
	assert_int_equal(stat_kind_of(&cyc), STAT_CYCLES);
	assert_int_equal(stat_kind_of(&ins), STAT_INSTRUCTIONS);
	assert_int_equal(stat_kind_of(&br), STAT_BRANCHES);
	assert_int_equal(stat_kind_of(&bm), STAT_BRANCH_MISSES);
	assert_int_equal(stat_kind_of(&l1), STAT_L1D_LOAD_MISSES);
	assert_int_equal(stat_kind_of(&l1a), STAT_L1D_LOADS);
	assert_int_equal(stat_kind_of(&llc), STAT_LLC_LOAD_MISSES);
	assert_int_equal(stat_kind_of(&dtlb), STAT_DTLB_LOAD_MISSES);
	assert_int_equal(stat_kind_of(&itlba), STAT_ITLB_LOADS);
	assert_int_equal(stat_kind_of(&l1w), STAT_OTHER);
	assert_int_equal(stat_kind_of(&tp), STAT_OTHER);
	/* a hybrid machine's cycles (the PMU type in the upper half) are still cycles */
	cyc.config |= 8ull << 32;
	assert_int_equal(stat_kind_of(&cyc), STAT_CYCLES);
	/* modifiers make a context: cycles:u is not related to instructions */
	cyc.exclude_kernel = cyc.exclude_hv = 1;
	assert_int_not_equal(stat_ctx_of(&cyc), stat_ctx_of(&ins));
	ins.exclude_kernel = ins.exclude_hv = 1;
	assert_int_equal(stat_ctx_of(&cyc), stat_ctx_of(&ins));
}

/* The figure of counter i as perf prints it, "" when none, and its unit. */
static const char *fig(const struct stat_counter *c, int n, int i, double wall,
		       struct stat_metric *m)
{
	static char buf[64];

	stat_metric(c, n, i, wall, m);
	return stat_metric_str(m, true, buf, sizeof(buf));
}

static void t_software(void **state)
{
	/* perf stat -- sleep 0.2: 1.14 msec task-clock, 1 switch, 74 faults, 0.204 s */
	struct stat_counter c[] = {
		{ STAT_TASK_CLOCK, 0, 1140000, true }, { STAT_OTHER, 0, 1, true },
		{ STAT_OTHER, 0, 74, true },	       { STAT_OTHER, 0, 0, true },
		{ STAT_OTHER, 0, 5e6, true },	       { STAT_DURATION, 0, 204e6, true },
	};
	struct stat_metric m;

	(void)state;
	assert_string_equal(fig(c, 6, 0, 204e6, &m), "0.006");
	assert_string_equal(m.unit, "CPUs utilized");
	assert_string_equal(fig(c, 6, 1, 204e6, &m), "877.193"); /* 1 / 1.14 ms */
	assert_string_equal(m.unit, "/sec");
	assert_string_equal(fig(c, 6, 2, 204e6, &m), "64.912"); /* 74 / 1.14 ms */
	assert_string_equal(m.unit, "K/sec");
	assert_string_equal(fig(c, 6, 3, 204e6, &m), "0.000");
	assert_string_equal(m.unit, "/sec");
	assert_string_equal(fig(c, 6, 4, 204e6, &m), "4.386"); /* 5e6 / 1.14 ms */
	assert_string_equal(m.unit, "G/sec");
	/* G is the last prefix, as in perf */
	c[4].value = 5e9;
	assert_string_equal(fig(c, 6, 4, 204e6, &m), "4385.965");
	assert_string_equal(m.unit, "G/sec");
	/* duration_time: no figure (perf's "G/sec" of it means nothing) */
	assert_string_equal(fig(c, 6, 5, 204e6, &m), "");
	assert_int_equal(m.fmt, STAT_METRIC_NONE);
	/* 2 CPUs busy for 0.2 s system-wide */
	c[0] = (struct stat_counter){ STAT_CPU_CLOCK, 0, 400e6, true };
	assert_string_equal(fig(c, 6, 0, 200e6, &m), "2.000");
	/* rates are per second of the clock, not of the wall: 1.5M events over 1 ms of CPU */
	c[1].value = 1.5e6;
	c[0].value = 1e6;
	assert_string_equal(fig(c, 6, 1, 200e6, &m), "1.500");
	assert_string_equal(m.unit, "G/sec");
	/* no clock counted: no rate (as perf) */
	c[0].counted = false;
	assert_string_equal(fig(c, 6, 1, 200e6, &m), "");
	/* a clock in another context (:u) still is the one: perf printed 124.810 K/sec for 151
	 * page-faults:u over 1.21 msec of task-clock */
	c[0] = (struct stat_counter){ STAT_TASK_CLOCK, 0, 1.21e6, true };
	c[1] = (struct stat_counter){ STAT_OTHER, 3, 151, true };
	assert_string_equal(fig(c, 6, 1, 200e6, &m), "124.793");
	assert_string_equal(m.unit, "K/sec");
	/* task-clock preferred to cpu-clock */
	struct stat_counter two[] = {
		{ STAT_CPU_CLOCK, 0, 2e6, true },
		{ STAT_TASK_CLOCK, 0, 1e6, true },
		{ STAT_OTHER, 0, 2000, true },
	};
	assert_string_equal(fig(two, 3, 2, 1e9, &m), "2.000");
	assert_string_equal(m.unit, "M/sec");
	/* a counter that did not run has no figure */
	two[2].counted = false;
	assert_string_equal(fig(two, 3, 2, 1e9, &m), "");
}

static void t_hardware(void **state)
{
	struct stat_counter c[] = {
		{ STAT_TASK_CLOCK, 0, 1e9, true }, /* 0 */
		{ STAT_CYCLES, 0, 3.2e9, true }, /* 1: 3.2 GHz */
		{ STAT_INSTRUCTIONS, 0, 4.8e9, true }, /* 2: 1.5 IPC */
		{ STAT_BRANCHES, 0, 1e9, true }, /* 3 */
		{ STAT_BRANCH_MISSES, 0, 2.5e7, true }, /* 4: 2.5 % */
		{ STAT_CACHE_REFS, 0, 8e7, true }, /* 5 */
		{ STAT_CACHE_MISSES, 0, 1e7, true }, /* 6: 12.5 % */
		{ STAT_L1D_LOADS, 0, 2e9, true }, /* 7 */
		{ STAT_L1D_LOAD_MISSES, 0, 1e8, true }, /* 8: 5 % */
		{ STAT_LLC_LOADS, 0, 4e6, true }, /* 9 */
		{ STAT_LLC_LOAD_MISSES, 0, 1e6, true }, /* 10: 25 % */
		{ STAT_DTLB_LOADS, 0, 2e9, true }, /* 11 */
		{ STAT_DTLB_LOAD_MISSES, 0, 2e6, true }, /* 12: 0.1 % */
		{ STAT_ITLB_LOADS, 0, 0, true }, /* 13: counted, 0 */
		{ STAT_ITLB_LOAD_MISSES, 0, 5, true }, /* 14: 0 % (no accesses) */
		{ STAT_STALLED_FRONTEND, 0, 8e8, true }, /* 15: 25 % */
		{ STAT_STALLED_BACKEND, 0, 1.6e9, true }, /* 16: 50 % */
		{ STAT_L1I_LOAD_MISSES, 0, 10, true }, /* 17: no L1-icache-loads */
	};
	int n = sizeof(c) / sizeof(c[0]);
	struct stat_metric m;

	(void)state;
	assert_string_equal(fig(c, n, 1, 1e9, &m), "3.200");
	assert_string_equal(m.unit, "GHz");
	assert_string_equal(fig(c, n, 2, 1e9, &m), "1.50");
	assert_string_equal(m.unit, "insn per cycle");
	assert_int_equal(m.fmt, STAT_METRIC_IPC);
	assert_string_equal(fig(c, n, 4, 1e9, &m), "2.50%");
	assert_string_equal(m.unit, "of all branches");
	assert_string_equal(fig(c, n, 6, 1e9, &m), "12.50%");
	assert_string_equal(m.unit, "of all cache refs");
	assert_string_equal(fig(c, n, 8, 1e9, &m), "5.00%");
	assert_string_equal(m.unit, "of all L1-dcache accesses");
	assert_string_equal(fig(c, n, 10, 1e9, &m), "25.00%");
	assert_string_equal(m.unit, "of all LL-cache accesses");
	assert_string_equal(fig(c, n, 12, 1e9, &m), "0.10%");
	assert_string_equal(m.unit, "of all dTLB cache accesses");
	assert_string_equal(fig(c, n, 14, 1e9, &m), "0.00%");
	assert_string_equal(m.unit, "of all iTLB cache accesses");
	assert_string_equal(fig(c, n, 15, 1e9, &m), "25.00%");
	assert_string_equal(m.unit, "frontend cycles idle");
	assert_string_equal(fig(c, n, 16, 1e9, &m), "50.00%");
	assert_string_equal(m.unit, "backend cycles idle");
	assert_string_equal(fig(c, n, 17, 1e9, &m), "");
	/* the base counts get rates: branches per second of task-clock; a prefix only above
	 * 1000 of the one before, as perf steps */
	assert_string_equal(fig(c, n, 3, 1e9, &m), "1000.000");
	assert_string_equal(m.unit, "M/sec");
	/* text form keeps perf's widths */
	char buf[32];

	stat_metric(c, n, 2, 1e9, &m);
	assert_string_equal(stat_metric_str(&m, false, buf, sizeof(buf)), "   1.50 ");
	stat_metric(c, n, 4, 1e9, &m);
	assert_string_equal(stat_metric_str(&m, false, buf, sizeof(buf)), "   2.50%");
	stat_metric(c, n, 1, 1e9, &m);
	assert_string_equal(stat_metric_str(&m, false, buf, sizeof(buf)), "   3.200");
	/* instructions without cycles counted: no IPC; cycles of 0: none either */
	c[1].counted = false;
	assert_string_equal(fig(c, n, 2, 1e9, &m), "");
	c[1] = (struct stat_counter){ STAT_CYCLES, 0, 0, true };
	assert_string_equal(fig(c, n, 2, 1e9, &m), "");
	/* instructions:u against cycles (all modes): not related */
	c[1].value = 1e9;
	c[2].ctx = 3;
	assert_string_equal(fig(c, n, 2, 1e9, &m), "");
	/* out of range */
	stat_metric(c, n, n, 1e9, &m);
	assert_int_equal(m.fmt, STAT_METRIC_NONE);
}

static void t_runs(void **state)
{
	struct stat_stats s = { 0 };

	(void)state;
	assert_true(stat_stats__sem(&s) == 0);
	assert_true(stat_stats__rel_pct(&s) == 0);
	stat_stats__add(&s, 5);
	assert_true(s.mean == 5 && stat_stats__sem(&s) == 0);
	s = (struct stat_stats){ 0 };
	/* perf stat -r 3 on runs of about 2220, 3220 and 4220 page faults printed 3222 ( +-
	 * 17.95% ): the standard error of the mean, 1000 / sqrt(3), over the mean */
	stat_stats__add(&s, 2220);
	stat_stats__add(&s, 3220);
	stat_stats__add(&s, 4220);
	assert_true(s.mean > 3219.99 && s.mean < 3220.01);
	assert_true(fabs(stat_stats__sem(&s) - 1000 / sqrt(3)) < 1e-6);
	char buf[16];

	snprintf(buf, sizeof(buf), "%.2f", stat_stats__rel_pct(&s));
	assert_string_equal(buf, "17.93");
	/* a mean of 0: no percentage */
	s = (struct stat_stats){ 0 };
	stat_stats__add(&s, 1);
	stat_stats__add(&s, -1);
	assert_true(stat_stats__rel_pct(&s) == 0);
	/* perf's decimals for "0.053394 +- 0.000946 seconds time elapsed" */
	assert_int_equal(stat_precision(0.000946), 6);
	assert_int_equal(stat_precision(0.01), 4);
	assert_int_equal(stat_precision(2.5), 2);
	assert_int_equal(stat_precision(0), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_kinds),
		cmocka_unit_test(t_software),
		cmocka_unit_test(t_hardware),
		cmocka_unit_test(t_runs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
