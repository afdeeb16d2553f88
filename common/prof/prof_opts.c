/* A profiler's own options, from its table, on top of the shared ones (options.c). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prof_internal.h"

/* getopt values of own options without a short name: above the shared ones' (256..) */
#define OWN_BASE 2048

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

static int set_value(struct prof *p, const struct prof_opt *o, const char *arg)
{
	char *field = (char *)p->priv + o->offset, *end;
	double d;
	long v;

	switch (o->type) {
	case PROF_OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case PROF_OPT_LONG:
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < o->min || v > o->max)
			return prof_usage(p, "--%s must be a whole number from %ld to %ld, not '%s'",
					  o->name, o->min, o->max, arg);
		*(long *)field = v;
		return 0;
	case PROF_OPT_DOUBLE:
		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || !(d > (double)o->min))
			return prof_usage(p, "--%s must be a number above %ld, not '%s'", o->name,
					  o->min, arg);
		*(double *)field = d;
		return 0;
	case PROF_OPT_STRING:
		if (!*arg)
			return prof_usage(p, "--%s needs a value (%s)", o->name, o->arg);
		*(const char **)field = arg;
		return 0;
	case PROF_OPT_FN:
		return o->parse(p, p->priv, arg);
	}
	return prof_usage(p, "internal: option --%s has no type", o->name);
}

static int on_own(void *ctx, int c, const char *arg)
{
	struct prof *p = ctx;
	int i = 0;

	for (const struct prof_opt *o = p->decl->opts; o && o->name; o++, i++)
		if (c == (o->short_name ? o->short_name : OWN_BASE + i))
			return set_value(p, o, arg);
	return prof_usage(p, "unknown option");
}

int prof_opts__parse(struct prof *p, int argc, char **argv)
{
	struct option longopts[48];
	char shortopts[64] = "";
	int n = 0, i = 0, ret;

	for (const struct prof_opt *o = p->decl->opts; o && o->name && n < 47; o++, i++) {
		/* a metavariable in brackets ("[SPEC]") makes the value optional: --detail[=SPEC] */
		bool opt_arg = o->arg && o->arg[0] == '[';

		longopts[n++] = (struct option){ o->name,
						 opt_arg ? optional_argument
						 : o->arg ? required_argument
							  : no_argument,
						 NULL, o->short_name ? o->short_name : OWN_BASE + i };
		if (o->short_name && strlen(shortopts) + 4 < sizeof(shortopts)) {
			size_t l = strlen(shortopts);

			shortopts[l] = (char)o->short_name;
			shortopts[l + 1] = o->arg ? ':' : '\0';
			shortopts[l + 2] = opt_arg ? ':' : '\0';
			shortopts[l + 3] = '\0';
		}
	}
	longopts[n] = (struct option){ 0 };

	{
		const struct extra_opts extra = {
			.longopts = longopts,
			.shortopts = shortopts,
			.on_extra = on_own,
			.ctx = p,
		};
		char *text = prof_help_text(p->decl);

		ret = cli_opts_parse(&p->opts, argc, argv, p->decl->shared_opts, &extra,
				     text ? text : "");
		free(text);
	}
	return ret;
}
