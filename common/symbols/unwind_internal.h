/* The unwinder's parts shared by its files: the sample's registers (unwind_regs.c), binaries'
 * CFI (unwind_cfi.c), processes and their Dwfl (unwind_procs.c), the walk itself (unwind.c). */
#ifndef PERFSCOPE_COMMON_UNWIND_INTERNAL_H
#define PERFSCOPE_COMMON_UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <elfutils/libdwfl.h>

#include "keymap.h"
#include "unwind.h"

#define NR_BUCKETS 256

/* A mapping reported to a process's Dwfl: a later report that lost one starts afresh. */
struct reported {
	uint64_t start, end;
	const char *name; /* interned by usyms: compared by pointer */
};

struct uproc {
	struct uproc *next;
	struct unwind *uw;
	pid_t pid;
	Dwfl *dwfl;
	uint64_t gen; /* usyms generation of the maps reported */
	uint64_t used; /* LRU tick */
	struct reported *rep;
	size_t nr_rep, cap_rep;
	struct keymap cfi; /* pc -> 1: has CFI, 2: none (the unwind stops there) */
};

struct unwind {
	struct usyms *usyms;
	int self_fd;
	Elf *self_elf; /* perfscope's own binary: the architecture every Dwfl is attached with */
	struct uproc *buckets[NR_BUCKETS];
	size_t nr_procs;
	uint64_t tick;
	struct unwind_stats st;
	char other[128];
	struct keymap skip; /* dso pointer -> 1 (left to frame pointers) or 2 (reported) */
	int vdso_fd; /* a memfd holding the vDSO image, -1 until made or when it cannot be */
	bool vdso_tried;
	char vdso_path[64];
	/* the sample being unwound */
	const struct psc_sample *s;
	struct uproc *up;
	uint64_t sp;
	uint64_t *ips;
	int n, max;
	Dwarf_Addr last_pc; /* of the last frame delivered (return address - 1 for callers) */
	bool read_short; /* a read past the end of a full stack copy failed */
	bool read_bad; /* a read outside the stack copy and every binary failed */
	bool no_cfi; /* stopped at a pc of a binary without CFI for it */
};

/* unwind_regs.c: the sample's registers and its copy of the stack, as libdw asks for them */
extern const Dwfl_Thread_Callbacks unwind_regs__thread_callbacks;
bool unwind_regs__perf_reg(const struct psc_sample_regs *regs, int r, uint64_t *val);

/* unwind_cfi.c: where libdw finds a binary's CFI, and whether it has some for a pc */
extern const Dwfl_Callbacks unwind_cfi__dwfl_callbacks;
bool unwind_cfi__frame_has_cfi(struct uproc *up, Dwarf_Addr pc);

/* unwind_procs.c: processes and their Dwfl */
bool unwind_procs__report_pc(struct unwind *uw, struct uproc *up, Dwarf_Addr pc);
struct uproc *unwind_procs__uproc_get(struct unwind *uw, pid_t pid);

#endif
