/* Folded stacks counted in memory ("comm;outer;...;leaf COUNT"), written for flame graph tools. */
#ifndef PERFSCOPE_COMMON_FLAME_H
#define PERFSCOPE_COMMON_FLAME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Memory grows with the distinct stacks, not with the samples: each folded text is kept once
 * with its count. Not thread-safe.
 */
struct flame;

struct flame *flame__new(void);
void flame__delete(struct flame *f);
/* Counts n more of the folded stack (len bytes, no newline). 0 or -ENOMEM. */
int flame__add(struct flame *f, const char *folded, size_t len, uint64_t n);
/* Distinct stacks held, and samples counted. */
size_t flame__nr_stacks(const struct flame *f);
uint64_t flame__nr_samples(const struct flame *f);
/*
 * Writes every stack as "folded COUNT\n", sorted by text (flamegraph.pl, inferno and
 * speedscope read it) to path, created or truncated. 0 or -errno.
 */
int flame__write(const struct flame *f, const char *path);
/*
 * The same into out, opened by the caller (a profiler opens it before the run, so that an
 * unwritable FILE is said at once rather than after the run); out is closed. 0 or -errno.
 */
int flame__write_file(const struct flame *f, FILE *out);

#endif
