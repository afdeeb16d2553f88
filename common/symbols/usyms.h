/* Per-process memory maps (from /proc/PID/maps and MMAP2/FORK/EXIT/exec records): user ip ->
 * binary. */
#ifndef PERFSCOPE_COMMON_USYMS_H
#define PERFSCOPE_COMMON_USYMS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "dso.h"

/* A mapped file as an MMAP2 record (or a /proc/PID/maps line) describes it. */
struct umap_file {
	const char *path; /* "/usr/bin/bash", "[vdso]", "//anon" ... */
	uint32_t maj, min; /* device, 0 when unknown */
	uint64_t ino; /* 0 when unknown */
	const uint8_t *build_id; /* PERF_RECORD_MISC_MMAP_BUILD_ID records; else NULL */
	uint8_t build_id_size;
	uint32_t prot; /* PROT_* */
	uint64_t time; /* the record's time (CLOCK_MONOTONIC ns); 0 unknown */
};

/* Where a user address lands: the binary and the address in its ELF terms. */
struct uaddr {
	struct dso *dso; /* NULL for anonymous memory, [heap], [stack], JIT ... */
	const char *map_name; /* the mapping's name ("[vdso]", "//anon", path) */
	uint64_t vaddr; /* ELF virtual address within dso */
	uint64_t gen; /* changes whenever this pid's maps change (address cache key) */
	uint64_t map_start, map_end, map_pgoff; /* the mapping holding the address */
};

/* The processes seen so far and their executable mappings. Not thread-safe. */
struct usyms;

struct usyms *usyms__new(struct dsos *dsos);
void usyms__delete(struct usyms *u);

/*
 * Feeding from records (the session calls these as PERF_RECORD_MMAP2/FORK/EXIT/COMM arrive).
 * A new mapping replaces whatever it overlaps, as mmap(2) does. Non-executable mappings are
 * ignored unless prot is 0 (unknown). Returns 0 or -ENOMEM.
 *
 * Without time order the records of one process come from several CPUs' rings, read one after
 * the other: a child's exec and mmaps (its CPU) can come before its FORK (its parent's CPU), the
 * libraries ld.so maps before the exec. time (the record's, CLOCK_MONOTONIC ns like the maps
 * read from /proc; 0 unknown) puts them back in order: a FORK keeps what its child mapped after
 * it, an exec what was mapped after it, and a mapping older than the last exec is ignored.
 */
int usyms__mmap(struct usyms *u, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const struct umap_file *file);
int usyms__fork(struct usyms *u, pid_t ppid, pid_t pid, uint64_t time);
void usyms__exit(struct usyms *u, pid_t pid);
/* COMM with PERF_RECORD_MISC_COMM_EXEC: the old image is gone. */
void usyms__exec(struct usyms *u, pid_t pid, uint64_t time);
/*
 * When what is known of pid starts (its fork, exec or /proc read; CLOCK_MONOTONIC ns), 0 when
 * nothing is: an EXIT older than that is a previous process's of the same pid.
 */
uint64_t usyms__born(struct usyms *u, pid_t pid);

/*
 * Reads /proc/PID/maps (replacing what is known of pid). Done automatically on the first lookup
 * of an unknown pid. Returns 0 or -errno (-ENOENT: the process is gone).
 */
int usyms__load_proc(struct usyms *u, pid_t pid);

/*
 * Finds the mapping of ip in pid (loading /proc/PID/maps for an unknown pid). Returns 0,
 * -ENOENT when no mapping holds ip (hit->gen is still set), -ESRCH when nothing is known of pid.
 */
int usyms__find(struct usyms *u, pid_t pid, uint64_t ip, struct uaddr *hit);

/*
 * The generation of pid's maps (loading /proc/PID/maps for an unknown pid): a cheap key for
 * caching what an address of pid resolves to. 0 with *gen set, or -ESRCH.
 */
int usyms__gen(struct usyms *u, pid_t pid, uint64_t *gen);

/* Processes currently known. */
size_t usyms__nr_procs(const struct usyms *u);

#endif
