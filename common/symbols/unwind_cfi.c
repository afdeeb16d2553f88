/* Where a binary's call frame information is (.eh_frame, .debug_frame, a separate debug file)
 * and whether libdw may look for it: loading a binary's whole DWARF costs milliseconds. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <gelf.h>

#include "unwind_internal.h"

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
const Dwfl_Callbacks unwind_cfi__dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

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
bool unwind_cfi__frame_has_cfi(struct uproc *up, Dwarf_Addr pc)
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
