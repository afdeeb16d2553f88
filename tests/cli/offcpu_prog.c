/* offcpu_prog: blocks 200, 300 and 400 ms per cycle in three known functions, spins 100 ms, and
 * writes what it measured itself (the truth offcpu's profile is held to). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * nanosleep made here, not through libc: libc's wrapper has no frame pointer, so a frame-pointer
 * walk from inside it would skip its caller, the very function the test looks for.
 */
static __attribute__((noinline)) void nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "0"((long)SYS_nanosleep), "D"(&ts), "S"(0L)
			 : "rcx", "r11", "memory");
#else
	syscall(SYS_nanosleep, &ts, NULL);
#endif
}

static uint64_t t_a, t_b, t_c, t_spin;

static __attribute__((noinline)) void block_a(void)
{
	uint64_t t = now_ns(CLOCK_MONOTONIC);

	nap(200);
	t_a += now_ns(CLOCK_MONOTONIC) - t;
}

static __attribute__((noinline)) void block_b(void)
{
	uint64_t t = now_ns(CLOCK_MONOTONIC);

	nap(300);
	t_b += now_ns(CLOCK_MONOTONIC) - t;
}

static __attribute__((noinline)) void block_c(void)
{
	uint64_t t = now_ns(CLOCK_MONOTONIC);

	nap(400);
	t_c += now_ns(CLOCK_MONOTONIC) - t;
}

static volatile uint64_t sink;

static __attribute__((noinline)) void spin(uint64_t ns)
{
	uint64_t t = now_ns(CLOCK_THREAD_CPUTIME_ID), end = t + ns;

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 1000; i++)
			sink += (uint64_t)i;
	t_spin += now_ns(CLOCK_THREAD_CPUTIME_ID) - t;
}

/* offcpu_prog CYCLES [OUT]: OUT gets "block_a NS" ... "spin NS" "wall NS" lines. */
int main(int argc, char **argv)
{
	int cycles = argc > 1 ? atoi(argv[1]) : 3;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	FILE *f;

	for (int i = 0; i < cycles; i++) {
		block_a();
		block_b();
		block_c();
		spin(100000000ull);
	}
	if (argc > 2 && (f = fopen(argv[2], "w"))) {
		fprintf(f, "block_a %llu\nblock_b %llu\nblock_c %llu\nspin %llu\nwall %llu\n",
			(unsigned long long)t_a, (unsigned long long)t_b, (unsigned long long)t_c,
			(unsigned long long)t_spin,
			(unsigned long long)(now_ns(CLOCK_MONOTONIC) - t0));
		fclose(f);
	}
	return 0;
}
