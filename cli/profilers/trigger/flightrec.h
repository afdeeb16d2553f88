/* flightrec: the last seconds of per-CPU stack samples kept in memory, for what led to an event. */
#ifndef PERFSCOPE_COMMON_FLIGHTREC_H
#define PERFSCOPE_COMMON_FLIGHTREC_H

#include <stddef.h>
#include <stdint.h>

#include <perfscope/record.h>

/* the kernel's default perf_event_max_stack (127), and its context markers */
#define FLIGHTREC_MAX_FRAMES 136

/*
 * A fixed number of slots per CPU, each holding one sample's time, thread, period and raw
 * callchain (unsymbolized: symbols cost only when a capture asks for them). The oldest slot is
 * overwritten: nothing is counted as lost, keeping the last ones is the point. Not thread-safe.
 */
struct flightrec;

/* slots per CPU, for CPUs 0..nr_cpus-1. NULL + errno. */
struct flightrec *flightrec__new(int nr_cpus, size_t slots);
void flightrec__delete(struct flightrec *fr);
/* Keeps s (its TIME, TID, PERIOD and CALLCHAIN) as cpu's newest. Longer stacks are cut. */
void flightrec__add(struct flightrec *fr, int cpu, const struct psc_sample *s);
/* Samples that had to be cut to FLIGHTREC_MAX_FRAMES. */
uint64_t flightrec__cut(const struct flightrec *fr);
/*
 * Calls fn, oldest first, with every sample of cpu (-1: every CPU) stamped in [from, to), as a
 * psc_sample with sample_type TID|TIME|CPU|PERIOD|CALLCHAIN. Returns the number of samples.
 */
size_t flightrec__each(const struct flightrec *fr, int cpu, uint64_t from, uint64_t to,
		       void (*fn)(void *ctx, int cpu, const struct psc_sample *s), void *ctx);

#endif
