/* sample_keep: a copy of a decoded sample that owns every part it points to, to keep past its
 * round. */
#ifndef PERFSCOPE_COMMON_SAMPLE_KEEP_H
#define PERFSCOPE_COMMON_SAMPLE_KEEP_H

#include <stddef.h>

#include <perfscope/record.h>

/*
 * A decoded psc_sample points into its ring (or the time-order backlog): the record is gone once
 * its round is consumed. Whatever keeps a sample longer (pair starts, --detail backlogs, --than
 * outliers, leak groups) keeps a copy made here, which owns what printing it later reads: the raw
 * event, the callchain, the branch stack, the read values, the registers, the user stack copy
 * (--call-graph dwarf: the unwinder reads it and the registers when the sample is printed) and
 * the aux data. A part the sample does not have costs nothing; the user stack is copied as far as
 * the kernel filled it (dyn_size bytes), stack_user.size stays the size asked for (the unwinder
 * tells a copy cut by the stack's top from one too small by it). Thread-safe (no state).
 */

/* The bytes beyond the struct that s's parts take in a copy (each rounded up to 8 bytes). */
size_t sample_keep__bytes(const struct psc_sample *s);

/*
 * *dst = *s, its parts copied into buf (sample_keep__bytes(s) bytes, 8-byte aligned) and dst
 * pointed at them. dst may be embedded in a larger allocation with buf after it.
 */
void sample_keep__into(struct psc_sample *dst, const struct psc_sample *s, void *buf);

/* A copy of s and its parts in one allocation, released with free(). NULL + errno. */
struct psc_sample *sample_keep__dup(const struct psc_sample *s);

#endif
