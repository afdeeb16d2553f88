/* Benchmark: the ways to read perf counters bound to another CPU, for the exporter's collector
 * time: read(2) (an IPI), a reader thread pinned on that CPU, the mmap'd user page. */
#include <errno.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: bench_exporter_remote [ITERATIONS]
 *
 * The reader runs on CPU 0; the counters are the exporter's five software events as one group
 * on CPU 0 (local) or CPU 1 (remote). A counter that is active on another CPU can only be read
 * by that CPU: read(2) sends it an IPI and spins until it answers. Between real scrapes (15 s
 * apart) that CPU is usually idle, halted, and must be woken first; "1 ms apart" reproduces
 * that, "back to back" does not. The alternatives a collector could use instead:
 *   - a reader thread pinned on the remote CPU, woken through a futex, reading locally and
 *     answering through memory the scraper spins on (the wake-up is an IPI to that CPU too);
 *   - the counter's mmap'd perf_event_mmap_page, readable from anywhere without a system call,
 *     if the kernel kept it current for software events (it prints whether it does).
 */

#define NR_EV 5

static const uint64_t sw_events[NR_EV] = {
	PERF_COUNT_SW_PAGE_FAULTS, PERF_COUNT_SW_CONTEXT_SWITCHES, PERF_COUNT_SW_CPU_MIGRATIONS,
	PERF_COUNT_SW_PAGE_FAULTS_MIN, PERF_COUNT_SW_PAGE_FAULTS_MAJ
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* The five events as one group on cpu, read with PERF_FORMAT_GROUP as the exporter does. */
static int open_group(int cpu)
{
	int leader = -1;

	for (int i = 0; i < NR_EV; i++) {
		struct perf_event_attr a = { .size = sizeof(a),
					     .type = PERF_TYPE_SOFTWARE,
					     .config = sw_events[i],
					     .read_format = PERF_FORMAT_GROUP |
							    PERF_FORMAT_TOTAL_TIME_ENABLED |
							    PERF_FORMAT_TOTAL_TIME_RUNNING |
							    PERF_FORMAT_ID };
		int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, leader, 0);

		if (fd < 0)
			return -errno;
		if (leader < 0)
			leader = fd;
	}
	return leader;
}

static int read_group(int fd)
{
	uint64_t buf[3 + 2 * NR_EV];

	return read(fd, buf, sizeof(buf)) > 0 ? 0 : -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	printf("| %s | %.1f | %.1f | %.1f |\n", what, (double)v[n / 2] / 1e3,
	       (double)v[(long)(n - 1) * 90 / 100] / 1e3,
	       (double)v[(long)(n - 1) * 99 / 100] / 1e3);
}

static void nap(int gap_us)
{
	if (gap_us)
		usleep((useconds_t)gap_us);
}

/* read(2) of a group, n times, gap_us apart. */
static void time_reads(const char *what, int fd, int n, int gap_us, uint64_t *v)
{
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		read_group(fd);
		v[i] = now_ns() - t0;
		nap(gap_us);
	}
	report(what, v, n);
}

/* The pinned reader thread: waits for a request number, reads its CPU's group, posts it back. */
static struct {
	int fd;
	_Atomic int req, done;
} worker;

static void futex_wait(_Atomic int *addr, int val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

static void futex_wake(_Atomic int *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *worker_main(void *arg)
{
	int seen = 0;

	if (pin(*(int *)arg))
		return NULL;
	for (;;) {
		int r;

		while ((r = atomic_load(&worker.req)) == seen)
			futex_wait(&worker.req, seen);
		if (r < 0)
			return NULL;
		seen = r;
		read_group(worker.fd);
		atomic_store(&worker.done, r);
	}
}

/* Local group read plus the remote one through the worker: what a scrape of both CPUs costs. */
static void time_worker(const char *what, int local_fd, int n, int gap_us, uint64_t *v)
{
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();
		int r = i + 1;

		atomic_store(&worker.req, r);
		futex_wake(&worker.req);
		read_group(local_fd);
		while (atomic_load(&worker.done) != r)
			;
		v[i] = now_ns() - t0;
		nap(gap_us);
	}
	report(what, v, n);
}

/*
 * Whether the mmap'd user page of a software counter is current: each sample reads the counter
 * (count and time enabled) and then the page; the page's time_enabled says when the kernel
 * last wrote it (cap_user_time is what would let a reader extend it, and software events lack
 * it), the count tells how far behind it is.
 */
static void user_page(int cpu)
{
	struct perf_event_attr a = { .size = sizeof(a),
				     .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
				     .read_format = PERF_FORMAT_TOTAL_TIME_ENABLED };
	uint64_t lag_ns[10], behind[10];
	struct perf_event_mmap_page *pg;
	int fd = (int)syscall(SYS_perf_event_open, &a, -1, cpu, -1, 0), n = 0;
	long page = sysconf(_SC_PAGESIZE);

	if (fd < 0) {
		printf("user page: cannot open context-switches on CPU %d: %s\n", cpu,
		       strerror(errno));
		return;
	}
	pg = mmap(NULL, (size_t)page, PROT_READ, MAP_SHARED, fd, 0);
	if (pg == MAP_FAILED) {
		printf("user page: mmap: %s\n", strerror(errno));
		close(fd);
		return;
	}
	for (int i = 0; i < 10; i++) {
		uint64_t rd[2], ena;
		int64_t off;
		uint32_t seq;

		usleep(30000);
		if (read(fd, rd, sizeof(rd)) != sizeof(rd))
			continue;
		do {
			seq = pg->lock;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			off = pg->offset;
			ena = pg->time_enabled;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while (pg->lock != seq || (seq & 1));
		lag_ns[n] = rd[1] - ena;
		behind[n] = rd[0] - (uint64_t)off;
		n++;
	}
	if (n) {
		qsort(lag_ns, (size_t)n, sizeof(*lag_ns), cmp_u64);
		qsort(behind, (size_t)n, sizeof(*behind), cmp_u64);
		printf("user page of context-switches on CPU %d (cap_user_rdpmc %u, cap_user_time %u), %d samples 30 ms apart: last written a median %.1f ms before the read(2), up to %llu switches behind it: %s\n",
		       cpu, (unsigned int)pg->cap_user_rdpmc, (unsigned int)pg->cap_user_time, n,
		       (double)lag_ns[n / 2] / 1e6, (unsigned long long)behind[n - 1],
		       lag_ns[n / 2] > 1000000
			       ? "stale; the kernel rewrites it only when it schedules the event in, not as it counts"
			       : "current");
	}
	munmap(pg, (size_t)page);
	close(fd);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 3000, remote = 1, local_fd, remote_fd;
	uint64_t *v;
	pthread_t th;

	if (n <= 0) {
		fprintf(stderr, "usage: bench_exporter_remote [ITERATIONS]\n");
		return 2;
	}
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("bench_exporter_remote: one CPU online, nothing is remote\n");
		return 0;
	}
	if (pin(0)) {
		fprintf(stderr, "bench_exporter_remote: cannot pin to CPU 0: %s\n",
			strerror(errno));
		return 1;
	}
	local_fd = open_group(0);
	remote_fd = open_group(remote);
	v = calloc((size_t)n, sizeof(*v));
	if (local_fd < 0 || remote_fd < 0 || !v) {
		fprintf(stderr, "bench_exporter_remote: cannot open the software events: %s\n",
			strerror(local_fd < 0	 ? -local_fd
				 : remote_fd < 0 ? -remote_fd
						 : ENOMEM));
		return 1;
	}
	printf("| reader on CPU 0, 5 software events as one group | median (µs) | p90 (µs) | p99 (µs) |\n");
	printf("|---|---:|---:|---:|\n");
	time_reads("read(2), CPU 0 (local), back to back", local_fd, n, 0, v);
	time_reads("read(2), CPU 1 (remote), back to back", remote_fd, n, 0, v);
	time_reads("read(2), CPU 1 (remote), 1 ms apart", remote_fd, n, 1000, v);
	worker.fd = remote_fd;
	if (pthread_create(&th, NULL, worker_main, &remote)) {
		fprintf(stderr, "bench_exporter_remote: cannot start the worker thread\n");
		return 1;
	}
	usleep(10000);
	time_worker("CPU 0 by read(2) + CPU 1 by a reader pinned there, back to back", local_fd, n,
		    0, v);
	time_worker("CPU 0 by read(2) + CPU 1 by a reader pinned there, 1 ms apart", local_fd, n,
		    1000, v);
	atomic_store(&worker.req, -1);
	futex_wake(&worker.req);
	pthread_join(th, NULL);
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		read_group(local_fd);
		read_group(remote_fd);
		v[i] = now_ns() - t0;
		nap(1000);
	}
	report("read(2), CPU 0 then CPU 1, 1 ms apart (what the exporter does)", v, n);
	printf("\n");
	user_page(remote);
	free(v);
	return 0;
}
