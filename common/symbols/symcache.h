/* The symbolizer: kernel + user symbols behind an address -> symbol hash, so a frame costs one
 * lookup. */
#ifndef PERFSCOPE_COMMON_SYMCACHE_H
#define PERFSCOPE_COMMON_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ksyms.h"
#include "usyms.h"

/* A resolved address. Strings live as long as the symcache. */
struct sym {
	const char *name; /* demangled function name; NULL when unknown */
	uint64_t start; /* the symbol's first byte in the ip's address space (off = ip - start) */
	const char *dso; /* "[kernel.kallsyms]", module ("ext4"), binary basename, "[vdso]"; NULL
			    unknown */
	uint64_t map_base; /* mapped: the file's offset 0 in the address space (file offset =
			      ip - map_base) */
	bool mapped; /* a user address in a file-backed mapping (or [vdso]) */
	bool kernel;
};

struct symcache_opts {
	size_t sz;
	const char *kallsyms; /* NULL = /proc/kallsyms (read on first kernel lookup) */
	const char *debug_dir; /* NULL = /usr/lib/debug */
	bool no_demangle;
	unsigned int cache_bits; /* address cache of 2^bits entries; 0 = 16 */
};

struct symcache_stats {
	uint64_t lookups, hits; /* address cache */
	uint64_t unknown; /* lookups that found no symbol */
	size_t dsos, procs, ksyms;
};

/*
 * Not thread-safe: one symcache per thread, or a lock around it. Strings handed out stay valid
 * until symcache__delete().
 */
struct symcache;

struct symcache *symcache__new(const struct symcache_opts *opts);
void symcache__delete(struct symcache *sc);

/*
 * Resolves ip seen in process pid (user addresses) or the kernel (kernel true, pid ignored).
 * Returns 0 with out filled, or -ENOENT (no symbol; out->dso may still name the mapping).
 * A repeated (pid maps generation, ip) is answered from the hash.
 */
int symcache__resolve(struct symcache *sc, pid_t pid, uint64_t ip, bool kernel,
			  struct sym *out);

/* The process maps to feed with MMAP2/FORK/EXIT/COMM-exec records (see usyms.h). */
struct usyms *symcache__usyms(struct symcache *sc);

/* pid exited: its JIT map (perf-PID.map) is let go of. */
void symcache__forget(struct symcache *sc, pid_t pid);
/* Kernel symbols, loaded on first call; NULL + errno when /proc/kallsyms is unreadable. */
const struct ksyms *symcache__ksyms(struct symcache *sc);

/*
 * One-time diagnostics for a person (e.g. kernel addresses hidden by kptr_restrict), NULL when
 * none; the caller prints it once to stderr.
 */
const char *symcache__problem(struct symcache *sc);

void symcache__stats(const struct symcache *sc, struct symcache_stats *st);

#endif
