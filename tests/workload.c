/* Deterministic workloads for tests: exactly N page faults, N sleeps, N getppid() calls, N paths
 * checked through one buffer, or a spin. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long arg_count(const char *s)
{
	char *end;
	long n = strtol(s, &end, 10);

	if (*end || n < 0) {
		fprintf(stderr, "workload: bad count '%s'\n", s);
		exit(2);
	}
	return n;
}

int main(int argc, char **argv)
{
	long n;

	if (argc != 3) {
		fprintf(stderr, "usage: workload faults|sleeps|getppid|paths|spin-ms N\n");
		return 2;
	}
	n = arg_count(argv[2]);
	if (!strcmp(argv[1], "faults")) {
		long page = sysconf(_SC_PAGESIZE);
		volatile char *p = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		for (long i = 0; i < n; i++)
			p[i * page] = 1; /* one minor fault per untouched page */
	} else if (!strcmp(argv[1], "sleeps")) {
		for (long i = 0; i < n; i++) {
			struct timespec ts = { 0, 200000 };

			nanosleep(&ts, NULL); /* one voluntary context switch each */
		}
	} else if (!strcmp(argv[1], "getppid")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid); /* not the libc wrapper: exactly one syscall each */
	} else if (!strcmp(argv[1], "paths")) {
		char path[64];

		/* one buffer, a new path in it for each call: faccessat("/nonexistent/psc-I") */
		for (long i = 0; i < n; i++) {
			snprintf(path, sizeof(path), "/nonexistent/psc-%ld", i);
			syscall(SYS_faccessat, AT_FDCWD, path, F_OK);
		}
	} else if (!strcmp(argv[1], "spin-ms")) {
		struct timespec start, now;

		clock_gettime(CLOCK_MONOTONIC, &start);
		do
			clock_gettime(CLOCK_MONOTONIC, &now);
		while ((now.tv_sec - start.tv_sec) * 1000 +
			       (now.tv_nsec - start.tv_nsec) / 1000000 <
		       n);
	} else {
		fprintf(stderr, "workload: unknown mode '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
