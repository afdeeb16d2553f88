/* -e items that name another profiler (perf-prof's NAME/OPTS/ATTR.../), rewritten to its event. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caret.h"
#include "prof.h"
#include "prof_embed.h"

static bool name_char(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-' || c == ':' || c == '.' ||
	       c == '*';
}

/*
 * Where the item starting at I ends (its ',' or '}', or the end). Inside the /FILTER/ATTR/ part a
 * ',' ends the item only right after a '/': filters and ATTR values may hold commas, in quotes or
 * parentheses (printkey=printf("%d", a)) too.
 */
static int item_end(const char *s, int i)
{
	bool slashed = false, quoted = false;
	int depth = 0;

	for (; s[i]; i++) {
		char c = s[i];

		if (quoted) {
			if (c == '\\' && s[i + 1])
				i++;
			else if (c == '"')
				quoted = false;
			continue;
		}
		if (c == '"')
			quoted = true;
		else if (c == '(')
			depth++;
		else if (c == ')' && depth > 0)
			depth--;
		else if (c == '/')
			slashed = true;
		else if ((c == ',' || c == '}') && !depth && (!slashed || s[i - 1] == '/'))
			break;
	}
	return i;
}

static int fail(const char *events, int pos)
{
	caret__print(stderr, "  ", NULL, events, pos);
	return 2;
}

/* One item NAME/OPTS/REST of profiler PR, written to F in its place; 2: a usage error said. */
static int rewrite_item(const char *prof, const char *events, const struct profiler *pr, int from,
			int opts, int rest, int end, FILE *f, struct prof_embed_seg *seg)
{
	char optbuf[512], buf[512], why[256] = "";
	int olen = rest - 1 - opts;
	const char *mods;

	if (!pr->as_event) {
		fprintf(stderr,
			"perfscope %s: '%s' cannot be an event source: perfscope's %s is a profiler of "
			"its own, not the samples of one event that could join this stream; name the "
			"events it reads, or use profile/OPTS/ (e.g. profile/-F 200 -g/untraced/)\n",
			prof, pr->name, pr->name);
		return fail(events, from);
	}
	if (olen >= (int)sizeof(optbuf)) {
		fprintf(stderr, "perfscope %s: %s's options are too long\n", prof, pr->name);
		return fail(events, opts);
	}
	memcpy(optbuf, events + opts, olen);
	optbuf[olen] = 0;
	if (pr->as_event(optbuf, buf, sizeof(buf), why, sizeof(why))) {
		fprintf(stderr, "perfscope %s: %s/%s/ as an event source: %s\n", prof, pr->name,
			optbuf, why[0] ? why : "its options cannot be expressed as an event");
		return fail(events, opts);
	}
	/* the profiler's EVENT/FILTER/ATTR.../, the user's ATTRs, then the profiler's :MODS */
	mods = strrchr(buf, '/');
	mods = mods ? mods + 1 : buf + strlen(buf);
	seg->from = from;
	seg->rest = rest;
	seg->end = end;
	seg->nfrom = (int)ftell(f);
	fwrite(buf, 1, mods - buf, f);
	seg->nrest = (int)ftell(f);
	fwrite(events + rest, 1, end - rest, f);
	if (end > rest && events[end - 1] != '/')
		fputc('/', f);
	fputs(mods, f);
	seg->nend = (int)ftell(f);
	return 0;
}

int prof_embed__rewrite(const char *prof, const char *events, prof_find_fn find,
			struct prof_embed *e)
{
	struct prof_embed_seg *segs = NULL;
	int len = (int)strlen(events), i = 0, last = 0, nr = 0, ret = 0;
	size_t size = 0;
	char *text = NULL;
	FILE *f;

	memset(e, 0, sizeof(*e));
	f = open_memstream(&text, &size);
	if (!f)
		return 1;
	while (i < len) {
		int from, name_end, end;

		while (events[i] == ' ' || events[i] == '{')
			i++;
		from = i;
		name_end = i;
		while (name_char(events[name_end]))
			name_end++;
		end = item_end(events, from);
		if (name_end > from && events[name_end] == '/') {
			char name[64];
			const struct profiler *pr = NULL;
			const char *close = memchr(events + name_end + 1, '/', end - name_end - 1);
			bool dash = events[name_end + 1] == '-' &&
				    isalpha((unsigned char)events[name_end + 2]);

			if (name_end - from < (int)sizeof(name) &&
			    !memchr(events + from, ':', name_end - from)) {
				memcpy(name, events + from, name_end - from);
				name[name_end - from] = 0;
				pr = find ? find(name) : NULL;
			}
			/*
			 * A profiler that cannot be an event source and shares its name with an
			 * event (page-faults): NAME/FILTER/ is the event; only NAME/-OPTS/ means
			 * the profiler (and is refused below, saying why).
			 */
			if (pr && !pr->as_event && !dash)
				pr = NULL;
			if (!pr && dash) {
				fprintf(stderr,
					"perfscope %s: '%.*s' is no perfscope profiler that can be an event "
					"source (profile/OPTS/ is); as an event, write its ATTRs: %.*s//ATTR/...\n",
					prof, name_end - from, events + from, name_end - from,
					events + from);
				ret = fail(events, from);
				break;
			}
			if (pr && !close && pr->as_event) {
				fprintf(stderr,
					"perfscope %s: missing '/' after %s's options: write %s/OPTS/ATTR.../\n",
					prof, pr->name, pr->name);
				ret = fail(events, end);
				break;
			}
			if (pr) {
				struct prof_embed_seg *n = realloc(segs, (nr + 1) * sizeof(*segs));
				int rest = close ? (int)(close - events) + 1 : end;

				if (!n) {
					ret = 1;
					break;
				}
				segs = n;
				fwrite(events + last, 1, from - last, f);
				ret = rewrite_item(prof, events, pr, from, name_end + 1, rest, end,
						   f, &segs[nr++]);
				if (ret)
					break;
				last = end;
			}
		}
		i = end < len ? end + 1 : end;
	}
	fwrite(events + last, 1, len - last, f);
	if (fclose(f) && !ret)
		ret = 1;
	if (ret || !nr) {
		free(text);
		free(segs);
		return ret;
	}
	e->text = text;
	e->segs = segs;
	e->nr = nr;
	return 0;
}

int prof_embed__pos(const struct prof_embed *e, int pos)
{
	int delta = 0;

	if (pos < 0)
		return pos;
	for (int i = 0; i < e->nr; i++) {
		const struct prof_embed_seg *s = &e->segs[i];

		if (pos < s->nfrom)
			break;
		if (pos < s->nrest)
			return s->from; /* in what the profiler wrote: its name */
		if (pos < s->nrest + (s->end - s->rest))
			return s->rest + pos - s->nrest;
		if (pos < s->nend)
			return s->end;
		delta = s->nend - s->end;
	}
	return pos - delta;
}

void prof_embed__free(struct prof_embed *e)
{
	free(e->text);
	free(e->segs);
	memset(e, 0, sizeof(*e));
}
