/* PMU events for the parser: pmu/term=val,alias/ encoded through sysfs type, format/ and events/
 * files. */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_internal.h"

#define NAME_MAX_LEN 128

/* PMU, term and alias names: what sysfs uses ([A-Za-z0-9_.-]), never "." or "..". */
static bool valid_name(const char *s, size_t len)
{
	if (!len || len >= NAME_MAX_LEN || s[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

/* Reads a small sysfs file into buf, trailing newline removed. -errno on failure. */
static int read_small(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

bool psc_evparse_pmu_exists(struct psc_evparse *p, const char *pmu, size_t len)
{
	char path[PATH_MAX];
	struct stat st;

	if (!valid_name(pmu, len))
		return false;
	psc_pathf(path, sizeof(path), "%s/%.*s/type", p->pmu_dir, (int)len, pmu);
	return !stat(path, &st);
}

/* A format term: which config word it fills and at which bits, from "config1:0-7,21". */
struct pmu_format {
	int word; /* 0: config, 1: config1, 2: config2 */
	uint64_t mask;
};

static int parse_format(const char *text, struct pmu_format *f)
{
	const char *s = text;
	char *end;

	f->mask = 0;
	if (!strncmp(s, "config2:", 8)) {
		f->word = 2;
		s += 8;
	} else if (!strncmp(s, "config1:", 8)) {
		f->word = 1;
		s += 8;
	} else if (!strncmp(s, "config:", 7)) {
		f->word = 0;
		s += 7;
	} else {
		return -EINVAL;
	}
	for (;;) {
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		lo = strtoul(s, &end, 10);
		hi = lo;
		s = end;
		if (*s == '-') {
			s++;
			if (!isdigit((unsigned char)*s))
				return -EINVAL;
			hi = strtoul(s, &end, 10);
			s = end;
		}
		if (lo > hi || hi > 63)
			return -EINVAL;
		for (unsigned long b = lo; b <= hi; b++)
			f->mask |= 1ULL << b;
		if (*s == '\0')
			return 0;
		if (*s != ',')
			return -EINVAL;
		s++;
	}
}

/* Spreads val over the set bits of mask, lowest first; false when val needs more bits. */
static bool deposit(uint64_t mask, uint64_t val, uint64_t *out)
{
	uint64_t r = 0;

	for (int b = 0; b < 64 && val; b++) {
		if (!(mask & (1ULL << b)))
			continue;
		if (val & 1)
			r |= 1ULL << b;
		val >>= 1;
	}
	if (val)
		return false;
	*out = r;
	return true;
}

static __u64 *config_word(struct perf_event_attr *attr, int word)
{
	return word == 0 ? &attr->config : word == 1 ? &attr->config1 : &attr->config2;
}

/* Decimal or 0x hex, nothing else; false on junk or overflow. */
static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	char buf[32], *end;

	if (!len || len >= sizeof(buf) || !isdigit((unsigned char)s[0]))
		return false;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 0);
	return !errno && *end == '\0';
}

/* Lists the format terms and aliases of a PMU into buf for "expected one of" messages. */
static void list_terms(struct psc_evparse *p, const char *pmu, char *buf, size_t len)
{
	static const char *const sub[] = { "format", "events" };
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < 2; i++) {
		char path[PATH_MAX];
		struct dirent *de;
		DIR *d;

		psc_pathf(path, sizeof(path), "%s/%s/%s", p->pmu_dir, pmu, sub[i]);
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d)) && off < len) {
			if (de->d_name[0] == '.' || strchr(de->d_name, '.'))
				continue;
			off += (size_t)snprintf(buf + off, len - off, "%s%s", off ? ", " : "",
						de->d_name);
		}
		closedir(d);
	}
}

static int unknown_term(struct psc_evparse *p, const char *pmu, const char *term, size_t len,
			int pos)
{
	char terms[256], hint[300];
	struct psc_suggest s;
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;

	psc_suggest__init(&s, term, len);
	for (int i = 0; i < 2; i++) {
		psc_pathf(path, sizeof(path), "%s/%s/%s", p->pmu_dir, pmu, i ? "events" : "format");
		d = opendir(path);
		if (!d)
			continue;
		while ((de = readdir(d)))
			if (de->d_name[0] != '.' && !strchr(de->d_name, '.'))
				psc_suggest__add(&s, de->d_name, NULL);
		closedir(d);
	}
	psc_suggest__format(&s, hint, sizeof(hint));
	list_terms(p, pmu, terms, sizeof(terms));
	return psc_evparse_fail(
		p, -ENOENT, pos,
		"PMU '%s' has no term or event '%.*s'%s; expected config, config1, config2, period, freq%s%s",
		pmu, (int)len, term, hint, terms[0] ? ", " : "", terms);
}

struct term_ctx {
	struct psc_evparse *p;
	const char *pmu;
	struct psc_event_spec *spec;
	const char *alias_file; /* set while expanding an alias: errors name the sysfs file */
	int alias_pos; /* where the alias is in the input */
	int nr_aliases;
	char last_alias[NAME_MAX_LEN];
};

static int apply_terms(struct term_ctx *c, const char *terms, size_t len, int pos);

/* pos of a term for errors: inside the input, or the alias that brought it in. */
#define TERM_POS(c, off) ((c)->alias_file ? (c)->alias_pos : (int)(off))

static int apply_alias(struct term_ctx *c, const char *name, size_t len, int pos)
{
	char path[PATH_MAX], text[512], extra[64];
	struct psc_event_spec *spec = c->spec;
	int err;

	if (c->alias_file)
		return -ENOENT; /* aliases do not nest */
	psc_pathf(path, sizeof(path), "%s/%s/events/%.*s", c->p->pmu_dir, c->pmu, (int)len, name);
	if (read_small(path, text, sizeof(text)))
		return -ENOENT;
	c->alias_file = path;
	c->alias_pos = pos;
	err = apply_terms(c, text, strlen(text), pos);
	c->alias_file = NULL;
	if (err)
		return err;
	c->nr_aliases++;
	snprintf(c->last_alias, sizeof(c->last_alias), "%.*s", (int)len, name);

	psc_pathf(extra, sizeof(extra), "%.*s", (int)len, name);
	psc_pathf(path, sizeof(path), "%s/%s/events/%s.scale", c->p->pmu_dir, c->pmu, extra);
	if (!read_small(path, text, sizeof(text))) {
		char *end;
		double v = strtod(text, &end);

		if (end == text || *end || !(v > 0) || !isfinite(v))
			return psc_evparse_fail(c->p, -EINVAL, pos,
						"%s holds '%s', not a positive scale", path, text);
		spec->scale = v;
	}
	psc_pathf(path, sizeof(path), "%s/%s/events/%s.unit", c->p->pmu_dir, c->pmu, extra);
	if (!read_small(path, text, sizeof(text)) && text[0]) {
		free(spec->unit);
		spec->unit = strdup(text);
		if (!spec->unit)
			return psc_evparse_fail(c->p, -ENOMEM, pos, "out of memory");
	}
	return 0;
}

static int set_format(struct term_ctx *c, const char *name, size_t len, uint64_t val, bool has_val,
		      int name_pos)
{
	char path[PATH_MAX], text[256];
	struct pmu_format f;
	uint64_t bits;
	__u64 *word;
	int pos = TERM_POS(c, name_pos);

	psc_pathf(path, sizeof(path), "%s/%s/format/%.*s", c->p->pmu_dir, c->pmu, (int)len, name);
	if (read_small(path, text, sizeof(text)))
		return -ENOENT;
	if (parse_format(text, &f))
		return psc_evparse_fail(
			c->p, -EINVAL, pos,
			"%s holds '%s'; expected configN:BITS such as 'config:0-7,21'", path, text);
	if (!has_val)
		val = 1;
	if (!deposit(f.mask, val, &bits))
		return psc_evparse_fail(
			c->p, -EINVAL, pos,
			"value %#llx does not fit term '%.*s' of PMU '%s' (%d bits: %s)",
			(unsigned long long)val, (int)len, name, c->pmu,
			__builtin_popcountll(f.mask), text);
	word = config_word(&c->spec->attr, f.word);
	*word = (*word & ~f.mask) | bits;
	return 0;
}

static int apply_term(struct term_ctx *c, const char *t, size_t len, int pos)
{
	const char *eq = memchr(t, '=', len);
	size_t nlen = eq ? (size_t)(eq - t) : len;
	const char *v = eq ? eq + 1 : NULL;
	size_t vlen = eq ? len - nlen - 1 : 0;
	struct perf_event_attr *attr = &c->spec->attr;
	uint64_t val = 0;
	int err;

	if (!len && c->alias_file)
		return psc_evparse_fail(c->p, -EINVAL, c->alias_pos, "%s has an empty term",
					c->alias_file);
	if (!len)
		return psc_evparse_fail(
			c->p, -EINVAL, pos,
			"empty PMU term; expected TERM=VALUE or an event name between ','");
	if (!valid_name(t, nlen))
		return psc_evparse_fail(
			c->p, -EINVAL, TERM_POS(c, pos),
			"bad PMU term '%.*s'%s%s; expected TERM=VALUE with letters, digits, '_', '-' or '.'",
			(int)len, t, c->alias_file ? " in " : "",
			c->alias_file ? c->alias_file : "");
	if (eq && !parse_u64(v, vlen, &val))
		return psc_evparse_fail(
			c->p, -EINVAL, TERM_POS(c, pos + (int)nlen + 1),
			"bad value '%.*s' for PMU term '%.*s'%s%s; expected a decimal or 0x hex number",
			(int)vlen, v, (int)nlen, t, c->alias_file ? " in " : "",
			c->alias_file ? c->alias_file : "");

	/* perf's generic terms, valid for every PMU. */
	if ((nlen == 6 && !memcmp(t, "config", 6)) || (nlen == 7 && !memcmp(t, "config1", 7)) ||
	    (nlen == 7 && !memcmp(t, "config2", 7))) {
		if (!eq)
			return psc_evparse_fail(c->p, -EINVAL, TERM_POS(c, pos + (int)len),
						"'%.*s' needs a value: %.*s=NUMBER", (int)nlen, t,
						(int)nlen, t);
		*config_word(attr, nlen == 6 ? 0 : t[6] - '0') = val;
		return 0;
	}
	if ((nlen == 6 && !memcmp(t, "period", 6)) || (nlen == 4 && !memcmp(t, "freq", 4))) {
		if (!eq || !val)
			return psc_evparse_fail(c->p, -EINVAL, TERM_POS(c, pos + (int)len),
						"'%.*s' needs a positive value: %.*s=NUMBER",
						(int)nlen, t, (int)nlen, t);
		attr->freq = nlen == 4;
		attr->sample_period = val; /* sample_freq shares the union */
		return 0;
	}
	if (!eq) {
		err = apply_alias(c, t, nlen, pos);
		if (err != -ENOENT)
			return err;
	}
	err = set_format(c, t, nlen, val, eq != NULL, pos);
	if (err != -ENOENT)
		return err;
	if (c->alias_file)
		return psc_evparse_fail(
			c->p, -EINVAL, c->alias_pos,
			"%s uses term '%.*s' that PMU '%s' does not describe in format/",
			c->alias_file, (int)nlen, t, c->pmu);
	return unknown_term(c->p, c->pmu, t, nlen, pos);
}

static int apply_terms(struct term_ctx *c, const char *terms, size_t len, int pos)
{
	size_t start = 0;

	for (size_t i = 0; i <= len; i++) {
		int err;

		if (i < len && terms[i] != ',')
			continue;
		err = apply_term(c, terms + start, i - start, pos + (int)start);
		if (err)
			return err;
		start = i + 1;
	}
	return 0;
}

int psc_evparse_pmu_terms(struct psc_evparse *p, const char *pmu, const char *terms, size_t len,
			  int pos, struct psc_event_spec *spec)
{
	struct term_ctx c = { .p = p, .pmu = pmu, .spec = spec };
	char path[PATH_MAX], text[32], *end;
	long type;
	int err;

	psc_pathf(path, sizeof(path), "%s/%s/type", p->pmu_dir, pmu);
	err = read_small(path, text, sizeof(text));
	if (err)
		return psc_evparse_fail(p, err, pos, "cannot read PMU type from %s: %s", path,
					strerror(-err));
	errno = 0;
	type = strtol(text, &end, 10);
	if (errno || end == text || *end || type < 0 || type > UINT32_MAX)
		return psc_evparse_fail(p, -EINVAL, pos, "%s holds '%s', not a PMU type number",
					path, text);
	spec->attr.type = (uint32_t)type;
	if (!len)
		return psc_evparse_fail(
			p, -EINVAL, pos,
			"empty PMU term list; expected %s/TERM=VALUE,.../ or %s/EVENT/", pmu, pmu);
	err = apply_terms(&c, terms, len, pos);
	if (err)
		return err;
	if (c.nr_aliases == 1) {
		spec->event = strdup(c.last_alias);
		if (!spec->event)
			return psc_evparse_fail(p, -ENOMEM, pos, "out of memory");
	}
	return 0;
}

void psc_evparse_pmu_suggest(struct psc_evparse *p, struct psc_suggest *s)
{
	struct dirent *de, *ev;
	char path[PATH_MAX], disp[300];
	DIR *d, *e;

	d = opendir(p->pmu_dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		psc_suggest__add(s, de->d_name, NULL);
		psc_pathf(path, sizeof(path), "%s/%s/events", p->pmu_dir, de->d_name);
		e = opendir(path);
		if (!e)
			continue;
		while ((ev = readdir(e))) {
			if (ev->d_name[0] == '.' || strchr(ev->d_name, '.'))
				continue;
			psc_pathf(disp, sizeof(disp), "%s/%s/", de->d_name, ev->d_name);
			psc_suggest__add(s, ev->d_name, disp);
			psc_suggest__add(s, disp, NULL);
		}
		closedir(e);
	}
	closedir(d);
}
