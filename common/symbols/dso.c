/* One ELF binary's function symbols: .symtab, separate debug files, MiniDebugInfo, .dynsym (libelf,
 * liblzma). */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bsearch.h"
#include "demangle.h"
#include "dso.h"

#define DEFAULT_DEBUG_DIR "/usr/lib/debug"
/* Symbols without a size (assembly) get up to the next symbol, at most this much. */
#define NOSIZE_MAX 4096
/* MiniDebugInfo is small; refuse to inflate anything absurd. */
#define DEBUGDATA_MAX (256u << 20)

/* Symbols are collected with name offsets into dso->strings (it grows), fixed up at the end. */
struct sym_build {
	struct usym *syms;
	size_t nr, cap;
	unsigned char *bind; /* STB_* per symbol, to prefer global names at one address */
};

static void elf_init_once(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

static int add_string(struct dso *dso, const char *s, size_t *off)
{
	size_t len = strlen(s) + 1;

	if (dso->strings_len + len > dso->strings_cap) {
		size_t cap = dso->strings_cap ? dso->strings_cap * 2 : 16384;
		char *n;

		while (cap < dso->strings_len + len)
			cap *= 2;
		n = realloc(dso->strings, cap);
		if (!n)
			return -ENOMEM;
		dso->strings = n;
		dso->strings_cap = cap;
	}
	memcpy(dso->strings + dso->strings_len, s, len);
	*off = dso->strings_len;
	dso->strings_len += len;
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *out)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want)) {
			if (out)
				*out = sh;
			return scn;
		}
	}
	return NULL;
}

static Elf_Scn *find_section_type(Elf *elf, GElf_Word type, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		if (gelf_getshdr(scn, out) && out->sh_type == type)
			return scn;
	}
	return NULL;
}

static int elf_read_build_id(Elf *elf, uint8_t *id, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp((char *)data->d_buf + name_off, "GNU", 4) && nh.n_descsz &&
			    nh.n_descsz <= len) {
				memcpy(id, (char *)data->d_buf + desc_off, nh.n_descsz);
				return (int)nh.n_descsz;
			}
		}
	}
	return -ENOENT;
}

int elf_build_id(const char *path, uint8_t *build_id, size_t len)
{
	int fd, ret;
	Elf *elf;

	elf_init_once();
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf) {
		close(fd);
		return -EINVAL;
	}
	ret = elf_read_build_id(elf, build_id, len);
	elf_end(elf);
	close(fd);
	return ret;
}

static int add_sym(struct dso *dso, struct sym_build *b, uint64_t addr, uint64_t size,
		   const char *name, unsigned char bind)
{
	size_t off;

	if (b->nr == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 1024;
		struct usym *n = realloc(b->syms, cap * sizeof(*n));
		unsigned char *nb;

		if (!n)
			return -ENOMEM;
		b->syms = n;
		nb = realloc(b->bind, cap);
		if (!nb)
			return -ENOMEM;
		b->bind = nb;
		b->cap = cap;
	}
	if (add_string(dso, name, &off))
		return -ENOMEM;
	b->syms[b->nr] = (struct usym){ .addr = addr, .size = size, .name = (const char *)off };
	b->bind[b->nr] = bind;
	b->nr++;
	return 0;
}

/* Function symbols of one SHT_SYMTAB/SHT_DYNSYM section. Returns how many, or -errno. */
static int read_symtab(struct dso *dso, struct sym_build *b, Elf *elf, Elf_Scn *scn,
		       const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n;
	int added = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_shndx == SHN_UNDEF ||
		    !sym.st_value)
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		if (add_sym(dso, b, sym.st_value, sym.st_size, name, GELF_ST_BIND(sym.st_info)))
			return -ENOMEM;
		added++;
	}
	return added;
}

static int read_symtab_of(struct dso *dso, struct sym_build *b, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section_type(elf, SHT_SYMTAB, &sh);

	return scn ? read_symtab(dso, b, elf, scn, &sh) : 0;
}

static void note_source(struct dso *dso, const char *what, const char *path)
{
	char buf[PATH_MAX + 64];
	size_t old = dso->sym_source ? strlen(dso->sym_source) : 0;
	char *n;

	snprintf(buf, sizeof(buf), "%s%s%s%s", old ? ", " : "", what, path ? " " : "",
		 path ? path : "");
	n = realloc(dso->sym_source, old + strlen(buf) + 1);
	if (!n)
		return;
	memcpy(n + old, buf, strlen(buf) + 1);
	dso->sym_source = n;
}

/* A separate debug file: open it as ELF, check the build-id matches when both have one. */
static Elf *open_debug_file(const struct dso *dso, const char *path, int *fdp)
{
	uint8_t id[BUILD_ID_MAX];
	int fd, n;
	Elf *elf;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return NULL;
	}
	n = elf_read_build_id(elf, id, sizeof(id));
	if (dso->build_id_size && n > 0 &&
	    (n != dso->build_id_size || memcmp(id, dso->build_id, (size_t)n))) {
		elf_end(elf);
		close(fd);
		return NULL; /* a debug file for another build */
	}
	*fdp = fd;
	return elf;
}

static int try_debug_file(struct dso *dso, struct sym_build *b, const char *path,
			  const char *what)
{
	int fd = -1, n;
	Elf *elf = open_debug_file(dso, path, &fd);

	if (!elf)
		return 0;
	n = read_symtab_of(dso, b, elf);
	elf_end(elf);
	close(fd);
	if (n > 0)
		note_source(dso, what, path);
	return n;
}

/* /usr/lib/debug/.build-id/ab/cdef....debug, then .gnu_debuglink next to the binary or under
 * debug_dir. */
static int read_separate_debug(struct dso *dso, struct sym_build *b, Elf *elf,
			       const char *real_path, const char *debug_dir)
{
	char path[PATH_MAX], dir[PATH_MAX];
	const char *slash;
	GElf_Shdr sh;
	Elf_Scn *scn;
	Elf_Data *data;
	const char *link;
	int n;

	if (dso->build_id_size) {
		int off = snprintf(path, sizeof(path), "%s/.build-id/%02x/", debug_dir,
				   dso->build_id[0]);

		for (int i = 1; i < dso->build_id_size && off < (int)sizeof(path) - 8; i++)
			off += snprintf(path + off, sizeof(path) - (size_t)off, "%02x",
					dso->build_id[i]);
		snprintf(path + off, sizeof(path) - (size_t)off, ".debug");
		n = try_debug_file(dso, b, path, "build-id");
		if (n)
			return n;
	}
	scn = find_section(elf, ".gnu_debuglink", &sh);
	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_size)
		return 0;
	link = data->d_buf;
	if (!memchr(link, '\0', data->d_size) || strchr(link, '/'))
		return 0;
	slash = strrchr(real_path, '/');
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - real_path) : 0, real_path);
	for (int i = 0; i < 3; i++) {
		/* next to the binary, in its .debug/, and under debug_dir mirroring its directory
		 */
		int len;

		if (i == 0)
			len = snprintf(path, sizeof(path), "%s/%s", dir, link);
		else if (i == 1)
			len = snprintf(path, sizeof(path), "%s/.debug/%s", dir, link);
		else
			len = snprintf(path, sizeof(path), "%s%s/%s", debug_dir, dir, link);
		if (len < 0 || len >= (int)sizeof(path))
			continue;
		if (!strcmp(path, real_path))
			continue;
		n = try_debug_file(dso, b, path, "debuglink");
		if (n)
			return n;
	}
	return 0;
}

/* Inflates an xz stream; the caller frees *out. */
static int xz_decode(const uint8_t *in, size_t in_len, uint8_t **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = in_len * 4 + 4096;
	uint8_t *buf = malloc(cap);
	lzma_ret r;

	if (!buf)
		return -ENOMEM;
	if (lzma_stream_decoder(&strm, UINT64_MAX, 0) != LZMA_OK) {
		free(buf);
		return -ENOMEM;
	}
	strm.next_in = in;
	strm.avail_in = in_len;
	strm.next_out = buf;
	strm.avail_out = cap;
	for (;;) {
		r = lzma_code(&strm, LZMA_FINISH);
		if (r == LZMA_STREAM_END)
			break;
		if (r != LZMA_OK && r != LZMA_BUF_ERROR)
			goto bad;
		if (strm.avail_out == 0) {
			size_t used = cap;
			uint8_t *nb;

			if (cap >= DEBUGDATA_MAX)
				goto bad;
			cap *= 2;
			nb = realloc(buf, cap);
			if (!nb)
				goto bad;
			buf = nb;
			strm.next_out = buf + used;
			strm.avail_out = cap - used;
		} else if (r == LZMA_BUF_ERROR) {
			goto bad; /* truncated input */
		}
	}
	*out_len = cap - strm.avail_out;
	*out = buf;
	lzma_end(&strm);
	return 0;
bad:
	lzma_end(&strm);
	free(buf);
	return -EINVAL;
}

/* .gnu_debugdata: an xz-compressed ELF holding the .symtab entries that .dynsym lacks. */
static int read_debugdata(struct dso *dso, struct sym_build *b, Elf *elf)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, ".gnu_debugdata", &sh);
	Elf_Data *data;
	uint8_t *raw = NULL;
	size_t raw_len = 0;
	Elf *mini;
	int n;

	if (!scn || sh.sh_type == SHT_NOBITS || !(data = elf_rawdata(scn, NULL)) || !data->d_size)
		return 0;
	if (xz_decode(data->d_buf, data->d_size, &raw, &raw_len))
		return 0;
	mini = elf_memory((char *)raw, raw_len);
	if (!mini) {
		free(raw);
		return 0;
	}
	n = elf_kind(mini) == ELF_K_ELF ? read_symtab_of(dso, b, mini) : 0;
	elf_end(mini);
	free(raw);
	if (n > 0)
		note_source(dso, ".gnu_debugdata", NULL);
	return n;
}

static int read_segments(struct dso *dso, Elf *elf)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return 0;
	dso->segs = calloc(n ? n : 1, sizeof(*dso->segs));
	if (!dso->segs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		dso->segs[dso->nr_segs++] = (struct dso_seg){ .offset = ph.p_offset,
								  .vaddr = ph.p_vaddr,
								  .filesz = ph.p_filesz };
	}
	return 0;
}

static int cmp_sym_idx(const void *a, const void *b, void *arg)
{
	const struct sym_build *sb = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	const struct usym *sx = &sb->syms[x], *sy = &sb->syms[y];
	int rx, ry;

	if (sx->addr != sy->addr)
		return sx->addr < sy->addr ? -1 : 1;
	/* at one address: global before weak before local, sized before unsized */
	rx = (sb->bind[x] == STB_GLOBAL ? 4 : sb->bind[x] == STB_WEAK ? 2 : 0) + !!sx->size;
	ry = (sb->bind[y] == STB_GLOBAL ? 4 : sb->bind[y] == STB_WEAK ? 2 : 0) + !!sy->size;
	if (rx != ry)
		return ry - rx;
	return x < y ? -1 : x > y;
}

/* Sorts, drops duplicates (the same function from .symtab and .dynsym), sizes unsized symbols. */
static int finish_syms(struct dso *dso, struct sym_build *b)
{
	size_t *idx, n = 0;

	if (!b->nr)
		return 0;
	idx = malloc(b->nr * sizeof(*idx));
	dso->syms = calloc(b->nr, sizeof(*dso->syms));
	if (!idx || !dso->syms) {
		free(idx);
		return -ENOMEM;
	}
	for (size_t i = 0; i < b->nr; i++)
		idx[i] = i;
	qsort_r(idx, b->nr, sizeof(*idx), cmp_sym_idx, b);
	for (size_t i = 0; i < b->nr; i++) {
		const struct usym *s = &b->syms[idx[i]];

		if (n && dso->syms[n - 1].addr == s->addr)
			continue;
		dso->syms[n] = *s;
		dso->syms[n].name = dso->strings + (size_t)s->name;
		n++;
	}
	free(idx);
	for (size_t i = 0; i < n; i++) {
		struct usym *s = &dso->syms[i];
		uint64_t gap = i + 1 < n ? dso->syms[i + 1].addr - s->addr : NOSIZE_MAX;

		if (!s->size)
			s->size = gap < NOSIZE_MAX ? gap : NOSIZE_MAX;
	}
	dso->nr_syms = n;
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* The vDSO is the same image in every process: read ours from memory. */
static Elf *open_vdso(void)
{
	const unsigned char *base = (const unsigned char *)getauxval(AT_SYSINFO_EHDR);
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
	size_t size;

	if (!base || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64)
		return NULL;
	/* the image ends with its section headers */
	size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	if (!eh->e_shoff || size > (1u << 20))
		return NULL;
	return elf_memory((char *)base, size);
}

static int load_elf(struct dso *dso, Elf *elf, const char *real_path,
		    const struct dso_opts *opts)
{
	const char *debug_dir = opts && opts->debug_dir ? opts->debug_dir : DEFAULT_DEBUG_DIR;
	struct sym_build b = { 0 };
	GElf_Shdr sh;
	Elf_Scn *scn;
	int n, err, id;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	id = elf_read_build_id(elf, dso->build_id, sizeof(dso->build_id));
	dso->build_id_size = id > 0 ? (uint8_t)id : 0;
	err = read_segments(dso, elf);
	if (err)
		return err;

	n = read_symtab_of(dso, &b, elf);
	if (n > 0)
		note_source(dso, ".symtab", NULL);
	if (!n && real_path)
		n = read_separate_debug(dso, &b, elf, real_path, debug_dir);
	if (!n)
		n = read_debugdata(dso, &b, elf);
	/* .dynsym last: duplicates of .symtab entries are dropped, what it adds is kept */
	scn = find_section_type(elf, SHT_DYNSYM, &sh);
	if (scn) {
		int d = read_symtab(dso, &b, elf, scn, &sh);

		if (d > 0)
			note_source(dso, ".dynsym", NULL);
		n = d < 0 ? d : n;
	}
	err = n < 0 ? n : finish_syms(dso, &b);
	free(b.syms);
	free(b.bind);
	return err;
}

struct dso *dso__load(const char *path, const char *open_path,
			      const struct dso_opts *opts)
{
	struct dso *dso;
	int fd = -1, err;
	Elf *elf;

	elf_init_once();
	dso = calloc(1, sizeof(*dso));
	if (!dso) {
		errno = ENOMEM;
		return NULL;
	}
	dso->path = strdup(path ? path : "");
	if (!dso->path) {
		free(dso);
		return NULL;
	}
	dso->short_name = base_name(dso->path);
	dso->demangle = !(opts && opts->no_demangle);

	if (!strcmp(dso->path, "[vdso]")) {
		elf = open_vdso();
	} else if (!open_path && dso->path[0] != '/') {
		dso->load_err = ENOENT; /* [heap], //anon, memfd: ... : no file to read */
		return dso;
	} else {
		fd = open(open_path ? open_path : dso->path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			dso->load_err = errno;
			return dso;
		}
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	}
	if (!elf) {
		dso->load_err = ENOEXEC;
		goto out;
	}
	err = load_elf(dso, elf, fd >= 0 ? (open_path ? open_path : dso->path) : NULL, opts);
	if (err == -ENOMEM) {
		elf_end(elf);
		if (fd >= 0)
			close(fd);
		dso__delete(dso);
		return NULL;
	}
	dso->load_err = -err;
	elf_end(elf);
out:
	if (fd >= 0)
		close(fd);
	return dso;
}

void dso__delete(struct dso *dso)
{
	if (!dso)
		return;
	for (size_t i = 0; i < dso->nr_syms; i++)
		if (dso->syms[i].demangled && dso->syms[i].demangled != dso->syms[i].name)
			free((char *)dso->syms[i].demangled);
	free(dso->syms);
	free(dso->segs);
	free(dso->strings);
	free(dso->sym_source);
	free(dso->path);
	free(dso);
}

const struct usym *dso__find(const struct dso *dso, uint64_t vaddr)
{
	ptrdiff_t i = dso ? BSEARCH_LAST_LE(dso->syms, dso->nr_syms, addr, vaddr) : -1;
	const struct usym *s;

	if (i < 0)
		return NULL;
	s = &dso->syms[i];
	return vaddr - s->addr < s->size ? s : NULL;
}

const char *dso__sym_name(const struct dso *dso, const struct usym *sym)
{
	struct usym *s = (struct usym *)sym; /* the lazily filled cache field */

	if (s->demangled)
		return s->demangled;
	s->demangled = s->name;
	if (dso->demangle && is_mangled(s->name)) {
		char *d = demangle_name(s->name);

		if (d)
			s->demangled = d;
	}
	return s->demangled;
}

bool dso__offset_to_vaddr(const struct dso *dso, uint64_t offset, uint64_t *vaddr)
{
	for (size_t i = 0; i < dso->nr_segs; i++) {
		const struct dso_seg *sg = &dso->segs[i];

		if (offset >= sg->offset && offset - sg->offset < sg->filesz) {
			*vaddr = offset - sg->offset + sg->vaddr;
			return true;
		}
	}
	return false;
}

const char *dso__build_id_hex(const struct dso *dso, char *buf, size_t len)
{
	size_t off = 0;

	if (!len)
		return buf;
	buf[0] = '\0';
	for (int i = 0; i < dso->build_id_size && off + 3 <= len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%02x", dso->build_id[i]);
	return buf;
}
