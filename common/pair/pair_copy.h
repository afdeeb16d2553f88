/* pair_copy: an event kept past its ring round (a pending start, an outlier), with its origin. */
#ifndef PERFSCOPE_COMMON_PAIR_COPY_H
#define PERFSCOPE_COMMON_PAIR_COPY_H

#include <stddef.h>
#include <stdint.h>

#include <perfscope/record.h>

/*
 * What the pairing profilers keep of a start to print with its end (--than outliers, --detail
 * backlogs, kmemprof's allocation stacks): the sample, owning all its parts (sample_keep.h), and
 * where it came from, to be printed later as it would have been at once. One allocation, free()
 * it. Thread-safe (no state).
 */
struct pair_copy {
	struct psc_sample s;
	int ev_idx; /* the event's index in its profiler */
	int cpu;
	uint64_t key; /* its pairing key */
	size_t bytes; /* of the allocation */
	/* the sample's parts follow (sample_keep.h) */
};

/* A copy of s with its origin. NULL and errno on failure. */
struct pair_copy *pair_copy__new(const struct psc_sample *s, int ev_idx, int cpu, uint64_t key);

#endif
