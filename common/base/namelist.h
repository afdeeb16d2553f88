/* A bounded list of names for one summary line: "a, b, c and 290 more". */
#ifndef PERFSCOPE_NAMELIST_H
#define PERFSCOPE_NAMELIST_H

#include <stddef.h>
#include <stdio.h>

struct namelist {
	char buf[640]; /* the names that fit, comma-separated */
	size_t used, limit; /* limit: the room used of buf, for a line that stays readable */
	int nr; /* names added */
	int more; /* names added past the room in buf: counted, not named */
};

#define NAMELIST_SHORT 240 /* a line on a terminal: a few names */

static inline void namelist__init(struct namelist *l, size_t limit)
{
	l->buf[0] = '\0';
	l->used = 0;
	l->limit = limit < sizeof(l->buf) ? limit : sizeof(l->buf);
	l->nr = l->more = 0;
}

void namelist__add(struct namelist *l, const char *name);
/* Prints "a, b, c" or "a, b, c and 5 more". */
void namelist__print(const struct namelist *l, FILE *f);
/* The same into buf (cut to len); returns buf. */
const char *namelist__str(const struct namelist *l, char *buf, size_t len);

#endif
