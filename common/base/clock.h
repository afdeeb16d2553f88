/* clock: the events' clock (CLOCK_MONOTONIC), the wall clock, a thread's CPU time. */
#ifndef PERFSCOPE_CLOCK_H
#define PERFSCOPE_CLOCK_H

#include <stdint.h>
#include <time.h>

/*
 * Now, in the clock of every sample (session_config_evlist sets use_clockid CLOCK_MONOTONIC): a
 * loss heard now happened before it, a watermark is taken from it.
 */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Now on the wall clock (CLOCK_REALTIME), ns since the epoch: when a profile began, for pprof. */
static inline int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* CPU time of the calling thread: what a lookup cost perfscope itself. */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
