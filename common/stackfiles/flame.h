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

/*
 * Calls fn for each stack, in no particular order: its folded text (NUL-terminated, len bytes)
 * and its count. Stops at the first non-zero return of fn and returns it; 0 at the end.
 */
int flame__for_each(const struct flame *f,
		    int (*fn)(void *ctx, const char *text, size_t len, uint64_t count), void *ctx);

/* What flame__parse saw: lines read, blank lines skipped, bad lines skipped (the first one's
 * number, from 1, and why), stacks counted with a zero count. */
struct flame_parse_stats {
	uint64_t lines;
	uint64_t blank;
	uint64_t bad;
	uint64_t first_bad_line; /* 0: none */
	const char *first_bad_why; /* static text: "no count after the last space", ... */
	uint64_t zero;
};

/*
 * Adds every "frame;frame;... COUNT" line of folded text (perf script | stackcollapse-perf.pl,
 * bcc's profile -f, perfscope's --flame-graph) to f: the count is the decimal integer after the
 * last space or tab; a trailing '\r' is ignored; blank lines are skipped and counted; a line
 * without a count, with an empty stack, or with a count that is not an integer is skipped and
 * counted as bad. buf need not be NUL-terminated; a last line without '\n' counts. stats may be
 * NULL; it is added to, not reset. 0 or -ENOMEM.
 */
int flame__parse(struct flame *f, const char *buf, size_t len, struct flame_parse_stats *stats);
/* The same over a whole stream (read in blocks, lines of any length). 0 or -errno. */
int flame__read_file(struct flame *f, FILE *in, struct flame_parse_stats *stats);

#endif
