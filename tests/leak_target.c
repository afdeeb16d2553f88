/* memleak's correctness workload: churn() allocates and frees 2,000 blocks; lose() leaks 7 blocks
 * of 4242 bytes (29,694 bytes), kept reachable through a global so no compiler drops them.
 * "variety" also leaks through calloc, realloc and posix_memalign and frees the rest;
 * "wait FILE" first waits until FILE exists (for memleak -p to attach). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile kept[16];
void *volatile sink; /* churn's blocks pass through it: no compiler may drop the malloc/free */

__attribute__((noinline)) void churn(void)
{
	for (int i = 0; i < 2000; i++) {
		char *p = malloc(64 + (size_t)i % 512);

		if (!p)
			abort();
		memset(p, i, 8);
		sink = p;
		free(sink);
	}
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void lose(void)
{
	for (int i = 0; i < 7; i++) {
		kept[i] = malloc(4242);
		if (!kept[i])
			abort();
	}
	__asm__ volatile("" ::: "memory");
}

/* leaks 3*100 (calloc) + 5000 (realloc) + 300 (posix_memalign) bytes; frees what else it takes */
__attribute__((noinline)) void variety(void)
{
	void *p = NULL, *q;

	kept[8] = calloc(3, 100);
	q = malloc(10);
	kept[9] = realloc(q, 5000);
	if (posix_memalign(&p, 64, 300))
		abort();
	kept[10] = p;
	q = aligned_alloc(64, 128);
	free(q);
	q = calloc(10, 10);
	q = realloc(q, 20);
	free(q);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "wait"))
		while (access(argv[2], F_OK))
			usleep(10000);
	churn();
	lose();
	if (argc > 1 && !strcmp(argv[1], "variety"))
		variety();
	return 0;
}
