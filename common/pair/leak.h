/* leak: live allocations over the pair engine (alloc -> free by pointer), grouped by stack. */
#ifndef PERFSCOPE_COMMON_LEAK_H
#define PERFSCOPE_COMMON_LEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfscope/record.h>

#include "output.h"
#include "say.h"
#include "pair.h"

struct callchain;

/*
 * A leak finder's table: an allocation is a pair start keyed by its pointer, a free its end, so
 * what is still pending is what is still allocated; every outcome is the pair engine's
 * (pair.h): frees of memory allocated before the run are no_start, an allocation at an address
 * still live (its free was missed) is replaced, a lost window invalidates the allocations before
 * it (their free may be what was lost: no false leak is reported). Stacks are symbolized once
 * per distinct raw stack, when first seen (a process's maps are gone by the report), and kept
 * folded ("comm;outer;...;inner"). Not thread-safe.
 */
struct leak;

struct leak *leak__new(size_t max_pending);
void leak__delete(struct leak *lk);

/*
 * The id of s's stack (callchain), symbolized through cc the first time it is seen; 0 when s
 * has none. comm is the folded stack's root.
 */
uint32_t leak__stack(struct leak *lk, struct callchain *cc, const struct psc_sample *s,
		     const char *comm);
/* An allocation of size bytes at ptr from stack; 0, or 1 when not kept (counted). */
int leak__alloc(struct leak *lk, uint64_t ptr, uint64_t size, uint32_t stack, uint64_t time,
		int cpu, uint32_t pid, uint32_t tid);
/* ptr freed; 1 when it was a known allocation. */
int leak__free(struct leak *lk, uint64_t ptr, uint64_t time, int cpu, uint32_t pid, uint32_t tid);
/* A ring loss noticed at barrier (the events' clock). */
void leak__lost(struct leak *lk, uint64_t barrier);

/* One stack's live allocations. */
struct leak_group {
	const char *folded; /* "comm;outer;...;inner", or "[no stack]" */
	uint64_t count, bytes;
	uint64_t oldest; /* time of its oldest allocation */
};

/*
 * The live allocations older than `than` ns at `now` (0: all), grouped by folded stack, most
 * bytes first. *out is the caller's to free. 0 or -ENOMEM.
 */
int leak__groups(struct leak *lk, uint64_t now, uint64_t than, struct leak_group **out, size_t *nr);

/*
 * Prints the groups: text, "N allocations, B bytes not freed, from:" then the frames innermost
 * first; or JSON, one object per group {"count", "bytes", "oldest_ns", "comm", "stack": [frames,
 * innermost first]}. At most max groups (0: all); returns how many groups there were. dropped:
 * as leak_report's, each group marked.
 */
size_t leak__print(const struct leak_group *g, size_t nr, struct out *out, bool json, size_t max,
		   uint64_t dropped);

/* What a leak finder's table prints (leak__report). */
struct leak_report {
	uint64_t now; /* the events' clock: ages are counted to it */
	uint64_t than; /* only allocations older than this (ns; 0: all) */
	const char *than_text; /* --than as the user wrote it, for the summary line */
	size_t top; /* at most this many stacks printed (0: all) */
	bool final; /* the end of the run, else an interval */
	bool json;
	/*
	 * Events the kernel dropped silently during the run (kdrop.h): their times are unknown, so
	 * any leak may be an allocation whose free was one of them. Each group then says so: text
	 * "(may be freed: N events dropped by the kernel)" on its line, JSON "free_maybe_lost": N.
	 */
	uint64_t dropped;
};

/*
 * An interval's or the run's table: the groups (leak__print) and a summary, text "N
 * allocations, B bytes not freed[ for more than T], from S stacks:" before them, or JSON
 * {"summary":true, "final", "count", "bytes", "stacks"} after them. *groups, when groups is not
 * NULL, gets them (the caller frees it; flame graphs of the leaks). 0 or -ENOMEM.
 */
int leak__report(struct leak *lk, struct out *out, struct json *js, const struct leak_report *r,
		 struct leak_group **groups, size_t *nr);

/* The engine's outcome counts (pair.h), and what is live now. */
const uint64_t *leak__counts(const struct leak *lk);
size_t leak__nr_live(const struct leak *lk);
/* A one-line summary of the outcomes, said to to: "N allocations not freed; M freed; ..." */
void leak__say_outcomes(const struct leak *lk, const struct say *to);

#endif
