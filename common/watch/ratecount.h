/* ratecount: one event counted by the kernel (not sampled) per CPU or for a process, read as a sum.
 */
#ifndef PERFSCOPE_COMMON_RATECOUNT_H
#define PERFSCOPE_COMMON_RATECOUNT_H

#include <stdint.h>

#include <perfscope/perfscope.h>

/*
 * Opens spec as a plain counter (no sampling, enabled at once): on every CPU of cpus with threads
 * NULL, or for the threads of a process (and the children they make) on any CPU with cpus NULL.
 * NULL + errno (the perf_event_open error, for psc_strerror_open).
 */
struct psc_evsel *ratecount__open(const struct psc_event_spec *spec, struct psc_cpumap *cpus,
				  struct psc_threadmap *threads);
/* The count so far on cpu (-1: summed over all of them, and over a process's threads). */
uint64_t ratecount__read(struct psc_evsel *evsel, int cpu);

#endif
