/* DWARF unwinding of the user stacks copied into samples (PERF_SAMPLE_REGS_USER + STACK_USER),
 * with libdw: one cached Dwfl per process, modules from the process maps usyms keeps. */
#ifndef PERFSCOPE_COMMON_UNWIND_H
#define PERFSCOPE_COMMON_UNWIND_H

#include <stdint.h>
#include <sys/types.h>

#include <perfscope/record.h>

#include "usyms.h"

/*
 * x86-64 perf registers (asm/perf_regs.h) a sample carries for unwinding: the general purpose
 * ones, ip and sp; not flags or segments, which no CFI restores. Any CFI rule may name a callee-
 * saved register (rbx, rbp, r12-r15) or compute the CFA from one, so all of them are taken.
 */
#define UNWIND_PERF_REG_AX 0
#define UNWIND_PERF_REG_BX 1
#define UNWIND_PERF_REG_CX 2
#define UNWIND_PERF_REG_DX 3
#define UNWIND_PERF_REG_SI 4
#define UNWIND_PERF_REG_DI 5
#define UNWIND_PERF_REG_BP 6
#define UNWIND_PERF_REG_SP 7
#define UNWIND_PERF_REG_IP 8
#define UNWIND_PERF_REG_R8 16 /* .. R15 = 23 */
#define UNWIND_REGS_MASK (0x1ffull | (0xffull << UNWIND_PERF_REG_R8))

/* How an unwind ended. Everything but COMPLETE and NO_USER is a truncated stack. */
enum unwind_stop {
	UNWIND_COMPLETE, /* the outermost frame was reached */
	UNWIND_NO_USER, /* no user registers (kernel thread): nothing to unwind */
	UNWIND_NO_STACK, /* user registers but no stack copy (the kernel copied none): the ip alone */
	UNWIND_STACK_SHORT, /* a word beyond the stack copied was needed (SIZE too small) */
	UNWIND_UNKNOWN_MAP, /* a pc in no known file mapping (JIT code, anonymous memory) */
	UNWIND_NO_CFI, /* a binary with no call frame information for the pc */
	UNWIND_BAD_READ, /* a word neither in the stack copy nor in a mapped binary */
	UNWIND_MAX_DEPTH, /* more frames than asked for */
	UNWIND_OTHER, /* any other libdw error (the first one is kept in unwind_stats) */
	UNWIND_NR_STOPS
};

struct unwind_stats {
	uint64_t stacks; /* samples unwound (NO_USER included) */
	uint64_t stops[UNWIND_NR_STOPS];
	uint64_t frames; /* user frames found */
	uint64_t ns; /* CPU time spent unwinding, Dwfl set-up included */
	uint64_t dwfls; /* Dwfl sessions made (one per process, again after its maps change) */
	uint64_t reports; /* module lists reported (first time or after a map change) */
	size_t procs; /* processes with a cached Dwfl now */
	uint64_t procs_seen; /* processes given a Dwfl (again after exec or eviction) */
	const char *other; /* the first UNWIND_OTHER libdw error, NULL when none */
};

/* Not thread-safe. */
struct unwind;

/* Modules come from u's process maps (shared with the symbolizer). NULL + errno. */
struct unwind *unwind__new(struct usyms *u);
void unwind__delete(struct unwind *uw);

/*
 * The user stack of s, innermost first: ips[0] is the user ip, the others return addresses (as
 * PERF_SAMPLE_CALLCHAIN gives them). s needs PERF_SAMPLE_REGS_USER with UNWIND_REGS_MASK and
 * PERF_SAMPLE_STACK_USER; pid and tid from PERF_SAMPLE_TID. Returns the frames filled (at most
 * max) and how the unwind ended in *stop. Only what s says it has is read: a sample without user
 * registers ends as UNWIND_NO_USER, one without a stack copy (size 0, data NULL) as
 * UNWIND_NO_STACK, both counted. s's parts must still exist (a sample kept past its ring round
 * is a sample_keep copy).
 */
int unwind__sample(struct unwind *uw, const struct psc_sample *s, uint64_t *ips, int max,
		   enum unwind_stop *stop);

/* The process's image is gone (exec, exit): its Dwfl is dropped. */
void unwind__forget(struct unwind *uw, pid_t pid);

void unwind__stats(const struct unwind *uw, struct unwind_stats *st);

/* "stack copy too short", ... for messages; short keys ("stack_short") for JSON. */
const char *unwind__stop_text(enum unwind_stop stop);
const char *unwind__stop_key(enum unwind_stop stop);

#endif
