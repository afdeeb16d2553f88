/* Benchmark: the exporter's perf collector alone, pinned to CPU 0: counter reads and the whole
 * exposition, for counters on the reading CPU, on another CPU, and on every CPU. */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/cpumap.h>

#include "collectors/perf.h"
#include "cpus.h"
#include "expo.h"
#include "exporter_log.h"

/*
 * usage: bench_exporter_collect [ITERATIONS]
 *
 * Each case opens the collector as `perfscope exporter` does by default (every hardware,
 * software and cache event; those this machine lacks are left out) on some CPUs, then runs
 * ITERATIONS scrapes back to back from a thread pinned to CPU 0. "collect" is what the exporter
 * exports as node_scrape_collector_duration_seconds (the group reads and scaling); "scrape" adds
 * writing the exposition text. A counter bound to another CPU can only be read by interrupting
 * that CPU (the kernel sends an IPI and waits for the answer), so "CPU 1 from CPU 0" shows the
 * price of one remote CPU on this machine.
 */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(uint64_t *v, int n, int p)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return (double)v[(long)(n - 1) * p / 100] / 1000.0;
}

static int run(const char *label, const char *cpus, int iters)
{
	struct perf_config cfg = { 0 };
	struct perf_collector *pc;
	uint64_t *collect = calloc((size_t)iters, sizeof(*collect));
	uint64_t *scrape = calloc((size_t)iters, sizeof(*scrape));
	size_t len = 0, hint = 4096;
	char err[1024];

	if (!collect || !scrape) {
		fprintf(stderr, "bench_exporter_collect: out of memory\n");
		return 1;
	}
	cfg.cpus = exporter_parse_cpus(cpus, true, err, sizeof(err));
	if (!cfg.cpus) {
		printf("| %s | skipped: %s | | | |\n", label, err);
		free(collect);
		free(scrape);
		return 0;
	}
	cfg.max_group_size = 4;
	pc = perf_collector_new(&cfg, err, sizeof(err));
	if (!pc) {
		fprintf(stderr, "bench_exporter_collect: %s\n", err);
		return 1;
	}
	for (int i = -100; i < iters; i++) {
		struct expo e;
		uint64_t ns = 0, t0 = now_ns(), t1;
		char *buf;

		expo_init(&e, EXPO_OPENMETRICS, hint);
		perf_collector_scrape(pc, &e, &ns);
		buf = expo_finish(&e, &len);
		t1 = now_ns();
		if (!buf) {
			fprintf(stderr, "bench_exporter_collect: out of memory\n");
			return 1;
		}
		free(buf);
		hint = len + 256;
		if (i >= 0) {
			collect[i] = ns;
			scrape[i] = t1 - t0;
		}
	}
	printf("| %s | %d | %.1f / %.1f | %.1f / %.1f | %zu |\n", label, perf_collector_nr_open(pc),
	       pct(collect, iters, 50), pct(collect, iters, 99), pct(scrape, iters, 50),
	       pct(scrape, iters, 99), len);
	perf_collector_delete(pc);
	psc_cpumap__put(cfg.cpus);
	free(collect);
	free(scrape);
	return 0;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20000;
	cpu_set_t set;
	int ret = 0;

	if (iters <= 0) {
		fprintf(stderr, "usage: bench_exporter_collect [ITERATIONS]\n");
		return 2;
	}
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "bench_exporter_collect: cannot pin to CPU 0: %s\n",
			strerror(errno));
		return 1;
	}
	xlog_set_level(XLOG_ERROR); /* the unsupported-event warnings are not the point here */
	printf("| counters on (reader on CPU 0) | events open | collect median / p99 (µs) | scrape median / p99 (µs) | bytes |\n");
	printf("|---|---:|---:|---:|---:|\n");
	ret |= run("CPU 0 (local)", "0", iters);
	ret |= run("CPU 1 from CPU 0 (remote)", "1", iters);
	ret |= run("every online CPU", NULL, iters);
	return ret;
}
