/* A busy machine with many distinct stacks: each process recurses through f0..f15, choosing the
 * next function at each of DEPTH levels from a random walk, so 16^DEPTH stacks are possible (the
 * exporter's profile bench: 4 levels, 65536), and spins at the leaf. */
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static unsigned int seed = 1;
static int depth = 4;

static void step(int level);

#define F(n)                                                  \
	__attribute__((noinline)) static void f##n(int level) \
	{                                                     \
		step(level + 1);                              \
		sink++;                                       \
	}
F(0)
F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) F(12) F(13) F(14) F(15)

	static void (*const fns[16])(int) = { f0, f1, f2,  f3,	f4,  f5,  f6,  f7,
					      f8, f9, f10, f11, f12, f13, f14, f15 };

static void step(int level)
{
	if (level >= depth) {
		for (int i = 0; i < 20000; i++)
			sink += (unsigned long)i;
		return;
	}
	fns[rand_r(&seed) & 15](level);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 60;
	struct timespec t0, t;

	depth = argc > 2 ? atoi(argv[2]) : 4;
	seed = (unsigned int)time(NULL) ^ (unsigned int)(size_t)&t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100; i++)
			step(0);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
