/* Benchmark: the cost of a CPU sample with its stacks, counted in the kernel (BPF) or read from a
 * ring, measured on a thread doing a fixed amount of work. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "bpf_stacks.h"

/*
 * usage: bench_bpf_stacks none|bpf|ring [PERIOD_US [WORK]]
 *
 * A thread does WORK million loop iterations, 5 calls deep (frame pointers), sampled by
 * cpu-clock every PERIOD_US (default 100: 10 kHz) with its kernel and user stacks:
 *   none  no event: the work alone
 *   bpf   bpf/stacks.bpf.c counts each sample by stack in the kernel (common/bpf/bpf_stacks.c); the
 *         maps are read once at the end, as a profile is written
 *   ring  PERF_SAMPLE_TID|TIME|CALLCHAIN|PERIOD records into a 64-page ring, drained every
 *         10 ms by a second thread (records counted, not hashed: the floor of the ring path)
 * Prints "MODE samples N lost L cpu_s S wall_s W bpf_ns_per_run R": S is this process's user +
 * system CPU (both threads), so (S - S_none) / N is what one sample cost; R is the kernel's own
 * account of the program's run time per run (BPF_ENABLE_STATS), 0 outside bpf mode.
 */

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static uint64_t leaf(uint64_t n)
{
	volatile uint64_t x = 0;

	for (uint64_t i = 0; i < n; i++)
		x += i;
	return x;
}

__attribute__((noinline)) static uint64_t work(int depth, uint64_t n)
{
	uint64_t r = depth ? work(depth - 1, n) : leaf(n);

	__asm__ volatile("" : : "r"(r)); /* no tail call: each level keeps its frame */
	return r;
}

struct drain {
	struct psc_ring *ring;
	atomic_bool stop;
	uint64_t samples, lost;
};

static void drain_once(struct drain *d)
{
	const struct perf_event_header *h;

	if (psc_ring__read_init(d->ring))
		return;
	while ((h = psc_ring__next(d->ring))) {
		if (h->type == PERF_RECORD_SAMPLE)
			d->samples++;
		else if (h->type == PERF_RECORD_LOST)
			d->lost += ((const uint64_t *)(h + 1))[1];
		psc_ring__consume(d->ring);
	}
	psc_ring__read_done(d->ring);
}

static void *drainer(void *arg)
{
	struct drain *d = arg;

	while (!atomic_load(&d->stop)) {
		drain_once(d);
		usleep(10000);
	}
	drain_once(d);
	return NULL;
}

static int count_samples(void *ctx, const struct bpf_stacks_ent *e)
{
	*(uint64_t *)ctx += e->count;
	return 0;
}

/* The kernel's run-time statistics of BPF programs, on while the returned fd is open. */
static int enable_bpf_stats(void)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.enable_stats.type = BPF_STATS_RUN_TIME;
	return (int)syscall(SYS_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
}

static double bpf_ns_per_run(int prog_fd)
{
	struct bpf_prog_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)prog_fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	if (syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) || !info.run_cnt)
		return 0;
	return (double)info.run_time_ns / (double)info.run_cnt;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	long period_us = argc > 2 ? atol(argv[2]) : 100, mwork = argc > 3 ? atol(argv[3]) : 2000;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
	};
	struct psc_evsel *evsel = NULL;
	struct bpf_stacks *stacks = NULL;
	struct drain d = { 0 };
	pthread_t th;
	double c0, w0, c1, w1, per_run = 0;
	uint64_t samples = 0, lost = 0;
	int stats_fd = -1;
	char why[512];

	if ((strcmp(mode, "none") && strcmp(mode, "bpf") && strcmp(mode, "ring")) ||
	    period_us <= 0 || mwork <= 0) {
		fprintf(stderr, "usage: %s none|bpf|ring [PERIOD_US [MILLION_ITERATIONS]]\n", argv[0]);
		return 2;
	}
	attr.sample_period = (uint64_t)period_us * 1000;
	if (!strcmp(mode, "ring")) {
		attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
				   PERF_SAMPLE_PERIOD;
		attr.use_clockid = 1;
		attr.clockid = CLOCK_MONOTONIC;
	}
	if (strcmp(mode, "none")) {
		struct psc_cpumap *cpus = psc_cpumap__new_any();
		struct psc_threadmap *threads = psc_threadmap__new_tid((pid_t)syscall(SYS_gettid));
		int err;

		evsel = psc_evsel__new(&attr, "cpu-clock");
		err = evsel ? psc_evsel__open(evsel, cpus, threads, NULL) : -errno;
		psc_cpumap__put(cpus);
		psc_threadmap__put(threads);
		if (err) {
			fprintf(stderr, "%s\n", psc_strerror_open(err, "cpu-clock", why, sizeof(why)));
			return 1;
		}
	}
	if (!strcmp(mode, "bpf")) {
		stacks = bpf_stacks__new(NULL, why, sizeof(why));
		if (!stacks || bpf_stacks__attach(stacks, evsel, why, sizeof(why))) {
			fprintf(stderr, "bench_bpf_stacks: %s\n", why);
			return 1;
		}
		stats_fd = enable_bpf_stats();
	} else if (!strcmp(mode, "ring")) {
		d.ring = psc_ring__new_fd(psc_evsel__fd(evsel, 0, 0), 64, NULL);
		if (!d.ring || pthread_create(&th, NULL, drainer, &d)) {
			perror("bench_bpf_stacks: ring");
			return 1;
		}
	}
	c0 = cpu_seconds();
	w0 = wall_seconds();
	if (evsel)
		psc_evsel__enable(evsel);
	work(4, (uint64_t)mwork * 1000000);
	if (evsel)
		psc_evsel__disable(evsel);
	if (d.ring) {
		atomic_store(&d.stop, true);
		pthread_join(th, NULL);
		samples = d.samples;
		lost = d.lost;
	}
	if (stacks) {
		struct bpf_stacks_drops dr;

		bpf_stacks__for_each(stacks, false, count_samples, &samples);
		bpf_stacks__drops(stacks, &dr);
		lost = dr.keys_full;
		per_run = bpf_ns_per_run(bpf_stacks__prog_fd(stacks));
	}
	c1 = cpu_seconds();
	w1 = wall_seconds();
	printf("%s samples %llu lost %llu cpu_s %.3f wall_s %.3f bpf_ns_per_run %.0f\n", mode,
	       (unsigned long long)samples, (unsigned long long)lost, c1 - c0, w1 - w0, per_run);
	if (stats_fd >= 0)
		close(stats_fd);
	psc_ring__delete(d.ring);
	bpf_stacks__delete(stacks);
	psc_evsel__delete(evsel);
	return 0;
}
