/* `perfscope help --table [--format json]`: the profiler table as data, for the test suites. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "profiler.h"
#include "table.h"

/* s as a JSON string (the declarations are ASCII text; control characters are escaped) */
static void jstr(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

/*
 * What values an option takes, from its metavariable and type: the sweep (tests/conformance/
 * sweep.py) generates values by kind, so that a new option with a known metavariable is swept
 * by being declared. "string" is the rest: values that mean something only to that profiler.
 */
static const char *arg_kind(const char *arg, int has_arg, const char *type)
{
	static const struct {
		const char *meta, *kind;
	} kinds[] = {
		{ "EVENTS", "events" }, { "CPUS", "cpus" },   { "PID,...", "pids" },
		{ "TID,...", "pids" },	{ "PID", "pid" },     { "CGROUP", "cgroup" },
		{ "MS", "ms" },		{ "S", "seconds" },   { "N", "int" },
		{ "PAGES", "pages" },	{ "PCT", "percent" }, { "F", "format" },
		{ "FILE", "file" },	{ "DIR", "dir" },     { "PATH", "path" },
		{ "T", "time" },	{ "HZ", "int" },      { "PERIOD", "int" },
		{ "SIZE", "size" },	{ "EXPR", "expr" },   { "MIB", "int" },
	};

	if (has_arg == no_argument)
		return "none";
	if (has_arg == optional_argument || (arg && arg[0] == '['))
		return "optional";
	if (!strcmp(type, "long"))
		return "int";
	/* the table's value types say their kind whatever the metavariable */
	if (!strcmp(type, "duration"))
		return "time";
	if (!strcmp(type, "percent") || !strcmp(type, "expr"))
		return type;
	if (!strcmp(type, "heatmap"))
		return "file";
	if (!strcmp(type, "double"))
		return "number";
	for (size_t i = 0; arg && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(arg, kinds[i].meta))
			return kinds[i].kind;
	return "string";
}

static void opt_json(const char *name, int short_name, const char *arg, int has_arg,
		     const char *type, bool listed, bool first)
{
	printf("%s{\"name\":", first ? "" : ",");
	jstr(name);
	if (short_name)
		printf(",\"short\":\"%c\"", short_name);
	printf(",\"arg\":");
	jstr(arg);
	printf(",\"type\":\"%s\",\"kind\":\"%s\"", type, arg_kind(arg, has_arg, type));
	if (!listed)
		printf(",\"listed\":false");
}

static bool first_shared;
static void shared_json(void *ctx, const char *name, int short_name, const char *arg, int has_arg,
			bool listed)
{
	opt_json(name, short_name, arg, has_arg, has_arg == no_argument ? "flag" : "shared", listed,
		 first_shared);
	putchar('}');
	first_shared = false;
}

static const char *const own_types[] = {
	[PROF_OPT_FLAG] = "flag",
	[PROF_OPT_LONG] = "long",
	[PROF_OPT_DOUBLE] = "double",
	[PROF_OPT_STRING] = "string",
	[PROF_OPT_FN] = "fn",
	[PROF_OPT_TEXT] = "text",
	[PROF_OPT_DURATION] = "duration",
	[PROF_OPT_PERCENT] = "percent",
	[PROF_OPT_EXPR] = "expr",
	[PROF_OPT_HEATMAP] = "heatmap",
};

static const char *const attr_kinds[] = {
	[PROF_ATTR_FLAG] = "flag", [PROF_ATTR_FIELD] = "field", [PROF_ATTR_STRING] = "string",
	[PROF_ATTR_NUM] = "num",   [PROF_ATTR_EXPR] = "expr",
};

static void needs_json(unsigned int needs)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} bits[] = {
		{ PROF_EVENTS, "events" },
		{ PROF_RINGS, "rings" },
		{ PROF_ORDER, "order" },
		{ PROF_COMM, "comm" },
		{ PROF_TP_FORMAT, "tp_format" },
		{ PROF_STACKS, "stacks" },
		{ PROF_TEXT_STDERR, "text_stderr" },
		{ PROF_WATCH_TASKS, "watch_tasks" },
	};
	bool first = true;

	putchar('[');
	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++)
		if (needs & bits[i].bit) {
			printf("%s\"%s\"", first ? "" : ",", bits[i].name);
			first = false;
		}
	putchar(']');
}

/* The default -e groups joined by ',', as the skeleton joins them; null when none. */
static void default_events_json(const char *const *g)
{
	char buf[4096] = "";
	size_t n = 0;

	for (; g && *g && n < sizeof(buf); g++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? "," : "", *g);
	jstr(g ? buf : NULL);
}

/* One JSON object per line and profiler. */
static void profiler_json(const struct profiler *d)
{
	bool first = true;

	printf("{\"name\":");
	jstr(d->name);
	printf(",\"plain\":%s,\"needs\":", d->run ? "true" : "false");
	needs_json(d->needs);
	printf(",\"default_events\":");
	default_events_json(d->default_groups);
	printf(",\"conformance_args\":");
	jstr(d->conformance_args);
	printf(",\"shared\":[");
	first_shared = true;
	if (!d->run)
		cli_opts_each(d->shared_opts, shared_json, NULL);
	printf("],\"opts\":[");
	for (const struct prof_opt *o = d->opts; o && o->name; o++) {
		bool opt_arg = o->arg && o->arg[0] == '[';

		opt_json(o->name, o->short_name, o->arg,
			 opt_arg  ? optional_argument
			 : o->arg ? required_argument
				  : no_argument,
			 own_types[o->type], true, first);
		if (o->type == PROF_OPT_LONG || o->type == PROF_OPT_DOUBLE)
			printf(",\"min\":%ld,\"max\":%ld", o->min, o->max);
		putchar('}');
		first = false;
	}
	printf("],\"attrs\":[");
	first = true;
	for (const struct prof_attr *a = d->attrs; a && a->name; a++) {
		printf("%s{\"name\":", first ? "" : ",");
		jstr(a->name);
		printf(",\"kind\":\"%s\",\"repeat\":%s,\"any_type\":%s}", attr_kinds[a->kind],
		       a->repeat ? "true" : "false", a->any_type ? "true" : "false");
		first = false;
	}
	printf("]}\n");
}

int table_print(bool json)
{
	for (int i = 0; profilers[i]; i++) {
		if (json)
			profiler_json(profilers[i]);
		else
			printf("%s\t%s\n", profilers[i]->name,
			       profilers[i]->conformance_args ? profilers[i]->conformance_args
							      : "");
	}
	return 0;
}
