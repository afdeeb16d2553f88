/* The event parser's usdt:PROVIDER:NAME@BINARY: the binary resolved as a uprobe's, the probe
 * found by the caller's usdt_find (the library reads no SDT notes). Nothing is created here. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include <perfscope/probe.h>

#include "probe_internal.h"

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* [a, *p): a run of name characters; fails naming what was expected after what. */
static int word(struct psc_evparse *ps, const char *s, int *p, const char *what)
{
	int a = *p;

	while (name_char(s[*p]))
		(*p)++;
	if (*p == a)
		return psc_evparse_fail(ps, -EINVAL, a,
					"expected %s, as in usdt:python:gc__start@python3.11",
					what);
	return 0;
}

/* BINARY, "BINARY": a path runs to "//" or the end, a name to its first '/'. */
static int binary(struct psc_evparse *ps, const char *s, int *p, int *ba, int *bb)
{
	if (s[*p] == '"') {
		*ba = *p + 1;
		while (s[++*p] && s[*p] != '"')
			;
		if (!s[*p])
			return psc_evparse_fail(ps, -EINVAL, *ba - 1,
						"unterminated \" here; close it with \"");
		*bb = (*p)++;
		return 0;
	}
	bool path = s[*p] == '/' || s[*p] == '.';

	*ba = *p;
	while (s[*p] && s[*p] != ',' && s[*p] != '}' && !isspace((unsigned char)s[*p]) &&
	       s[*p] != ':' && !(s[*p] == '/' && (!path || s[*p + 1] == '/')))
		(*p)++;
	*bb = *p;
	if (*bb == *ba)
		return psc_evparse_fail(ps, -EINVAL, *ba,
					"expected a binary after '@': a path, a library name or a "
					"program in $PATH");
	return 0;
}

int psc_evparse_usdt(struct psc_evparse *ps, const char *s, int start, int head_end, int *pos,
		     struct psc_event_spec *spec)
{
	int p = head_end + 1, pa = p, na, nb, ba = 0, bb = 0, err;
	char path[PATH_MAX], msg[400] = "", *prov = NULL, *name = NULL, *typed = NULL;
	struct psc_probe_spec *pr;

	spec->kind = PSC_EVENT_UPROBE;
	pr = spec->probe = calloc(1, sizeof(*pr));
	if (!pr)
		return psc_evparse_fail(ps, -ENOMEM, start, "out of memory");
	if ((err = word(ps, s, &p, "a provider after 'usdt:'")))
		return err;
	if (s[p] != ':')
		return psc_evparse_fail(ps, -EINVAL, p,
					"expected ':NAME' after the provider, as in "
					"usdt:python:gc__start@python3.11");
	na = ++p;
	if ((err = word(ps, s, &p, "a probe name after the provider")))
		return err;
	nb = p;
	if (s[p] != '@')
		return psc_evparse_fail(ps, -EINVAL, p,
					"expected '@BINARY' after the probe, as in "
					"usdt:python:gc__start@python3.11");
	p++;
	if ((err = binary(ps, s, &p, &ba, &bb)))
		return err;
	if (!ps->usdt_find)
		return psc_evparse_fail(ps, -EOPNOTSUPP, start,
					"usdt: events need a reader of SDT notes (usdt_find in "
					"psc_parse_opts)");
	prov = strndup(s + pa, (size_t)(na - 1 - pa));
	name = strndup(s + na, (size_t)(nb - na));
	typed = strndup(s + ba, (size_t)(bb - ba));
	if (!prov || !name || !typed) {
		err = psc_evparse_fail(ps, -ENOMEM, start, "out of memory");
		goto out;
	}
	err = psc_probe__find_binary(typed, path, sizeof(path));
	if (err) {
		err = psc_evparse_fail(ps, -ENOENT, ba, "no binary '%s': %s%s", typed,
				       strerror(-err),
				       strchr(typed, '/') ? " (quote a path that a filter follows: "
							    "@\"/path\"/FILTER/)"
							  : "");
		goto out;
	}
	if (strpbrk(path, " \t\n")) {
		err = psc_evparse_fail(
			ps, -EINVAL, ba,
			"the kernel takes no uprobe on a path with white space: '%s'", path);
		goto out;
	}
	err = ps->usdt_find(path, prov, name, pr, msg, sizeof(msg), ps->usdt_ctx);
	if (err) {
		err = psc_evparse_fail(ps, err, na, "%s", msg[0] ? msg : strerror(-err));
		goto out;
	}
	if (asprintf(&pr->func, "%s:%s", prov, name) < 0 || !(pr->binary = strdup(path)) ||
	    asprintf(&spec->name, "usdt:%s:%s@%s", prov, name, typed) < 0) {
		spec->name = NULL;
		err = psc_evparse_fail(ps, -ENOMEM, start, "out of memory");
		goto out;
	}
	*pos = p;
out:
	free(prov);
	free(name);
	free(typed);
	return err;
}
