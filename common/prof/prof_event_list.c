/* The event list a run uses: -e, a declaration's default groups, or a list a profiler builds. */
#include <string.h>

#include "prof_internal.h"

int prof__add_events(struct prof *p, const char *text, int *pos)
{
	int at = cli_opts_add_events(&p->opts, text);

	if (at < 0)
		return prof_usage(p, "the event lists together are longer than %zu characters",
				  sizeof(p->opts.events_joined) - 1);
	if (pos)
		*pos = at;
	return 0;
}

void prof__set_events(struct prof *p, const char *text)
{
	p->opts.events = text;
}

int prof_event_list__defaults(struct prof *p)
{
	const char *const *g = p->decl->default_groups;
	int ret;

	if (p->opts.events || !g)
		return 0;
	for (; *g; g++)
		if ((ret = prof__add_events(p, *g, NULL)))
			return ret;
	return 0;
}
