/* The event parser's uprobe:/uretprobe:/kprobe:/kretprobe: locations: FUNC[+OFF]@BINARY, the
 * binary resolved and the function looked up in its symbols (nothing is created here). */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <perfscope/probe.h>

#include "probe_internal.h"

static const char *const words[] = { "uprobe", "uretprobe", "kprobe", "kretprobe", "usdt" };

bool psc_evparse_is_probe_word(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strlen(words[i]) == len && !memcmp(s, words[i], len))
			return true;
	return false;
}

void psc_probe_spec__free(struct psc_probe_spec *probe)
{
	if (!probe)
		return;
	free(probe->func);
	free(probe->binary);
	free(probe->fetch_args);
	free(probe);
}

static bool is_end(char c)
{
	return !c || c == ',' || c == '}' || isspace((unsigned char)c);
}

/* A whole number in [s, s+len): decimal, 0x hex or 0 octal. */
static bool number(const char *s, size_t len, uint64_t *v)
{
	char buf[32], *end;

	if (!len || len >= sizeof(buf) || !isdigit((unsigned char)s[0]))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, 0);
	return !errno && !*end;
}

/* "..." at s[*p]: its text, *p after the closing quote; NULL + err when unterminated. */
static int quoted(struct psc_evparse *ps, const char *s, int *p, int *a, int *b)
{
	int q = *p, i = q + 1;

	while (s[i] && s[i] != '"')
		i++;
	if (!s[i])
		return psc_evparse_fail(ps, -EINVAL, q, "unterminated \" here; close it with \"");
	*a = q + 1;
	*b = i;
	*p = i + 1;
	return 0;
}

struct lookup {
	const char *func;
	const Elf64_Sym *found;
	bool global;
	struct psc_suggest sg;
};

static int find_func(const char *name, const Elf64_Sym *sym, void *ctx)
{
	struct lookup *l = ctx;
	bool global = ELF64_ST_BIND(sym->st_info) != STB_LOCAL;

	if (!strcmp(name, l->func)) {
		/* a global definition over a file-local one of the same name */
		if (!l->found || (global && !l->global)) {
			l->found = sym;
			l->global = global;
		}
		return 0;
	}
	psc_suggest__add(&l->sg, name, NULL);
	return 0;
}

static int resolve_uprobe(struct psc_evparse *ps, struct psc_probe_spec *pr, const char *typed,
			  int bin_pos, int func_pos)
{
	char path[PATH_MAX], hint[400];
	struct lookup l = { .func = pr->func };
	struct psc_elf e;
	uint64_t off;
	int err;

	err = psc_probe__find_binary(typed, path, sizeof(path));
	if (err == -ENAMETOOLONG)
		return psc_evparse_fail(ps, err, bin_pos, "the path of '%s' is too long", typed);
	if (err)
		return psc_evparse_fail(
			ps, -ENOENT, bin_pos, "no binary '%s': %s%s", typed, strerror(-err),
			strchr(typed, '/')
				? " (quote a path that a filter follows: @\"/path\"/FILTER/)"
				: " (a name without '/' is a library found as ld.so finds "
				  "it, or a program in $PATH)");
	if (strpbrk(path, " \t\n"))
		return psc_evparse_fail(
			ps, -EINVAL, bin_pos,
			"the kernel takes no uprobe on a path with white space: '%s'", path);
	err = psc_elf__open(path, &e);
	if (err)
		return psc_evparse_fail(
			ps, err == -EINVAL ? -EINVAL : -ENOENT, bin_pos,
			err == -EINVAL
				? "'%s' is no ELF64 file of this machine; a uprobe goes into an executable or a shared library"
				: "cannot read '%s': %s",
			path, strerror(-err));
	psc_suggest__init(&l.sg, pr->func, strlen(pr->func));
	err = psc_elf__for_each_sym(&e, find_func, &l);
	if (!err && !l.found) {
		psc_suggest__format(&l.sg, hint, sizeof(hint));
		err = psc_evparse_fail(ps, -ENOENT, func_pos, "no function '%s' in %s%s", pr->func,
				       path, hint);
	} else if (err) {
		err = psc_evparse_fail(ps, err, bin_pos, "cannot read the symbols of %s: %s", path,
				       strerror(-err));
	} else if (l.found->st_size && pr->offset >= l.found->st_size) {
		err = psc_evparse_fail(ps, -EINVAL, func_pos,
				       "+%#llx is past the end of %s (%llu bytes)",
				       (unsigned long long)pr->offset, pr->func,
				       (unsigned long long)l.found->st_size);
	} else if (psc_elf__file_offset(&e, l.found->st_value + pr->offset, &off)) {
		err = psc_evparse_fail(ps, -EINVAL, func_pos,
				       "%s in %s is in no executable segment of the file", pr->func,
				       path);
	} else {
		pr->file_offset = off;
		pr->binary = strdup(path);
		if (!pr->binary)
			err = psc_evparse_fail(ps, -ENOMEM, bin_pos, "out of memory");
	}
	psc_elf__close(&e);
	return err;
}

static int kprobes_here(struct psc_evparse *ps, int pos)
{
	char path[PATH_MAX];
	struct stat st;

	/* the kprobe PMU exists exactly when the kernel has kprobe events */
	if (!psc_pathf(path, sizeof(path), "%s/kprobe", ps->pmu_dir) && !stat(path, &st))
		return 0;
	return psc_evparse_fail(
		ps, -EOPNOTSUPP, pos,
		"this kernel has no kprobes (no %s: it was built without CONFIG_KPROBE_EVENTS); "
		"use a tracepoint, or a uprobe for user-space functions",
		path);
}

int psc_evparse_probe(struct psc_evparse *ps, const char *s, int start, int head_end, int *pos,
		      struct psc_event_spec *spec)
{
	bool user = s[start] == 'u', ret = s[start + 1] == 'r'; /* uRetprobe, kRetprobe */
	int p = head_end + 1, fa = p, fb = p, ba = 0, bb = 0, off_pos = -1, err;
	struct psc_probe_spec *pr;
	char *typed = NULL;

	if (user && s[start + 1] == 's')
		return psc_evparse_usdt(ps, s, start, head_end, pos, spec);
	spec->kind = user ? PSC_EVENT_UPROBE : PSC_EVENT_KPROBE;
	pr = spec->probe = calloc(1, sizeof(*pr));
	if (!pr)
		return psc_evparse_fail(ps, -ENOMEM, start, "out of memory");
	pr->retprobe = ret;
	if (!user && (err = kprobes_here(ps, start)))
		return err;
	/* FUNC, or "FUNC" for names with '@', '+' or ',' (C++) */
	if (s[p] == '"') {
		if ((err = quoted(ps, s, &p, &fa, &fb)))
			return err;
	} else {
		fa = p;
		while (!is_end(s[p]) && !strchr("@+/", s[p]))
			p++;
		fb = p;
	}
	if (fb == fa)
		return psc_evparse_fail(ps, -EINVAL, fa,
					"expected a function after '%.*s:', as in %s",
					head_end - start, s + start,
					user ? "uprobe:malloc@libc.so.6" : "kprobe:do_sys_openat2");
	pr->func = strndup(s + fa, (size_t)(fb - fa));
	if (!pr->func)
		return psc_evparse_fail(ps, -ENOMEM, fa, "out of memory");
	if (s[p] == '+') {
		int a = ++p;

		while (isalnum((unsigned char)s[p]))
			p++;
		off_pos = a;
		if (!number(s + a, (size_t)(p - a), &pr->offset))
			return psc_evparse_fail(ps, -EINVAL, a,
						"expected an offset after '+', as in %s+0x10",
						pr->func);
	}
	if (!user) {
		if (s[p] == '@')
			return psc_evparse_fail(ps, -EINVAL, p,
						"a kprobe is in the kernel: no '@BINARY' (that is "
						"uprobe:FUNC@BINARY)");
		if (ret && pr->offset)
			return psc_evparse_fail(
				ps, -EINVAL, off_pos,
				"a kretprobe goes on a function's return: no offset");
	} else {
		if (s[p] != '@')
			return psc_evparse_fail(ps, -EINVAL, p,
						"expected '@BINARY' after the function, as in "
						"%.*s:%s@libc.so.6",
						head_end - start, s + start, pr->func);
		p++;
		if (s[p] == '"') {
			if ((err = quoted(ps, s, &p, &ba, &bb)))
				return err;
		} else {
			bool path = s[p] == '/' || s[p] == '.';

			/*
			 * a path runs to "//" (no filter) or the end; a name to its first '/';
			 * both end at ':' (modifiers, refused after)
			 */
			ba = p;
			while (!is_end(s[p]) && s[p] != ':' &&
			       !(s[p] == '/' && (!path || s[p + 1] == '/')))
				p++;
			bb = p;
			for (int i = bb - 1; i > ba; i--) {
				uint64_t v;

				if (s[i] != '+')
					continue;
				if (number(s + i + 1, (size_t)(bb - i - 1), &v)) {
					if (off_pos >= 0)
						return psc_evparse_fail(ps, -EINVAL, i,
									"two offsets; give one, "
									"FUNC+OFF@BINARY");
					pr->offset = v;
					off_pos = i + 1;
					bb = i;
				}
				break;
			}
		}
		if (bb == ba)
			return psc_evparse_fail(ps, -EINVAL, ba,
						"expected a binary after '@': a path or a library "
						"name, as in %s@libc.so.6",
						pr->func);
		if (ret && pr->offset)
			return psc_evparse_fail(
				ps, -EINVAL, off_pos,
				"a uretprobe goes on a function's return: no offset");
		typed = strndup(s + ba, (size_t)(bb - ba));
		if (!typed)
			return psc_evparse_fail(ps, -ENOMEM, ba, "out of memory");
		err = resolve_uprobe(ps, pr, typed, ba, fa);
		if (err) {
			free(typed);
			return err;
		}
	}
	if (user ? asprintf(&spec->name, "%.*s:%s%s%.0llx@%s", head_end - start, s + start,
			    pr->func, pr->offset ? "+0x" : "", (unsigned long long)pr->offset,
			    typed) < 0
		 : asprintf(&spec->name, "%.*s:%s%s%.0llx", head_end - start, s + start, pr->func,
			    pr->offset ? "+0x" : "", (unsigned long long)pr->offset) < 0)
		spec->name = NULL;
	free(typed);
	if (!spec->name)
		return psc_evparse_fail(ps, -ENOMEM, start, "out of memory");
	*pos = p;
	return 0;
}
