/* The perf-prof tail of an event, /FILTER/ATTR/.../: the filter's syntax and the ATTRs. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse_internal.h"

#define MAX_FILTER_DEPTH 32

static const char *kind_name(enum psc_event_kind kind)
{
	switch (kind) {
	case PSC_EVENT_HARDWARE:
		return "hardware";
	case PSC_EVENT_SOFTWARE:
		return "software";
	case PSC_EVENT_CACHE:
		return "hardware-cache";
	case PSC_EVENT_RAW:
		return "raw";
	case PSC_EVENT_PMU:
		return "PMU";
	case PSC_EVENT_TRACEPOINT:
		return "tracepoint";
	case PSC_EVENT_UPROBE:
		return "uprobe";
	case PSC_EVENT_KPROBE:
		return "kprobe";
	}
	return "unknown";
}

/*
 * The ATTRs the library itself gives meaning to: each changes the perf attr or the event's name.
 * Any other NAME[=VALUE] is kept in spec->attrs for the tool to interpret (perf-prof's key=,
 * top-by=, ptr= ...), so a new ATTR never changes the library.
 */
enum attr_val { NOVAL, NUM, NAME, CPULIST };
static const struct {
	const char *name;
	enum attr_val val;
	const char *help;
} attrs[] = {
	{ "stack", NOVAL, "stack" },	 { "max-stack", NUM, "max-stack=N" },
	{ "alias", NAME, "alias=NAME" }, { "cpus", CPULIST, "cpus=LIST" },
	/* period and freq last: parse_attr tells them by their place */
	{ "period", NUM, "period=N" },	 { "freq", NUM, "freq=N" },
};
#define NR_ATTRS (int)(sizeof(attrs) / sizeof(attrs[0]))
#define MAX_ATTRS 32

const char *psc_lib_attr__at(int idx, const char **syntax)
{
	if (idx < 0 || idx >= NR_ATTRS)
		return NULL;
	if (syntax)
		*syntax = attrs[idx].help;
	return attrs[idx].name;
}

/*
 * perf-prof's ATTR names, for telling a misplaced ATTR from a filter: no ftrace filter is a bare
 * word or has a single '='.
 */
static const char *const known_attr_names[] = {
	"stack",   "max-stack", "alias", "period", "freq",  "top-by",	"top-add",  "comm",
	"key",	   "ptr",	"size",	 "num",	   "delay", "untraced", "printkey", "role",
	"trigger", "exec",	"cpus",	 "vm",	   "push",  "pull",	"index",
};

void psc_attr_name__hint(const char *word, size_t len, char *buf, size_t buflen)
{
	/* its value shown with it: kye=pid gives sys:name//key=pid/ */
	size_t vlen = word[len] == '=' ? strcspn(word + len, " \t/&|)") : 0;
	struct psc_suggest sg;
	const char *best;

	psc_suggest__init(&sg, word, len);
	for (size_t i = 0; i < sizeof(known_attr_names) / sizeof(known_attr_names[0]); i++)
		psc_suggest__add(&sg, known_attr_names[i], NULL);
	best = psc_suggest__best(&sg);
	if (best)
		snprintf(
			buf, buflen,
			"; if the ATTR '%s' was meant, it goes after the filter: sys:name//%s%.*s/",
			best, best, (int)vlen, word + len);
	else if (buflen)
		buf[0] = '\0';
}

static bool looks_like_attr(const char *s, size_t len)
{
	for (size_t i = 0; i < sizeof(known_attr_names) / sizeof(known_attr_names[0]); i++) {
		size_t n = strlen(known_attr_names[i]);

		if (len < n || strncmp(s, known_attr_names[i], n))
			continue;
		if (len == n || (len > n + 1 && s[n] == '=' && s[n + 1] != '='))
			return true;
	}
	return false;
}

static int check_value(struct parser *ps, enum attr_val kind, const char *v, size_t len, int pos,
		       const char *attr, uint64_t *num)
{
	if (kind == NUM) {
		char buf[24], *end;

		for (size_t i = 0; i < len; i++)
			if (!isdigit((unsigned char)v[i]))
				return psc_evparse_fail(
					&ps->p, -EINVAL, pos + (int)i,
					"bad number '%.*s' for ATTR '%s'; expected a positive decimal number",
					(int)len, v, attr);
		errno = 0;
		if (len < sizeof(buf)) {
			memcpy(buf, v, len);
			buf[len] = '\0';
			*num = strtoull(buf, &end, 10);
		}
		if (len >= sizeof(buf) || errno)
			return psc_evparse_fail(&ps->p, -EINVAL, pos,
						"number '%.*s' for ATTR '%s' is too large",
						(int)len, v, attr);
		if (!*num)
			return psc_evparse_fail(&ps->p, -EINVAL, pos,
						"ATTR '%s' must be positive, not 0", attr);
		return 0;
	}
	if (kind == CPULIST) {
		struct psc_parse_error perr = { .pos = -1 };
		struct psc_cpumap *map;
		char *list = strndup(v, len);

		if (!list)
			return psc_evparse_fail(&ps->p, -ENOMEM, pos, "out of memory");
		map = psc_cpumap__parse(list, &perr);
		free(list);
		psc_cpumap__put(map);
		if (!map)
			return psc_evparse_fail(&ps->p, -EINVAL, pos + (perr.pos > 0 ? perr.pos : 0),
						"%s=%.*s: %s", attr, (int)len, v,
						perr.msg[0] ? perr.msg : "not a list of CPUs (0-3,6)");
		return 0;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)v[i];

		/* perf-prof's titles carry units: alias=run(us), alias=size% */
		if (!isgraph(c) || c == '"' || c == '\\')
			return psc_evparse_fail(
				&ps->p, -EINVAL, pos + (int)i,
				"bad character '%c' in ATTR '%s'; a name has no spaces, quotes or '\\'",
				c, attr);
	}
	return 0;
}

static int set_string(struct parser *ps, char **dst, const char *v, size_t len, int pos)
{
	*dst = strndup(v, len);
	return *dst ? 0 : psc_evparse_fail(&ps->p, -ENOMEM, pos, "out of memory");
}

/* An ATTR the library does not interpret: kept by name, with its value, for the tool. */
static int add_generic_attr(struct parser *ps, struct psc_event_spec *spec, const char *t,
			    size_t nlen, const char *v, size_t vlen, int pos, int vpos)
{
	struct psc_event_attr *a, *grown;

	for (size_t i = 0; i < nlen; i++) {
		unsigned char c = (unsigned char)t[i];

		if (!isalnum(c) && c != '_' && c != '-')
			return psc_evparse_fail(
				&ps->p, -EINVAL, pos + (int)i,
				"bad character '%c' in an ATTR name; write NAME or NAME=VALUE (letters, digits, '-', '_')",
				c);
	}
	if (!nlen)
		return psc_evparse_fail(&ps->p, -EINVAL, pos,
					"an ATTR needs a name before '='; write NAME=VALUE");
	if (spec->nr_attrs == MAX_ATTRS)
		return psc_evparse_fail(&ps->p, -EINVAL, pos, "more than %d ATTRs on one event",
					MAX_ATTRS);
	grown = realloc(spec->attrs, (size_t)(spec->nr_attrs + 1) * sizeof(*grown));
	if (!grown)
		return psc_evparse_fail(&ps->p, -ENOMEM, pos, "out of memory");
	spec->attrs = grown;
	a = &spec->attrs[spec->nr_attrs];
	memset(a, 0, sizeof(*a));
	a->pos = pos;
	a->name = strndup(t, nlen);
	a->value = v ? strndup(v, vlen) : NULL;
	if (!a->name || (v && !a->value)) {
		free(a->name);
		free(a->value);
		return psc_evparse_fail(&ps->p, -ENOMEM, pos, "out of memory");
	}
	a->value_pos = v ? vpos : -1;
	spec->nr_attrs++;
	return 0;
}

static int parse_attr(struct parser *ps, struct psc_event_spec *spec, const char *t, size_t len,
		      int pos, unsigned int *seen)
{
	const char *eq = memchr(t, '=', len);
	size_t nlen = eq ? (size_t)(eq - t) : len, vlen = eq ? len - nlen - 1 : 0;
	const char *v = eq ? eq + 1 : NULL;
	int vpos = pos + (int)nlen + 1, i, err;
	uint64_t num = 0;

	/* "VALUE" in quotes may hold '/' and ',' (an expression): the quotes are not kept */
	if (v && vlen >= 2 && v[0] == '"' && v[vlen - 1] == '"') {
		v++;
		vlen -= 2;
		vpos++;
	}
	for (i = 0; i < NR_ATTRS; i++)
		if (strlen(attrs[i].name) == nlen && !memcmp(attrs[i].name, t, nlen))
			break;
	if (i == NR_ATTRS)
		return add_generic_attr(ps, spec, t, nlen, v, vlen, pos, vpos);
	if (attrs[i].val == NOVAL && eq)
		return psc_evparse_fail(&ps->p, -EINVAL, pos + (int)nlen,
					"ATTR '%s' takes no value; write /%s/", attrs[i].name,
					attrs[i].name);
	if (attrs[i].val != NOVAL && (!eq || !vlen))
		return psc_evparse_fail(&ps->p, -EINVAL, pos + (int)len,
					"ATTR '%s' needs a value: %s", attrs[i].name,
					attrs[i].help);
	if (*seen & (1U << i))
		return psc_evparse_fail(&ps->p, -EINVAL, pos, "ATTR '%s' is given twice",
					attrs[i].name);
	*seen |= 1U << i;
	if (attrs[i].val != NOVAL) {
		err = check_value(ps, attrs[i].val, v, vlen, vpos, attrs[i].name, &num);
		if (err)
			return err;
	}

	switch (t[0]) {
	case 's': /* stack */
		spec->stack = true;
		spec->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		return 0;
	case 'm': /* max-stack: a depth limit implies stacks */
		if (num > UINT16_MAX)
			return psc_evparse_fail(
				&ps->p, -EINVAL, vpos,
				"max-stack=%llu is too deep; the kernel takes at most %u",
				(unsigned long long)num, UINT16_MAX);
		spec->max_stack = (int)num;
		spec->stack = true;
		spec->attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
		spec->attr.sample_max_stack = (uint16_t)num;
		return 0;
	case 'a':
		return set_string(ps, &spec->alias, v, vlen, vpos);
	case 'c': /* cpus: where the event opens (within the run's CPUs) */
		return set_string(ps, &spec->cpus, v, vlen, vpos);
	default: /* period, freq */
		if (*seen & (1U << (NR_ATTRS - 1)) && *seen & (1U << (NR_ATTRS - 2)))
			return psc_evparse_fail(&ps->p, -EINVAL, pos,
						"period= and freq= exclude each other; give one");
		spec->attr.freq = t[0] == 'f';
		spec->attr.sample_period = num; /* sample_freq shares the union */
		return 0;
	}
}

/*
 * The perf-prof tail "/FILTER/ATTR/ATTR/.../" at *pos (which is at the first '/'). The filter
 * is the kernel's ftrace filter, kept as text; here only quotes and parentheses are checked.
 */
int psc_evparse__slash(struct parser *ps, int *pos, struct psc_event_spec *spec, bool is_tp)
{
	const char *s = ps->s;
	int open = *pos, p = open + 1, fstart = p, fend, quote_pos = -1, depth = 0;
	int parens[MAX_FILTER_DEPTH];
	unsigned int seen = 0;
	char quote = 0;

	for (;; p++) {
		char c = s[p];

		if (!c) {
			if (quote)
				return psc_evparse_fail(
					&ps->p, -EINVAL, quote_pos,
					"unterminated string in the filter; close it with %c",
					quote);
			return psc_evparse_fail(
				&ps->p, -EINVAL, open,
				"missing closing '/' after the filter that starts here; write %s/FILTER/ATTR/.../ (// for no filter)",
				spec->name);
		}
		if (quote) {
			if (c == '\\' && s[p + 1])
				p++;
			else if (c == quote)
				quote = 0;
			continue;
		}
		if (c == '"' || c == '\'') {
			quote = c;
			quote_pos = p;
		} else if (c == '(') {
			if (depth == MAX_FILTER_DEPTH)
				return psc_evparse_fail(&ps->p, -EINVAL, p,
							"filter nests parentheses deeper than %d",
							MAX_FILTER_DEPTH);
			parens[depth++] = p;
		} else if (c == ')') {
			if (!depth)
				return psc_evparse_fail(
					&ps->p, -EINVAL, p,
					"unbalanced ')' in the filter; no '(' before it");
			depth--;
		} else if (c == '/') {
			break;
		}
	}
	if (depth)
		return psc_evparse_fail(
			&ps->p, -EINVAL, parens[depth - 1],
			"unclosed '(' in the filter; add ')' before the closing '/'");
	fend = p;
	while (fstart < fend && isspace((unsigned char)s[fstart]))
		fstart++;
	while (fend > fstart && isspace((unsigned char)s[fend - 1]))
		fend--;
	if (fend > fstart) {
		if (!is_tp)
			return psc_evparse_fail(
				&ps->p, -EINVAL, fstart,
				"filters apply to tracepoints only; '%s' is a %s event (leave the filter empty: %s//ATTR/)",
				spec->name, kind_name(spec->kind), spec->name);
		if (looks_like_attr(s + fstart, (size_t)(fend - fstart)))
			return psc_evparse_fail(
				&ps->p, -EINVAL, fstart,
				"'%.*s' is an ATTR, not a filter: the first /.../ after a tracepoint is its "
				"filter; leave it empty to give ATTRs only: %s//%.*s/",
				fend - fstart, s + fstart, spec->name, fend - fstart, s + fstart);
		spec->filter = strndup(s + fstart, (size_t)(fend - fstart));
		if (!spec->filter)
			return psc_evparse_fail(&ps->p, -ENOMEM, fstart, "out of memory");
	}
	p++; /* the filter's closing '/' */

	while (!psc_evparse__is_event_end(s[p]) && s[p] != ':') {
		/* printkey=printf("%d", a, b): ',' and '/' inside (...) are the value's own */
		int start = p, err, pdepth = 0;

		if (s[p] == '/')
			return psc_evparse_fail(&ps->p, -EINVAL, p,
						"empty ATTR between two '/'; remove one '/'");
		/* cpus=0,2: a list of CPUs keeps its commas */
		bool list = !strncmp(s + p, "cpus=", 5);

		while (s[p] && ((s[p] != '/' && s[p] != ',') || pdepth > 0 ||
				(list && s[p] == ',' && isdigit((unsigned char)s[p + 1])))) {
			if (s[p] == '(')
				pdepth++;
			else if (s[p] == ')' && pdepth > 0)
				pdepth--;
			/* a quoted value ("a/b") runs to its closing quote */
			if (s[p] == '"') {
				int q = p;

				for (p++; s[p] && s[p] != '"'; p++)
					if (s[p] == '\\' && s[p + 1])
						p++;
				if (!s[p])
					return psc_evparse_fail(
						&ps->p, -EINVAL, q,
						"unterminated \" in ATTR '%.*s'; close it with \"",
						p - start, s + start);
			}
			p++;
		}
		if (s[p] != '/')
			return psc_evparse_fail(
				&ps->p, -EINVAL, p,
				"missing closing '/' after ATTR '%.*s'; every ATTR ends with '/'",
				p - start, s + start);
		err = parse_attr(ps, spec, s + start, (size_t)(p - start), start, &seen);
		if (err)
			return err;
		p++;
	}
	*pos = p;
	return 0;
}
