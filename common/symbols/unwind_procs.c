/* The unwinder's processes: one cached Dwfl each (least recently used evicted), binaries
 * reported to it as stacks reach them, made afresh when one reported is unmapped. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>
#include <gelf.h>

#include "dso.h"
#include "unwind_internal.h"

/* Dwfls kept at once: each holds its binaries open; the least recently used goes first */
#define MAX_PROCS 64

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
bool unwind_procs__report_pc(struct unwind *uw, struct uproc *up, Dwarf_Addr pc)
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
	up->dwfl = dwfl_begin(&unwind_cfi__dwfl_callbacks);
	if (!up->dwfl)
		return -ENOMEM;
	uw->st.dwfls++;
	dwfl_report_begin(up->dwfl);
	dwfl_report_end(up->dwfl, NULL, NULL);
	/* our own binary gives the architecture: no module of the process may be known yet */
	if (!dwfl_attach_state(up->dwfl, uw->self_elf, up->pid, &unwind_regs__thread_callbacks, up))
		return -EINVAL;
	return 0;
}

/* The process's Dwfl, made or checked against its maps. NULL when it cannot be. */
struct uproc *unwind_procs__uproc_get(struct unwind *uw, pid_t pid)
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
