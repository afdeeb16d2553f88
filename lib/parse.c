/* The event-list parser's top level: EVENT[,EVENT...] and {groups}, and the list it builds. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "parse_internal.h"
#include "probe_internal.h"

#define DEFAULT_PMU_DIR "/sys/bus/event_source/devices"

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

void psc_event_spec__free(struct psc_event_spec *spec)
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
		psc_event_spec__free(&list->specs[i]);
	free(list->specs);
	free(list);
}

/* Where an event ends: the end, ',', '}' or whitespace. */
bool psc_evparse__is_event_end(char c)
{
	return !c || c == ',' || c == '}' || isspace((unsigned char)c);
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
		err = psc_evparse__event(ps, &p);
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
			err = psc_evparse__modifiers(ps, &mp, spec);
			if (err)
				return err;
			if (i == l->nr - 1)
				p = mp;
		}
	} else if (!psc_evparse__is_event_end(s[p])) {
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
	ps.p.usdt_find = OPTS_GET(opts, usdt_find, NULL);
	ps.p.usdt_ctx = OPTS_GET(opts, usdt_ctx, NULL);
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
		ret = str[pos] == '{' ? parse_group(&ps, &pos) : psc_evparse__event(&ps, &pos);
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
