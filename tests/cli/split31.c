/* CPU time split 3:1 between two known functions, for perfscope profile's tests and bench. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

/*
 * The same loop in each; work_a runs it three times as long: 75% and 25% of the CPU time. Each
 * is a leaf of its own. The frame-pointer build is -O0: gcc 12 drops leaves' frames at -O1 and
 * above even with -mno-omit-leaf-frame-pointer, and the caller (main) would vanish. A round is
 * short (well under a millisecond at -O0) so that the run ends close to the time asked.
 */
__attribute__((noinline)) void work_a(void)
{
	for (unsigned long i = 0; i < 300000; i++)
		sink += i;
}

__attribute__((noinline)) void work_b(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink += i;
}

static double cpu_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * split31 [SECONDS[s]]: runs until the process has used SECONDS of CPU time (default 3), so the
 * number of samples a profiler takes depends neither on the CPU's speed nor on the machine's load.
 * The split it really had is measured (the thread's CPU time around each call) and, when
 * SPLIT31_SHARE names a file, written there as work_a's percent: a machine whose load slows one
 * loop more than the other moves the 75/25, and a test compares the samples with what ran.
 * split31 -n ROUNDS: a fixed amount of work instead, for benches that time it.
 */
int main(int argc, char **argv)
{
	double want = 3, start, in_a = 0, in_b = 0;
	long rounds = -1;
	char *end;

	if (argc > 2 && argv[1][0] == '-' && argv[1][1] == 'n' && !argv[1][2]) {
		rounds = strtol(argv[2], &end, 10);
		if (end == argv[2] || *end || rounds < 0)
			goto usage;
		for (long k = 0; k < rounds; k++) {
			work_a();
			work_b();
		}
		return 0;
	}
	if (argc > 1) {
		want = strtod(argv[1], &end);
		if (end == argv[1] || (*end && (end[0] != 's' || end[1])) || want < 0)
			goto usage;
	}
	start = cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
	do {
		double t0 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID), t1, t2;

		work_a();
		t1 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
		work_b();
		t2 = cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
		in_a += t1 - t0;
		in_b += t2 - t1;
	} while (cpu_seconds(CLOCK_PROCESS_CPUTIME_ID) - start < want);
	if (getenv("SPLIT31_SHARE") && in_a + in_b > 0) {
		FILE *f = fopen(getenv("SPLIT31_SHARE"), "w");

		if (!f || fprintf(f, "%.1f\n", 100 * in_a / (in_a + in_b)) < 0 || fclose(f))
			return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: split31 [SECONDS[s]] (CPU time) | split31 -n ROUNDS\n");
	return 2;
}
