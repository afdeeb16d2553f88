/* DWARF unwinding of sampled user stacks with libdw: cached Dwfl per process, registers and
 * memory from the sample's copy of the stack, how each unwind ended counted. */
#include "unwind.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "dso.h"
#include "keymap.h"

#define NR_BUCKETS 256
/* Dwfls kept at once: each holds its binaries open; the least recently used goes first */
#define MAX_PROCS 64

/* x86-64 DWARF register numbers 0..16 (rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip) as perf's */
static const int dwarf_to_perf[17] = {
	UNWIND_PERF_REG_AX,	UNWIND_PERF_REG_DX,	UNWIND_PERF_REG_CX,
	UNWIND_PERF_REG_BX,	UNWIND_PERF_REG_SI,	UNWIND_PERF_REG_DI,
	UNWIND_PERF_REG_BP,	UNWIND_PERF_REG_SP,	UNWIND_PERF_REG_R8 + 0,
	UNWIND_PERF_REG_R8 + 1, UNWIND_PERF_REG_R8 + 2, UNWIND_PERF_REG_R8 + 3,
	UNWIND_PERF_REG_R8 + 4, UNWIND_PERF_REG_R8 + 5, UNWIND_PERF_REG_R8 + 6,
	UNWIND_PERF_REG_R8 + 7, UNWIND_PERF_REG_IP,
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

static char *debuginfo_path; /* NULL: libdw's default, ":.debug:/usr/lib/debug" */

/* Whether the ELF file open on fd has a section of this name. */
static bool has_section(int fd, const char *want)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool found = false;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			found = gelf_getshdr(scn, &sh) &&
				(name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
				!strcmp(name, want);
		}
	}
	elf_end(elf);
	return found;
}

/*
 * libdw's search for a separate debug file (build-id, then .gnu_debuglink), kept only when the
 * file has .debug_frame: libdw asks for it when a pc has no .eh_frame entry (ld.so's entry code
 * at every process start), and loading it inflates all its compressed DWARF (libc6-dbg's
 * ld.so: milliseconds per process) to find no CFI there. Without it libdw walks frame pointers.
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			  const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink_file, debuglink_crc, debuginfo_file_name);

	if (fd < 0 || has_section(fd, ".debug_frame"))
		return fd;
	close(fd);
	free(*debuginfo_file_name);
	*debuginfo_file_name = NULL;
	return -1;
}

/*
 * The binaries are reported by us (dwfl_report_elf), so find_elf is not asked for them;
 * find_debuginfo finds separate debug files (.debug_frame) by build-id and .gnu_debuglink.
 */
static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

/* Register r (perf numbering) of the sample's user registers; false when not sampled. */
static bool perf_reg(const struct psc_sample_regs *regs, int r, uint64_t *val)
{
	uint64_t bit = 1ull << r;
	unsigned int at = (unsigned int)__builtin_popcountll(regs->mask & (bit - 1));

	if (!regs->abi || !(regs->mask & bit) || !regs->regs || at >= regs->nr)
		return false;
	*val = regs->regs[at];
	return true;
}

/* ---- libdw's thread callbacks: one thread, the sample's ---- */

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	return 0; /* threads are asked for by tid (get_thread) */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
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
	uint64_t valid = s->stack_user.data ? s->stack_user.dyn_size : 0;

	if (addr >= uw->sp && addr - uw->sp <= valid &&
	    valid - (addr - uw->sp) >= sizeof(*result)) {
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
	/*
	 * The word reads as 0, a return address that ends the stack: failing the read would
	 * send libdw on to .debug_frame, loading (and inflating) the binary's whole DWARF for a
	 * stack that cannot go on anyway. The flags above say why it ended.
	 */
	*result = 0;
	return true;
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
	uw->vdso_fd = -1;
	if (keymap__init(&uw->skip, 1, 0)) {
		free(uw);
		return NULL;
	}
	elf_version(EV_CURRENT);
	uw->self_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	uw->self_elf = uw->self_fd >= 0 ? elf_begin(uw->self_fd, ELF_C_READ_MMAP, NULL) : NULL;
	if (!uw->self_elf) {
		if (uw->self_fd >= 0)
			close(uw->self_fd);
		keymap__exit(&uw->skip);
		free(uw);
		errno = ENOEXEC;
		return NULL;
	}
	return uw;
}

static void uproc_free(struct uproc *up)
{
	if (up->dwfl)
		dwfl_end(up->dwfl);
	keymap__exit(&up->cfi);
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
	elf_end(uw->self_elf);
	close(uw->self_fd);
	if (uw->vdso_fd >= 0)
		close(uw->vdso_fd);
	keymap__exit(&uw->skip);
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

static bool was_reported(const struct uproc *up, uint64_t start, uint64_t end, const char *name)
{
	for (size_t i = 0; i < up->nr_rep; i++)
		if (up->rep[i].start == start && up->rep[i].end == end && up->rep[i].name == name)
			return true;
	return false;
}

/*
 * Go code has no .eh_frame (a cgo binary's covers only its C parts): its CFI is .debug_frame
 * inside compressed DWARF, which libdw inflates whole in every process's Dwfl as soon as a pc
 * lacks .eh_frame (milliseconds each, megabytes). Go keeps frame pointers, so a Go binary is
 * not reported and libdw walks its frames by rbp instead.
 */
static bool frame_pointers_only(const char *path)
{
	bool go = false;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *elf;

	if (fd < 0)
		return false;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (!gelf_getshdr(scn, &sh) ||
			    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
				continue;
			go |= !strcmp(name, ".gopclntab") || !strcmp(name, ".note.go.buildid");
		}
	}
	elf_end(elf);
	close(fd);
	return go;
}

/*
 * The vDSO as a file libdw can open: the image is the same in every process of this kernel, so
 * ours is copied into a memfd once. NULL when it cannot be.
 */
static const char *vdso_path(struct unwind *uw)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	size_t size;
	int fd;

	if (uw->vdso_tried)
		return uw->vdso_fd >= 0 ? uw->vdso_path : NULL;
	uw->vdso_tried = true;
	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    !eh->e_shoff)
		return NULL;
	/* the image ends with its section headers */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (size > (1u << 20))
		return NULL;
	fd = memfd_create("perfscope-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, base, size) != (ssize_t)size) {
		close(fd);
		return NULL;
	}
	uw->vdso_fd = fd;
	snprintf(uw->vdso_path, sizeof(uw->vdso_path), "/proc/self/fd/%d", fd);
	return uw->vdso_path;
}

/*
 * Makes the binary mapped at pc known to the process's Dwfl, placed where the mapping puts its
 * file offset. Binaries are reported as stacks reach them, not all at the start: a process
 * costs only what its stacks touch (the symbolizer loads the same ones). false when pc is in no
 * binary libdw can take (anonymous memory, JIT code, a deleted file, [vdso]).
 */
static bool report_pc(struct unwind *uw, struct uproc *up, Dwarf_Addr pc)
{
	struct uaddr hit;
	char path[4096];
	uint64_t vaddr;
	size_t len;
	Dwfl_Module *mod;
	uint8_t *verdict;
	bool vdso;

	if (dwfl_addrmodule(up->dwfl, pc))
		return true;
	if (usyms__find(uw->usyms, up->pid, pc, &hit) || !hit.dso || hit.dso->load_err ||
	    !dso__offset_to_vaddr(hit.dso, hit.map_pgoff, &vaddr))
		return false;
	vdso = !strcmp(hit.map_name, "[vdso]");
	if (hit.map_name[0] != '/' && !vdso)
		return false;
	len = strlen(hit.map_name);
	if (len > 10 && !strcmp(hit.map_name + len - 10, " (deleted)"))
		return false;
	/* reported already and refused by libdw: not tried at every frame again */
	if (was_reported(up, hit.map_start, hit.map_end, hit.map_name))
		return false;
	if (up->nr_rep == up->cap_rep) {
		size_t cap = up->cap_rep ? up->cap_rep * 2 : 16;
		struct reported *n = realloc(up->rep, cap * sizeof(*n));

		if (!n)
			return false;
		up->rep = n;
		up->cap_rep = cap;
	}
	up->rep[up->nr_rep++] = (struct reported){ hit.map_start, hit.map_end, hit.map_name };
	/* a process in another mount namespace: its files through its root */
	if (vdso) {
		if (!vdso_path(uw))
			return false;
		snprintf(path, sizeof(path), "%s", uw->vdso_path);
	} else if (access(hit.map_name, R_OK))
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)up->pid, hit.map_name);
	else
		snprintf(path, sizeof(path), "%s", hit.map_name);
	verdict = keymap__insert(&uw->skip, (uint64_t)(uintptr_t)hit.dso, NULL);
	if (verdict && !*verdict)
		*verdict = frame_pointers_only(path) ? 1 : 2;
	if (verdict && *verdict == 1)
		return false;
	/*
	 * add_p_vaddr: the bias is given (the load address of vaddr 0, exact whatever the segment
	 * layout). A binary mapped twice gives libdw the module it has again.
	 */
	dwfl_report_begin_add(up->dwfl);
	mod = dwfl_report_elf(up->dwfl, hit.dso->short_name, path, -1, hit.map_start - vaddr, true);
	dwfl_report_end(up->dwfl, NULL, NULL);
	uw->st.reports++;
	return mod != NULL;
}

/* Whether every binary reported is still mapped where it was (after the maps changed). */
static bool reports_valid(struct unwind *uw, struct uproc *up)
{
	for (size_t i = 0; i < up->nr_rep; i++) {
		struct uaddr hit;

		if (usyms__find(uw->usyms, up->pid, up->rep[i].start, &hit) ||
		    hit.map_start != up->rep[i].start || hit.map_end != up->rep[i].end ||
		    hit.map_name != up->rep[i].name)
			return false;
	}
	return true;
}

/* A new, empty Dwfl for up with its thread state attached. */
static int uproc_start(struct unwind *uw, struct uproc *up)
{
	if (up->dwfl)
		dwfl_end(up->dwfl);
	up->nr_rep = 0;
	keymap__exit(&up->cfi);
	if (keymap__init(&up->cfi, 1, 0))
		return -ENOMEM;
	up->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!up->dwfl)
		return -ENOMEM;
	uw->st.dwfls++;
	dwfl_report_begin(up->dwfl);
	dwfl_report_end(up->dwfl, NULL, NULL);
	/* our own binary gives the architecture: no module of the process may be known yet */
	if (!dwfl_attach_state(up->dwfl, uw->self_elf, up->pid, &thread_callbacks, up))
		return -EINVAL;
	return 0;
}

/* The process's Dwfl, made or checked against its maps. NULL when it cannot be. */
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
		uw->st.procs_seen++;
		pp = uproc_slot(uw, pid);
		*pp = up;
		uw->nr_procs++;
		if (uproc_start(uw, up)) {
			unwind__forget(uw, pid);
			return NULL;
		}
	} else if (up->gen != gen && !reports_valid(uw, up)) {
		/* a binary reported is gone (munmap, replaced): libdw cannot forget one */
		if (uproc_start(uw, up)) {
			unwind__forget(uw, pid);
			return NULL;
		}
	}
	up->gen = gen;
	up->used = ++uw->tick;
	return up;
}

/* ---- unwinding ---- */

/* Whether the file at path has .debug_frame. */
static bool file_debug_frame(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool found;

	if (fd < 0)
		return false;
	found = has_section(fd, ".debug_frame");
	close(fd);
	return found;
}

/*
 * Whether the binary, or its separate debug file (by build-id under /usr/lib/debug, or by
 * .gnu_debuglink beside it, in its .debug/ or under /usr/lib/debug), has .debug_frame: where
 * libdw's find_debuginfo looks.
 */
static bool module_debug_frame(Dwfl_Module *mod)
{
	const unsigned char *id;
	GElf_Addr id_vaddr, bias;
	char path[PATH_MAX], dir[PATH_MAX];
	Elf *elf = dwfl_module_getelf(mod, &bias);
	Elf_Scn *scn = NULL;
	const char *file = NULL, *link, *slash;
	GElf_Word crc;
	size_t shstrndx;
	int n, len;

	if (elf && !elf_getshdrstrndx(elf, &shstrndx))
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;

			if (gelf_getshdr(scn, &sh) &&
			    (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    !strcmp(name, ".debug_frame"))
				return true;
		}
	n = dwfl_module_build_id(mod, &id, &id_vaddr);
	if (n >= 2) {
		len = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
		for (int i = 1; i < n && len < (int)sizeof(path) - 8; i++)
			len += snprintf(path + len, sizeof(path) - (size_t)len, "%02x", id[i]);
		snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
		if (file_debug_frame(path))
			return true;
	}
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file, NULL);
	if (!elf || !file || !(link = dwelf_elf_gnu_debuglink(elf, &crc)) || strchr(link, '/'))
		return false;
	slash = strrchr(file, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - file) : 1, slash ? file : ".");
	if (snprintf(path, sizeof(path), "%s/%s", dir, link) < (int)sizeof(path) &&
	    strcmp(path, file) && file_debug_frame(path))
		return true;
	if (snprintf(path, sizeof(path), "%s/.debug/%s", dir, link) < (int)sizeof(path) &&
	    file_debug_frame(path))
		return true;
	return snprintf(path, sizeof(path), "/usr/lib/debug%s/%s", dir, link) < (int)sizeof(path) &&
	       file_debug_frame(path);
}

/*
 * Whether libdw can unwind the frame at pc by CFI. A pc with no .eh_frame entry sends libdw to
 * .debug_frame, which means loading (and inflating) the binary's whole DWARF in this process's
 * Dwfl, milliseconds at every process start (ld.so's entry code has no CFI); so that is let
 * happen only for a binary that has .debug_frame. Answers are kept per pc.
 */
static bool frame_has_cfi(struct uproc *up, Dwarf_Addr pc)
{
	uint8_t *known = keymap__insert(&up->cfi, pc, NULL);
	Dwfl_Module *mod;
	Dwarf_Frame *frame;
	Dwarf_CFI *cfi;
	Dwarf_Addr bias;
	void **userdata;
	bool ok = true;

	if (known && *known)
		return *known == 1;
	mod = dwfl_addrmodule(up->dwfl, pc);
	if (mod) {
		cfi = dwfl_module_eh_cfi(mod, &bias);
		ok = cfi && !dwarf_cfi_addrframe(cfi, pc - bias, &frame);
		if (ok) {
			free(frame);
		} else {
			/* the module's user data: 1 has .debug_frame, 2 has none */
			dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
			if (!*userdata)
				*userdata = (void *)(uintptr_t)(module_debug_frame(mod) ? 1 : 2);
			ok = *userdata == (void *)1;
		}
	}
	if (known)
		*known = ok ? 1 : 2;
	return ok;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind *uw = arg;
	Dwarf_Addr pc, lookup;
	bool activation;

	/*
	 * Without isactivation first: asking for it unwinds the frame below at once, before its
	 * binary is reported and its CFI checked here.
	 */
	if (!dwfl_frame_pc(state, &pc, NULL) || uw->n >= uw->max)
		return DWARF_CB_ABORT;
	/* a caller's pc is a return address: its call is the byte before */
	lookup = !uw->n || !pc ? pc : pc - 1;
	/* libdw looks for this frame's binary next, to unwind it */
	report_pc(uw, uw->up, lookup);
	if (!frame_has_cfi(uw->up, lookup)) {
		uw->ips[uw->n++] = pc;
		uw->last_pc = lookup;
		uw->no_cfi = true;
		return DWARF_CB_ABORT;
	}
	/* a signal frame's pc is where it was interrupted, not a return address */
	if (uw->n && dwfl_frame_pc(state, &pc, &activation) && activation)
		lookup = pc;
	uw->ips[uw->n++] = pc;
	uw->last_pc = lookup;
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

	if (uw->no_cfi)
		return UNWIND_NO_CFI;
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
	/* .debug_frame only for a binary without .eh_frame: it loads all its DWARF */
	if (!has_cfi && !dwfl_module_eh_cfi(mod, &bias) &&
	    (cfi = dwfl_module_dwarf_cfi(mod, &bias)) &&
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
	uint64_t t0 = thread_cpu_ns(), sp, ip;
	struct uproc *up;
	int ret;

	uw->st.stacks++;
	uw->n = 0;
	if (!(s->sample_type & PERF_SAMPLE_REGS_USER) ||
	    !(s->sample_type & PERF_SAMPLE_STACK_USER) ||
	    !perf_reg(&s->regs_user, UNWIND_PERF_REG_SP, &sp) ||
	    !perf_reg(&s->regs_user, UNWIND_PERF_REG_IP, &ip) || max <= 0) {
		*stop = UNWIND_NO_USER;
		goto out;
	}
	if (!s->stack_user.size || !s->stack_user.data) {
		/*
		 * Registers without a copy of the stack: the kernel copied none (the record had no
		 * room left), or a sample kept past its ring round did not keep it. Nothing is
		 * read: the ip alone.
		 */
		ips[uw->n++] = ip;
		*stop = UNWIND_NO_STACK;
		goto out;
	}
	if (s->regs_user.abi != PERF_SAMPLE_REGS_ABI_64) {
		/* a 32-bit process: its registers and CFI are another architecture's */
		ips[uw->n++] = ip;
		*stop = UNWIND_OTHER;
		if (!uw->st.other) {
			snprintf(uw->other, sizeof(uw->other), "32-bit process");
			uw->st.other = uw->other;
		}
		goto out;
	}
	uw->s = s;
	uw->sp = sp;
	uw->ips = ips;
	uw->max = max;
	uw->read_short = uw->read_bad = uw->no_cfi = false;
	up = s->pid ? uproc_get(uw, (pid_t)s->pid) : NULL;
	if (!up) {
		/* nothing known of the process: its ip alone */
		ips[uw->n++] = ip;
		*stop = UNWIND_UNKNOWN_MAP;
		goto out;
	}
	uw->up = up;
	ret = dwfl_getthread_frames(up->dwfl, s->tid ? (pid_t)s->tid : (pid_t)s->pid, frame_cb, uw);
	if (!uw->n)
		ips[uw->n++] = ip; /* libdw gave not even the first frame */
	if (!ret) {
		/*
		 * libdw ends quietly when a return address cannot be read (it takes it as
		 * undefined, as at _start): a failed read is the real end.
		 */
		*stop = uw->read_short ? UNWIND_STACK_SHORT
			: uw->read_bad ? UNWIND_BAD_READ
				       : UNWIND_COMPLETE;
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
	uw->st.ns += thread_cpu_ns() - t0;
	uw->s = NULL;
	uw->up = NULL;
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
	[UNWIND_NO_STACK] = "no stack copy",
	[UNWIND_STACK_SHORT] = "stack copy too short",
	[UNWIND_UNKNOWN_MAP] = "pc in no known binary",
	[UNWIND_NO_CFI] = "no CFI for a pc",
	[UNWIND_BAD_READ] = "unreadable memory",
	[UNWIND_MAX_DEPTH] = "frame limit",
	[UNWIND_OTHER] = "other",
};

static const char *const stop_key[UNWIND_NR_STOPS] = {
	[UNWIND_COMPLETE] = "complete",
	[UNWIND_NO_USER] = "no_user",
	[UNWIND_NO_STACK] = "no_stack",
	[UNWIND_STACK_SHORT] = "stack_short",
	[UNWIND_UNKNOWN_MAP] = "unknown_map",
	[UNWIND_NO_CFI] = "no_cfi",
	[UNWIND_BAD_READ] = "bad_read",
	[UNWIND_MAX_DEPTH] = "max_depth",
	[UNWIND_OTHER] = "other",
};

const char *unwind__stop_text(enum unwind_stop stop)
{
	return stop < UNWIND_NR_STOPS ? stop_text[stop] : "?";
}

const char *unwind__stop_key(enum unwind_stop stop)
{
	return stop < UNWIND_NR_STOPS ? stop_key[stop] : "?";
}
