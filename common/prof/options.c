/* The option parser: the shared table and a profiler's own through getopt_long, and --help. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <perfscope/perfscope.h>

#include "duration.h"
#include "options.h"
#include "percent.h"
#include "prof.h"
#include "target.h"

/* getopt values: a short letter, or these plus the entry's index (shared, then own) */
#define SHARED_BASE 256
#define OWN_BASE 2048

/*
 * perf's and perf-prof's spellings of options that perfscope spells differently or lacks: a perf
 * user's first try gets the equivalent, or what perfscope does instead, not a bare "unknown
 * option".
 */
static const struct {
	const char *perf; /* "-I" or "--timeout" (a long one also matches "--timeout=...") */
	unsigned int flag; /* the profiler must take the equivalent (~0u: any profiler) */
	const char *hint;
} perf_spellings[] = {
	{ "-I", CLI_OPT_INTERVAL, "-i MS prints every MS milliseconds (perf's -I)" },
	{ "--interval-print", CLI_OPT_INTERVAL, "-i MS prints every MS milliseconds" },
	{ "-A", CLI_OPT_PER_CPU, "--per-cpu gives one line per CPU (perf's -A)" },
	{ "--no-aggr", CLI_OPT_PER_CPU, "--per-cpu gives one line per CPU" },
	{ "--timeout", CLI_OPT_DURATION, "--duration S stops after S seconds (not milliseconds)" },
	{ "-j", CLI_OPT_FORMAT, "--format json prints JSON lines" },
	{ "--json", CLI_OPT_FORMAT, "--format json prints JSON lines" },
	{ "-x", CLI_OPT_FORMAT, "--format json is the machine-readable output" },
	{ "--field-separator", CLI_OPT_FORMAT, "--format json is the machine-readable output" },
	/* perf-prof's, with no equivalent here: say what perfscope does instead */
	{ "-V", ~0u, "'perfscope --version' prints the version" },
	{ "--version", ~0u, "'perfscope --version' prints the version" },
};

static int unknown_option(struct prof *p, unsigned int flags, const char *opt,
			  const struct option *longopts)
{
	char hint[448];
	struct psc_suggest sg;
	size_t len;

	for (size_t i = 0; i < sizeof(perf_spellings) / sizeof(perf_spellings[0]); i++) {
		const char *perf = perf_spellings[i].perf;
		size_t n = strlen(perf);

		if (!(perf_spellings[i].flag & flags) || strncmp(opt, perf, n) ||
		    (opt[n] && (perf[1] == '-' ? opt[n] != '=' : false)))
			continue;
		return prof_usage(p, "unknown option '%s'; %s", opt, perf_spellings[i].hint);
	}
	/* a long option mistyped: the closest of this profiler's long options */
	if (strncmp(opt, "--", 2) || !opt[2])
		return prof_usage(p, "unknown option '%s'", opt);
	len = strcspn(opt + 2, "=");
	psc_suggest__init(&sg, opt + 2, len);
	for (int i = 0; longopts[i].name; i++) {
		char disp[64];

		snprintf(disp, sizeof(disp), "--%s", longopts[i].name);
		psc_suggest__add(&sg, longopts[i].name, disp);
	}
	psc_suggest__format(&sg, hint, sizeof(hint));
	return prof_usage(p, "unknown option '%s'%s", opt, hint);
}

int prof_opt__has_arg(const struct prof_opt *o)
{
	switch (o->has_arg) {
	case PROF_ARG_NONE:
		return no_argument;
	case PROF_ARG_REQUIRED:
		return required_argument;
	case PROF_ARG_OPTIONAL:
		return optional_argument;
	case PROF_ARG_AUTO:
		break;
	}
	if (!o->arg)
		return no_argument;
	/* a metavariable in brackets ("[SPEC]") makes the value optional: --detail[=SPEC] */
	return o->arg[0] == '[' ? optional_argument : required_argument;
}

static bool table_has(const struct prof_opt *table, const char *name)
{
	for (const struct prof_opt *o = table; o && o->name; o++)
		if (!strcmp(o->name, name))
			return true;
	return false;
}

/* An entry's short letter for getopt: "k" a flag, "k:" a value, "k::" an optional value. */
static void add_short(char *shortopts, size_t size, const struct prof_opt *o)
{
	size_t l = strlen(shortopts);
	int has = prof_opt__has_arg(o);

	if (!o->short_name || l + 4 > size)
		return;
	shortopts[l++] = (char)o->short_name;
	/* an explicitly optional value keeps its letter a flag: perf's -g beside --call-graph=M */
	if (has == required_argument || (has == optional_argument && o->has_arg == PROF_ARG_AUTO))
		shortopts[l++] = ':';
	if (has == optional_argument && o->has_arg == PROF_ARG_AUTO)
		shortopts[l++] = ':';
	shortopts[l] = '\0';
}

/* A heatmap's file: written at the end, so its folder is checked now, not after the run. */
static int heatmap_path(struct prof *p, const struct prof_opt *o, char *field, const char *arg)
{
	const char *slash = strrchr(arg, '/');
	struct stat st;
	char dir[PATH_MAX];

	if (!*arg)
		return prof_usage(p, "--%s needs a file name for the heatmap (SVG)", o->name);
	if (!stat(arg, &st) && S_ISDIR(st.st_mode))
		return prof_usage(p, "--%s %s: a directory; give the SVG file to write", o->name,
				  arg);
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - arg) + 1 : 1, slash ? arg : ".");
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return prof_usage(p, "--%s %s: the folder %s does not exist", o->name, arg, dir);
	*(const char **)field = arg;
	return 0;
}

/* The field of entry o at base, from its value. 0 or 2 (said). */
static int opt__set(struct prof *p, const struct prof_opt *o, void *base, const char *arg)
{
	char *field = (char *)base + o->offset, *end;
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
			return prof_usage(p,
					  "--%s must be a whole number from %ld to %ld, not '%s'",
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
	case PROF_OPT_TEXT:
		*(const char **)field = arg;
		return 0;
	case PROF_OPT_FN:
		return o->parse(p, base, arg);
	case PROF_OPT_DURATION:
		if (duration__parse(arg, (uint64_t *)field))
			return prof_usage(p, "--%s takes a time: " DURATION_FORMS ", not '%s'",
					  o->name, arg);
		return 0;
	case PROF_OPT_PERCENT:
		if (percent__parse(arg, (double *)field))
			return prof_usage(p, "--%s takes " PERCENT_FORMS ", not '%s'", o->name,
					  arg);
		return 0;
	case PROF_OPT_EXPR:
		if (!*arg)
			return prof_usage(p, "--%s needs an expression over the event (%s)",
					  o->name, o->arg);
		*(const char **)field = arg;
		return 0;
	case PROF_OPT_HEATMAP:
		return heatmap_path(p, o, field, arg);
	}
	return prof_usage(p, "internal: option --%s has no type", o->name);
}

/*
 * getopt's value of shared entry i. A spelling of the entry before it (no help of its own, the
 * same parsing: --pids for --pid) takes that entry's value, so that getopt does not call an
 * abbreviation of both ambiguous (--pi) and the entry found for it is the one it spells.
 */
static int shared_value(int i)
{
	const struct prof_opt *t = cli_shared_opts;

	while (i > 0 && !t[i].help && t[i].type == t[i - 1].type && t[i].offset == t[i - 1].offset &&
	       t[i].parse == t[i - 1].parse)
		i--;
	return t[i].short_name ? t[i].short_name : SHARED_BASE + i;
}

/* opt__set, and the value as given kept where the entry says. */
static int opt__given(struct prof *p, const struct prof_opt *o, void *base, const char *arg)
{
	int ret = opt__set(p, o, base, arg);

	if (!ret && o->given)
		*(const char **)((char *)base + o->given - 1) = arg;
	return ret;
}

#define MAX_LONGOPTS 128

int opts__parse(struct prof *p, struct cli_opts *o, unsigned int flags, const struct prof_opt *own,
		void *own_base, int argc, char **argv, const char *help)
{
	struct option longopts[MAX_LONGOPTS];
	/* '+': stop at the command; ':': a missing value is told apart from an unknown option */
	char shortopts[192] = "+:hvV";
	const struct prof_opt *e;
	int nlong = 0, c, ret = 0, i;
	void *base;

	memset(o, 0, sizeof(*o));
	o->user_callchain = o->kernel_callchain = -1;
	for (i = 0; cli_shared_opts[i].name; i++) {
		e = &cli_shared_opts[i];
		if (!(e->flag & flags))
			continue;
		/* a profiler's own option of the same name wins over a shared spelling (trigger
		 * --cpu) */
		if (!table_has(own, e->name) && nlong < MAX_LONGOPTS - 4)
			longopts[nlong++] = (struct option){ e->name, prof_opt__has_arg(e), NULL,
							     shared_value(i) };
		add_short(shortopts, sizeof(shortopts), e);
	}
	longopts[nlong++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[nlong++] = (struct option){ "verbose", no_argument, NULL, 'v' };
	longopts[nlong++] = (struct option){ "version", no_argument, NULL, 'V' };
	for (i = 0; own && own[i].name && nlong < MAX_LONGOPTS - 1; i++) {
		longopts[nlong++] =
			(struct option){ own[i].name, prof_opt__has_arg(&own[i]), NULL,
					 own[i].short_name ? own[i].short_name : OWN_BASE + i };
		add_short(shortopts, sizeof(shortopts), &own[i]);
	}
	longopts[nlong] = (struct option){ 0 };

	/* optind 0: getopt starts afresh (its ordering state too); operands between options are
	 * taken one by one below, so '+' (stop at the first operand) stays */
	optind = 0;
	opterr = 0;
again:
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == 'h') {
			fputs(help, stdout);
			return 1;
		}
		if (c == 'v') {
			o->verbose++;
			continue;
		}
		if (c == 'V') { /* perf-prof's -V after the profiler's name */
			cli_print_version(stdout);
			return 1;
		}
		if (c == ':' && strncmp(argv[optind - 1], "--", 2) && optopt > 0 && optopt < 256)
			return prof_usage(p, "option '-%c' needs a value", optopt);
		if (c == ':')
			return prof_usage(p, "option '%s' needs a value", argv[optind - 1]);
		if (c == '?') {
			if (optopt && optopt < 256) {
				char opt[3] = { '-', (char)optopt, 0 };

				return unknown_option(p, flags, opt, longopts);
			}
			return unknown_option(p, flags, argv[optind - 1], longopts);
		}
		/* the entry: a shared one first (its letter wins), then the profiler's own */
		e = NULL;
		base = o;
		for (i = 0; !e && cli_shared_opts[i].name; i++)
			if ((cli_shared_opts[i].flag & flags) && c == shared_value(i))
				e = &cli_shared_opts[i];
		for (i = 0; !e && own && own[i].name; i++)
			if (c == (own[i].short_name ? own[i].short_name : OWN_BASE + i)) {
				e = &own[i];
				base = own_base;
			}
		if (!e)
			return prof_usage(p, "unknown option");
		/*
		 * perf's "--call-graph dwarf" (a separate word): the mode is taken when it is one,
		 * lbr too (refused with its reason, rather than run as the command)
		 */
		if (base == o && !strcmp(e->name, "call-graph") && !optarg && optind < argc &&
		    !strcmp(argv[optind - 1], "--call-graph") &&
		    (!strcmp(argv[optind], "fp") || !strcmp(argv[optind], "lbr") ||
		     !strncmp(argv[optind], "dwarf", 5)))
			optarg = argv[optind++];
		ret = opt__given(p, e, base, optarg);
		if (ret)
			return ret;
	}
	/*
	 * Operands (an expression, a GLOB) may come between options, as argp takes them (perf-prof
	 * expr -e EV 'EXPR' -v): each is kept and the options after it parsed; after "--" comes the
	 * command, untouched.
	 */
	if ((flags & CLI_OPT_POSITIONAL) && optind < argc &&
	    !(optind > 1 && !strcmp(argv[optind - 1], "--"))) {
		if (o->nr_positional == CLI_MAX_POSITIONAL)
			return prof_usage(p, "too many arguments: '%s'", argv[optind]);
		o->positional_buf[o->nr_positional++] = argv[optind++];
		o->positional = o->positional_buf;
		goto again;
	}
	/* getopt ate the "--": with nothing after it, the command the user meant to give is missing
	 * (silently counting the whole machine instead would be a surprise) */
	if ((flags & CLI_OPT_TARGET) && optind == argc && optind > 1 &&
	    !strcmp(argv[optind - 1], "--"))
		return prof_usage(p, "'--' is not followed by a command to run; give one "
				     "(-- COMMAND ARGS...) or leave '--' out");
	if (optind < argc) {
		if (flags & CLI_OPT_TARGET)
			o->command = argv + optind;
		else
			return prof_usage(p, "unexpected argument '%s'", argv[optind]);
	}
	if (!!o->pid + !!o->tid + !!o->cgroup + !!o->command > 1)
		return prof_usage(p, "choose one target: -p PID, -t TID, -G CGROUP or -- COMMAND");
	/* perf-prof follows a process's new tasks only when asked; here -p/-t never do yet */
	if (o->inherit && (o->pid || o->tid) && !(flags & CLI_OPT_IDS_FOLLOW))
		return prof_usage(p,
				  "--inherit/--ptrace with -%c: only the threads the process has "
				  "when tracing starts are followed here, not the tasks it creates "
				  "later; run it under perfscope (-- COMMAND follows its children "
				  "and threads) or trace its cgroup (-G)",
				  o->pid ? 'p' : 't');
	if (o->order && o->no_order)
		return prof_usage(p, "--order and --no-order contradict each other; give one");
	if (o->cpus && o->all_cpus)
		return prof_usage(p, "-a (all CPUs) and -C %s contradict each other; give one",
				  o->cpus);
	return 0;
}

int cli_opts_parse(struct cli_opts *o, int argc, char **argv, unsigned int flags, const char *help)
{
	struct prof p = { .name = argv[0] };

	return opts__parse(&p, o, flags, NULL, NULL, argc, argv, help);
}

void cli_opts_each(unsigned int flags,
		   void (*fn)(void *ctx, const char *name, int short_name, const char *arg,
			      int has_arg, bool listed),
		   void *ctx)
{
	for (const struct prof_opt *so = cli_shared_opts; so->name; so++)
		if (so->flag & flags)
			fn(ctx, so->name, so->short_name, so->arg, prof_opt__has_arg(so),
			   so->help != NULL);
}

void opts__help(const struct prof_opt *table, unsigned int flags, const char *events_help,
		const struct prof_opt *own, void (*emit)(void *ctx, const char *line), void *ctx)
{
	char line[320], left[64], names[64];

	for (const struct prof_opt *so = table; so && so->name; so++) {
		const char *text = so->help, *nl, *sep = " ";
		bool first = true;
		size_t used = 0;

		if (!text || (so->flag && !(so->flag & flags)))
			continue;
		if (so->flag == CLI_OPT_EVENTS && events_help)
			text = events_help;
		/* the spellings that follow are listed here: "-C, --cpu, --cpus CPUS"; one the
		 * profiler's own options take over is left out after a short name or a spelling */
		names[0] = '\0';
		for (const struct prof_opt *a = so; a->name && (a == so || !a->help); a++) {
			if (table_has(own, a->name) && (so->short_name || used))
				continue;
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s--%s",
						 used ? ", " : "", a->name);
			if (used >= sizeof(names))
				used = sizeof(names) - 1;
		}
		/* an own option's optional value is glued to its name: --detail[=SPEC] */
		if (!so->arg)
			sep = "";
		else if (so->has_arg == PROF_ARG_AUTO && so->arg[0] == '[')
			sep = "";
		if (so->short_name)
			snprintf(left, sizeof(left), "-%c, %s%s%s", so->short_name, names, sep,
				 so->arg ? so->arg : "");
		else
			snprintf(left, sizeof(left), "    %s%s%s", names, sep,
				 so->arg ? so->arg : "");
		if (strlen(left) > 24) {
			/* too long to share a line with its text */
			snprintf(line, sizeof(line), "  %s", left);
			emit(ctx, line);
			first = false;
		}
		/* the text's lines, the first beside the option, the others under it */
		for (; text; first = false) {
			nl = strchr(text, '\n');
			snprintf(line, sizeof(line), "  %-24s %.*s", first ? left : "",
				 nl ? (int)(nl - text) : (int)strlen(text), text);
			emit(ctx, line);
			text = nl ? nl + 1 : NULL;
		}
	}
}

static int log_level = -1;

/* fmt comes from the library's own printf-style calls, checked where they are made. */
__attribute__((format(printf, 2, 0))) static void log_to_stderr(enum psc_log_level level,
								const char *fmt, va_list ap)
{
	if ((int)level > log_level)
		return;
	fputs("perfscope: ", stderr);
	vfprintf(stderr, fmt, ap);
}

void cli_opts_target_spec(const struct cli_opts *o, struct target_spec *spec)
{
	*spec = (struct target_spec){
		.cpus = o->cpus,
		.all_cpus = o->all_cpus,
		.pids = o->pids,
		.tids = o->tids,
		.nr_pids = o->nr_pids,
		.nr_tids = o->nr_tids,
		.tasks_text = o->tasks_text,
		.cgroup = o->cgroup,
		.command = o->command,
	};
}

bool cli_opts_task_target(const struct cli_opts *o)
{
	struct target_spec spec;

	cli_opts_target_spec(o, &spec);
	return target_spec__tasks(&spec);
}

void cli_print_version(FILE *f)
{
	fprintf(f, "perfscope %s (libperfscope %s)\n", PERFSCOPE_VERSION, psc_version());
}

void cli_setup_log(int verbose)
{
	/* Warnings always; -v adds info, -vv debug; < 0: nothing (what was said once already) */
	log_level = verbose < 0	   ? -1
		    : verbose >= 2 ? PSC_LOG_DEBUG
		    : verbose == 1 ? PSC_LOG_INFO
				   : PSC_LOG_WARN;
	psc_set_log(log_to_stderr);
}
