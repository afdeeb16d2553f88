/* Shared option parsing for every profiler: one place that knows -e -C -p -t -G -i -m --format ...
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "options.h"
#include "target.h"

enum {
	OPT_DURATION = 256,
	OPT_ORDER,
	OPT_NO_ORDER,
	OPT_PER_CPU,
	OPT_FORMAT,
	OPT_WATERMARK,
	OPT_USER_CC,
	OPT_NO_USER_CC,
	OPT_KERNEL_CC,
	OPT_NO_KERNEL_CC,
	OPT_FLAME,
	OPT_OVERWRITE,
	OPT_SAMPLING_LIMIT,
	OPT_USAGE_SELF,
	OPT_MONOTONIC,
	OPT_TSC,
	OPT_KVMCLOCK,
	OPT_CLOCK_OFFSET,
	OPT_INHERIT,
	OPT_CPUS_ALIAS,
	OPT_PIDS_ALIAS,
	OPT_TIDS_ALIAS,
	OPT_CGROUPS_ALIAS,
	OPT_OUTPUT_QUEUE,
};

struct shared_opt {
	struct option lo;
	unsigned int flag; /* which CLI_OPT_* enables it */
	const char *shortopt;
	const char *arg; /* metavariable in --help; NULL for flags */
	const char *help; /* NULL: an alias, not listed on its own */
};

/* In --help order. perf-prof's spellings (--cpus, --pids, --tids, --cgroups) are aliases. */
/* clang-format off: one option, its flag, spellings and help together */
static const struct shared_opt shared_opts[] = {
	{ { "event", required_argument, NULL, 'e' },
	  CLI_OPT_EVENTS, "e:", "EVENTS",
	  "events: sys:name[/filter/ATTR/.../], perf's names (page-faults),\n"
	  "PMU events (msr/tsc/); repeatable: -e a -e b takes both" },
	{ { "all-cpus", no_argument, NULL, 'a' },
	  CLI_OPT_CPUS, "a", NULL,
	  "every online CPU (the default without a target); with a\n"
	  "COMMAND, the whole machine while it runs" },
	{ { "cpu", required_argument, NULL, 'C' },
	  CLI_OPT_CPUS, "C:", "CPUS",
	  "these CPUs only: 0-3,6" },
	{ { "cpus", required_argument, NULL, 'C' }, CLI_OPT_CPUS, NULL, NULL, NULL },
	{ { "per-cpu", no_argument, NULL, OPT_PER_CPU },
	  CLI_OPT_PER_CPU, NULL, NULL,
	  "one line per CPU and event (system-wide modes)" },
	{ { "pid", required_argument, NULL, 'p' },
	  CLI_OPT_TARGET, "p:", "PID,...",
	  "the threads of processes (a list: 12,34), until they exit" },
	{ { "pids", required_argument, NULL, 'p' }, CLI_OPT_TARGET, NULL, NULL, NULL },
	{ { "tid", required_argument, NULL, 't' },
	  CLI_OPT_TARGET, "t:", "TID,...",
	  "these threads (a list: 12,34), until they exit" },
	{ { "tids", required_argument, NULL, 't' }, CLI_OPT_TARGET, NULL, NULL, NULL },
	{ { "cgroup", required_argument, NULL, 'G' },
	  CLI_OPT_TARGET, "G:", "CGROUP",
	  "tasks of a cgroup: a path under the cgroup2 mount, or absolute" },
	{ { "cgroups", required_argument, NULL, 'G' }, CLI_OPT_TARGET, NULL, NULL, NULL },
	{ { "interval", required_argument, NULL, 'i' },
	  CLI_OPT_INTERVAL, "i:", "MS",
	  "print every MS milliseconds" },
	{ { "duration", required_argument, NULL, OPT_DURATION },
	  CLI_OPT_DURATION, NULL, "S",
	  "stop after S seconds (a COMMAND still running is sent SIGTERM)" },
	{ { "exit-N", required_argument, NULL, 'N' }, CLI_OPT_EXIT_N, "N:", "N",
	  "stop after N events (0: no limit)" },
	{ { "mmap-pages", required_argument, NULL, 'm' }, CLI_OPT_MMAP, "m:", "PAGES",
	  "ring buffer pages per CPU, a power of two (default: from what\n"
	  "the kernel lets this user lock)" },
	{ { "watermark", required_argument, NULL, OPT_WATERMARK },
	  CLI_OPT_MMAP, NULL, "PCT",
	  "wake up when a ring is PCT% full (1-100, default 25;\n0: at every event, as perf-prof)" },
	{ { "overwrite", no_argument, NULL, OPT_OVERWRITE },
	  CLI_OPT_OVERWRITE, NULL, NULL,
	  "flight recorder: rings keep overwriting the oldest events and\n"
	  "are read once, when the run ends (the last moments before it)" },
	{ { "order", no_argument, NULL, OPT_ORDER },
	  CLI_OPT_ORDER, NULL, NULL,
	  "merge events of all CPUs in time order" },
	{ { "no-order", no_argument, NULL, OPT_NO_ORDER },
	  CLI_OPT_ORDER, NULL, NULL,
	  "read each CPU's ring in turn: cheaper, CPUs interleave" },
	/* perf-prof's switches for what a streaming profiler always does here */
	{ { "monotonic", no_argument, NULL, OPT_MONOTONIC }, CLI_OPT_ORDER, NULL, NULL,
	  "times are CLOCK_MONOTONIC (always; perf-prof's option)" },
	{ { "inherit", no_argument, NULL, OPT_INHERIT }, CLI_OPT_ORDER, NULL, NULL,
	  "follow the children and new threads of -- COMMAND\n"
	  "(always done; perf-prof's options; not with -p or -t)" },
	{ { "ptrace", no_argument, NULL, OPT_INHERIT }, CLI_OPT_ORDER, NULL, NULL, NULL },
	/*
	 * perf-prof's time conversions (TSC, a guest's kvmclock, an offset on them): taken so that
	 * its command lines run, with a note that times stay CLOCK_MONOTONIC, as perf-prof itself
	 * goes on where it cannot convert
	 */
	{ { "tsc", no_argument, NULL, OPT_TSC }, CLI_OPT_ORDER, NULL, NULL,
	  "perf-prof's time conversions: taken, with a note;\ntimes stay CLOCK_MONOTONIC" },
	{ { "kvmclock", required_argument, NULL, OPT_KVMCLOCK }, CLI_OPT_ORDER, NULL, NULL, NULL },
	{ { "clock-offset", required_argument, NULL, OPT_CLOCK_OFFSET }, CLI_OPT_ORDER, NULL, NULL,
	  NULL },
	/* perf-prof's -g/--call-graph flag, and perf's --call-graph MODE (taken in cli_opts_parse) */
	{ { "call-graph", optional_argument, NULL, 'g' }, CLI_OPT_CALLCHAIN, "g", "[fp|dwarf[,SIZE]]",
	  "kernel and user stack of every event; user stacks by frame\n"
	  "pointers (fp, -g), or dwarf: unwound from SIZE bytes of stack\n"
	  "copied per sample (default 8192, at most 65528)" },
	{ { "user-callchain", optional_argument, NULL, OPT_USER_CC },
	  CLI_OPT_CALLCHAIN, NULL, NULL,
	  "user stacks only (--user-callchain=fp: frame pointers;\n"
	  "=dwarf: unwound as --call-graph dwarf)" },
	{ { "no-user-callchain", no_argument, NULL, OPT_NO_USER_CC },
	  CLI_OPT_CALLCHAIN, NULL, NULL,
	  "stacks without their user part" },
	{ { "kernel-callchain", no_argument, NULL, OPT_KERNEL_CC },
	  CLI_OPT_CALLCHAIN, NULL, NULL,
	  "kernel stacks only (with -g: both)" },
	{ { "no-kernel-callchain", no_argument, NULL, OPT_NO_KERNEL_CC },
	  CLI_OPT_CALLCHAIN, NULL, NULL,
	  "stacks without their kernel part" },
	{ { "flame-graph", required_argument, NULL, OPT_FLAME },
	  CLI_OPT_FLAME, NULL, "FILE",
	  "stacks counted as folded text (flamegraph.pl, inferno,\n"
	  "speedscope) in FILE, written at the end" },
	{ { "sampling-limit", required_argument, NULL, OPT_SAMPLING_LIMIT },
	  CLI_OPT_SAMPLING_LIMIT, NULL, "N",
	  "at most N events per second and CPU; the rest are counted\nas dropped" },
	{ { "format", required_argument, NULL, OPT_FORMAT },
	  CLI_OPT_FORMAT, NULL, "F",
	  "text (default) or json: one object per line" },
	{ { "output", required_argument, NULL, 'o' },
	  CLI_OPT_OUTPUT, "o:", "FILE",
	  "write to FILE, not standard output (COMMAND keeps it)" },
	{ { "output-queue", required_argument, NULL, OPT_OUTPUT_QUEUE },
	  CLI_OPT_OUTPUT_QUEUE, NULL, "MIB",
	  "memory for events a slow reader of the pipe has not taken\n"
	  "yet, in MiB (default 192); past it they are dropped, counted" },
	{ { "usage-self", required_argument, NULL, OPT_USAGE_SELF },
	  CLI_OPT_USAGE_SELF, NULL, "MS",
	  "print perfscope's own CPU use every MS milliseconds" },
	{ { "quiet", no_argument, NULL, 'q' },
	  CLI_OPT_QUIET, "q", NULL,
	  "no statistics lines unless events were lost" },
};
/* clang-format on */
#define NR_SHARED (sizeof(shared_opts) / sizeof(shared_opts[0]))

static int usage_error(const char *prof, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int usage_error(const char *prof, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perfscope %s: ", prof);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nSee 'perfscope help %s'.\n", prof);
	return 2;
}

static int parse_long(const char *prof, const char *what, const char *arg, long min, long max,
		      long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return usage_error(prof, "%s must be a whole number from %ld to %ld, not '%s'",
				   what, min, max, arg);
	*out = v;
	return 0;
}

static int parse_pid(const char *prof, const char *what, const char *arg, pid_t *out)
{
	long v;
	int err = parse_long(prof, what, arg, 1, 4194304, &v);

	if (!err)
		*out = (pid_t)v;
	return err;
}

/* "PID[,PID...]" as perf-prof and perf take it: each a live-looking pid, none twice. */
static int parse_pid_list(const char *prof, const char *what, const char *arg, pid_t *out, int *nr)
{
	const char *p = arg;
	char one[16];

	*nr = 0;
	do {
		size_t len = strcspn(p, ",");
		pid_t v;
		int err;

		if (!len || len >= sizeof(one))
			return usage_error(prof, "%s takes a list such as 12,34, not '%s'", what,
					   arg);
		if (*nr == CLI_MAX_TASKS)
			return usage_error(prof, "%s: at most %d entries", what, CLI_MAX_TASKS);
		memcpy(one, p, len);
		one[len] = '\0';
		err = parse_pid(prof, what, one, &v);
		if (err)
			return err;
		for (int i = 0; i < *nr; i++)
			if (out[i] == v)
				return usage_error(prof, "%s: %d is given twice", what, (int)v);
		out[(*nr)++] = v;
		p += len;
	} while (*p++ == ',');
	return 0;
}

/*
 * "fp", "dwarf" or "dwarf,SIZE" (perf's --call-graph record modes). SIZE is rounded up to a
 * multiple of 8, as perf does, since the kernel refuses any other.
 */
static int parse_call_graph(struct cli_opts *o, const char *prof, const char *opt, const char *arg)
{
	unsigned long long size = CLI_STACK_DUMP_DEFAULT;
	const char *comma = strchr(arg, ',');
	size_t mode_len = comma ? (size_t)(comma - arg) : strlen(arg);

	if (mode_len == 2 && !strncmp(arg, "fp", 2) && !comma) {
		o->dwarf = false;
		return 0;
	}
	if (mode_len == 3 && !strncmp(arg, "lbr", 3) && !comma) {
		/* perf's third mode: the PMU's last branch records, Intel only */
		if (access("/sys/bus/event_source/devices/cpu/caps/branches", F_OK))
			return usage_error(prof,
					   "%s=lbr: not supported on this machine (no LBR: its CPU "
					   "PMU has no branch records); use 'fp' or 'dwarf'",
					   opt);
		return usage_error(prof,
				   "%s=lbr: LBR call stacks are not supported by perfscope; "
				   "use 'fp' or 'dwarf'",
				   opt);
	}
	if (mode_len != 5 || strncmp(arg, "dwarf", 5))
		return usage_error(prof,
				   "%s=%s: the user stacks are 'fp' (frame pointers) or "
				   "'dwarf[,SIZE]' (unwound from a copy of the stack)",
				   opt, arg);
	if (comma) {
		char *end;

		errno = 0;
		size = strtoull(comma + 1, &end, 0);
		if (errno || end == comma + 1 || *end || comma[1] == '-' || !size)
			return usage_error(prof,
					   "%s=%s: SIZE is the bytes of user stack copied per "
					   "sample, e.g. dwarf,16384",
					   opt, arg);
		size = (size + 7) & ~7ull;
		if (size > CLI_STACK_DUMP_MAX)
			return usage_error(prof,
					   "%s=%s: the kernel copies at most %d bytes of user stack "
					   "per sample (a sample's size is 16 bits); give a SIZE up "
					   "to %d",
					   opt, arg, CLI_STACK_DUMP_MAX, CLI_STACK_DUMP_MAX);
	}
	o->dwarf = true;
	o->stack_dump_size = (unsigned int)size;
	return 0;
}

int cli_opts_add_events(struct cli_opts *o, const char *events)
{
	/* perf stat -e a -e b counts both: the lists are joined, not replaced */
	size_t have = o->events ? strlen(o->events) : 0, add = strlen(events);

	if (!o->events) {
		o->nr_event_args = 1;
		o->event_arg_pos[0] = 0;
		o->events = events;
		return 0;
	}
	if (have + 1 + add >= sizeof(o->events_joined))
		return -E2BIG;
	if (o->events != o->events_joined)
		memcpy(o->events_joined, o->events, have);
	o->events_joined[have] = ',';
	memcpy(o->events_joined + have + 1, events, add + 1);
	o->events = o->events_joined;
	if (o->nr_event_args < CLI_MAX_EVENT_ARGS)
		o->event_arg_pos[o->nr_event_args++] = (int)have + 1;
	return (int)have + 1;
}

static int handle_shared(struct cli_opts *o, const char *prof, int c, const char *arg)
{
	long v;
	int err;

	switch (c) {
	case 'e':
		if (!*arg)
			return usage_error(
				prof,
				"-e needs an event list, e.g. -e page-faults,sched:sched_switch");
		if (cli_opts_add_events(o, arg) < 0)
			return usage_error(prof,
					   "the -e lists together are longer than %zu characters; use "
					   "wildcards (sched:sched_*)",
					   sizeof(o->events_joined) - 1);
		return 0;
	case 'C':
		o->cpus = arg;
		return 0;
	case 'a':
		o->all_cpus = true;
		return 0;
	case OPT_PER_CPU:
		o->per_cpu = true;
		return 0;
	case 'p':
		if ((err = parse_pid_list(prof, "-p PID", arg, o->pids, &o->nr_pids)))
			return err;
		o->pid = o->pids[0];
		o->tasks_text = arg;
		return 0;
	case 't':
		if ((err = parse_pid_list(prof, "-t TID", arg, o->tids, &o->nr_tids)))
			return err;
		o->tid = o->tids[0];
		o->tasks_text = arg;
		return 0;
	case 'G':
		o->cgroup = arg;
		return 0;
	case 'i':
		err = parse_long(prof, "-i (interval in milliseconds)", arg, 1, 86400000, &v);
		if (!err)
			o->interval_ms = v;
		return err;
	case OPT_DURATION: {
		char *end;
		double d;

		errno = 0;
		d = strtod(arg, &end);
		if (errno || end == arg || *end || !(d > 0) || d > 31536000)
			return usage_error(
				prof, "--duration must be a positive number of seconds, not '%s'",
				arg);
		o->duration_s = d;
		return 0;
	}
	case 'm':
		err = parse_long(prof, "-m (ring-buffer pages per CPU)", arg, 1, 1 << 20, &v);
		if (err)
			return err;
		if (v & (v - 1))
			return usage_error(
				prof,
				"-m %ld is not a power of two (the kernel needs 1, 2, 4, 8 ... pages)",
				v);
		o->mmap_pages = (unsigned int)v;
		return 0;
	case OPT_ORDER:
		o->order = true;
		return 0;
	case OPT_NO_ORDER:
		o->no_order = true;
		return 0;
	case OPT_MONOTONIC:
		return 0;
	case OPT_TSC:
	case OPT_KVMCLOCK:
	case OPT_CLOCK_OFFSET:
		fprintf(stderr,
			"perfscope %s: --%s: times stay CLOCK_MONOTONIC here; no TSC or kvmclock "
			"conversion is done, nor an offset added to one\n",
			prof,
			c == OPT_TSC ? "tsc" : c == OPT_KVMCLOCK ? "kvmclock" : "clock-offset");
		return 0;
	case OPT_INHERIT:
		o->inherit = true;
		return 0;
	case OPT_WATERMARK:
		err = parse_long(prof, "--watermark (percent of a ring)", arg, 0, 100, &v);
		if (!err) /* 0, as perf-prof: a wakeup for every event */
			o->watermark_pct = v ? (int)v : -1;
		return err;
	case OPT_USER_CC:
		/* perf-prof's record modes: fp, dwarf (a SIZE too, as --call-graph takes it) */
		if (arg && (err = parse_call_graph(o, prof, "--user-callchain", arg)))
			return err;
		o->user_callchain = 1;
		return 0;
	case OPT_NO_USER_CC:
		o->user_callchain = 0;
		return 0;
	case OPT_KERNEL_CC:
		o->kernel_callchain = 1;
		return 0;
	case OPT_NO_KERNEL_CC:
		o->kernel_callchain = 0;
		return 0;
	case OPT_FLAME:
		if (!*arg)
			return usage_error(prof, "--flame-graph needs a file name");
		o->flame_graph = arg;
		return 0;
	case OPT_OVERWRITE:
		o->overwrite = true;
		return 0;
	case 'N': {
		char *end;

		/* 0 is perf-prof's "no limit", its default: a perf-prof command line may spell it */
		errno = 0;
		o->exit_n = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || *arg == '-')
			return usage_error(prof,
					   "-N must be a whole number of events (0: no limit), not '%s'",
					   arg);
		return 0;
	}
	case OPT_SAMPLING_LIMIT:
		err = parse_long(prof, "--sampling-limit (events per second)", arg, 1, 1000000000,
				 &v);
		if (!err)
			o->sampling_limit = (unsigned long)v;
		return err;
	case OPT_OUTPUT_QUEUE:
		err = parse_long(prof, "--output-queue (MiB)", arg, 1, 1 << 20, &v);
		if (!err)
			o->output_queue_mib = (unsigned long)v;
		return err;
	case OPT_USAGE_SELF:
		err = parse_long(prof, "--usage-self (milliseconds)", arg, 1, 86400000, &v);
		if (!err)
			o->usage_self_ms = v;
		return err;
	case 'q':
		o->quiet = true;
		return 0;
	case 'g':
		o->callchain = true;
		return arg ? parse_call_graph(o, prof, "--call-graph", arg) : 0;
	case OPT_FORMAT:
		if (!strcmp(arg, "text"))
			o->format = FORMAT_TEXT;
		else if (!strcmp(arg, "json"))
			o->format = FORMAT_JSON;
		else
			return usage_error(prof, "--format must be 'text' or 'json', not '%s'",
					   arg);
		return 0;
	case 'o':
		if (!*arg)
			return usage_error(prof, "-o needs a file name, e.g. -o /tmp/out.txt");
		o->output = arg;
		return 0;
	}
	return usage_error(prof, "internal: unhandled option %d", c);
}

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

static int unknown_option(const char *prof, unsigned int flags, const char *opt,
			  const struct option *longopts)
{
	char hint[448];
	struct psc_suggest sg;
	size_t len;

	for (size_t i = 0; i < sizeof(perf_spellings) / sizeof(perf_spellings[0]); i++) {
		const char *p = perf_spellings[i].perf;
		size_t n = strlen(p);

		if (!(perf_spellings[i].flag & flags) || strncmp(opt, p, n) ||
		    (opt[n] && (p[1] == '-' ? opt[n] != '=' : false)))
			continue;
		return usage_error(prof, "unknown option '%s'; %s", opt, perf_spellings[i].hint);
	}
	/* a long option mistyped: the closest of this profiler's long options */
	if (strncmp(opt, "--", 2) || !opt[2])
		return usage_error(prof, "unknown option '%s'", opt);
	len = strcspn(opt + 2, "=");
	psc_suggest__init(&sg, opt + 2, len);
	for (int i = 0; longopts[i].name; i++) {
		char disp[64];

		snprintf(disp, sizeof(disp), "--%s", longopts[i].name);
		psc_suggest__add(&sg, longopts[i].name, disp);
	}
	psc_suggest__format(&sg, hint, sizeof(hint));
	return usage_error(prof, "unknown option '%s'%s", opt, hint);
}

int cli_opts_parse(struct cli_opts *o, int argc, char **argv, unsigned int flags,
		       const struct extra_opts *extra, const char *help)
{
	struct option longopts[64];
	/* '+': stop at the command; ':': a missing value is told apart from an unknown option */
	char shortopts[128] = "+:hvV";
	const char *prof = argv[0];
	int nlong = 0, c, ret = 0;

	memset(o, 0, sizeof(*o));
	o->user_callchain = o->kernel_callchain = -1;
	for (size_t i = 0; i < NR_SHARED; i++) {
		bool own = false;

		if (!(shared_opts[i].flag & flags))
			continue;
		/* a profiler's own option of the same name wins over a shared alias (trigger --cpu) */
		for (int k = 0; extra && extra->longopts && extra->longopts[k].name; k++)
			own |= !strcmp(extra->longopts[k].name, shared_opts[i].lo.name);
		if (!own)
			longopts[nlong++] = shared_opts[i].lo;
		if (shared_opts[i].shortopt)
			strcat(shortopts, shared_opts[i].shortopt);
	}
	longopts[nlong++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[nlong++] = (struct option){ "verbose", no_argument, NULL, 'v' };
	longopts[nlong++] = (struct option){ "version", no_argument, NULL, 'V' };
	if (extra && extra->shortopts)
		strncat(shortopts, extra->shortopts, sizeof(shortopts) - strlen(shortopts) - 1);
	for (int i = 0; extra && extra->longopts && extra->longopts[i].name && nlong < 63; i++)
		longopts[nlong++] = extra->longopts[i];
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
			return usage_error(prof, "option '-%c' needs a value", optopt);
		if (c == ':')
			return usage_error(prof, "option '%s' needs a value", argv[optind - 1]);
		if (c == '?') {
			if (optopt && optopt < 256) {
				char opt[3] = { '-', (char)optopt, 0 };

				return unknown_option(prof, flags, opt, longopts);
			}
			return unknown_option(prof, flags, argv[optind - 1], longopts);
		}
		bool shared = false;

		/*
		 * perf's "--call-graph dwarf" (a separate word): the mode is taken when it is one, lbr
		 * too (refused with its reason, rather than run as the command)
		 */
		if (c == 'g' && !optarg && optind < argc && !strcmp(argv[optind - 1], "--call-graph") &&
		    (!strcmp(argv[optind], "fp") || !strcmp(argv[optind], "lbr") ||
		     !strncmp(argv[optind], "dwarf", 5)))
			optarg = argv[optind++];
		for (size_t i = 0; i < NR_SHARED; i++)
			if ((shared_opts[i].flag & flags) && shared_opts[i].lo.val == c)
				shared = true;
		if (shared)
			ret = handle_shared(o, prof, c, optarg);
		else if (extra && extra->on_extra)
			ret = extra->on_extra(extra->ctx, c, optarg);
		else
			ret = usage_error(prof, "unknown option");
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
			return usage_error(prof, "too many arguments: '%s'", argv[optind]);
		o->positional_buf[o->nr_positional++] = argv[optind++];
		o->positional = o->positional_buf;
		goto again;
	}
	/* getopt ate the "--": with nothing after it, the command the user meant to give is missing
	 * (silently counting the whole machine instead would be a surprise) */
	if ((flags & CLI_OPT_TARGET) && optind == argc && optind > 1 &&
	    !strcmp(argv[optind - 1], "--"))
		return usage_error(prof, "'--' is not followed by a command to run; give one "
					 "(-- COMMAND ARGS...) or leave '--' out");
	if (optind < argc) {
		if (flags & CLI_OPT_TARGET)
			o->command = argv + optind;
		else
			return usage_error(prof, "unexpected argument '%s'", argv[optind]);
	}
	if (!!o->pid + !!o->tid + !!o->cgroup + !!o->command > 1)
		return usage_error(prof,
				   "choose one target: -p PID, -t TID, -G CGROUP or -- COMMAND");
	/* perf-prof follows a process's new tasks only when asked; here -p/-t never do yet */
	if (o->inherit && (o->pid || o->tid) && !(flags & CLI_OPT_IDS_FOLLOW))
		return usage_error(prof,
				   "--inherit/--ptrace with -%c: only the threads the process has "
				   "when tracing starts are followed here, not the tasks it creates "
				   "later; run it under perfscope (-- COMMAND follows its children "
				   "and threads) or trace its cgroup (-G)",
				   o->pid ? 'p' : 't');
	if (o->order && o->no_order)
		return usage_error(prof, "--order and --no-order contradict each other; give one");
	if (o->cpus && o->all_cpus)
		return usage_error(prof, "-a (all CPUs) and -C %s contradict each other; give one",
				   o->cpus);
	return 0;
}

void cli_opts_each(unsigned int flags,
		   void (*fn)(void *ctx, const char *name, int short_name, const char *arg,
			      int has_arg, bool listed),
		   void *ctx)
{
	for (size_t i = 0; i < NR_SHARED; i++) {
		const struct shared_opt *so = &shared_opts[i];

		if (so->flag & flags)
			fn(ctx, so->lo.name, so->shortopt ? so->shortopt[0] : 0, so->arg,
			   so->lo.has_arg, so->help != NULL);
	}
}

void cli_opts_help(unsigned int flags, const char *events_help,
		   void (*emit)(void *ctx, const char *line), void *ctx)
{
	char line[256], left[40];

	for (size_t i = 0; i < NR_SHARED; i++) {
		const struct shared_opt *so = &shared_opts[i];
		const char *text = so->help, *nl;

		if (!(so->flag & flags) || !text)
			continue;
		if (so->lo.val == 'e' && events_help)
			text = events_help;
		char names[40];

		/* perf-prof's spellings follow as aliases: "-C, --cpu, --cpus CPUS" */
		snprintf(names, sizeof(names), "--%s", so->lo.name);
		for (size_t k = i + 1; k < NR_SHARED && !shared_opts[k].help; k++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), ", --%s",
				 shared_opts[k].lo.name);
		if (so->shortopt)
			snprintf(left, sizeof(left), "-%c, %s%s%s", so->shortopt[0], names,
				 so->arg ? " " : "", so->arg ? so->arg : "");
		else
			snprintf(left, sizeof(left), "    %s%s%s", names, so->arg ? " " : "",
				 so->arg ? so->arg : "");
		/* the text's lines, the first beside the option, the others under it */
		for (bool first = true; text; first = false) {
			nl = strchr(text, '\n');
			snprintf(line, sizeof(line), "  %-24s %.*s", first ? left : "",
				 nl ? (int)(nl - text) : (int)strlen(text), text);
			if (strlen(left) > 24 && first) {
				/* too long to share a line with its text */
				snprintf(line, sizeof(line), "  %s", left);
				emit(ctx, line);
				snprintf(line, sizeof(line), "  %-24s %.*s", "",
					 nl ? (int)(nl - text) : (int)strlen(text), text);
			}
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
