/* DWARF unwinding of sampled user stacks with libdw: cached Dwfl per process, registers and
 * memory from the sample's copy of the stack, how each unwind ended counted. */
#include "unwind.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "dso.h"

#define NR_BUCKETS 256
/* Dwfls kept at once: each holds its binaries open; the least recently used goes first */
#define MAX_PROCS 256

/* x86-64 DWARF register numbers 0..16 (rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip) as perf's */
static const int dwarf_to_perf[17] = {
	UNWIND_PERF_REG_AX, UNWIND_PERF_REG_DX, UNWIND_PERF_REG_CX, UNWIND_PERF_REG_BX,
	UNWIND_PERF_REG_SI, UNWIND_PERF_REG_DI, UNWIND_PERF_REG_BP, UNWIND_PERF_REG_SP,
	UNWIND_PERF_REG_R8 + 0, UNWIND_PERF_REG_R8 + 1, UNWIND_PERF_REG_R8 + 2,
	UNWIND_PERF_REG_R8 + 3, UNWIND_PERF_REG_R8 + 4, UNWIND_PERF_REG_R8 + 5,
	UNWIND_PERF_REG_R8 + 6, UNWIND_PERF_REG_R8 + 7, UNWIND_PERF_REG_IP,
};

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
};

struct unwind {
	struct usyms *usyms;
	struct uproc *buckets[NR_BUCKETS];
	size_t nr_procs;
	uint64_t tick;
	struct unwind_stats st;
	char other[128];
	/* the sample being unwound */
	const struct psc_sample *s;
	uint64_t sp;
	uint64_t *ips;
	int n, max;
	Dwarf_Addr last_pc; /* of the last frame delivered (return address - 1 for callers) */
	bool read_short; /* a read past the end of a full stack copy failed */
	bool read_bad; /* a read outside the stack copy and every binary failed */
};

static char *debuginfo_path; /* NULL: libdw's default, ":.debug:/usr/lib/debug" */

/*
 * The binaries are reported by us (dwfl_report_elf), so find_elf is not asked for them;
 * find_debuginfo finds separate debug files (.debug_frame) by build-id and .gnu_debuglink.
 */
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Register r (perf numbering) of the sample's user registers; false when not sampled. */
static bool perf_reg(const struct psc_sample_regs *regs, int r, uint64_t *val)
{
	uint64_t bit = 1ull << r;

	if (!regs->abi || !(regs->mask & bit))
		return false;
	*val = regs->regs[__builtin_popcountll(regs->mask & (bit - 1))];
	return true;
}

/* ---- libdw's thread callbacks: one thread, the sample's ---- */

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)dwfl_arg;
	(void)thread_argp;
	return 0; /* threads are asked for by tid (get_thread) */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = dwfl_arg;
	return true;
}

/* A word of a binary's loaded sections, for a CFI expression that reads one. */
static bool read_binary(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	Elf_Scn *scn = NULL;
	Dwarf_Addr bias;
	Elf *elf;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)))
		return false;
	addr -= bias;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || addr < sh.sh_addr ||
		    addr + sizeof(*out) > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr + sizeof(*out) > d->d_size)
			return false;
		memcpy(out, (const char *)d->d_buf + (addr - sh.sh_addr), sizeof(*out));
		return true;
	}
	return false;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwind *uw = ((struct uproc *)dwfl_arg)->uw;
	const struct psc_sample *s = uw->s;
	uint64_t valid = s->stack_user.dyn_size;

	if (addr >= uw->sp && addr - uw->sp <= valid && valid - (addr - uw->sp) >= sizeof(*result)) {
		memcpy(result, (const char *)s->stack_user.data + (addr - uw->sp), sizeof(*result));
		return true;
	}
	if (read_binary(dwfl, addr, result))
		return true;
	/*
	 * Above the copy: when the kernel copied all it was asked for (dyn_size == size), the
	 * stack goes on beyond it and a larger SIZE would have had the word; a shorter copy ended
	 * at the top of the stack, and the unwinder went astray.
	 */
	if (addr >= uw->sp + valid && valid + 64 >= s->stack_user.size)
		uw->read_short = true;
	else
		uw->read_bad = true;
	return false;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind *uw = ((struct uproc *)thread_arg)->uw;
	const struct psc_sample_regs *regs = &uw->s->regs_user;
	uint64_t ip;

	for (int r = 0; r < 17; r++) {
		Dwarf_Word v;

		if (perf_reg(regs, dwarf_to_perf[r], &v) &&
		    !dwfl_thread_state_registers(thread, r, 1, &v))
			return false;
	}
	if (!perf_reg(regs, UNWIND_PERF_REG_IP, &ip))
		return false;
	dwfl_thread_state_register_pc(thread, ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* ---- processes and their Dwfl ---- */

struct unwind *unwind__new(struct usyms *u)
{
	struct unwind *uw = calloc(1, sizeof(*uw));

	if (!uw)
		return NULL;
	uw->usyms = u;
	return uw;
}

static void uproc_free(struct uproc *up)
{
	if (up->dwfl)
		dwfl_end(up->dwfl);
	free(up->rep);
	free(up);
}

void unwind__delete(struct unwind *uw)
{
	if (!uw)
		return;
	for (size_t i = 0; i < NR_BUCKETS; i++) {
		struct uproc *up = uw->buckets[i], *n;

		for (; up; up = n) {
			n = up->next;
			uproc_free(up);
		}
	}
	free(uw);
}

static struct uproc **uproc_slot(struct unwind *uw, pid_t pid)
{
	struct uproc **pp = &uw->buckets[(uint32_t)pid % NR_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

void unwind__forget(struct unwind *uw, pid_t pid)
{
	struct uproc **pp = uproc_slot(uw, pid), *up = *pp;

	if (!up)
		return;
	*pp = up->next;
	uproc_free(up);
	uw->nr_procs--;
}

static void evict_lru(struct unwind *uw)
{
	struct uproc *old = NULL;

	for (size_t i = 0; i < NR_BUCKETS; i++)
		for (struct uproc *up = uw->buckets[i]; up; up = up->next)
			if (!old || up->used < old->used)
				old = up;
	if (old)
		unwind__forget(uw, old->pid);
}

struct report_ctx {
	struct uproc *up;
	bool check; /* only compare with what is reported: *changed when a mapping is gone */
	size_t seen; /* reported mappings still there */
	bool added;
	int err;
};

static bool was_reported(const struct uproc *up, const struct umap_view *m)
{
	for (size_t i = 0; i < up->nr_rep; i++)
		if (up->rep[i].start == m->start && up->rep[i].end == m->end &&
		    up->rep[i].name == m->name)
			return true;
	return false;
}

/* Reports one file mapping: its binary, placed where the mapping puts the file offset pgoff. */
static int report_map(void *ctx, const struct umap_view *m)
{
	struct report_ctx *rc = ctx;
	struct uproc *up = rc->up;
	char path[4096];
	uint64_t vaddr;
	size_t len;

	if (m->name[0] != '/' || !m->dso || m->dso->load_err ||
	    !dso__offset_to_vaddr(m->dso, m->pgoff, &vaddr))
		return 0;
	len = strlen(m->name);
	if (len > 10 && !strcmp(m->name + len - 10, " (deleted)"))
		return 0;
	if (was_reported(up, m)) {
		rc->seen++;
		return 0;
	}
	if (rc->check) {
		rc->added = true;
		return 0;
	}
	if (up->nr_rep == up->cap_rep) {
		size_t cap = up->cap_rep ? up->cap_rep * 2 : 16;
		struct reported *n = realloc(up->rep, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		up->rep = n;
		up->cap_rep = cap;
	}
	up->rep[up->nr_rep++] = (struct reported){ m->start, m->end, m->name };
	/* a process in another mount namespace: its files through its root */
	if (access(m->name, R_OK))
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)up->pid, m->name);
	else
		snprintf(path, sizeof(path), "%s", m->name);
	/*
	 * add_p_vaddr: the bias is given, the load address of vaddr 0, as the mapping says (exact
	 * whatever the segment layout). A binary mapped twice reports the same module again,
	 * which libdw takes as the one it has; a failure leaves that binary's frames to the
	 * fallback (frame pointers).
	 */
	dwfl_report_elf(up->dwfl, m->dso->short_name, path, -1, m->start - vaddr, true);
	return 0;
}

/* Reports the process's mappings: those not reported yet, or all of them on a new Dwfl. */
static int report(struct unwind *uw, struct uproc *up, bool fresh)
{
	struct report_ctx rc = { .up = up };
	uint64_t gen;
	int err;

	if (fresh)
		dwfl_report_begin(up->dwfl);
	else
		dwfl_report_begin_add(up->dwfl);
	err = usyms__for_each(uw->usyms, up->pid, &gen, report_map, &rc);
	dwfl_report_end(up->dwfl, NULL, NULL);
	if (err)
		return err;
	up->gen = gen;
	uw->st.reports++;
	return 0;
}

/* A new Dwfl for up, its modules reported and its thread state attached. */
static int uproc_start(struct unwind *uw, struct uproc *up)
{
	int err;

	if (up->dwfl)
		dwfl_end(up->dwfl);
	up->nr_rep = 0;
	up->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!up->dwfl)
		return -ENOMEM;
	uw->st.dwfls++;
	err = report(uw, up, true);
	if (err)
		return err;
	/* the first binary with ELF gives the architecture */
	if (!dwfl_attach_state(up->dwfl, NULL, up->pid, &thread_callbacks, up))
		return -EINVAL;
	return 0;
}

/* The process's Dwfl, made or brought up to date with its maps. NULL when it cannot be. */
static struct uproc *uproc_get(struct unwind *uw, pid_t pid)
{
	struct uproc **pp = uproc_slot(uw, pid), *up = *pp;
	uint64_t gen;

	if (usyms__gen(uw->usyms, pid, &gen))
		return NULL;
	if (!up) {
		if (uw->nr_procs >= MAX_PROCS)
			evict_lru(uw);
		up = calloc(1, sizeof(*up));
		if (!up)
			return NULL;
		up->uw = uw;
		up->pid = pid;
		pp = uproc_slot(uw, pid);
		*pp = up;
		uw->nr_procs++;
		if (uproc_start(uw, up)) {
			unwind__forget(uw, pid);
			return NULL;
		}
	} else if (up->gen != gen) {
		/*
		 * Maps changed: new binaries (dlopen) are added to the Dwfl; when one reported is
		 * gone (munmap, replaced), libdw cannot forget it, so the Dwfl starts afresh.
		 */
		struct report_ctx rc = { .up = up, .check = true };
		uint64_t g;
		int err = usyms__for_each(uw->usyms, pid, &g, report_map, &rc);

		if (err || rc.seen != up->nr_rep)
			err = uproc_start(uw, up);
		else if (rc.added)
			err = report(uw, up, false);
		else
			up->gen = g;
		if (err) {
			unwind__forget(uw, pid);
			return NULL;
		}
	}
	up->used = ++uw->tick;
	return up;
}

/* ---- unwinding ---- */

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind *uw = arg;
	Dwarf_Addr pc;
	bool activation;

	if (!dwfl_frame_pc(state, &pc, &activation))
		return DWARF_CB_ABORT;
	if (uw->n >= uw->max)
		return DWARF_CB_ABORT;
	uw->ips[uw->n++] = pc;
	uw->last_pc = activation || !pc ? pc : pc - 1;
	return DWARF_CB_OK;
}

/* Why libdw could not go past the last frame. */
static enum unwind_stop why_stopped(struct unwind *uw, Dwfl *dwfl, int ret)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf_Frame *frame;
	Dwarf_CFI *cfi;
	bool has_cfi = false;

	if (ret > 0 || uw->n >= uw->max)
		return uw->n >= uw->max ? UNWIND_MAX_DEPTH : UNWIND_OTHER;
	if (!uw->n)
		return UNWIND_OTHER;
	mod = dwfl_addrmodule(dwfl, uw->last_pc);
	if (!mod)
		return UNWIND_UNKNOWN_MAP;
	if (uw->read_short)
		return UNWIND_STACK_SHORT;
	if ((cfi = dwfl_module_eh_cfi(mod, &bias)) &&
	    !dwarf_cfi_addrframe(cfi, uw->last_pc - bias, &frame)) {
		has_cfi = true;
		free(frame);
	}
	if (!has_cfi && (cfi = dwfl_module_dwarf_cfi(mod, &bias)) &&
	    !dwarf_cfi_addrframe(cfi, uw->last_pc - bias, &frame)) {
		has_cfi = true;
		free(frame);
	}
	if (!has_cfi)
		return UNWIND_NO_CFI;
	if (uw->read_bad)
		return UNWIND_BAD_READ;
	return UNWIND_OTHER;
}

int unwind__sample(struct unwind *uw, const struct psc_sample *s, uint64_t *ips, int max,
		   enum unwind_stop *stop)
{
	uint64_t t0 = now_ns(), sp, ip;
	struct uproc *up;
	int ret;

	uw->st.stacks++;
	uw->n = 0;
	if (!(s->sample_type & PERF_SAMPLE_REGS_USER) || !(s->sample_type & PERF_SAMPLE_STACK_USER) ||
	    !perf_reg(&s->regs_user, UNWIND_PERF_REG_SP, &sp) ||
	    !perf_reg(&s->regs_user, UNWIND_PERF_REG_IP, &ip) || max <= 0) {
		*stop = UNWIND_NO_USER;
		goto out;
	}
	uw->s = s;
	uw->sp = sp;
	uw->ips = ips;
	uw->max = max;
	uw->read_short = uw->read_bad = false;
	up = s->pid ? uproc_get(uw, (pid_t)s->pid) : NULL;
	if (!up) {
		/* nothing known of the process: its ip alone */
		ips[uw->n++] = ip;
		*stop = UNWIND_UNKNOWN_MAP;
		goto out;
	}
	ret = dwfl_getthread_frames(up->dwfl, s->tid ? (pid_t)s->tid : (pid_t)s->pid, frame_cb,
				    uw);
	if (!uw->n)
		ips[uw->n++] = ip; /* libdw gave not even the first frame */
	if (!ret) {
		*stop = UNWIND_COMPLETE;
	} else {
		*stop = why_stopped(uw, up->dwfl, ret);
		if (*stop == UNWIND_OTHER && !uw->st.other) {
			snprintf(uw->other, sizeof(uw->other), "%s", dwfl_errmsg(-1));
			uw->st.other = uw->other;
		}
	}
out:
	uw->st.stops[*stop]++;
	uw->st.frames += (uint64_t)uw->n;
	uw->st.ns += now_ns() - t0;
	uw->s = NULL;
	return uw->n;
}

void unwind__stats(const struct unwind *uw, struct unwind_stats *st)
{
	*st = uw->st;
	st->procs = uw->nr_procs;
}

static const char *const stop_text[UNWIND_NR_STOPS] = {
	[UNWIND_COMPLETE] = "complete",
	[UNWIND_NO_USER] = "no user stack",
	[UNWIND_STACK_SHORT] = "stack copy too short",
	[UNWIND_UNKNOWN_MAP] = "pc in no known binary",
	[UNWIND_NO_CFI] = "no CFI for a pc",
	[UNWIND_BAD_READ] = "unreadable memory",
	[UNWIND_MAX_DEPTH] = "frame limit",
	[UNWIND_OTHER] = "other",
};

static const char *const stop_key[UNWIND_NR_STOPS] = {
	[UNWIND_COMPLETE] = "complete",	       [UNWIND_NO_USER] = "no_user",
	[UNWIND_STACK_SHORT] = "stack_short",  [UNWIND_UNKNOWN_MAP] = "unknown_map",
	[UNWIND_NO_CFI] = "no_cfi",	       [UNWIND_BAD_READ] = "bad_read",
	[UNWIND_MAX_DEPTH] = "max_depth",      [UNWIND_OTHER] = "other",
};

const char *unwind__stop_text(enum unwind_stop stop)
{
	return stop < UNWIND_NR_STOPS ? stop_text[stop] : "?";
}

const char *unwind__stop_key(enum unwind_stop stop)
{
	return stop < UNWIND_NR_STOPS ? stop_key[stop] : "?";
}
