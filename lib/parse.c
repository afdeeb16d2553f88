/* The event-list parser: EVENT[,EVENT...] and {groups}, names, modifiers, perf-prof filters and
 * ATTRs. */
#include <ctype.h>
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse_internal.h"
#include "probe_internal.h"

#define DEFAULT_PMU_DIR "/sys/bus/event_source/devices"
#define MAX_FILTER_DEPTH 32

struct parser {
	struct psc_evparse p;
	const char *s;
	struct psc_event_list *list;
	int alloc;
};

int psc_evparse_fail(struct psc_evparse *p, int ret, int pos, const char *fmt, ...)
{
	va_list ap;

	if (p->err) {
		p->err->pos = pos;
		va_start(ap, fmt);
		vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
		va_end(ap);
	}
	return ret;
}

int psc_pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

const char *psc_evparse_tracefs(struct psc_evparse *p, int *errp)
{
	*errp = 0;
	if (p->tracefs_dir)
		return p->tracefs_dir;
	if (!p->tracefs_errno) {
		p->tracefs_dir = psc_tracefs__dir();
		if (p->tracefs_dir)
			return p->tracefs_dir;
		p->tracefs_errno = errno ? errno : ENODEV;
	}
	*errp = -p->tracefs_errno;
	return NULL;
}

static void spec_free(struct psc_event_spec *spec)
{
	free(spec->name);
	free(spec->sys);
	free(spec->event);
	free(spec->filter);
	free(spec->unit);
	free(spec->alias);
	free(spec->cpus);
	for (int i = 0; i < spec->nr_attrs; i++) {
		free(spec->attrs[i].name);
		free(spec->attrs[i].value);
	}
	free(spec->attrs);
	psc_probe_spec__free(spec->probe);
	memset(spec, 0, sizeof(*spec));
}

void psc_event_list__delete(struct psc_event_list *list)
{
	if (!list)
		return;
	for (int i = 0; i < list->nr; i++)
		spec_free(&list->specs[i]);
	free(list->specs);
	free(list);
}

static void spec_init(struct psc_event_spec *spec, int pos)
{
	memset(spec, 0, sizeof(*spec));
	spec->attr.size = sizeof(spec->attr);
	spec->scale = 1.0;
	spec->text_pos = pos;
}

/* Moves *spec into the list (the list owns its strings from now on, even on failure). */
static int push(struct parser *ps, struct psc_event_spec *spec, int pos)
{
	struct psc_event_list *l = ps->list;

	if (l->nr == ps->alloc) {
		int na = ps->alloc ? ps->alloc * 2 : 8;
		struct psc_event_spec *n = realloc(l->specs, (size_t)na * sizeof(*n));

		if (!n) {
			spec_free(spec);
			return psc_evparse_fail(&ps->p, -ENOMEM, pos, "out of memory");
		}
		l->specs = n;
		ps->alloc = na;
	}
	spec->leader = l->nr;
	spec->nr_members = 1;
	l->specs[l->nr++] = *spec;
	memset(spec, 0, sizeof(*spec));
	return 0;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

/* Copies the filter and ATTRs of a tracepoint wildcard's template into one of its expansions. */
static int copy_attrs(struct psc_event_spec *dst, const struct psc_event_spec *src)
{
	bool oom = false;

	dst->attr.sample_type = src->attr.sample_type;
	dst->attr.sample_max_stack = src->attr.sample_max_stack;
	dst->attr.freq = src->attr.freq;
	dst->attr.sample_period = src->attr.sample_period;
	dst->filter = dup_or_null(src->filter, &oom);
	dst->alias = dup_or_null(src->alias, &oom);
	dst->cpus = dup_or_null(src->cpus, &oom);
	dst->stack = src->stack;
	dst->max_stack = src->max_stack;
	if (src->nr_attrs) {
		dst->attrs = calloc((size_t)src->nr_attrs, sizeof(*dst->attrs));
		if (!dst->attrs)
			return -ENOMEM;
		for (int i = 0; i < src->nr_attrs; i++) {
			dst->attrs[i] = src->attrs[i];
			dst->attrs[i].name = dup_or_null(src->attrs[i].name, &oom);
			dst->attrs[i].value = dup_or_null(src->attrs[i].value, &oom);
		}
		dst->nr_attrs = src->nr_attrs;
	}
	return oom ? -ENOMEM : 0;
}

/* Where an event's name ends: any of ":/,{}", whitespace or the end. */
static bool is_stop(char c)
{
	return !c || strchr(":/,{}", c) || isspace((unsigned char)c);
}

/* Where an event ends: the end, ',', '}' or whitespace. */
static bool is_event_end(char c)
{
	return !c || c == ',' || c == '}' || isspace((unsigned char)c);
}

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

static bool is_raw(const char *s, size_t len)
{
	if (len < 2 || len > 17 || s[0] != 'r')
		return false;
	for (size_t i = 1; i < len; i++)
		if (!isxdigit((unsigned char)s[i]))
			return false;
	return true;
}

static int unknown_event(struct parser *ps, const char *name, size_t len, int pos)
{
	struct psc_suggest s;
	char hint[400];

	psc_suggest__init(&s, name, len);
	psc_named_event__suggest(&s);
	psc_evparse_pmu_suggest(&ps->p, &s);
	psc_evparse_tp_suggest_all(&ps->p, &s);
	psc_suggest__format(&s, hint, sizeof(hint));
	if (len > 17 && name[0] == 'r' && is_raw(name, 17))
		return psc_evparse_fail(
			&ps->p, -EINVAL, pos,
			"raw event '%.*s' is too long; expected r followed by at most 16 hex digits",
			(int)len, name);
	return psc_evparse_fail(&ps->p, -ENOENT, pos, "unknown event '%.*s'%s", (int)len, name,
				hint);
}

/*
 * "NAME/a=b,.../" where NAME is no PMU here: the terms say a PMU was meant (a perf-prof filter
 * compares with ==, !=, <=, >=, so a lone '=' before the next '/' is a PMU term). Such an event
 * gets the list of this machine's PMUs rather than event-name suggestions: "cpu/event=0x3c/" on
 * a VM without a hardware PMU should say that there is no "cpu" PMU here.
 */
static bool looks_like_pmu_terms(const char *t)
{
	for (; *t && *t != '/'; t++)
		if (*t == '=' && !strchr("=!<>", t[-1]) && t[1] != '=')
			return true;
	return false;
}

static int unknown_pmu(struct parser *ps, const char *name, size_t len, int pos)
{
	char pmus[300] = "", hint[400];
	struct psc_suggest sg;
	size_t off = 0;
	struct dirent *de;
	DIR *d;

	psc_suggest__init(&sg, name, len);
	d = opendir(ps->p.pmu_dir);
	while (d && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		psc_suggest__add(&sg, de->d_name, NULL);
		if (off < sizeof(pmus))
			off += (size_t)snprintf(pmus + off, sizeof(pmus) - off, "%s%s",
						off ? ", " : "", de->d_name);
	}
	if (d)
		closedir(d);
	psc_suggest__format(&sg, hint, sizeof(hint));
	return psc_evparse_fail(&ps->p, -ENOENT, pos,
				"no PMU '%.*s' on this machine%s; its PMUs (in %s) are: %s",
				(int)len, name, hint, ps->p.pmu_dir, pmus[0] ? pmus : "none");
}

/* Modifiers, applied the way perf's get_event_modifier does, on top of what attr already has. */
#define MODIFIERS_HELP \
	"u (user), k (kernel), h (hypervisor), G (guest), H (host), I (not idle), p/pp/ppp (precise), D (pinned), e (exclusive)"

static int apply_modifiers(struct parser *ps, struct perf_event_attr *attr, const char *m,
			   size_t len, int pos)
{
	int eu = attr->exclude_user, ek = attr->exclude_kernel, eh = attr->exclude_hv;
	int eG = attr->exclude_guest, eH = attr->exclude_host;
	int exclude = eu | ek | eh, exclude_GH = eG | eH;
	int precise = attr->precise_ip;

	if (!len)
		return psc_evparse_fail(
			&ps->p, -EINVAL, pos,
			"expected modifiers after ':', one or more of " MODIFIERS_HELP);
	for (size_t i = 0; i < len; i++) {
		switch (m[i]) {
		case 'u':
			if (!exclude)
				exclude = eu = ek = eh = 1;
			if (!exclude_GH)
				eG = 1;
			eu = 0;
			break;
		case 'k':
			if (!exclude)
				exclude = eu = ek = eh = 1;
			ek = 0;
			break;
		case 'h':
			if (!exclude)
				exclude = eu = ek = eh = 1;
			eh = 0;
			break;
		case 'G':
			if (!exclude_GH)
				exclude_GH = eG = eH = 1;
			eG = 0;
			break;
		case 'H':
			if (!exclude_GH)
				exclude_GH = eG = eH = 1;
			eH = 0;
			break;
		case 'I':
			attr->exclude_idle = 1;
			break;
		case 'p':
			precise++;
			if (!exclude_GH)
				eG = 1; /* precise sampling needs exclude_guest, as in perf */
			break;
		case 'D':
			attr->pinned = 1;
			break;
		case 'e':
			attr->exclusive = 1;
			break;
		default:
			return psc_evparse_fail(
				&ps->p, -EINVAL, pos + (int)i,
				"unknown modifier '%c' in ':%.*s'; expected " MODIFIERS_HELP, m[i],
				(int)len, m);
		}
	}
	if (precise > 3)
		return psc_evparse_fail(
			&ps->p, -EINVAL, pos,
			"too many 'p' modifiers in ':%.*s'; precise levels are p, pp and ppp",
			(int)len, m);
	attr->exclude_user = eu;
	attr->exclude_kernel = ek;
	attr->exclude_hv = eh;
	attr->exclude_guest = eG;
	attr->exclude_host = eH;
	attr->precise_ip = precise;
	return 0;
}

/* Reads ":MODS" at *pos (which is at ':'), applies them and appends ":MODS" to spec->name. */
static int parse_modifiers(struct parser *ps, int *pos, struct psc_event_spec *spec)
{
	const char *s = ps->s;
	int start = *pos + 1, end = start, err;
	char *name;

	while (!is_event_end(s[end]) && s[end] != '/' && s[end] != ':' && s[end] != '{')
		end++;
	err = apply_modifiers(ps, &spec->attr, s + start, (size_t)(end - start), start);
	if (err)
		return err;
	if (!is_event_end(s[end]))
		return psc_evparse_fail(
			&ps->p, -EINVAL, end,
			"unexpected '%c' after modifiers ':%.*s'; modifiers come last, then ',' or the end",
			s[end], end - start, s + start);
	if (asprintf(&name, "%s:%.*s", spec->name, end - start, s + start) < 0)
		return psc_evparse_fail(&ps->p, -ENOMEM, start, "out of memory");
	free(spec->name);
	spec->name = name;
	*pos = end;
	return 0;
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
static int parse_slash(struct parser *ps, int *pos, struct psc_event_spec *spec, bool is_tp)
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

	while (!is_event_end(s[p]) && s[p] != ':') {
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

/* True when [s, s+len) could be modifiers, so "page-fault:u" is reported as an unknown event. */
static bool looks_like_modifiers(const char *s, size_t len)
{
	if (!len)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!strchr("ukhGHIpDe", s[i]))
			return false;
	return true;
}

static int tp_modifiers(struct parser *ps, int p)
{
	int end = p + 1;

	while (!is_event_end(ps->s[end]))
		end++;
	return psc_evparse_fail(&ps->p, -EINVAL, p,
				"modifiers do not apply to tracepoints; remove ':%.*s'",
				end - p - 1, ps->s + p + 1);
}

static int parse_tracepoint(struct parser *ps, int *pos, int start, int head_end)
{
	const char *s = ps->s;
	struct psc_event_spec proto;
	struct psc_tp_match *m = NULL;
	int name_start = head_end + 1, p = name_start, nr = 0, err;
	char *sys = NULL, *name = NULL;

	while (!is_stop(s[p]))
		p++;
	sys = strndup(s + start, (size_t)(head_end - start));
	name = strndup(s + name_start, (size_t)(p - name_start));
	spec_init(&proto, start);
	proto.kind = PSC_EVENT_TRACEPOINT;
	if (!sys || !name) {
		err = psc_evparse_fail(&ps->p, -ENOMEM, start, "out of memory");
		goto out;
	}
	if (!name[0]) {
		err = psc_evparse_fail(
			&ps->p, -EINVAL, name_start,
			"expected a tracepoint name after '%s:', as in sched:sched_switch", sys);
		goto out;
	}
	if (!strpbrk(sys, "*?[") && !psc_evparse_tp_system_exists(&ps->p, sys)) {
		if (psc_evparse_pmu_exists(&ps->p, sys, strlen(sys))) {
			err = psc_evparse_fail(
				&ps->p, -EINVAL, head_end,
				"'%s' is a PMU, not a tracepoint system; write PMU events as %s/%s/",
				sys, sys, name);
			goto out;
		}
		if (looks_like_modifiers(name, strlen(name)) && is_event_end(s[p])) {
			err = unknown_event(ps, sys, strlen(sys), start);
			goto out;
		}
	}
	if (s[p] == ':') {
		err = tp_modifiers(ps, p);
		goto out;
	}
	proto.name = strndup(s + start, (size_t)(p - start));
	if (!proto.name) {
		err = psc_evparse_fail(&ps->p, -ENOMEM, start, "out of memory");
		goto out;
	}
	if (s[p] == '/') {
		err = parse_slash(ps, &p, &proto, true);
		if (err)
			goto out;
		if (s[p] == ':') {
			err = tp_modifiers(ps, p);
			goto out;
		}
	}
	err = psc_evparse_tracepoints(&ps->p, sys, start, name, name_start, &m, &nr);
	for (int i = 0; i < nr && !err; i++) {
		struct psc_event_spec spec;

		spec_init(&spec, start);
		spec.text_len = p - start;
		spec.kind = PSC_EVENT_TRACEPOINT;
		spec.attr.type = PERF_TYPE_TRACEPOINT;
		spec.attr.config = m[i].id;
		spec.sys = strdup(m[i].sys);
		spec.event = strdup(m[i].name);
		if (asprintf(&spec.name, "%s:%s", m[i].sys, m[i].name) < 0)
			spec.name = NULL;
		if (!spec.sys || !spec.event || !spec.name || copy_attrs(&spec, &proto)) {
			spec_free(&spec);
			err = psc_evparse_fail(&ps->p, -ENOMEM, start, "out of memory");
			break;
		}
		err = push(ps, &spec, start);
	}
	*pos = p;
out:
	psc_tp_matches_free(m, nr);
	spec_free(&proto);
	free(sys);
	free(name);
	return err;
}

/* uprobe:FUNC@BINARY and friends: the location, then a tracepoint's /FILTER/ATTR/.../ tail. */
static int parse_probe(struct parser *ps, int *pos, int start, int head_end)
{
	const char *s = ps->s;
	struct psc_event_spec spec;
	int p = head_end, err;

	spec_init(&spec, start);
	err = psc_evparse_probe(&ps->p, s, start, head_end, &p, &spec);
	if (!err && s[p] == '/')
		err = parse_slash(ps, &p, &spec, true);
	if (!err && s[p] == ':')
		err = psc_evparse_fail(&ps->p, -EINVAL, p,
				       "modifiers do not apply to probes (they are trace events); "
				       "remove ':'");
	else if (!err && !is_event_end(s[p]))
		err = psc_evparse_fail(&ps->p, -EINVAL, p,
				       "unexpected '%c' after '%s'; quote a binary path that is "
				       "followed by a filter: @\"/path/to/bin\"/FILTER/",
				       s[p], spec.name ? spec.name : "the probe");
	if (err) {
		spec_free(&spec);
		return err;
	}
	spec.text_len = p - start;
	*pos = p;
	return push(ps, &spec, start);
}

static int parse_pmu(struct parser *ps, int *pos, int start, int head_end)
{
	const char *s = ps->s;
	struct psc_event_spec spec;
	int tstart = head_end + 1, p = tstart, err;

	while (s[p] && s[p] != '/')
		p++;
	if (!s[p])
		return psc_evparse_fail(
			&ps->p, -EINVAL, head_end,
			"missing closing '/' for the PMU event that starts here; write %.*s/TERM=VALUE,.../",
			head_end - start, s + start);
	spec_init(&spec, start);
	spec.kind = PSC_EVENT_PMU;
	spec.sys = strndup(s + start, (size_t)(head_end - start));
	spec.name = strndup(s + start, (size_t)(p + 1 - start));
	if (!spec.sys || !spec.name) {
		err = psc_evparse_fail(&ps->p, -ENOMEM, start, "out of memory");
		goto fail;
	}
	err = psc_evparse_pmu_terms(&ps->p, spec.sys, s + tstart, (size_t)(p - tstart), tstart,
				    &spec);
	if (err)
		goto fail;
	p++;
	if (s[p] == ':') {
		err = parse_modifiers(ps, &p, &spec);
		if (err)
			goto fail;
	} else if (!is_event_end(s[p])) {
		err = psc_evparse_fail(
			&ps->p, -EINVAL, p,
			"unexpected '%c' after '%s'; modifiers are written ':MODS', events end with ',' or the end",
			s[p], spec.name);
		goto fail;
	}
	spec.text_len = p - start;
	*pos = p;
	return push(ps, &spec, start);
fail:
	spec_free(&spec);
	return err;
}

static int parse_named(struct parser *ps, int *pos, int start, int head_end,
		       const struct psc_named_event *named)
{
	const char *s = ps->s;
	struct psc_event_spec spec;
	int p = head_end, err;

	spec_init(&spec, start);
	if (named) {
		static const uint32_t types[] = {
			[PSC_EVENT_HARDWARE] = PERF_TYPE_HARDWARE,
			[PSC_EVENT_SOFTWARE] = PERF_TYPE_SOFTWARE,
			[PSC_EVENT_CACHE] = PERF_TYPE_HW_CACHE,
		};

		spec.kind = named->kind;
		spec.attr.type = types[named->kind];
		spec.attr.config = named->config;
		spec.name = strdup(named->name);
	} else {
		spec.kind = PSC_EVENT_RAW;
		spec.attr.type = PERF_TYPE_RAW;
		spec.attr.config = strtoull(s + start + 1, NULL, 16);
		spec.name = strndup(s + start, (size_t)(head_end - start));
	}
	if (!spec.name) {
		err = psc_evparse_fail(&ps->p, -ENOMEM, start, "out of memory");
		goto fail;
	}
	if (s[p] == '/') {
		err = parse_slash(ps, &p, &spec, false);
		if (err)
			goto fail;
	}
	if (s[p] == ':') {
		err = parse_modifiers(ps, &p, &spec);
		if (err)
			goto fail;
	}
	if (!is_event_end(s[p])) {
		err = psc_evparse_fail(
			&ps->p, -EINVAL, p,
			"unexpected '%c' after event '%.*s'; expected ',' or the end of the list",
			s[p], p - start, s + start);
		goto fail;
	}
	spec.text_len = p - start;
	*pos = p;
	return push(ps, &spec, start);
fail:
	spec_free(&spec);
	return err;
}

static int parse_event(struct parser *ps, int *pos)
{
	const char *s = ps->s;
	const struct psc_named_event *named;
	int start = *pos, head_end = start;
	size_t len;

	while (!is_stop(s[head_end]))
		head_end++;
	len = (size_t)(head_end - start);
	if (!len) {
		if (s[start] == '{')
			return psc_evparse_fail(&ps->p, -EINVAL, start, "groups cannot nest");
		if (s[start] == '/')
			return psc_evparse_fail(&ps->p, -EINVAL, start,
						"expected an event name before '/'");
		return psc_evparse_fail(&ps->p, -EINVAL, start, "expected an event name, not '%c'",
					s[start]);
	}
	named = psc_named_event__find(s + start, len);
	if (named || is_raw(s + start, len))
		return parse_named(ps, pos, start, head_end, named);
	if (s[head_end] == ':' && psc_evparse_is_probe_word(s + start, len))
		return parse_probe(ps, pos, start, head_end);
	if (s[head_end] == ':')
		return parse_tracepoint(ps, pos, start, head_end);
	if (s[head_end] == '/' && psc_evparse_pmu_exists(&ps->p, s + start, len))
		return parse_pmu(ps, pos, start, head_end);
	if (s[head_end] == '/' && looks_like_pmu_terms(s + head_end + 1))
		return unknown_pmu(ps, s + start, len, start);
	return unknown_event(ps, s + start, len, start);
}

static void skip_ws(const char *s, int *pos)
{
	while (isspace((unsigned char)s[*pos]))
		(*pos)++;
}

static int parse_group(struct parser *ps, int *pos)
{
	const char *s = ps->s;
	struct psc_event_list *l = ps->list;
	int open = *pos, p = open + 1, first = l->nr, err;

	for (;;) {
		skip_ws(s, &p);
		if (!s[p])
			return psc_evparse_fail(&ps->p, -EINVAL, open,
						"missing '}' for the group that starts here");
		if (s[p] == '}' && l->nr == first)
			return psc_evparse_fail(&ps->p, -EINVAL, p,
						"empty group; put events in {...}");
		if (s[p] == ',')
			return psc_evparse_fail(&ps->p, -EINVAL, p, "empty event before ','");
		err = parse_event(ps, &p);
		if (err)
			return err;
		skip_ws(s, &p);
		if (s[p] == '}')
			break;
		if (s[p] == ',') {
			int comma = p++;

			skip_ws(s, &p);
			if (s[p] == '}')
				return psc_evparse_fail(
					&ps->p, -EINVAL, comma,
					"trailing ',' in the group; expected another event after it");
			continue;
		}
		if (!s[p])
			return psc_evparse_fail(&ps->p, -EINVAL, open,
						"missing '}' for the group that starts here");
		return psc_evparse_fail(&ps->p, -EINVAL, p,
					"unexpected '%c' in the group; expected ',' or '}'", s[p]);
	}
	p++; /* '}' */
	if (s[p] == ':') {
		for (int i = first; i < l->nr; i++) {
			struct psc_event_spec *spec = &l->specs[i];
			int mp = p;

			if (spec->kind == PSC_EVENT_TRACEPOINT || spec->probe)
				return psc_evparse_fail(
					&ps->p, -EINVAL, p,
					"modifiers do not apply to tracepoints, and '%s' is in this group",
					spec->name);
			err = parse_modifiers(ps, &mp, spec);
			if (err)
				return err;
			if (i == l->nr - 1)
				p = mp;
		}
	} else if (!is_event_end(s[p])) {
		return psc_evparse_fail(
			&ps->p, -EINVAL, p,
			"unexpected '%c' after the group; expected ':MODS', ',' or the end", s[p]);
	}
	for (int i = first; i < l->nr; i++) {
		l->specs[i].leader = first;
		l->specs[i].nr_members = i == first ? l->nr - first : 0;
	}
	*pos = p;
	return 0;
}

int psc_parse_events(const char *str, const struct psc_parse_opts *opts,
		     struct psc_event_list **out, struct psc_parse_error *err)
{
	struct parser ps = { .s = str };
	int pos = 0, ret;

	ps.p.err = err;
	if (err) {
		err->pos = -1;
		err->msg[0] = '\0';
	}
	if (!out)
		return psc_evparse_fail(&ps.p, -EINVAL, -1,
					"no place for the result (out is NULL)");
	*out = NULL;
	if (!OPTS_VALID(opts, psc_parse_opts))
		return psc_evparse_fail(&ps.p, -EINVAL, -1,
					"bad psc_parse_opts: build it with PSC_OPTS()");
	if (!str)
		return psc_evparse_fail(&ps.p, -EINVAL, -1, "no event list given");
	ps.p.pmu_dir = OPTS_GET(opts, pmu_dir, NULL);
	if (!ps.p.pmu_dir)
		ps.p.pmu_dir = DEFAULT_PMU_DIR;
	ps.p.tracefs_dir = OPTS_GET(opts, tracefs_dir, NULL);
	ps.list = calloc(1, sizeof(*ps.list));
	if (!ps.list)
		return psc_evparse_fail(&ps.p, -ENOMEM, -1, "out of memory");

	skip_ws(str, &pos);
	if (!str[pos]) {
		ret = psc_evparse_fail(
			&ps.p, -EINVAL, pos,
			"empty event list; expected events such as 'page-faults', 'cycles:u' or 'sched:sched_switch'");
		goto fail;
	}
	for (;;) {
		if (str[pos] == ',') {
			ret = psc_evparse_fail(&ps.p, -EINVAL, pos,
					       "empty event before ','; expected an event name");
			goto fail;
		}
		ret = str[pos] == '{' ? parse_group(&ps, &pos) : parse_event(&ps, &pos);
		if (ret)
			goto fail;
		skip_ws(str, &pos);
		if (!str[pos])
			break;
		if (str[pos] != ',') {
			ret = psc_evparse_fail(
				&ps.p, -EINVAL, pos,
				str[pos] == '}'
					? "unexpected '}' with no group open"
					: "unexpected '%c' after an event; expected ',' or the end of the list",
				str[pos]);
			goto fail;
		}
		int comma = pos++;

		skip_ws(str, &pos);
		if (!str[pos]) {
			ret = psc_evparse_fail(&ps.p, -EINVAL, comma,
					       "trailing ','; expected another event after it");
			goto fail;
		}
	}
	*out = ps.list;
	return 0;
fail:
	psc_event_list__delete(ps.list);
	return ret;
}
