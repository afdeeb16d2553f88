/* A process with known user and kernel frames for the frame-naming tests: main -> hot_user (a
 * spin) and main -> kern_call -> getppid (the kernel's system call path), for MS milliseconds or
 * until STOPFILE exists. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

volatile unsigned long sink;

__attribute__((noinline)) void hot_user(void)
{
	for (unsigned long i = 0; i < 200000; i++)
		sink += i;
}

__attribute__((noinline)) void kern_call(void)
{
	for (int i = 0; i < 2000; i++)
		sink += (unsigned long)syscall(SYS_getppid);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	const char *stop = argc > 2 ? argv[2] : NULL;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < ms && !(stop && access(stop, F_OK) == 0)) {
		hot_user();
		kern_call();
	}
	return 0;
}
