/* Callchains (PERF_SAMPLE_CALLCHAIN) to symbolized frames, "func+0xoff (module)" lines and folded
 * stacks. */
#ifndef PERFSCOPE_COMMON_STACK_H
#define PERFSCOPE_COMMON_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/perf_event.h>

#include "ksyms.h"
#include "symcache.h"

/*
 * One frame of a stack, resolved: its symbol and the mapping it lies in, as every writer (text,
 * JSON, folded, SVG, pprof's Location and Mapping) needs it. Strings live as long as the symcache
 * (or callchain) that resolved it.
 */
struct frame {
	uint64_t ip; /* as sampled (a caller's return address for outer frames) */
	const char *sym; /* demangled function; NULL when unknown */
	uint64_t off; /* ip - the symbol's start */
	const char *dso; /* as text shows it: basename, "[kernel.kallsyms]", module, "[vdso]" */
	const char *path; /* the mapped file ("/usr/lib/x86_64-linux-gnu/libc.so.6"); kernel: dso */
	uint64_t map_start, map_limit, map_pgoff; /* user frames in a known mapping; else 0 */
	uint64_t file_off; /* ip's offset in its file (same in every run), 0 when unmapped */
	const uint8_t *build_id; /* NULL when unknown */
	uint8_t build_id_size;
	bool mapped; /* a user frame in a file-backed mapping or [vdso]: file_off names it */
	bool kernel;
};

/*
 * The longest frame name every writer keeps (folded, SVG, pprof, text, JSON), its NUL included:
 * frame__name cuts longer ones (C++ templates) here, so a name is the same in every format.
 */
#define FRAME_NAME_MAX 2048
/*
 * The longest folded stack every writer keeps, its NUL included: a deeper one is cut at its leaf
 * end (stack__fold writes the root first), still one stack.
 */
#define STACK_FOLD_MAX 16384

enum stack_flags {
	STACK_NO_KERNEL = 1 << 0, /* drop kernel frames */
	STACK_NO_USER = 1 << 1, /* drop user frames */
};

/*
 * A PERF_SAMPLE_CALLCHAIN array (ips[0..nr), innermost first) walked frame by frame: the
 * PERF_CONTEXT_KERNEL / PERF_CONTEXT_USER markers say whose the following addresses are and are
 * not frames; other contexts (hypervisor, guest) are skipped, and a 0 ends its context's part
 * (the frame-pointer walk's terminator). Without a marker (a hand-made chain) the address says.
 */
struct stack_walk {
	const uint64_t *ips;
	uint64_t nr, i;
	enum { STACK_CTX_NONE, STACK_CTX_KERNEL, STACK_CTX_USER, STACK_CTX_SKIP } ctx;
	bool first_in_ctx;
};

static inline void stack_walk__init(struct stack_walk *w, const uint64_t *ips, uint64_t nr)
{
	*w = (struct stack_walk){ .ips = ips, .nr = nr, .first_in_ctx = true };
}

/*
 * The next frame: its address, whose it is, and whether it is a caller's return address (every
 * frame but the first of its context, which is where that context was interrupted). false at the
 * end.
 */
static inline bool stack_walk__next(struct stack_walk *w, uint64_t *ip, bool *kernel,
				    bool *return_addr)
{
	while (w->i < w->nr) {
		uint64_t a = w->ips[w->i++];

		if (a >= (uint64_t)PERF_CONTEXT_MAX) {
			w->ctx = a == (uint64_t)PERF_CONTEXT_KERNEL ? STACK_CTX_KERNEL
				 : a == (uint64_t)PERF_CONTEXT_USER ? STACK_CTX_USER
								     : STACK_CTX_SKIP;
			w->first_in_ctx = true;
			continue;
		}
		if (w->ctx == STACK_CTX_SKIP)
			continue;
		if (!a) {
			w->ctx = STACK_CTX_SKIP; /* nothing of this context past the terminator */
			continue;
		}
		*ip = a;
		*kernel = w->ctx == STACK_CTX_KERNEL ||
			  (w->ctx == STACK_CTX_NONE && ksyms__is_kernel_addr(a));
		*return_addr = !w->first_in_ctx;
		w->first_in_ctx = false;
		return true;
	}
	return false;
}

/*
 * Walks a PERF_SAMPLE_CALLCHAIN array (ips[0..nr), innermost first, with PERF_CONTEXT_KERNEL /
 * PERF_CONTEXT_USER markers saying which address space the following ips belong to) and
 * symbolizes each ip through sc. Markers are not frames; a 0 ends its context's part (the
 * frame-pointer walk's terminator, not a frame). At most max frames are filled
 * (max-stack=N). Caller frames are looked up at ip - 1 so a call that ends a function still
 * names that function. Returns the number of frames filled.
 */
int stack__resolve(struct symcache *sc, pid_t pid, const uint64_t *ips, uint64_t nr,
		       unsigned int flags, struct frame *frames, int max);

/*
 * The one name of a frame in every writer (folded, SVG, pprof functions, profile tables, stack
 * text): the function; a user frame without one as "[module+0xOFF]", its offset in the mapped
 * file, so it is the same in every process and run (ASLR moves the address, not the offset);
 * else "[unknown]". Raw addresses never name a frame: paths that are the same would not merge.
 * ksuffix appends "_[k]" to kernel frames, as flamegraph.pl's users mark them (perfscope
 * flamegraph colors them by it). At most FRAME_NAME_MAX - 1 bytes are written, whatever len.
 * snprintf-style return.
 */
int frame__name(const struct frame *f, bool ksuffix, char *buf, size_t len);

/* A folded stack's root: the comm, or "[unknown]" for none and for a thread gone ("<...>"). */
const char *frame__root(const char *comm);

/*
 * Whether sym is where a user stack starts (main, _start, __libc_start_main, a thread's start,
 * clone): a stack whose user part reaches none stops early (frame pointers missing).
 */
bool frame__is_root(const char *sym);

/*
 * One frame as "func+0x1a (module)", "[libfoo.so+0x1234] (libfoo.so)" or "[unknown] ([unknown])"
 * (frame__name when there is no function). snprintf-style return.
 */
int frame__snprint(const struct frame *f, char *buf, size_t len);

enum fold_flags {
	FOLD_KERNEL_SUFFIX = 1 << 0, /* append "_[k]" to kernel frames (flamegraph.pl colors) */
};

/*
 * Folded stack for flame graphs: outermost frame first, ';'-separated ("main;mid;leaf").
 * ';' and control characters (newline, tab) in names become '_', which would break the format;
 * spaces stay (flamegraph.pl splits the count off at the last space). prefix (e.g. the comm) is
 * placed first when not NULL (frame__root). Frames are named by frame__name. snprintf-style
 * return; buf always terminated.
 */
int stack__fold(const struct frame *frames, int nr, const char *prefix, unsigned int flags,
		    char *buf, size_t len);

#endif
