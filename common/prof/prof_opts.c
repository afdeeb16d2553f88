/* A declared profiler's command line: the shared option table and its own, one parser. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "prof_internal.h"

int prof_usage(const struct prof *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perfscope %s: ", p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nSee 'perfscope help %s'.\n", p->name);
	return PROF_USAGE;
}

int prof_opts__parse(struct prof *p, int argc, char **argv)
{
	char *text = prof_help_text(p->decl);
	int ret;

	ret = opts__parse(p, &p->opts, p->decl->shared_opts, p->decl->opts, p->priv, argc, argv,
			  text ? text : "");
	free(text);
	return ret;
}
