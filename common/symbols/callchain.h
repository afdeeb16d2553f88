/* callchain: the stacks of samples, symbolized, as text lines or a JSON array. */
#ifndef PERFSCOPE_COMMON_CALLCHAIN_H
#define PERFSCOPE_COMMON_CALLCHAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <perfscope/evlist.h>
#include <perfscope/record.h>

#include "output.h"
#include "say.h"
#include "stack.h"

/*
 * A profiler printing stacks keeps one: it feeds it the side-band records (process maps, forks,
 * execs, exits), calls callchain__round_end after each round of reading, and prints samples'
 * callchains through it. Kernel symbols are read at the first kernel frame, a binary's at its
 * first frame. Not thread-safe.
 */
struct callchain;

/* The most frames of one stack any engine or profiler keeps (kernel and user parts together). */
#define CALLCHAIN_MAX_FRAMES 512

/*
 * to (copied) hears the first problem met symbolizing (e.g. kernel addresses hidden) and the
 * statistics lines. NULL (a program using the engine alone): nothing is said; the caller asks
 * callchain__problem. NULL + errno.
 */
struct callchain *callchain__new(const struct say *to);
void callchain__delete(struct callchain *cc);
/* Feeds MMAP2/FORK/EXIT/COMM-exec records to the process maps. */
void callchain__record(struct callchain *cc, const struct psc_record *rec);
/* After each round of reading: drops the maps of processes that exited a round ago. */
void callchain__round_end(struct callchain *cc);
/*
 * The first problem met symbolizing, for people ("kernel addresses are hidden ..."), or NULL:
 * what callchain__new's say hears once, for a caller that gave none.
 */
const char *callchain__problem(struct callchain *cc);
/* Says "symbols: ..." (processes and binaries held, cache hits), for -v. */
void callchain__say_stats(struct callchain *cc);
/* One line per frame, innermost first: "\t    ffffffff81234567 func+0x1a (module)". */
void callchain__text(struct callchain *cc, struct out *out, const struct psc_sample *s);
/* [{"ip":"0x...","name":"func","sym":"func","off":26,"dso":"module","kernel":true}, ...] */
void callchain__json(struct callchain *cc, struct json *j, const struct psc_sample *s);

/*
 * The stack of s folded for flame graphs, outermost first, prefix (the comm) as its root:
 * "comm;main;work;leaf" (stack__fold), kernel frames marked "_[k]". snprintf-style return.
 */
int callchain__fold(struct callchain *cc, const struct psc_sample *s, const char *prefix, char *buf,
		    size_t len);

/* The frame as callchain__json writes one, with "path" and "file_off" when its mapping is known. */
void frame__json(struct json *j, const struct frame *f);

/*
 * Resolves one address of process pid (user) or of the kernel. caller: ip is a return address,
 * looked up at ip - 1 so that a call ending a function names that function. 0, or -ENOENT when
 * no symbol was found (f still says what is known: dso, mapping).
 */
int callchain__frame(struct callchain *cc, pid_t pid, uint64_t ip, bool kernel, bool caller,
		     struct frame *f);
/*
 * A PERF_SAMPLE_CALLCHAIN array (markers say kernel or user; hypervisor and guest parts are
 * skipped, a 0 ends its context's part) to at most max frames, innermost first. Returns the
 * number filled.
 */
int callchain__frames(struct callchain *cc, pid_t pid, const uint64_t *ips, uint64_t nr,
		      struct frame *frames, int max);

/*
 * The addresses of s's stack as a profile keeps them to symbolize later: PERF_SAMPLE_CALLCHAIN,
 * or, for a sample with a copy of the user stack (--call-graph dwarf), its kernel part then
 * PERF_CONTEXT_USER and the user frames unwound now (the copy is gone after the sample). *ips
 * stays valid until the next call. Returns how many.
 */
uint64_t callchain__sample_ips(struct callchain *cc, const struct psc_sample *s,
			       const uint64_t **ips);

/*
 * A profile symbolized at report time needs the maps of processes that exited since: while held,
 * round ends keep them; callchain__exits_done (after each report) lets go of those that exited
 * before the previous one.
 */
void callchain__hold_exits(struct callchain *cc, bool hold);
void callchain__exits_done(struct callchain *cc);

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
 * Says "DWARF unwinding: N user stacks, N complete, N truncated (N stack copy too
 * short, ...); X us unwinding + Y us symbolizing per stack" when any stack was unwound; with
 * quiet only when some were truncated.
 */
void callchain__say_unwind(struct callchain *cc, bool quiet);
/* The same as a JSON object: {"stacks","truncated","complete","stack_short",...,"unwind_ns"} */
void callchain__unwind_json(struct callchain *cc, struct json *j);

/*
 * Reads kallsyms now (about 50 ms), before the events are enabled: at the first kernel frame it
 * would stall the loop that drains the rings.
 */
void callchain__prepare(struct callchain *cc);

/*
 * Reads now the maps of the processes of these threads (-p/-t), or of every process (threads
 * NULL: system-wide), before the events are enabled: a process that exits before its samples are
 * read would leave its user frames unknown, its /proc/PID/maps gone by then.
 */
struct psc_threadmap;
void callchain__preload(struct callchain *cc, const struct psc_threadmap *threads);
/*
 * A sample of pid was taken: reads its maps now when nothing is known of it yet (a process met
 * first by its samples), for a profiler that symbolizes at its report, when the process may be
 * gone. One hash lookup when it is known.
 */
void callchain__see(struct callchain *cc, pid_t pid);

#endif
