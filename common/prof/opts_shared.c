/* The options every profiler may take (-e -C -p -t -G -i -m --format ...), as one option table. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "duration.h"
#include "options.h"
#include "prof.h"

#define OFF(field) offsetof(struct cli_opts, field)

static int parse_long(struct prof *p, const char *what, const char *arg, long min, long max,
		      long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return prof_usage(p, "%s must be a whole number from %ld to %ld, not '%s'", what,
				  min, max, arg);
	*out = v;
	return 0;
}

/* "PID[,PID...]" as perf-prof and perf take it: each a live-looking pid, none twice. */
static int parse_pid_list(struct prof *p, const char *what, const char *arg, pid_t *out, int *nr)
{
	const char *s = arg;
	char one[16];

	*nr = 0;
	do {
		size_t len = strcspn(s, ",");
		long v;
		int err;

		if (!len || len >= sizeof(one))
			return prof_usage(p, "%s takes a list such as 12,34, not '%s'", what, arg);
		if (*nr == CLI_MAX_TASKS)
			return prof_usage(p, "%s: at most %d entries", what, CLI_MAX_TASKS);
		memcpy(one, s, len);
		one[len] = '\0';
		err = parse_long(p, what, one, 1, 4194304, &v);
		if (err)
			return err;
		for (int i = 0; i < *nr; i++)
			if (out[i] == (pid_t)v)
				return prof_usage(p, "%s: %d is given twice", what, (int)v);
		out[(*nr)++] = (pid_t)v;
		s += len;
	} while (*s++ == ',');
	return 0;
}

/*
 * "fp", "dwarf" or "dwarf,SIZE" (perf's --call-graph record modes). SIZE is rounded up to a
 * multiple of 8, as perf does, since the kernel refuses any other.
 */
static int parse_call_graph(struct prof *p, struct cli_opts *o, const char *opt, const char *arg)
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
			return prof_usage(p,
					  "%s=lbr: not supported on this machine (no LBR: its CPU "
					  "PMU has no branch records); use 'fp' or 'dwarf'",
					  opt);
		return prof_usage(p,
				  "%s=lbr: LBR call stacks are not supported by perfscope; "
				  "use 'fp' or 'dwarf'",
				  opt);
	}
	if (mode_len != 5 || strncmp(arg, "dwarf", 5))
		return prof_usage(p,
				  "%s=%s: the user stacks are 'fp' (frame pointers) or "
				  "'dwarf[,SIZE]' (unwound from a copy of the stack)",
				  opt, arg);
	if (comma) {
		char *end;

		errno = 0;
		size = strtoull(comma + 1, &end, 0);
		if (errno || end == comma + 1 || *end || comma[1] == '-' || !size)
			return prof_usage(p,
					  "%s=%s: SIZE is the bytes of user stack copied per "
					  "sample, e.g. dwarf,16384",
					  opt, arg);
		size = (size + 7) & ~7ull;
		if (size > CLI_STACK_DUMP_MAX)
			return prof_usage(p,
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

static int opt_event(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;

	if (!*arg)
		return prof_usage(p, "-e needs an event list, e.g. -e page-faults,sched:sched_switch");
	if (cli_opts_add_events(o, arg) < 0)
		return prof_usage(p,
				  "the -e lists together are longer than %zu characters; use "
				  "wildcards (sched:sched_*)",
				  sizeof(o->events_joined) - 1);
	return 0;
}

static int opt_pid(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	int err = parse_pid_list(p, "-p PID", arg, o->pids, &o->nr_pids);

	if (err)
		return err;
	o->pid = o->pids[0];
	o->tasks_text = arg;
	return 0;
}

static int opt_tid(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	int err = parse_pid_list(p, "-t TID", arg, o->tids, &o->nr_tids);

	if (err)
		return err;
	o->tid = o->tids[0];
	o->tasks_text = arg;
	return 0;
}

#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* -i MS: a time as every option takes one (1s, 250ms), a bare number in milliseconds */
static int opt_interval(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	uint64_t ns;

	if (duration__parse_unit(arg, NS_PER_MS, &ns) || ns % NS_PER_MS || ns < NS_PER_MS ||
	    ns > 86400000 * NS_PER_MS)
		return prof_usage(p,
				  "-i (interval) must be whole milliseconds from 1 to 86400000 (a "
				  "day), as a number of ms or with a unit s, ms, us or ns, not '%s'",
				  arg);
	o->interval_ms = (long)(ns / NS_PER_MS);
	return 0;
}

/* --duration S: a time, a bare number in seconds */
static int opt_duration(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	uint64_t ns;

	if (duration__parse_unit(arg, NS_PER_S, &ns) || !ns || ns > 31536000 * NS_PER_S)
		return prof_usage(p, "--duration must be a positive number of seconds (or a time "
				     "with a unit s, ms, us or ns), not '%s'",
				  arg);
	o->duration_s = (double)ns / NS_PER_S;
	return 0;
}

static int opt_exit_n(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	char *end;

	/* 0 is perf-prof's "no limit", its default: a perf-prof command line may spell it */
	errno = 0;
	o->exit_n = strtoull(arg, &end, 10);
	if (errno || end == arg || *end || *arg == '-')
		return prof_usage(p, "-N must be a whole number of events (0: no limit), not '%s'",
				  arg);
	return 0;
}

static int opt_mmap_pages(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	long v;
	int err = parse_long(p, "-m (ring-buffer pages per CPU)", arg, 1, 1 << 20, &v);

	if (err)
		return err;
	if (v & (v - 1))
		return prof_usage(
			p, "-m %ld is not a power of two (the kernel needs 1, 2, 4, 8 ... pages)",
			v);
	o->mmap_pages = (unsigned int)v;
	return 0;
}

static int opt_watermark(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	long v;
	int err = parse_long(p, "--watermark (percent of a ring)", arg, 0, 100, &v);

	if (!err) /* 0, as perf-prof: a wakeup for every event */
		o->watermark_pct = v ? (int)v : -1;
	return err;
}

static int opt_nothing(struct prof *p, void *base, const char *arg)
{
	return 0;
}

/* perf-prof's time conversions: taken so that its command lines run, with a note */
static int clock_note(struct prof *p, const char *opt)
{
	fprintf(stderr,
		"perfscope %s: --%s: times stay CLOCK_MONOTONIC here; no TSC or kvmclock "
		"conversion is done, nor an offset added to one\n",
		p->name, opt);
	return 0;
}

static int opt_tsc(struct prof *p, void *base, const char *arg)
{
	return clock_note(p, "tsc");
}

static int opt_kvmclock(struct prof *p, void *base, const char *arg)
{
	return clock_note(p, "kvmclock");
}

static int opt_clock_offset(struct prof *p, void *base, const char *arg)
{
	return clock_note(p, "clock-offset");
}

static int opt_call_graph(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;

	o->callchain = true;
	return arg ? parse_call_graph(p, o, "--call-graph", arg) : 0;
}

static int opt_user_cc(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;
	int err;

	/* perf-prof's record modes: fp, dwarf (a SIZE too, as --call-graph takes it) */
	if (arg && (err = parse_call_graph(p, o, "--user-callchain", arg)))
		return err;
	o->user_callchain = 1;
	return 0;
}

static int opt_no_user_cc(struct prof *p, void *base, const char *arg)
{
	((struct cli_opts *)base)->user_callchain = 0;
	return 0;
}

static int opt_kernel_cc(struct prof *p, void *base, const char *arg)
{
	((struct cli_opts *)base)->kernel_callchain = 1;
	return 0;
}

static int opt_no_kernel_cc(struct prof *p, void *base, const char *arg)
{
	((struct cli_opts *)base)->kernel_callchain = 0;
	return 0;
}

static int opt_flame(struct prof *p, void *base, const char *arg)
{
	if (!*arg)
		return prof_usage(p, "--flame-graph needs a file name");
	((struct cli_opts *)base)->flame_graph = arg;
	return 0;
}

static int opt_sampling_limit(struct prof *p, void *base, const char *arg)
{
	long v;
	int err = parse_long(p, "--sampling-limit (events per second)", arg, 1, 1000000000, &v);

	if (!err)
		((struct cli_opts *)base)->sampling_limit = (unsigned long)v;
	return err;
}

static int opt_perfeval_cpus(struct prof *p, void *base, const char *arg)
{
	if (!*arg)
		return prof_usage(p, "--perfeval-cpus needs a CPU list, e.g. 0-3");
	((struct cli_opts *)base)->perfeval_cpus = arg;
	return 0;
}

static int opt_perfeval_pids(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;

	o->perfeval_pids_text = arg;
	return parse_pid_list(p, "--perfeval-pids TID", arg, o->perfeval_pids,
			      &o->nr_perfeval_pids);
}

static int opt_output_queue(struct prof *p, void *base, const char *arg)
{
	long v;
	int err = parse_long(p, "--output-queue (MiB)", arg, 1, 1 << 20, &v);

	if (!err)
		((struct cli_opts *)base)->output_queue_mib = (unsigned long)v;
	return err;
}

static int opt_usage_self(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;

	return parse_long(p, "--usage-self (milliseconds)", arg, 1, 86400000, &o->usage_self_ms);
}

static int opt_format(struct prof *p, void *base, const char *arg)
{
	struct cli_opts *o = base;

	if (!strcmp(arg, "text"))
		o->format = FORMAT_TEXT;
	else if (!strcmp(arg, "json"))
		o->format = FORMAT_JSON;
	else
		return prof_usage(p, "--format must be 'text' or 'json', not '%s'", arg);
	return 0;
}

static int opt_output(struct prof *p, void *base, const char *arg)
{
	if (!*arg)
		return prof_usage(p, "-o needs a file name, e.g. -o /tmp/out.txt");
	((struct cli_opts *)base)->output = arg;
	return 0;
}

#define FLAG(f) PROF_OPT_FLAG, OFF(f), 0, 0, NULL
#define TEXT(f) PROF_OPT_TEXT, OFF(f), 0, 0, NULL
#define FN(fn) PROF_OPT_FN, 0, 0, 0, fn
#define REQ .has_arg = PROF_ARG_REQUIRED
#define OPT .has_arg = PROF_ARG_OPTIONAL

/*
 * In --help order. An entry without help is listed after the one before it: perf-prof's spellings
 * (--cpus, --pids, --tids, --cgroups) and options a listed one explains.
 */
/* clang-format off: one option, its spellings, help and flag together */
const struct prof_opt cli_shared_opts[] = {
	{ "event", 'e', "EVENTS", FN(opt_event),
	  "events: sys:name[/filter/ATTR/.../], perf's names (page-faults),\n"
	  "PMU events (msr/tsc/); repeatable: -e a -e b takes both",
	  CLI_OPT_EVENTS },
	{ "all-cpus", 'a', NULL, FLAG(all_cpus),
	  "every online CPU (the default without a target); with a\n"
	  "COMMAND, the whole machine while it runs",
	  CLI_OPT_CPUS },
	{ "cpu", 'C', "CPUS", TEXT(cpus), "these CPUs only: 0-3,6", CLI_OPT_CPUS },
	{ "cpus", 0, NULL, TEXT(cpus), NULL, CLI_OPT_CPUS, REQ },
	{ "per-cpu", 0, NULL, FLAG(per_cpu), "one line per CPU and event (system-wide modes)",
	  CLI_OPT_PER_CPU },
	{ "pid", 'p', "PID,...", FN(opt_pid),
	  "the threads of processes (a list: 12,34), until they exit", CLI_OPT_TARGET },
	{ "pids", 0, NULL, FN(opt_pid), NULL, CLI_OPT_TARGET, REQ },
	{ "tid", 't', "TID,...", FN(opt_tid), "these threads (a list: 12,34), until they exit",
	  CLI_OPT_TARGET },
	{ "tids", 0, NULL, FN(opt_tid), NULL, CLI_OPT_TARGET, REQ },
	{ "cgroup", 'G', "CGROUP", TEXT(cgroup),
	  "tasks of a cgroup: a path under the cgroup2 mount, or absolute", CLI_OPT_TARGET },
	{ "cgroups", 0, NULL, TEXT(cgroup), NULL, CLI_OPT_TARGET, REQ },
	{ "interval", 'i', "MS", FN(opt_interval), "print every MS milliseconds",
	  CLI_OPT_INTERVAL },
	{ "duration", 0, "S", FN(opt_duration),
	  "stop after S seconds (a COMMAND still running is sent SIGTERM)", CLI_OPT_DURATION },
	{ "exit-N", 'N', "N", FN(opt_exit_n), "stop after N events (0: no limit)", CLI_OPT_EXIT_N },
	{ "mmap-pages", 'm', "PAGES", FN(opt_mmap_pages),
	  "ring buffer pages per CPU, a power of two (default: from what\n"
	  "the kernel lets this user lock)",
	  CLI_OPT_MMAP },
	{ "watermark", 0, "PCT", FN(opt_watermark),
	  "wake up when a ring is PCT% full (1-100, default 25;\n0: at every event, as perf-prof)",
	  CLI_OPT_MMAP },
	{ "overwrite", 0, NULL, FLAG(overwrite),
	  "flight recorder: rings keep overwriting the oldest events and\n"
	  "are read once, when the run ends (the last moments before it)",
	  CLI_OPT_OVERWRITE },
	{ "order", 0, NULL, FLAG(order), "merge events of all CPUs in time order", CLI_OPT_ORDER },
	{ "no-order", 0, NULL, FLAG(no_order),
	  "read each CPU's ring in turn: cheaper, CPUs interleave", CLI_OPT_ORDER },
	/* perf-prof's switches for what a streaming profiler always does here */
	{ "monotonic", 0, NULL, FN(opt_nothing),
	  "times are CLOCK_MONOTONIC (always; perf-prof's option)", CLI_OPT_ORDER },
	{ "inherit", 0, NULL, FLAG(inherit),
	  "follow the children and new threads of -- COMMAND\n"
	  "(always done; perf-prof's options; not with -p or -t)",
	  CLI_OPT_ORDER },
	{ "ptrace", 0, NULL, FLAG(inherit), NULL, CLI_OPT_ORDER },
	/*
	 * perf-prof's time conversions (TSC, a guest's kvmclock, an offset on them): taken so that
	 * its command lines run, with a note that times stay CLOCK_MONOTONIC, as perf-prof itself
	 * goes on where it cannot convert
	 */
	{ "tsc", 0, NULL, FN(opt_tsc),
	  "perf-prof's time conversions: taken, with a note;\ntimes stay CLOCK_MONOTONIC",
	  CLI_OPT_ORDER, .has_arg = PROF_ARG_NONE },
	{ "kvmclock", 0, NULL, FN(opt_kvmclock), NULL, CLI_OPT_ORDER, REQ },
	{ "clock-offset", 0, NULL, FN(opt_clock_offset), NULL, CLI_OPT_ORDER, REQ },
	/* perf-prof's -g/--call-graph flag, and perf's --call-graph MODE (a word of its own too) */
	{ "call-graph", 'g', "[fp|dwarf[,SIZE]]", FN(opt_call_graph),
	  "kernel and user stack of every event; user stacks by frame\n"
	  "pointers (fp, -g), or dwarf: unwound from SIZE bytes of stack\n"
	  "copied per sample (default 8192, at most 65528)",
	  CLI_OPT_CALLCHAIN, OPT },
	{ "user-callchain", 0, NULL, FN(opt_user_cc),
	  "user stacks only (--user-callchain=fp: frame pointers;\n"
	  "=dwarf: unwound as --call-graph dwarf)",
	  CLI_OPT_CALLCHAIN, OPT },
	{ "no-user-callchain", 0, NULL, FN(opt_no_user_cc), "stacks without their user part",
	  CLI_OPT_CALLCHAIN, .has_arg = PROF_ARG_NONE },
	{ "kernel-callchain", 0, NULL, FN(opt_kernel_cc), "kernel stacks only (with -g: both)",
	  CLI_OPT_CALLCHAIN, .has_arg = PROF_ARG_NONE },
	{ "no-kernel-callchain", 0, NULL, FN(opt_no_kernel_cc), "stacks without their kernel part",
	  CLI_OPT_CALLCHAIN, .has_arg = PROF_ARG_NONE },
	{ "flame-graph", 0, "FILE", FN(opt_flame),
	  "stacks counted as folded text (flamegraph.pl, inferno,\n"
	  "speedscope) in FILE, written at the end",
	  CLI_OPT_FLAME },
	{ "sampling-limit", 0, "N", FN(opt_sampling_limit),
	  "at most N events per second and CPU; the rest are counted\nas dropped",
	  CLI_OPT_SAMPLING_LIMIT },
	{ "perfeval-cpus", 0, "CPUS", FN(opt_perfeval_cpus),
	  "perf-prof's evaluation: the events per second sampled on\n"
	  "these CPUs, on stderr at each -i and at the end; over\n"
	  "--sampling-limit per CPU, the run stops",
	  CLI_OPT_SAMPLING_LIMIT },
	{ "perfeval-pids", 0, "TID,...", FN(opt_perfeval_pids),
	  "the same for the events these threads caused",
	  CLI_OPT_SAMPLING_LIMIT },
	{ "format", 0, "F", FN(opt_format), "text (default) or json: one object per line",
	  CLI_OPT_FORMAT },
	{ "output", 'o', "FILE", FN(opt_output),
	  "write to FILE, not standard output (COMMAND keeps it)", CLI_OPT_OUTPUT },
	{ "output-queue", 0, "MIB", FN(opt_output_queue),
	  "memory for events a slow reader of the pipe has not taken\n"
	  "yet, in MiB (default 192); past it they are dropped, counted",
	  CLI_OPT_OUTPUT_QUEUE },
	{ "usage-self", 0, "MS", FN(opt_usage_self),
	  "print perfscope's own CPU use every MS milliseconds", CLI_OPT_USAGE_SELF },
	{ "quiet", 'q', NULL, FLAG(quiet), "no statistics lines unless events were lost",
	  CLI_OPT_QUIET },
	{ 0 },
};
/* clang-format on */
