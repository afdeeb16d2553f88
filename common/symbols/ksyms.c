/* Kernel symbols from /proc/kallsyms: text symbols of vmlinux and modules, sorted for binary
 * search. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/kernel.h>

#include "bsearch.h"
#include "ksyms.h"

#define KERNEL_NAME "[kernel.kallsyms]"
/* kallsyms has no sizes: the last symbol of a run is given this much */
#define LAST_SYM_SIZE 4096

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *names; /* every name and module, NUL-separated */
	char problem[512];
	bool has_problem;
};

/* Symbols are parsed with name offsets into the growing names block, fixed up at the end. */
struct raw_sym {
	uint64_t addr;
	size_t name_off;
	size_t mod_off; /* (size_t)-1 for vmlinux */
	char type;
};

struct loader {
	struct raw_sym *syms;
	size_t nr, cap;
	char *names;
	size_t names_len, names_cap;
	size_t last_mod_off;
	char last_mod[64];
	bool data; /* data symbols (d/D/b/B) instead of text */
};

static int add_name(struct loader *l, const char *s, size_t len, size_t *off)
{
	if (l->names_len + len + 1 > l->names_cap) {
		size_t cap = l->names_cap ? l->names_cap * 2 : 1 << 20;
		char *n;

		while (cap < l->names_len + len + 1)
			cap *= 2;
		n = realloc(l->names, cap);
		if (!n)
			return -ENOMEM;
		l->names = n;
		l->names_cap = cap;
	}
	memcpy(l->names + l->names_len, s, len);
	l->names[l->names_len + len] = '\0';
	*off = l->names_len;
	l->names_len += len + 1;
	return 0;
}

static bool is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

/* Variables: a lock's name (percpu offsets, below the kernel half, are left out by the caller). */
static bool is_data(char type)
{
	return type == 'd' || type == 'D' || type == 'b' || type == 'B';
}

/* "ffffffff81000000 T _stext" or "ffffffffc0201000 t foo\t[module]" */
static int parse_line(struct loader *l, char *line, bool *zero_addr)
{
	char *end, *name, *mod;
	uint64_t addr;
	char type;
	struct raw_sym *rs;

	addr = strtoull(line, &end, 16);
	if (end == line || *end != ' ' || !end[1] || end[2] != ' ')
		return 0; /* not a symbol line */
	type = end[1];
	if (l->data ? !is_data(type) || !ksyms__is_kernel_addr(addr) : !is_text(type))
		return 0;
	if (!addr) {
		*zero_addr = true;
		return 0;
	}
	name = end + 3;
	name[strcspn(name, "\n")] = '\0';
	mod = strchr(name, '\t');
	if (mod)
		*mod++ = '\0';
	if (!*name)
		return 0;

	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 65536;
		struct raw_sym *n = realloc(l->syms, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		l->syms = n;
		l->cap = cap;
	}
	rs = &l->syms[l->nr];
	rs->addr = addr;
	rs->type = type;
	rs->mod_off = (size_t)-1;
	if (add_name(l, name, strlen(name), &rs->name_off))
		return -ENOMEM;
	if (mod && *mod == '[') {
		size_t len = strcspn(mod + 1, "]");

		/* module symbols come in runs: intern the module name once per run */
		if (len < sizeof(l->last_mod) && l->last_mod[0] &&
		    !strncmp(l->last_mod, mod + 1, len) && !l->last_mod[len]) {
			rs->mod_off = l->last_mod_off;
		} else {
			if (add_name(l, mod + 1, len, &rs->mod_off))
				return -ENOMEM;
			if (len < sizeof(l->last_mod)) {
				memcpy(l->last_mod, mod + 1, len);
				l->last_mod[len] = '\0';
				l->last_mod_off = rs->mod_off;
			}
		}
	}
	l->nr++;
	return 0;
}

/* Among symbols at one address, the one a person expects: global, then no leading '_'. */
static int rank(const struct raw_sym *s, const char *names)
{
	const char *n = names + s->name_off;
	int r = 0;

	if (s->type == 'T')
		r += 8;
	else if (s->type == 'W' || s->type == 'w')
		r += 4;
	if (n[0] != '_')
		r += 2;
	if (strncmp(n, "__pfx_", 6))
		r += 1;
	return r;
}

static const char *sort_names;

static int cmp_raw(const void *a, const void *b)
{
	const struct raw_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* best first, so dedup keeps it */
	return rank(y, sort_names) - rank(x, sort_names);
}

/*
 * Why /proc/kallsyms shows zeros (kernel/kallsyms.c, kallsyms_show_value): kptr_restrict 0 shows
 * addresses to CAP_SYSLOG and, when perf_event_paranoid <= 1, to everyone; 1 to CAP_SYSLOG only;
 * 2 to nobody, root included.
 */
void ksyms_hidden_reason(char *buf, size_t len, const char *path, int kptr, int paranoid)
{
	if (kptr >= 2)
		snprintf(
			buf, len,
			"kernel symbol addresses in %s read as 0: kernel.kptr_restrict=2 hides them "
			"from every process, root included, so kernel frames show raw addresses; to "
			"fix, sysctl -w kernel.kptr_restrict=1 and run as root (CAP_SYSLOG)",
			path);
	else if (kptr == 1)
		snprintf(
			buf, len,
			"kernel symbol addresses in %s read as 0: kernel.kptr_restrict=1 shows them "
			"only to processes with CAP_SYSLOG, so kernel frames show raw addresses; to "
			"fix, run as root (or with CAP_SYSLOG), or sysctl -w kernel.kptr_restrict=0 "
			"with kernel.perf_event_paranoid <= 1",
			path);
	else if (kptr == 0)
		snprintf(
			buf, len,
			"kernel symbol addresses in %s read as 0: with kernel.kptr_restrict=0 they "
			"are shown to processes with CAP_SYSLOG, or to all when "
			"kernel.perf_event_paranoid <= 1 (it is %d), so kernel frames show raw "
			"addresses; to fix, run as root (or with CAP_SYSLOG), or sysctl -w "
			"kernel.perf_event_paranoid=1",
			path, paranoid);
	else
		snprintf(buf, len,
			 "kernel symbol addresses in %s read as 0 (kernel.kptr_restrict hides them "
			 "from this process), so kernel frames show raw addresses; to fix, run as "
			 "root with kernel.kptr_restrict <= 1",
			 path);
}

static void set_problem(struct ksyms *ks, const char *path, bool zero_addr)
{
	ks->has_problem = true;
	if (zero_addr)
		ksyms_hidden_reason(ks->problem, sizeof(ks->problem), path,
					(int)psc_kernel__sysctl("kptr_restrict", INT_MIN),
					(int)psc_kernel__sysctl("perf_event_paranoid", INT_MIN));
	else
		snprintf(ks->problem, sizeof(ks->problem),
			 "%s lists no kernel text symbols, so kernel frames show raw addresses "
			 "(is CONFIG_KALLSYMS enabled?)",
			 path);
}

static struct ksyms *load(const char *path, bool data)
{
	struct loader l = { .data = data };
	struct ksyms *ks;
	bool zero_addr = false;
	char *line = NULL;
	size_t cap = 0, n = 0;
	FILE *f;
	int err = 0;

	if (!path)
		path = "/proc/kallsyms";
	f = fopen(path, "re");
	if (!f)
		return NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		fclose(f);
		errno = ENOMEM;
		return NULL;
	}
	while (getline(&line, &cap, f) > 0) {
		err = parse_line(&l, line, &zero_addr);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	if (err)
		goto fail;

	if (l.nr) {
		sort_names = l.names;
		qsort(l.syms, l.nr, sizeof(*l.syms), cmp_raw);
		sort_names = NULL;
		ks->syms = calloc(l.nr, sizeof(*ks->syms));
		if (!ks->syms) {
			err = -ENOMEM;
			goto fail;
		}
	}
	for (size_t i = 0; i < l.nr; i++) {
		const struct raw_sym *rs = &l.syms[i];
		struct ksym *s;

		if (n && ks->syms[n - 1].addr == rs->addr)
			continue; /* an alias of the previous (better ranked) symbol */
		s = &ks->syms[n++];
		s->addr = rs->addr;
		s->name = (const char *)rs->name_off;
		s->module = rs->mod_off == (size_t)-1 ? NULL : (const char *)rs->mod_off;
	}
	ks->nr = n;
	ks->names = l.names;
	l.names = NULL;
	for (size_t i = 0; i < n; i++) {
		struct ksym *s = &ks->syms[i];

		s->name = ks->names + (size_t)s->name;
		s->module = s->module ? ks->names + (size_t)s->module : KERNEL_NAME;
	}
	for (size_t i = 0; i < n; i++) {
		struct ksym *s = &ks->syms[i];

		/* a symbol ends where the next begins, unless the next is in another module */
		s->size = LAST_SYM_SIZE;
		if (i + 1 < n) {
			s->size = ks->syms[i + 1].addr - s->addr;
			if (strcmp(s->module, ks->syms[i + 1].module) && s->size > LAST_SYM_SIZE)
				s->size = LAST_SYM_SIZE;
		}
	}
	free(l.syms);
	if (!n)
		set_problem(ks, path, zero_addr);
	return ks;
fail:
	free(l.syms);
	free(l.names);
	ksyms__delete(ks);
	errno = -err;
	return NULL;
}

struct ksyms *ksyms__load(const char *path)
{
	return load(path, false);
}

struct ksyms *ksyms__load_data(const char *path)
{
	return load(path, true);
}

void ksyms__delete(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}

const char *ksyms__problem(const struct ksyms *ks)
{
	return ks && ks->has_problem ? ks->problem : NULL;
}

size_t ksyms__nr(const struct ksyms *ks)
{
	return ks ? ks->nr : 0;
}

const struct ksym *ksyms__find(const struct ksyms *ks, uint64_t addr, uint64_t *off)
{
	ptrdiff_t i = ks ? BSEARCH_LAST_LE(ks->syms, ks->nr, addr, addr) : -1;
	const struct ksym *s;

	if (i < 0)
		return NULL;
	s = &ks->syms[i];
	if (addr - s->addr >= s->size)
		return NULL;
	if (off)
		*off = addr - s->addr;
	return s;
}

const struct ksym *ksyms__lookup(const struct ksyms *ks, const char *name)
{
	const struct ksym *mod_hit = NULL;

	if (!ks || !name)
		return NULL;
	for (size_t i = 0; i < ks->nr; i++) {
		if (strcmp(ks->syms[i].name, name))
			continue;
		if (!strcmp(ks->syms[i].module, KERNEL_NAME))
			return &ks->syms[i];
		if (!mod_hit)
			mod_hit = &ks->syms[i];
	}
	return mod_hit;
}
