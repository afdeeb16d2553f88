/* CPU time split 3:1 between two known functions, for perfscope profile's tests and bench. */
#include <stdlib.h>

volatile unsigned long sink;

/*
 * The same loop in each; work_a runs it three times as long: 75% and 25% of the CPU time. Each
 * is a leaf of its own. The frame-pointer build is -O0: gcc 12 drops leaves' frames at -O1 and
 * above even with -mno-omit-leaf-frame-pointer, and the caller (main) would vanish.
 */
__attribute__((noinline)) void work_a(void)
{
	for (unsigned long i = 0; i < 3000000; i++)
		sink += i;
}

__attribute__((noinline)) void work_b(void)
{
	for (unsigned long i = 0; i < 1000000; i++)
		sink += i;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 300;

	for (long k = 0; k < rounds; k++) {
		work_a();
		work_b();
	}
	return 0;
}
