/* perfscope memleak's parts: the allocator functions, a call in flight, its state. */
#ifndef PERFSCOPE_CLI_MEMLEAK_H
#define PERFSCOPE_CLI_MEMLEAK_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "keymap.h"
#include "leak.h"
#include "profiler.h"

enum ml_kind {
	ML_ALLOC, /* ret is the block; size from args */
	ML_REALLOC, /* arg1's block is replaced by ret */
	ML_FREE, /* arg ptr_arg is freed, at the entry */
	ML_MEMALIGN_PTR, /* posix_memalign: the block is written to *arg1, ret 0 on success */
};

struct ml_fn {
	const char *name;
	enum ml_kind kind;
	int size_a, size_b; /* the size is arg size_a (times arg size_b when given) */
	int ptr_arg; /* ML_FREE, ML_REALLOC: the old block; ML_MEMALIGN_PTR: where it goes */
	bool mmap; /* --mmap only */
};

/* A call entered and not returned yet, per thread. */
struct ml_call {
	int fn;
	uint32_t stack;
	uint64_t size, ptr;
};

struct ml_ev {
	int fn; /* index in fns, -1: not ours */
	bool ret;
	const struct psc_tp_field *arg[4], *retval, *caller;
};

/* The allocator functions followed, in this order (memleak_calls.c). */
#define ML_NR_FNS 12
extern const struct ml_fn ml_fns[];

struct ml {
	const char *libc_opt; /* --libc */
	bool mmap; /* --mmap */
	uint64_t than; /* --than */
	const char *than_text;
	long top; /* --top */
	long max_pending; /* --max-pending */
	char libc[PATH_MAX];
	char *events;
	struct leak *lk;
	struct keymap calls; /* tid -> struct ml_call */
	uint64_t last_time;
	uint64_t unmatched_ret; /* returns whose entry was not seen (or was a nested call's) */
	uint64_t memptr_unread; /* posix_memalign results that could not be read */
	uint64_t call_nomem;
	pid_t self;
};

/* memleak_calls.c: the sample and lost hooks, each call's entry and return into the leak table */
int ml_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s);
void ml_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);

#endif
