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

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * split31 [SECONDS[s]]: runs until the process has used SECONDS of CPU time (default 3), so the
 * number of samples a profiler takes depends neither on the CPU's speed nor on the machine's load.
 * split31 -n ROUNDS: a fixed amount of work instead, for benches that time it.
 */
int main(int argc, char **argv)
{
	double want = 3, start;
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
	start = cpu_seconds();
	do {
		work_a();
		work_b();
	} while (cpu_seconds() - start < want);
	return 0;
usage:
	fprintf(stderr, "usage: split31 [SECONDS[s]] (CPU time) | split31 -n ROUNDS\n");
	return 2;
}
