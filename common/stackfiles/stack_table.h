/* stack_table: the distinct stacks sampled, by their addresses, counted until they are written. */
#ifndef PERFSCOPE_COMMON_STACK_TABLE_H
#define PERFSCOPE_COMMON_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keymap.h"

/*
 * One distinct stack: the sampled addresses as the kernel gave them (PERF_CONTEXT_* markers
 * included), and who ran them. Symbolized only when a profile is written: a sample costs a hash
 * of its ips.
 */
struct stack_ent {
	struct stack_ent *next; /* same hash */
	uint64_t count; /* samples */
	uint64_t period; /* sum of their periods (ns for cpu-clock) */
	uint32_t pid, tid;
	char comm[16];
	uint32_t nr;
	uint64_t ips[];
};

/*
 * Stacks told apart by addresses, pid and comm (and tid when per_thread). Memory grows with the
 * distinct stacks, not with the samples. Entries live until stack_table__clear. Not thread-safe.
 */
struct stack_table {
	struct keymap map; /* hash -> struct stack_ent * (a chain of the same hash) */
	size_t nr; /* distinct stacks */
	bool per_thread;
};

/* An empty table (zeroed before: __clear and __exit are no-ops on it). 0 or -ENOMEM. */
int stack_table__init(struct stack_table *t, bool per_thread);
/* Frees every entry and the table. */
void stack_table__exit(struct stack_table *t);
/* Frees every entry: the table is empty again, ready for the next profile. */
void stack_table__clear(struct stack_table *t);

/*
 * Counts n samples of the stack ips[0..nr) of (pid, tid, comm), their periods summing to period.
 * Returns its entry (valid until __clear), or NULL when out of memory (nothing counted).
 */
struct stack_ent *stack_table__count(struct stack_table *t, uint32_t pid, uint32_t tid,
				     const char *comm, const uint64_t *ips, uint32_t nr, uint64_t n,
				     uint64_t period);

/*
 * Every entry, most samples first (then by pid), in a new array the caller frees. NULL with *nr 0
 * when out of memory.
 */
struct stack_ent **stack_table__sorted(const struct stack_table *t, size_t *nr);

#endif
