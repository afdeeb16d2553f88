/* A workload with known shares: alpha_work runs 3 ms of its thread's CPU time for each 1 ms of
 * beta_work, for SECONDS of CPU time (the exporter's profile test reads them back at 75% / 25%). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static double cpu_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

__attribute__((noinline)) static void spin_for(double s)
{
	double end = cpu_now() + s;

	while (cpu_now() < end)
		for (int i = 0; i < 2000; i++)
			sink += (unsigned long)i;
}

__attribute__((noinline)) void alpha_work(void)
{
	spin_for(0.003);
}

__attribute__((noinline)) void beta_work(void)
{
	spin_for(0.001);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10, end = cpu_now() + secs;

	while (cpu_now() < end) {
		alpha_work();
		beta_work();
	}
	return 0;
}
