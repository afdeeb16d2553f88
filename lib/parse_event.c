/* One event of the list: a named, raw, PMU, tracepoint or probe event, told by its head. */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse_internal.h"
#include "probe_internal.h"

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
			psc_event_spec__free(spec);
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

	while (!psc_evparse__is_event_end(ps->s[end]))
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
		if (looks_like_modifiers(name, strlen(name)) && psc_evparse__is_event_end(s[p])) {
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
		err = psc_evparse__slash(ps, &p, &proto, true);
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
			psc_event_spec__free(&spec);
			err = psc_evparse_fail(&ps->p, -ENOMEM, start, "out of memory");
			break;
		}
		err = push(ps, &spec, start);
	}
	*pos = p;
out:
	psc_tp_matches_free(m, nr);
	psc_event_spec__free(&proto);
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
		err = psc_evparse__slash(ps, &p, &spec, true);
	if (!err && s[p] == ':')
		err = psc_evparse_fail(&ps->p, -EINVAL, p,
				       "modifiers do not apply to probes (they are trace events); "
				       "remove ':'");
	else if (!err && !psc_evparse__is_event_end(s[p]))
		err = psc_evparse_fail(&ps->p, -EINVAL, p,
				       "unexpected '%c' after '%s'; quote a binary path that is "
				       "followed by a filter: @\"/path/to/bin\"/FILTER/",
				       s[p], spec.name ? spec.name : "the probe");
	if (err) {
		psc_event_spec__free(&spec);
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
		err = psc_evparse__modifiers(ps, &p, &spec);
		if (err)
			goto fail;
	} else if (!psc_evparse__is_event_end(s[p])) {
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
	psc_event_spec__free(&spec);
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
		err = psc_evparse__slash(ps, &p, &spec, false);
		if (err)
			goto fail;
	}
	if (s[p] == ':') {
		err = psc_evparse__modifiers(ps, &p, &spec);
		if (err)
			goto fail;
	}
	if (!psc_evparse__is_event_end(s[p])) {
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
	psc_event_spec__free(&spec);
	return err;
}

int psc_evparse__event(struct parser *ps, int *pos)
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
