/* callchain: the stacks of samples, symbolized, as text lines or a JSON array. */
#ifndef PERFSCOPE_COMMON_CALLCHAIN_H
#define PERFSCOPE_COMMON_CALLCHAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <perfscope/evlist.h>
#include <perfscope/record.h>

#include "output.h"

/*
 * A profiler printing stacks keeps one: it feeds it the side-band records (process maps, forks,
 * execs, exits), calls callchain__round_end after each round of reading, and prints samples'
 * callchains through it. Kernel symbols are read at the first kernel frame, a binary's at its
 * first frame. Not thread-safe.
 */
struct callchain;

/*
 * prof names the profiler in the messages it prints on stderr ("perfscope PROF: ..."): the first
 * problem met symbolizing (e.g. kernel addresses hidden), and callchain__print_stats. prof is
 * kept, not copied. NULL + errno.
 */
struct callchain *callchain__new(const char *prof);
void callchain__delete(struct callchain *cc);
/* Feeds MMAP2/FORK/EXIT/COMM-exec records to the process maps. */
void callchain__record(struct callchain *cc, const struct psc_record *rec);
/* After each round of reading: drops the maps of processes that exited a round ago. */
void callchain__round_end(struct callchain *cc);
/* "perfscope PROF: symbols: ..." (processes and binaries held, cache hits) for -v. */
void callchain__print_stats(struct callchain *cc, FILE *f);
/* One line per frame, innermost first: "\t    ffffffff81234567 func+0x1a (module)". */
void callchain__text(struct callchain *cc, struct out *out, const struct psc_sample *s);
/* [{"ip":"0x...","sym":"func","off":26,"dso":"module","kernel":true}, ...] */
void callchain__json(struct callchain *cc, struct json *j, const struct psc_sample *s);

/*
 * The stack of s folded for flame graphs, outermost first, prefix (the comm) as its root:
 * "comm;main;work;leaf" (stack.h). snprintf-style return.
 */
int callchain__fold(struct callchain *cc, const struct psc_sample *s, const char *prefix, char *buf,
		    size_t len);

/*
 * DWARF unwinding (--call-graph dwarf): a sample carrying PERF_SAMPLE_REGS_USER and
 * PERF_SAMPLE_STACK_USER gets its user stack unwound from the copied stack (unwind.h) in every
 * function above, its kernel part from PERF_SAMPLE_CALLCHAIN.
 */
struct unwind_stats;
struct callchain_sym_stats {
	uint64_t stacks, ns; /* unwound stacks symbolized, and the time it took */
};
/* How the unwinds went; false (stats zeroed) when no sample was unwound. sym may be NULL. */
bool callchain__unwind_stats(struct callchain *cc, struct unwind_stats *st,
			     struct callchain_sym_stats *sym);
/*
 * "perfscope PROF: DWARF unwinding: N user stacks, N complete, N truncated (N stack copy too
 * short, ...); X us unwinding + Y us symbolizing per stack" when any stack was unwound; with
 * quiet only when some were truncated.
 */
void callchain__print_unwind(struct callchain *cc, FILE *f, bool quiet);
/* The same as a JSON object: {"stacks","truncated","complete","stack_short",...,"unwind_ns"} */
void callchain__unwind_json(struct callchain *cc, struct json *j);

/*
 * Reads kallsyms now (about 50 ms), before the events are enabled: at the first kernel frame it
 * would stall the loop that drains the rings.
 */
void callchain__prepare(struct callchain *cc);

#endif
