/* -e items that name another profiler (NAME/OPTS/ATTR.../), rewritten to the event it samples. */
#ifndef PERFSCOPE_PROF_EMBED_H
#define PERFSCOPE_PROF_EMBED_H

#include <stddef.h>

struct profiler;

/* The profiler named NAME, or NULL: the CLI's table (common/ does not know it), passed in. */
typedef const struct profiler *(*prof_find_fn)(const char *name);

/* One rewritten item: where it was in the typed text and where it is in the rewritten one. */
struct prof_embed_seg {
	int from, rest, end; /* typed: item start, its own ATTRs, item end */
	int nfrom, nrest, nend; /* rewritten: the same (the ATTRs are copied as typed) */
};

struct prof_embed {
	char *text; /* the rewritten -e text; NULL: nothing was rewritten */
	struct prof_embed_seg *segs;
	int nr;
};

/*
 * Rewrites the items of EVENTS that name a profiler (found by find; NULL: none is) able to be an
 * event source. 0: done (e->text NULL when none did), 2: a usage error (said on stderr, for
 * profiler PROF), 1: no memory.
 */
int prof_embed__rewrite(const char *prof, const char *events, prof_find_fn find,
			struct prof_embed *e);
/* A position in e->text, as a position in the text that was typed. */
int prof_embed__pos(const struct prof_embed *e, int pos);
void prof_embed__free(struct prof_embed *e);

#endif
