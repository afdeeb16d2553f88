/* The program test_uprobe.sh probes: work() called N times with known arguments, quietly. */
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) long work(long a, long b, long c, long d, long e, long f);
__attribute__((noinline)) long work(long a, long b, long c, long d, long e, long f)
{
	__asm__ volatile("" ::: "memory");
	return a * 100 + b * 10 + c + d + e + f;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 5;
	int forever = argc > 2; /* then one call a millisecond until killed */
	volatile long sum = 0;

	for (int i = 0; i < n || forever; i++) {
		sum += work(i, 2, 3, 4, 5, 6);
		if (forever)
			usleep(1000);
	}
	return sum == -1;
}
