/* multi-trace's events: their text or JSON members, the key as text, short names. */
#include "multi_trace.h"

#include <stdio.h>
#include <stdlib.h>

#include "expr.h"

void mt_print_event(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s,
		    const char *indent)
{
	const struct prof_event *ev = &p->events_arr[ev_idx];

	if (!ev->print)
		return;
	if (indent && *indent)
		out__printf(p->out, "%s", indent);
	prof__print(p, ev, cpu, s);
}

void mt_json_event(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s)
{
	const struct prof_event *ev = &p->events_arr[ev_idx];

	json__obj(&p->json);
	if (ev->print)
		prof__print_members(p, ev, cpu, s);
	json__end(&p->json);
}

const char *mt_key_str(struct prof *p, struct mt *mt, int ev_idx, uint64_t key)
{
	const struct prof_attr_val *pk = prof_event__attr(&p->events_arr[ev_idx], "printkey");
	struct expr_val v;

	if (pk) {
		expr__set_var(pk->expr, 0, key);
		if (!expr__eval(pk->expr, NULL, 0, NULL, &v)) {
			expr_val__snprint(expr__type(pk->expr), &v, mt->keybuf, sizeof(mt->keybuf));
			return mt->keybuf;
		}
	}
	snprintf(mt->keybuf, sizeof(mt->keybuf), "%llu", (unsigned long long)key);
	return mt->keybuf;
}

const char *mt_short_name(const struct prof_event *ev)
{
	if (ev->spec->alias)
		return ev->spec->alias;
	return ev->spec->event ? ev->spec->event : ev->name;
}
