/* User-space binaries (ELF) and their symbol tables, shared by every process that maps them. */
#ifndef PERFSCOPE_COMMON_DSO_H
#define PERFSCOPE_COMMON_DSO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define BUILD_ID_MAX 20

struct usym {
	uint64_t addr; /* ELF virtual address (st_value) */
	uint64_t size;
	const char *name; /* as in the ELF file (mangled) */
	const char *demangled; /* filled on first use: name itself when not mangled */
};

/* One ELF segment: file offsets [offset, offset + filesz) are loaded at vaddr. */
struct dso_seg {
	uint64_t offset, vaddr, filesz;
};

/*
 * One binary: where its symbols came from and the sorted symbol table. Read-only after load,
 * except the lazily filled usym.demangled (one thread at a time, as the symcache is).
 */
struct dso {
	char *path; /* as mapped, e.g. "/usr/lib/x86_64-linux-gnu/libc.so.6" */
	const char *short_name; /* basename of path */
	uint8_t build_id[BUILD_ID_MAX];
	uint8_t build_id_size;
	struct usym *syms;
	size_t nr_syms;
	struct dso_seg *segs; /* PT_LOAD segments, for file offset -> vaddr */
	size_t nr_segs;
	char *sym_source; /* the file(s) symbols came from: ".symtab", "debuglink
			     /usr/lib/debug/..." */
	int load_err; /* 0, or the errno that kept us from reading the binary */
	char *strings; /* owned names, one block */
	size_t strings_len, strings_cap;
	bool demangle;
};

struct dso_opts {
	const char *debug_dir; /* NULL = /usr/lib/debug */
	bool no_demangle;
};

/*
 * Loads the symbols of the ELF file at path: .symtab, else a separate debug file found by
 * build-id or .gnu_debuglink under debug_dir, plus .gnu_debugdata (xz-compressed MiniDebugInfo)
 * and .dynsym. open_path, when not NULL, is where to read the file (e.g. /proc/PID/root/...,
 * /proc/PID/map_files/...) while path stays the name shown. Never NULL except out of memory: a
 * binary that cannot be read gives an empty table with load_err set.
 */
struct dso *dso__load(const char *path, const char *open_path,
			      const struct dso_opts *opts);
void dso__delete(struct dso *dso);

/* The symbol containing vaddr (binary search); NULL when none. */
const struct usym *dso__find(const struct dso *dso, uint64_t vaddr);

/* Demangled (or plain) name of a symbol of this dso, computed once. */
const char *dso__sym_name(const struct dso *dso, const struct usym *sym);

/* File offset -> ELF virtual address through the PT_LOAD segments; false when outside them. */
bool dso__offset_to_vaddr(const struct dso *dso, uint64_t offset, uint64_t *vaddr);

/* Hex build-id into buf (2 * BUILD_ID_MAX + 1 bytes); "" when the binary has none. */
const char *dso__build_id_hex(const struct dso *dso, char *buf, size_t len);

/* Reads the NT_GNU_BUILD_ID note of an ELF file. Returns its size (1..20) or -errno. */
int elf_build_id(const char *path, uint8_t *build_id, size_t len);

/*
 * Registry of loaded binaries, keyed by (device, inode) and by build-id when known, so each
 * binary is read once however many processes map it. Not thread-safe.
 */
struct dsos;

struct dso_key {
	uint64_t dev; /* makedev(maj, min) of the file, 0 when unknown */
	uint64_t ino; /* 0 when unknown (then the path is the key) */
	const uint8_t *build_id; /* may be NULL */
	uint8_t build_id_size;
};

struct dsos *dsos__new(const struct dso_opts *opts);
void dsos__delete(struct dsos *dsos);

/*
 * The dso for a mapped file, loading it on first use. pid (> 0) lets the file be opened through
 * /proc/PID/root for processes in another mount namespace. NULL only when out of memory.
 */
struct dso *dsos__get(struct dsos *dsos, const struct dso_key *key,
			      const char *path, pid_t pid);
size_t dsos__nr(const struct dsos *dsos);

#endif
