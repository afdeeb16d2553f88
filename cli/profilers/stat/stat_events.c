/* stat's events as the user wrote them: typed names, duration_time, the user-space fallback. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "stat.h"
#include "target.h"

#define DURATION "duration_time"
/* a software event any user may open, as long as "duration_time" with the spaces */
#define PLACEHOLDER "dummy        "
_Static_assert(sizeof(DURATION) == sizeof(PLACEHOLDER), "same length: positions kept");

char *stat_typed_name(const char *text, const struct psc_event_spec *spec, bool *wildcard)
{
	const char *head = text + spec->text_pos, *mods;
	size_t len = 0;
	char *name;

	*wildcard = false;
	if (spec->alias)
		return strdup(spec->alias);
	if (spec->kind == PSC_EVENT_TRACEPOINT) {
		while ((int)len < spec->text_len && head[len] != '/')
			len++;
		*wildcard =
			memchr(head, '*', len) || memchr(head, '?', len) || memchr(head, '[', len);
		return strdup(spec->name); /* sys:name, without the filter */
	}
	if (spec->kind == PSC_EVENT_PMU)
		return strdup(spec->name);
	/* perf's names and raw events: the spelling given (cs, cycles, branches) and the
	 * modifiers, the group's too ({a,b}:u), as the library added them to its name */
	while ((int)len < spec->text_len && head[len] != '/' && head[len] != ':')
		len++;
	while (len && head[len - 1] == ' ')
		len--;
	mods = strchr(spec->name, ':');
	if (asprintf(&name, "%.*s%s", (int)len, head, mods ? mods : "") < 0)
		return NULL;
	return name;
}

/* The parser's answer for text; 0 or its error (err filled). */
static int try_parse(const char *text, struct psc_parse_error *err)
{
	struct psc_event_list *l = NULL;
	int ret;

	*err = (struct psc_parse_error){ .pos = -1 };
	ret = psc_parse_events(text, NULL, &l, err);
	psc_event_list__delete(l);
	return ret;
}

/* Is the parser's unknown event at pos a duration_time standing alone? */
static bool duration_at(const char *text, int pos)
{
	size_t n = strlen(DURATION);
	const char *end = text + pos + n;

	if (pos < 0 || strncmp(text + pos, DURATION, n))
		return false;
	while (*end == ' ')
		end++;
	return !*end || *end == ',' || *end == '}';
}

int stat_duration_prepare(struct prof *p, struct stat_ctx *s, const char *events)
{
	struct psc_parse_error perr;
	char *text;
	int ret;

	if (!events || !strstr(events, DURATION))
		return 0;
	text = strdup(events);
	if (!text)
		return -ENOMEM;
	if (strchr(text, ':'))
		psc_tracefs__mount(); /* as the engine does before it parses */
	/* each unknown event the parser stops at that is a duration_time becomes a placeholder:
	 * the parser, not a second reading of the syntax, says where an event starts */
	while ((ret = try_parse(text, &perr)) == -ENOENT && duration_at(text, perr.pos)) {
		int *pos = realloc(s->dur_pos, (size_t)(s->nr_dur + 1) * sizeof(*pos));

		if (!pos) {
			free(text);
			return -ENOMEM;
		}
		s->dur_pos = pos;
		s->dur_pos[s->nr_dur++] = perr.pos;
		memcpy(text + perr.pos, PLACEHOLDER, strlen(PLACEHOLDER));
	}
	if (ret) {
		/* said against the list as the user wrote it */
		cli_report_parse_error(p->name, events, &perr, ret);
		free(text);
		/* no memory, tracefs not mounted or not readable: runtime failures, not bad usage
		 */
		return ret == -ENOMEM || ret == -EACCES || ret == -EPERM || ret == -ENODEV ? ret
											   : 2;
	}
	if (!s->nr_dur) {
		free(text);
		return 0;
	}
	s->events_text = text;
	return 0;
}

bool stat_is_duration(const struct stat_ctx *s, const struct psc_event_spec *spec)
{
	for (int i = 0; i < s->nr_dur; i++)
		if (spec->text_pos == s->dur_pos[i] && spec->kind == PSC_EVENT_SOFTWARE &&
		    spec->attr.config == PERF_COUNT_SW_DUMMY)
			return true;
	return false;
}
