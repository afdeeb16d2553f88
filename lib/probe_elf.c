/* What a uprobe needs from a binary: the file ld.so would load for a library name, and its
 * functions' symbols and file offsets, read from the ELF64 file with bounds checks only
 * (no libelf: the library depends on libtraceevent alone). */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <perfscope/probe.h>

#include "probe_internal.h"

#if defined(__x86_64__)
#define MY_MACHINE EM_X86_64
#define TRIPLET "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define MY_MACHINE EM_AARCH64
#define TRIPLET "aarch64-linux-gnu"
#else
#define MY_MACHINE EM_NONE
#define TRIPLET ""
#endif

static bool in_file(const struct psc_elf *e, uint64_t off, uint64_t len)
{
	return off <= e->size && len <= e->size - off;
}

void psc_elf__close(struct psc_elf *e)
{
	if (e->map)
		munmap(e->map, e->size);
	e->map = NULL;
}

int psc_elf__open(const char *path, struct psc_elf *e)
{
	const Elf64_Ehdr *eh;
	struct stat st;
	int fd, err = 0;

	memset(e, 0, sizeof(*e));
	/*
	 * Regular files only, checked before open: opening a device can act (a watchdog starts
	 * on open) and a FIFO would block; O_NONBLOCK for one swapped in between.
	 */
	if (stat(path, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
	} else if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		err = -EINVAL;
	} else {
		e->size = (size_t)st.st_size;
		e->map = mmap(NULL, e->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (e->map == MAP_FAILED) {
			e->map = NULL;
			err = -errno;
		}
	}
	close(fd);
	if (err)
		return err;
	eh = e->map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_ident[EI_DATA] != ELFDATA2LSB || eh->e_machine != MY_MACHINE ||
	    (eh->e_shnum &&
	     (eh->e_shentsize != sizeof(Elf64_Shdr) ||
	      !in_file(e, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))) ||
	    (eh->e_phnum &&
	     (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	      !in_file(e, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr))))) {
		psc_elf__close(e);
		return -EINVAL;
	}
	e->eh = eh;
	return 0;
}

static const Elf64_Shdr *shdr(const struct psc_elf *e, unsigned int i)
{
	return (const Elf64_Shdr *)((const char *)e->map + e->eh->e_shoff) + i;
}

/* The symbol table to read: .symtab, or .dynsym when the file was stripped. */
static const Elf64_Shdr *sym_section(const struct psc_elf *e)
{
	const Elf64_Shdr *dyn = NULL;

	for (unsigned int i = 0; i < e->eh->e_shnum; i++) {
		const Elf64_Shdr *sh = shdr(e, i);

		if (sh->sh_type == SHT_SYMTAB)
			return sh;
		if (sh->sh_type == SHT_DYNSYM)
			dyn = sh;
	}
	return dyn;
}

int psc_elf__for_each_sym(const struct psc_elf *e,
			  int (*cb)(const char *name, const Elf64_Sym *sym, void *ctx), void *ctx)
{
	const Elf64_Shdr *sh = sym_section(e), *str;
	const Elf64_Sym *syms;
	const char *strtab;
	uint64_t n;

	if (!sh)
		return 0;
	if (sh->sh_link >= e->eh->e_shnum || sh->sh_entsize != sizeof(Elf64_Sym) ||
	    !in_file(e, sh->sh_offset, sh->sh_size))
		return -EINVAL;
	str = shdr(e, sh->sh_link);
	if (!in_file(e, str->sh_offset, str->sh_size) || !str->sh_size)
		return -EINVAL;
	syms = (const Elf64_Sym *)((const char *)e->map + sh->sh_offset);
	strtab = (const char *)e->map + str->sh_offset;
	n = sh->sh_size / sizeof(Elf64_Sym);
	for (uint64_t i = 0; i < n; i++) {
		const Elf64_Sym *s = &syms[i];
		int t = ELF64_ST_TYPE(s->st_info), ret;

		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    !s->st_value || s->st_name >= str->sh_size ||
		    !memchr(strtab + s->st_name, '\0', str->sh_size - s->st_name) ||
		    !strtab[s->st_name])
			continue;
		ret = cb(strtab + s->st_name, s, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int psc_elf__file_offset(const struct psc_elf *e, uint64_t vaddr, uint64_t *off)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)((const char *)e->map + e->eh->e_phoff);

	for (unsigned int i = 0; i < e->eh->e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || !(ph[i].p_flags & PF_X))
			continue;
		if (vaddr >= ph[i].p_vaddr && vaddr - ph[i].p_vaddr < ph[i].p_filesz) {
			*off = vaddr - ph[i].p_vaddr + ph[i].p_offset;
			return 0;
		}
	}
	return -ERANGE;
}

struct public_cb {
	int (*cb)(const char *name, uint64_t addr, uint64_t size, void *ctx);
	void *ctx;
};

static int call_public(const char *name, const Elf64_Sym *s, void *ctx)
{
	struct public_cb *pc = ctx;

	return pc->cb(name, s->st_value, s->st_size, pc->ctx);
}

int psc_probe__for_each_func(const char *path,
			     int (*cb)(const char *name, uint64_t addr, uint64_t size, void *ctx),
			     void *ctx)
{
	struct public_cb pc = { cb, ctx };
	struct psc_elf e;
	int err;

	if (!path || !cb)
		return -EINVAL;
	err = psc_elf__open(path, &e);
	if (err)
		return err;
	err = psc_elf__for_each_sym(&e, call_public, &pc);
	psc_elf__close(&e);
	return err;
}

/* An ELF64 file of this machine: what ld.so would accept for us. */
static bool loadable(const char *path)
{
	struct psc_elf e;

	if (psc_elf__open(path, &e))
		return false;
	psc_elf__close(&e);
	return true;
}

/*
 * /etc/ld.so.cache, glibc's "glibc-ld.so.cache1.1" format (alone, or after the old
 * "ld.so-1.7.0" table): entries of {int32 flags, u32 key, u32 value, u32 osversion, u64
 * hwcap} whose key and value are offsets of strings from the start of that header.
 */
#define CACHE_NEW "glibc-ld.so.cache1.1"
#define CACHE_OLD "ld.so-1.7.0"

static int from_cache(const char *cache, const char *name, char *buf, size_t len)
{
	struct psc_elf f = { 0 };
	const unsigned char *base;
	struct stat st;
	uint32_t nlibs;
	size_t off = 0;
	int fd, ret = -ENOENT;

	fd = open(cache, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 48) {
		f.size = (size_t)st.st_size;
		f.map = mmap(NULL, f.size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f.map == MAP_FAILED)
			f.map = NULL;
	}
	close(fd);
	if (!f.map)
		return -ENOENT;
	base = f.map;
	if (!memcmp(base, CACHE_OLD, sizeof(CACHE_OLD) - 1)) {
		memcpy(&nlibs, base + 12, 4);
		/* the old header (16 bytes) and its 12-byte entries, aligned to 8 */
		off = ((size_t)16 + (size_t)nlibs * 12 + 7) & ~(size_t)7;
	}
	if (!in_file(&f, off, 48) || memcmp(base + off, CACHE_NEW, sizeof(CACHE_NEW) - 1))
		goto out;
	memcpy(&nlibs, base + off + 20, 4);
	for (uint32_t i = 0; i < nlibs; i++) {
		size_t ent = off + 48 + (size_t)i * 24;
		uint32_t key, value;
		const char *k, *v;

		if (!in_file(&f, ent, 24))
			break;
		memcpy(&key, base + ent + 4, 4);
		memcpy(&value, base + ent + 8, 4);
		if (!in_file(&f, off + key, 1) || !in_file(&f, off + value, 1))
			continue;
		k = (const char *)base + off + key;
		v = (const char *)base + off + value;
		if (!memchr(k, '\0', f.size - off - key) || !memchr(v, '\0', f.size - off - value))
			continue;
		if (strcmp(k, name) || !loadable(v))
			continue;
		ret = psc_pathf(buf, len, "%s", v);
		break;
	}
out:
	munmap(f.map, f.size);
	return ret;
}

int psc_probe__find_binary(const char *name, char *buf, size_t len)
{
	static const char *const dirs[] = {
		"/lib64", "/usr/lib64", "/lib/" TRIPLET, "/usr/lib/" TRIPLET, "/lib", "/usr/lib",
	};
	char path[PATH_MAX];
	const char *env;
	int ret;

	if (!name || !*name || !buf)
		return -EINVAL;
	if (strchr(name, '/')) {
		if (access(name, F_OK))
			return -errno;
		return psc_pathf(buf, len, "%s", name);
	}
	ret = from_cache("/etc/ld.so.cache", name, buf, len);
	if (ret != -ENOENT)
		return ret;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!psc_pathf(path, sizeof(path), "%s/%s", dirs[i], name) && loadable(path))
			return psc_pathf(buf, len, "%s", path);
	/* a program, as the shell finds it */
	env = getenv("PATH");
	while (env && *env) {
		const char *colon = strchrnul(env, ':');

		if (colon > env &&
		    !psc_pathf(path, sizeof(path), "%.*s/%s", (int)(colon - env), env, name) &&
		    !access(path, X_OK) && loadable(path))
			return psc_pathf(buf, len, "%s", path);
		env = *colon ? colon + 1 : colon;
	}
	return -ENOENT;
}
