/* Kernel symbols from /proc/kallsyms (vmlinux and modules): sorted table, address -> symbol. */
#ifndef PERFSCOPE_COMMON_KSYMS_H
#define PERFSCOPE_COMMON_KSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	uint64_t size; /* up to the next symbol (kallsyms has no sizes) */
	const char *name;
	const char *module; /* "[kernel.kallsyms]" for vmlinux, else the module name, e.g. "ext4" */
};

/*
 * The text symbols (t/T/w/W) of the running kernel and its modules, sorted by address.
 * Immutable once loaded: lookups are thread-safe.
 */
struct ksyms;

/*
 * Loads path (NULL = /proc/kallsyms). Always returns a table unless out of memory (NULL + errno)
 * or the file cannot be read (NULL + errno): when addresses are hidden (all read as 0 because of
 * kernel.kptr_restrict) the table is empty and ksyms__problem() says why and how to fix it.
 */
struct ksyms *ksyms__load(const char *path);
/*
 * The same for the kernel's variables (d/D/b/B in the kernel half): the table that names a
 * global lock's address ("jiffies_lock"). Sizes run to the next variable, as for text.
 */
struct ksyms *ksyms__load_data(const char *path);
void ksyms__delete(struct ksyms *ks);

/* NULL when the table is usable; else one sentence for a person (what, why, how to fix). */
const char *ksyms__problem(const struct ksyms *ks);
/*
 * The reason kernel addresses in path read as 0 and how to fix it, for the given
 * kernel.kptr_restrict and kernel.perf_event_paranoid values (INT_MIN: unknown).
 */
void ksyms_hidden_reason(char *buf, size_t len, const char *path, int kptr, int paranoid);
size_t ksyms__nr(const struct ksyms *ks);

/* The symbol containing addr (binary search); *off = addr - sym->addr. NULL when none. */
const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr, uint64_t *off);

/* A symbol by exact name (first match, vmlinux before modules); linear, for setup paths only. */
const struct ksym *ksyms__lookup(const struct ksyms *ks, const char *name);

/* True for addresses in the kernel half of the x86-64/arm64 address space. */
static inline bool ksyms__is_kernel_addr(uint64_t addr)
{
	return addr >= 0xffff800000000000ull;
}

#endif
