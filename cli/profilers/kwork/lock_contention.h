/* lock: kernel lock contention (lock:contention_begin -> contention_end), its parts. */
#ifndef PERFSCOPE_CLI_LOCK_CONTENTION_H
#define PERFSCOPE_CLI_LOCK_CONTENTION_H

#include <stdint.h>

#include "krow.h"
#include "pair.h"

struct ksyms;

/* The profiler's priv. */
struct lockc {
	/* options */
	uint64_t than;
	long top;
	const char *top_given;
	/* state */
	struct pair *pr; /* begins by thread and lock until their end */
	struct krows locks; /* by lock address */
	struct krows callers; /* by caller stack (-g) */
	const struct psc_tp_field *b_addr, *b_flags, *e_addr, *e_ret;
	int begin_idx, end_idx;
	struct ksyms *data_syms; /* the kernel's data symbols: a lock's name */
	struct ksyms *text_syms; /* -g: where the lock and scheduler functions are */
	uint64_t lock_text[2], sched_text[2];
	struct prof *p;
	bool ival;
	uint64_t begins, ends, mismatched, failed, over, lost_windows, field_errors;
};

/* lock_names.c: a lock's row name ("ADDR SYMBOL (TYPE)"), a caller's (the first function of its
 * stack that is not a lock's), and the text ranges the latter skips. */
const char *lock__type(uint32_t flags);
char *lock__name(const struct lockc *lc, uint64_t addr, uint32_t flags);
char *lock__caller(struct lockc *lc, const struct psc_sample *s);
void lock__load_syms(struct lockc *lc, bool stacks);

#endif
