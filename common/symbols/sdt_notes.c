/* USDT probes of an ELF file: libelf reads the .note.stapsdt notes; their SDT argument specs
 * become uprobe_events fetch arguments where the kernel can fetch them. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdt_notes.h"

#define NT_STAPSDT 3

/* The file offset of vaddr, through the PT_LOAD that maps it from the file. */
static int vaddr_off(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ERANGE;
}

/* One note's descriptor: pc, base, semaphore (words of the file's class), then three strings. */
static int note_parse(Elf *elf, const char *desc, size_t len, int64_t base_shift,
		      struct usdt_note *n)
{
	size_t w = gelf_getclass(elf) == ELFCLASS32 ? 4 : 8, at = 3 * w;
	uint64_t v[3] = { 0 };
	const char *s[3];

	if (len < at)
		return -EINVAL;
	for (int i = 0; i < 3; i++) {
		uint32_t v32;

		if (w == 4) {
			memcpy(&v32, desc + i * w, 4);
			v[i] = v32;
		} else {
			memcpy(&v[i], desc + i * w, 8);
		}
	}
	for (int i = 0; i < 3; i++) {
		const char *end = memchr(desc + at, '\0', len - at);

		if (!end)
			return -EINVAL;
		s[i] = desc + at;
		at = (size_t)(end - desc) + 1;
	}
	n->provider = s[0];
	n->name = s[1];
	n->args = s[2];
	n->pc = v[0];
	n->base = v[1];
	n->sem = v[2];
	/* a prelinked file moved .stapsdt.base: pc and semaphore moved with it */
	if (vaddr_off(elf, v[0] + (uint64_t)base_shift, &n->pc_off))
		return -ERANGE;
	n->sem_off = 0;
	if (v[2] && vaddr_off(elf, v[2] + (uint64_t)base_shift, &n->sem_off))
		return -ERANGE;
	return 0;
}

static int notes_walk(Elf *elf, int (*cb)(const struct usdt_note *n, void *ctx), void *ctx,
		      int *skipped)
{
	Elf_Scn *scn = NULL, *notes[64];
	uint64_t base_addr = 0;
	size_t shstrndx;
	int nr = 0, ret = 0;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".stapsdt.base"))
			base_addr = sh.sh_addr;
		else if (sh.sh_type == SHT_NOTE && !strcmp(name, ".note.stapsdt") && nr < 64)
			notes[nr++] = scn;
	}
	for (int i = 0; i < nr && !ret; i++) {
		Elf_Data *d = elf_getdata(notes[i], NULL);
		size_t off = 0, next, name_off, desc_off;
		GElf_Nhdr nh;

		while (d && !ret && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			struct usdt_note n;
			uint64_t base;
			int err;

			off = next;
			if (nh.n_type != NT_STAPSDT || nh.n_namesz != 8 ||
			    memcmp((char *)d->d_buf + name_off, "stapsdt", 8))
				continue;
			memset(&n, 0, sizeof(n));
			err = note_parse(elf, (char *)d->d_buf + desc_off, nh.n_descsz, 0, &n);
			if (!err && base_addr && n.base != base_addr) {
				base = n.base;
				err = note_parse(elf, (char *)d->d_buf + desc_off, nh.n_descsz,
						 (int64_t)(base_addr - base), &n);
			}
			if (err) {
				if (skipped)
					(*skipped)++;
				continue;
			}
			ret = cb(&n, ctx);
		}
	}
	return ret;
}

int usdt__for_each(const char *path, int (*cb)(const struct usdt_note *n, void *ctx), void *ctx,
		   int *skipped)
{
	Elf *elf;
	int fd, ret;

	if (skipped)
		*skipped = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		ret = -EINVAL;
	else
		ret = notes_walk(elf, cb, ctx, skipped);
	elf_end(elf);
	close(fd);
	return ret;
}

/* x86-64's registers by any of their widths, as uprobe_events names them. */
static const char *const regs[][5] = {
	{ "ax", "rax", "eax", "ax", "al" },	  { "bx", "rbx", "ebx", "bx", "bl" },
	{ "cx", "rcx", "ecx", "cx", "cl" },	  { "dx", "rdx", "edx", "dx", "dl" },
	{ "si", "rsi", "esi", "si", "sil" },	  { "di", "rdi", "edi", "di", "dil" },
	{ "bp", "rbp", "ebp", "bp", "bpl" },	  { "sp", "rsp", "esp", "sp", "spl" },
	{ "r8", "r8", "r8d", "r8w", "r8b" },	  { "r9", "r9", "r9d", "r9w", "r9b" },
	{ "r10", "r10", "r10d", "r10w", "r10b" }, { "r11", "r11", "r11d", "r11w", "r11b" },
	{ "r12", "r12", "r12d", "r12w", "r12b" }, { "r13", "r13", "r13d", "r13w", "r13b" },
	{ "r14", "r14", "r14d", "r14w", "r14b" }, { "r15", "r15", "r15d", "r15w", "r15b" },
};

static const char *reg_name(const char *s, size_t len)
{
#if defined(__x86_64__)
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		for (int k = 1; k < 5; k++)
			if (strlen(regs[i][k]) == len && !memcmp(regs[i][k], s, len))
				return regs[i][0];
#endif
	return NULL;
}

int usdt__fetch_arg(const char *arg, size_t len, char *buf, size_t buflen, size_t *loc_len)
{
	const char *at = memchr(arg, '@', len), *op, *end = arg + len, *r;
	char *e, size_buf[8], loc[64];
	bool sign = arg[0] == '-';
	long size, disp = 0;
	int n;

	if (!at || at - arg >= (long)sizeof(size_buf))
		return -EINVAL;
	memcpy(size_buf, arg, (size_t)(at - arg));
	size_buf[at - arg] = '\0';
	size = labs(strtol(size_buf, &e, 10));
	if (*e || (size != 1 && size != 2 && size != 4 && size != 8))
		return -EINVAL;
	op = at + 1;
	if (op < end && *op == '$') { /* an immediate */
		n = snprintf(loc, sizeof(loc), "\\%.*s", (int)(end - op - 1), op + 1);
	} else if (op < end && *op == '%') { /* a register */
		if (!(r = reg_name(op + 1, (size_t)(end - op - 1))))
			return -EOPNOTSUPP;
		n = snprintf(loc, sizeof(loc), "%%%s", r);
	} else { /* DISP(%REG): memory; DISP(%rip), (%a,%b,s) and symbols are not fetchable */
		const char *open = memchr(op, '(', (size_t)(end - op));

		if (!open || end[-1] != ')' || open[1] != '%')
			return open ? -EOPNOTSUPP : -EINVAL;
		if (open > op) {
			char d[24];

			if (open - op >= (long)sizeof(d))
				return -EOPNOTSUPP;
			memcpy(d, op, (size_t)(open - op));
			d[open - op] = '\0';
			disp = strtol(d, &e, 0);
			if (*e)
				return -EOPNOTSUPP;
		}
		if (!(r = reg_name(open + 2, (size_t)(end - open - 3))))
			return -EOPNOTSUPP;
		n = snprintf(loc, sizeof(loc), "%+ld(%%%s)", disp, r);
	}
	if (n < 0 || (size_t)n >= sizeof(loc))
		return -EINVAL;
	if (loc_len)
		*loc_len = (size_t)n;
	n = snprintf(buf, buflen, "%s:%c%ld", loc, sign ? 's' : 'u', size * 8);
	return n < 0 || (size_t)n >= buflen ? -ENAMETOOLONG : 0;
}

int usdt__fetch_args(const struct usdt_note *n, const char *user, char *buf, size_t len,
		     int *dropped)
{
	char one[96], locs[16][96];
	const char *a = n->args;
	int nr = 0, used = 0;
	size_t at = 0;

	*dropped = 0;
	buf[0] = '\0';
	/* the SDT arguments, split at white space */
	while (*a && nr < 16) {
		size_t l, loc_len = 0;

		while (isspace((unsigned char)*a))
			a++;
		l = strcspn(a, " \t");
		if (!l)
			break;
		if (usdt__fetch_arg(a, l, one, sizeof(one), &loc_len)) {
			locs[nr][0] = '\0'; /* unfetchable */
		} else {
			memcpy(locs[nr], one, sizeof(one));
			if (user)
				locs[nr][loc_len] = '\0';
		}
		nr++;
		a += l;
	}
	if (!user) {
		for (int i = 0; i < nr; i++) {
			int w;

			if (!locs[i][0]) {
				(*dropped)++;
				continue;
			}
			w = snprintf(buf + at, len - at, "%sarg%d=%s", at ? " " : "", i + 1,
				     locs[i]);
			if (w < 0 || (size_t)w >= len - at)
				return -ENAMETOOLONG;
			at += (size_t)w;
		}
		return 0;
	}
	for (const char *u = user; *u; u++) {
		const char *piece = NULL;
		char c[2] = { *u, 0 };

		if (u[0] == '%' && u[1] == 's') {
			if (used >= nr)
				return -EINVAL;
			if (!locs[used][0])
				return -EOPNOTSUPP;
			piece = locs[used++];
			u++;
		} else {
			piece = c;
		}
		if (strlen(piece) >= len - at)
			return -ENAMETOOLONG;
		memcpy(buf + at, piece, strlen(piece) + 1);
		at += strlen(piece);
	}
	return 0;
}

struct usdt_find {
	const char *provider, *name;
	struct psc_probe_spec *probe;
	int found, err;
	char names[300];
};

static int usdt_find_one(const struct usdt_note *n, void *ctx)
{
	struct usdt_find *f = ctx;
	char args[1024];
	int dropped;
	size_t l = strlen(f->names);

	if (strcmp(n->provider, f->provider) || strcmp(n->name, f->name)) {
		if (l < sizeof(f->names) - 1)
			snprintf(f->names + l, sizeof(f->names) - l, "%s%s:%s", l ? ", " : "",
				 n->provider, n->name);
		return 0;
	}
	if (f->found++)
		return 0; /* the first of a name that recurs, as perf-prof takes it */
	f->err = usdt__fetch_args(n, NULL, args, sizeof(args), &dropped);
	if (f->err)
		return 1;
	f->probe->file_offset = n->pc_off;
	f->probe->ref_ctr_offset = n->sem_off;
	f->probe->fetch_args = strdup(args);
	if (!f->probe->fetch_args)
		f->err = -ENOMEM;
	return 0;
}

int usdt__find(const char *path, const char *provider, const char *name,
	       struct psc_probe_spec *probe, char *msg, size_t msg_len, void *ctx)
{
	struct usdt_find f = { .provider = provider, .name = name, .probe = probe };
	int err = usdt__for_each(path, usdt_find_one, &f, NULL);

	if (err < 0 || f.err) {
		err = err < 0 ? err : f.err;
		snprintf(msg, msg_len, "cannot read the SDT notes of %s: %s", path,
			 err == -EINVAL ? "no ELF file" : strerror(-err));
		return err;
	}
	if (!f.found) {
		snprintf(msg, msg_len, "no USDT probe %s:%s in %s (%s%s)", provider, name, path,
			 f.names[0] ? "it has " : "it has none",
			 f.names[0] ? f.names : "; see perfscope usdt list");
		return -ENOENT;
	}
	return 0;
}
