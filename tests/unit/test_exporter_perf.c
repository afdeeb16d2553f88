/* Unit tests of the perf collector's fixed table and counter values: node_exporter's 30 families
 * (names, HELP, allow-list names, events), multiplexing scaling that never goes backwards. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <linux/perf_event.h>
#include <perfscope/evsel.h>

#include "collectors/perf.h"

/*
 * node_exporter's collector/perf_linux.go (1.5 to 1.12), written out from its descriptors and
 * its perf{Hardware,Software,Cache}ProfilerMap: metric (with _total), HELP, allow-list name.
 */
static const struct {
	enum perf_kind kind;
	const char *metric, *help, *flag;
} upstream[] = {
	{ PERF_KIND_HARDWARE, "node_perf_cpucycles_total",
	  "Number of CPU cycles (frequency scaled)", "CpuCycles" },
	{ PERF_KIND_HARDWARE, "node_perf_instructions_total", "Number of CPU instructions",
	  "CpuInstr" },
	{ PERF_KIND_HARDWARE, "node_perf_branch_instructions_total",
	  "Number of CPU branch instructions", "BranchInstr" },
	{ PERF_KIND_HARDWARE, "node_perf_branch_misses_total", "Number of CPU branch misses",
	  "BranchMisses" },
	{ PERF_KIND_HARDWARE, "node_perf_cache_refs_total",
	  "Number of cache references (non frequency scaled)", "CacheRef" },
	{ PERF_KIND_HARDWARE, "node_perf_cache_misses_total", "Number of cache misses",
	  "CacheMisses" },
	{ PERF_KIND_HARDWARE, "node_perf_ref_cpucycles_total", "Number of CPU cycles",
	  "RefCpuCycles" },
	{ PERF_KIND_HARDWARE, "node_perf_stalled_cycles_backend_total",
	  "Number of stalled backend CPU cycles", "StalledCyclesBackend" },
	{ PERF_KIND_HARDWARE, "node_perf_stalled_cycles_frontend_total",
	  "Number of stalled frontend CPU cycles", "StalledCyclesFrontend" },
	{ PERF_KIND_SOFTWARE, "node_perf_page_faults_total", "Number of page faults", "PageFault" },
	{ PERF_KIND_SOFTWARE, "node_perf_context_switches_total", "Number of context switches",
	  "ContextSwitch" },
	{ PERF_KIND_SOFTWARE, "node_perf_cpu_migrations_total", "Number of CPU process migrations",
	  "CpuMigration" },
	{ PERF_KIND_SOFTWARE, "node_perf_minor_faults_total", "Number of minor page faults",
	  "MinorFault" },
	{ PERF_KIND_SOFTWARE, "node_perf_major_faults_total", "Number of major page faults",
	  "MajorFault" },
	{ PERF_KIND_CACHE, "node_perf_cache_l1d_read_hits_total", "Number L1 data cache read hits",
	  "L1DataReadHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_l1d_read_misses_total",
	  "Number L1 data cache read misses", "L1DataReadMiss" },
	{ PERF_KIND_CACHE, "node_perf_cache_l1d_write_hits_total",
	  "Number L1 data cache write hits", "L1DataWriteHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_l1_instr_read_misses_total",
	  "Number instruction L1 instruction read misses", "L1InstrReadMiss" },
	{ PERF_KIND_CACHE, "node_perf_cache_tlb_instr_read_hits_total",
	  "Number instruction TLB read hits", "InstrTLBReadHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_tlb_instr_read_misses_total",
	  "Number instruction TLB read misses", "InstrTLBReadMiss" },
	{ PERF_KIND_CACHE, "node_perf_cache_tlb_data_read_hits_total",
	  "Number of data TLB read hits", "DataTLBReadHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_tlb_data_read_misses_total",
	  "Number of data TLB read misses", "DataTLBReadMiss" },
	{ PERF_KIND_CACHE, "node_perf_cache_tlb_data_write_hits_total",
	  "Number of data TLB write hits", "DataTLBWriteHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_tlb_data_write_misses_total",
	  "Number of data TLB write misses", "DataTLBWriteMiss" },
	{ PERF_KIND_CACHE, "node_perf_cache_ll_read_hits_total", "Number last level read hits",
	  "LLReadHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_ll_read_misses_total", "Number last level read misses",
	  "LLReadMiss" },
	{ PERF_KIND_CACHE, "node_perf_cache_ll_write_hits_total", "Number last level write hits",
	  "LLWriteHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_ll_write_misses_total",
	  "Number last level write misses", "LLWriteMiss" },
	{ PERF_KIND_CACHE, "node_perf_cache_bpu_read_hits_total", "Number BPU read hits",
	  "BPUReadHit" },
	{ PERF_KIND_CACHE, "node_perf_cache_bpu_read_misses_total", "Number BPU read misses",
	  "BPUReadMiss" },
};

#define NR_UPSTREAM ((int)(sizeof(upstream) / sizeof(upstream[0])))

static void test_families(void **state)
{
	int nr;
	const struct perf_family_def *defs = perf_family_defs(&nr);

	(void)state;
	assert_int_equal(nr, 30);
	assert_int_equal(NR_UPSTREAM, 30);
	for (int i = 0; i < NR_UPSTREAM; i++) {
		char metric[128];
		int found = 0;

		for (int j = 0; j < nr; j++) {
			snprintf(metric, sizeof(metric), "%s_total", defs[j].metric);
			if (strcmp(metric, upstream[i].metric))
				continue;
			found++;
			assert_int_equal(defs[j].kind, upstream[i].kind);
			assert_string_equal(defs[j].help, upstream[i].help);
			assert_string_equal(defs[j].flag_name, upstream[i].flag);
		}
		if (found != 1)
			fail_msg("%s: %d definitions", upstream[i].metric, found);
	}
}

/* The perf events behind the names: what perf-utils opens for each profiler. */
static void test_events(void **state)
{
	static const struct {
		const char *flag;
		uint32_t type;
		uint64_t config;
	} want[] = {
		{ "CpuCycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
		{ "RefCpuCycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
		{ "StalledCyclesFrontend", PERF_TYPE_HARDWARE,
		  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
		{ "PageFault", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
		{ "ContextSwitch", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "CpuMigration", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "MinorFault", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "MajorFault", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "L1DataReadMiss", PERF_TYPE_HW_CACHE,
		  PERF_COUNT_HW_CACHE_L1D | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
			  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16) },
		{ "L1InstrReadMiss", PERF_TYPE_HW_CACHE,
		  PERF_COUNT_HW_CACHE_L1I | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
			  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16) },
		{ "DataTLBWriteMiss", PERF_TYPE_HW_CACHE,
		  PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
			  (PERF_COUNT_HW_CACHE_RESULT_MISS << 16) },
		{ "LLWriteHit", PERF_TYPE_HW_CACHE,
		  PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_WRITE << 8) |
			  (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16) },
		{ "BPUReadHit", PERF_TYPE_HW_CACHE,
		  PERF_COUNT_HW_CACHE_BPU | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
			  (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16) },
	};
	int nr;
	const struct perf_family_def *defs = perf_family_defs(&nr);

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		int j;

		for (j = 0; j < nr && strcmp(defs[j].flag_name, want[i].flag); j++)
			;
		assert_true(j < nr);
		assert_int_equal(defs[j].type, want[i].type);
		assert_int_equal(defs[j].config, want[i].config);
	}
}

static struct psc_counts counts(uint64_t val, uint64_t ena, uint64_t run)
{
	return (struct psc_counts){ .val = val, .ena = ena, .run = run };
}

/* Multiplexing: value * enabled / running, rounded, never below what was exported before. */
static void test_scaling(void **state)
{
	struct psc_counts c;
	uint64_t v = 0;

	(void)state;
	/* never on the PMU yet: nothing to estimate from */
	c = counts(0, 5000, 0);
	v = perf_counter_value(v, &c);
	assert_int_equal(v, 0);
	/* on the PMU half the time */
	c = counts(1000, 2000, 1000);
	v = perf_counter_value(v, &c);
	assert_int_equal(v, 2000);
	/* 1100 * 2400 / 1300 = 2030.77 */
	c = counts(1100, 2400, 1300);
	v = perf_counter_value(v, &c);
	assert_int_equal(v, 2031);
	/* the estimate dips (1200 * 2600 / 1600 = 1950): the counter holds */
	c = counts(1200, 2600, 1600);
	v = perf_counter_value(v, &c);
	assert_int_equal(v, 2031);
	/* and rises again from the new estimate */
	c = counts(1900, 3000, 2000);
	v = perf_counter_value(v, &c);
	assert_int_equal(v, 2850);
	/* running the whole time: the raw count */
	c = counts(123456789, 1000, 1000);
	assert_int_equal(perf_counter_value(0, &c), 123456789);
	/* an estimate beyond 64 bits saturates instead of wrapping */
	c = counts(UINT64_MAX / 2, UINT64_MAX, 10);
	assert_true(perf_counter_value(0, &c) == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_families),
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_scaling),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
