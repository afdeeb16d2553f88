/* Event generator for trace tests and benchmarks: exactly N getppid() calls or pipe ping-pongs, at
 * a set rate. */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/*
 * usage: gen_events [-r RATE] [-j THREADS] [-c CPU] getppid N
 *        gen_events [-r RATE] pingpong N
 *
 * getppid: each of THREADS threads makes exactly N getppid() system calls (N * THREADS in all,
 * so `syscalls:sys_enter_getppid` fires exactly that often). pingpong: a parent and a child pass
 * one byte back and forth N times over two pipes, two context switches per round trip when
 * they share a CPU (sched:sched_switch), exactly 2N write() and 2N read() calls.
 * RATE: calls (round trips) per second per thread, 0 = as fast as possible. The pacing works in
 * 1 ms slices, so rates up to millions per second keep their average.
 * CPU: moves to that CPU first, after its exec: its COMM record and its events are then written
 * to different CPUs' rings when it was started elsewhere (taskset -c 0 gen_events -c 1 ...).
 * Built with frame pointers and named, non-inlined functions so stack tests can look for
 * gen_call_getppid / gen_loop / main in user stacks.
 */

static long rate;
static long count;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps until the time by which done calls were due at `rate` per second from t0. */
static void pace(struct timespec *t0, long done)
{
	struct timespec due;
	long long ns;

	if (rate <= 0)
		return;
	ns = (long long)done * 1000000000ll / rate;
	due.tv_sec = t0->tv_sec + ns / 1000000000ll;
	due.tv_nsec = t0->tv_nsec + ns % 1000000000ll;
	if (due.tv_nsec >= 1000000000l) {
		due.tv_sec++;
		due.tv_nsec -= 1000000000l;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL) == EINTR)
		;
}

/*
 * One kernel entry per call (no libc caching). On x86-64 and arm64 the system call instruction is
 * right here, so a frame-pointer unwind from the kernel starts in this function and walks
 * gen_loop and main: through libc's syscall(), a leaf without a frame, the first caller would be
 * skipped.
 */
__attribute__((noinline)) long gen_call_getppid(void);
__attribute__((noinline)) long gen_call_getppid(void)
{
#if defined(__x86_64__)
	long ret;

	/* Using the frame address keeps this leaf's frame (gcc omits leaf frames otherwise). */
	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	__asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = SYS_getppid;
	register long x0 __asm__("x0");

	__asm__ volatile("" : : "r"(__builtin_frame_address(0)));
	__asm__ volatile("svc 0" : "=r"(x0) : "r"(x8) : "memory");
	return x0;
#else
	return syscall(SYS_getppid);
#endif
}

__attribute__((noinline)) void *gen_loop(void *arg);
__attribute__((noinline)) void *gen_loop(void *arg)
{
	long slice = rate > 0 ? (rate + 999) / 1000 : count;
	struct timespec t0;
	long i = 0, j;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (i < count) {
		for (j = 0; j < slice && i < count; j++, i++)
			gen_call_getppid();
		pace(&t0, i);
	}
	return NULL;
}

static int run_getppid(int threads)
{
	pthread_t *tids = calloc(threads, sizeof(*tids));
	int i, err;

	if (!tids)
		return 1;
	if (threads == 1) {
		gen_loop(NULL);
	} else {
		for (i = 0; i < threads; i++) {
			err = pthread_create(&tids[i], NULL, gen_loop, NULL);
			if (err) {
				fprintf(stderr, "gen_events: pthread_create: %s\n", strerror(err));
				return 1;
			}
		}
		for (i = 0; i < threads; i++)
			pthread_join(tids[i], NULL);
	}
	free(tids);
	return 0;
}

static int xfer(int rd, int wr, char *c)
{
	if (write(wr, c, 1) != 1)
		return -1;
	if (read(rd, c, 1) != 1)
		return -1;
	return 0;
}

static int run_pingpong(void)
{
	int a[2], b[2], status;
	struct timespec t0;
	char c = 'x';
	long i;
	pid_t pid;

	if (pipe(a) || pipe(b)) {
		perror("gen_events: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("gen_events: fork");
		return 1;
	}
	if (pid == 0) {
		/* child: echo every byte back */
		close(a[1]);
		close(b[0]);
		while (read(a[0], &c, 1) == 1)
			if (write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	close(a[0]);
	close(b[1]);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < count; i++) {
		if (xfer(b[0], a[1], &c)) {
			perror("gen_events: ping-pong");
			return 1;
		}
		pace(&t0, i + 1);
	}
	close(a[1]);
	close(b[0]);
	waitpid(pid, &status, 0);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: gen_events [-r RATE] [-j THREADS] [-c CPU] getppid N\n"
			"       gen_events [-r RATE] pingpong N\n"
			"  -r RATE     calls (round trips) per second per thread; 0 = flat out\n"
			"  -j THREADS  getppid threads (each makes N calls)\n"
			"  -c CPU      move to CPU first (after the exec that named it)\n"
			"  -q          no summary on stderr\n");
}

int main(int argc, char **argv)
{
	int opt, threads = 1, quiet = 0, cpu = -1, ret;
	double t0, dt;
	char *end;

	while ((opt = getopt(argc, argv, "r:j:c:qh")) != -1) {
		switch (opt) {
		case 'r':
			rate = strtol(optarg, &end, 10);
			if (*end || rate < 0) {
				fprintf(stderr, "gen_events: bad rate '%s'\n", optarg);
				return 2;
			}
			break;
		case 'j':
			threads = (int)strtol(optarg, &end, 10);
			if (*end || threads < 1 || threads > 1024) {
				fprintf(stderr, "gen_events: bad thread count '%s'\n", optarg);
				return 2;
			}
			break;
		case 'c':
			cpu = (int)strtol(optarg, &end, 10);
			if (*end || cpu < 0 || cpu >= CPU_SETSIZE) {
				fprintf(stderr, "gen_events: bad CPU '%s'\n", optarg);
				return 2;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage();
			return 0;
		default:
			usage();
			return 2;
		}
	}
	if (argc - optind != 2) {
		usage();
		return 2;
	}
	count = strtol(argv[optind + 1], &end, 10);
	if (*end || count < 0) {
		fprintf(stderr, "gen_events: bad count '%s'\n", argv[optind + 1]);
		return 2;
	}
	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		/* sched_setaffinity returns once the task runs there */
		if (sched_setaffinity(0, sizeof(set), &set)) {
			fprintf(stderr, "gen_events: CPU %d: %s\n", cpu, strerror(errno));
			return 1;
		}
	}
	t0 = now_s();
	if (!strcmp(argv[optind], "getppid")) {
		ret = run_getppid(threads);
	} else if (!strcmp(argv[optind], "pingpong")) {
		ret = run_pingpong();
		threads = 1;
	} else {
		usage();
		return 2;
	}
	dt = now_s() - t0;
	if (!quiet && !ret)
		fprintf(stderr, "gen_events: %ld %s in %.3f s (%.0f/s)\n", count * threads,
			argv[optind], dt, dt > 0 ? count * threads / dt : 0);
	return ret;
}
