/* Uprobe and kprobe internals shared by parse_probe.c, probe_elf.c and probe.c. */
#ifndef PERFSCOPE_PROBE_INTERNAL_H
#define PERFSCOPE_PROBE_INTERNAL_H

#include <elf.h>
#include <stddef.h>
#include <stdint.h>

#include "parse_internal.h"

/* An ELF64 file of this machine, mapped read-only. */
struct psc_elf {
	void *map;
	size_t size;
	const Elf64_Ehdr *eh;
};
/* 0, or -errno from open/mmap, -EINVAL when no ELF64 file of this machine. */
int psc_elf__open(const char *path, struct psc_elf *e);
void psc_elf__close(struct psc_elf *e);
/* Every defined function of .symtab (else .dynsym); stops at cb's first non-zero return. */
int psc_elf__for_each_sym(const struct psc_elf *e,
			  int (*cb)(const char *name, const Elf64_Sym *sym, void *ctx), void *ctx);
/* Where vaddr is in the file (through the executable PT_LOAD holding it); -ERANGE if none. */
int psc_elf__file_offset(const struct psc_elf *e, uint64_t vaddr, uint64_t *off);

/*
 * parse_probe.c: the location of "KIND:..." with the kind word at [start, head_end) and ':' at
 * head_end; fills spec (kind, name, probe) and leaves *pos after the location (at '/', ':', or
 * the event's end). Returns 0 or a negative errno with p->err set.
 */
int psc_evparse_probe(struct psc_evparse *p, const char *s, int start, int head_end, int *pos,
		      struct psc_event_spec *spec);
/* parse_usdt.c: usdt:PROVIDER:NAME@BINARY, the same way (the kind word is "usdt"). */
int psc_evparse_usdt(struct psc_evparse *p, const char *s, int start, int head_end, int *pos,
		     struct psc_event_spec *spec);
/* True when [s, s+len) is uprobe, uretprobe, kprobe, kretprobe or usdt. */
bool psc_evparse_is_probe_word(const char *s, size_t len);
void psc_probe_spec__free(struct psc_probe_spec *probe);

#endif
