/* Event modifiers (:u, :k, :ppp ...) as perf applies them. */
#include <stdio.h>
#include <stdlib.h>

#include "parse_internal.h"

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
int psc_evparse__modifiers(struct parser *ps, int *pos, struct psc_event_spec *spec)
{
	const char *s = ps->s;
	int start = *pos + 1, end = start, err;
	char *name;

	while (!psc_evparse__is_event_end(s[end]) && s[end] != '/' && s[end] != ':' &&
	       s[end] != '{')
		end++;
	err = apply_modifiers(ps, &spec->attr, s + start, (size_t)(end - start), start);
	if (err)
		return err;
	if (!psc_evparse__is_event_end(s[end]))
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
