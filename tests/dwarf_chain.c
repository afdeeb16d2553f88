/* A known call chain main -> a -> b -> leaf spinning for SECONDS, built -O2 -fomit-frame-pointer:
 * frame pointers cannot walk it, DWARF unwinding must (tests/cli/test_dwarf.sh, bench/). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* About 100 us of arithmetic per call: nearly every sample lands here. */
__attribute__((noinline)) unsigned long leaf(unsigned long x);
__attribute__((noinline)) unsigned long leaf(unsigned long x)
{
	for (int i = 0; i < 100000; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return x;
}

/* Stack buffers give each frame a CFA of its own; the use after each call keeps it a call, not
 * a tail jump that would take the caller's frame away. */
__attribute__((noinline)) unsigned long b(unsigned long x);
__attribute__((noinline)) unsigned long b(unsigned long x)
{
	volatile char buf[64];

	buf[0] = (char)x;
	return leaf(x + (unsigned long)buf[0]) + 1;
}

__attribute__((noinline)) unsigned long a(unsigned long x);
__attribute__((noinline)) unsigned long a(unsigned long x)
{
	volatile char buf[128];

	buf[0] = (char)x;
	return b(x ^ (unsigned long)buf[0]) * 3;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0, deadline;
	unsigned long x = (unsigned long)argc;

	if (seconds <= 0) {
		fprintf(stderr, "usage: dwarf_chain [SECONDS]\n");
		return 2;
	}
	deadline = now() + seconds;
	while (now() < deadline)
		x += a(x);
	sink = x;
	return 0;
}
