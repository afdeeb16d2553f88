/* memleak's correctness workload: churn() allocates and frees 2,000 blocks; lose() leaks 7 blocks
 * of 4242 bytes (29,694 bytes), kept reachable through a global so no compiler drops them. */
#include <stdlib.h>
#include <string.h>

void *volatile kept[7];

__attribute__((noinline)) void churn(void)
{
	for (int i = 0; i < 2000; i++) {
		char *p = malloc(64 + (size_t)i % 512);

		if (!p)
			abort();
		memset(p, i, 8);
		free(p);
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

int main(void)
{
	churn();
	lose();
	return 0;
}
