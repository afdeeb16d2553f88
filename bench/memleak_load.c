/* memleak's benchmark workload: after FILE exists, N malloc/free pairs (64-575 bytes) in one
 * thread, one block in 1000 kept (a leak), then exit. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *volatile sink;

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;

	if (argc > 2)
		while (access(argv[2], F_OK))
			usleep(10000);
	for (long i = 0; i < n; i++) {
		char *p = malloc(64 + (size_t)i % 512);

		if (!p)
			return 1;
		p[0] = (char)i;
		sink = p;
		if (i % 1000)
			free(sink);
	}
	return 0;
}
