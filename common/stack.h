/* Callchains (PERF_SAMPLE_CALLCHAIN) to symbolized frames, "func+0xoff (module)" lines and folded
 * stacks. */
#ifndef PERFSCOPE_COMMON_STACK_H
#define PERFSCOPE_COMMON_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symcache.h"

struct frame {
	uint64_t ip;
	const char *sym; /* demangled name; NULL when unknown */
	uint64_t off; /* ip - symbol start */
	const char *dso; /* module or binary basename; NULL when unknown */
	bool kernel;
};

enum stack_flags {
	STACK_NO_KERNEL = 1 << 0, /* drop kernel frames */
	STACK_NO_USER = 1 << 1, /* drop user frames */
};

/*
 * Walks a PERF_SAMPLE_CALLCHAIN array (ips[0..nr), innermost first, with PERF_CONTEXT_KERNEL /
 * PERF_CONTEXT_USER markers saying which address space the following ips belong to) and
 * symbolizes each ip through sc. Markers are not frames. At most max frames are filled
 * (max-stack=N). Caller frames are looked up at ip - 1 so a call that ends a function still
 * names that function. Returns the number of frames filled.
 */
int stack__resolve(struct symcache *sc, pid_t pid, const uint64_t *ips, uint64_t nr,
		       unsigned int flags, struct frame *frames, int max);

/*
 * One frame as "func+0x1a (module)", "[unknown] (libfoo.so)" or "0xffffffff81000000 ([unknown])".
 * snprintf-style return.
 */
int frame__snprint(const struct frame *f, char *buf, size_t len);

enum fold_flags {
	FOLD_KERNEL_SUFFIX = 1 << 0, /* append "_[k]" to kernel frames (flamegraph.pl colors) */
	FOLD_WITH_DSO = 1 << 1, /* unknown symbols as "[dso]" instead of "[unknown]" */
};

/*
 * Folded stack for flame graphs: outermost frame first, ';'-separated ("main;mid;leaf").
 * ';' and control characters (newline, tab) in names become '_', which would break the format;
 * spaces stay (flamegraph.pl splits the count off at the last space). prefix (e.g. the comm) is
 * placed first when not NULL. snprintf-style return; buf always terminated.
 */
int stack__fold(const struct frame *frames, int nr, const char *prefix, unsigned int flags,
		    char *buf, size_t len);

#endif
