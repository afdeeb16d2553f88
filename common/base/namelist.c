/* A bounded list of names for one summary line, instead of a line for each. */
#include <stdio.h>

#include "namelist.h"

void namelist__add(struct namelist *l, const char *name)
{
	size_t room = l->limit - l->used;
	int n;

	l->nr++;
	/* once one name did not fit, the later ones are counted too: the list keeps its order */
	n = l->more ? -1 : snprintf(l->buf + l->used, room, "%s%s", l->used ? ", " : "", name);
	if (n < 0 || (size_t)n >= room) {
		l->buf[l->used] = '\0';
		l->more++;
		return;
	}
	l->used += (size_t)n;
}

const char *namelist__str(const struct namelist *l, char *buf, size_t len)
{
	if (l->more)
		snprintf(buf, len, "%s%s%d more", l->buf, l->used ? " and " : "", l->more);
	else
		snprintf(buf, len, "%s", l->buf);
	return buf;
}

void namelist__print(const struct namelist *l, FILE *f)
{
	char buf[sizeof(l->buf) + 32];

	fputs(namelist__str(l, buf, sizeof(buf)), f);
}
