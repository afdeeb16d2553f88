/* perfscope stat: count events like `perf stat`, scaled for multiplexing, per interval, CPU, core
 * or socket, with perf's derived figures, repeated runs and CSV. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/perfscope.h>

#include "profiler.h"
#include "stat.h"
#include "user_only.h"

/* perf stat's default set: what every machine should show, hardware ones where present. */
#define DEFAULT_EVENTS                                                                         \
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches," \
	"branch-misses"

/* ---- options ---- */

/*
 * System-wide counting: whole CPUs (-a, -C, -G, or no task target), with a command or not. -p/-t
 * with -C is not: those threads, only while they run on those CPUs.
 */
static bool wide(const struct cli_opts *o)
{
	return !cli_opts_task_target(o);
}

static int stat_check(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;
	const struct cli_opts *o = &p->opts;
	int ret;

	s->no_kernel = -1;
	s->out = o->format == FORMAT_JSON ? STAT_OUT_JSON : STAT_OUT_TEXT;
	if (s->sep) {
		if (o->format == FORMAT_JSON)
			return prof_usage(p,
					  "-x (CSV) and --format json are two formats; give one");
		s->out = STAT_OUT_CSV;
	}
	if (o->per_cpu + s->per_core + s->per_socket > 1)
		return prof_usage(p, "--per-cpu, --per-core and --per-socket contradict each "
				     "other; give one");
	if ((s->per_core || s->per_socket) && !wide(o))
		return prof_usage(p,
				  "--per-%s needs system-wide counting (-a, -C or -G); a "
				  "process or command is followed across CPUs instead",
				  s->per_core ? "core" : "socket");
	s->aggr.mode = o->per_cpu      ? AGGR_CPU
		       : s->per_core   ? AGGR_CORE
		       : s->per_socket ? AGGR_SOCKET
				       : AGGR_GLOBAL;
	if (!s->repeat)
		s->repeat = 1;
	if (s->repeat > 1 && !o->command)
		return prof_usage(p, "-r %ld runs a COMMAND %ld times; give one after --",
				  s->repeat, s->repeat);
	if (s->repeat > 1 && o->interval_ms)
		return prof_usage(p, "-r (runs) and -i (intervals) do not go together; give one");
	p->repeat = (int)s->repeat;
	ret = stat_period_check(p, s);
	if (ret)
		return ret;
	ret = stat_duration_prepare(p, s, o->events);
	if (ret)
		return ret;
	if (s->events_text)
		prof__set_events(p, s->events_text);
	return 0;
}

/* ---- events ---- */

static int stat_event(struct prof *p, void *priv, struct prof_event *pev,
		      struct perf_event_attr *attr)
{
	struct stat_ctx *s = priv;
	struct stat_event *ev;
	bool wildcard = false;

	if (!s->ev) {
		s->ev = calloc((size_t)p->nr_events, sizeof(*s->ev));
		if (!s->ev)
			return -ENOMEM;
		s->nr_ev = p->nr_events;
	}
	ev = &s->ev[pev->idx];
	ev->duration = stat_is_duration(s, pev->spec);
	ev->canonical = ev->duration ? "duration_time" : psc_evsel__name(pev->evsel);
	ev->name = ev->duration ? strdup("duration_time")
				: stat_typed_name(p->events, pev->spec, &wildcard);
	if (!ev->name)
		return -ENOMEM;
	ev->wildcard = wildcard;
	/*
	 * perf_event_paranoid >= 2 and no privilege: a task's counters count its user space only,
	 * as perf does, rather than not at all. Whole CPUs need more than that: refused as before.
	 */
	if (!wide(&p->opts)) {
		bool first;

		if (user_only__apply(&s->no_kernel, attr, &first)) {
			if (first)
				user_only__say(prof__say(p), false);
			if (!ev->duration) {
				char *name;

				if (asprintf(&name, "%s%su", ev->name,
					     strchr(ev->name, ':') ? "" : ":") < 0)
					return -ENOMEM;
				free(ev->name);
				ev->name = name;
				ev->user_only = true;
			}
		}
	}
	ev->kind = ev->duration ? STAT_DURATION : stat_kind_of(attr);
	ev->ctx = stat_ctx_of(attr);
	return 0;
}

/* ---- aggregation units ---- */

static int make_units(struct prof *p, struct stat_ctx *s, enum aggr_mode mode)
{
	int cpu = -1, err = aggr__init(&s->aggr, mode, psc_evlist__cpus(p->evlist), NULL, &cpu);

	if (err && cpu >= 0) {
		fprintf(stderr,
			"perfscope stat: cannot tell the core and socket of CPU %d from "
			"/sys/devices/system/cpu/cpu%d/topology: %s\n",
			cpu, cpu, strerror(-err));
		return -EINVAL;
	}
	return err;
}

static int stat_start(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;
	size_t n;
	int err;

	if (s->nr_ev != p->nr_events)
		return -EINVAL; /* every event went through stat_event */
	err = make_units(p, s, s->aggr.mode);
	if (err)
		return err;
	n = (size_t)s->nr_ev * (size_t)s->aggr.nr_units;
	s->now = calloc(n ? n : 1, sizeof(*s->now));
	s->prev = calloc(n ? n : 1, sizeof(*s->prev));
	s->figs = calloc(n ? n : 1, sizeof(*s->figs));
	s->acc = calloc(n ? n : 1, sizeof(*s->acc));
	s->cs = calloc(s->nr_ev ? (size_t)s->nr_ev : 1, sizeof(*s->cs));
	if (!s->now || !s->prev || !s->figs || !s->acc || !s->cs)
		return -ENOMEM;
	s->unit_width = 4; /* perf's, for msec */
	for (int i = 0; i < s->nr_ev; i++) {
		const char *u = psc_evsel__unit(p->events_arr[i].evsel);

		if (u && (int)strlen(u) > s->unit_width)
			s->unit_width = (int)strlen(u);
	}
	/* the command's CPU time is what its reaping adds to ours */
	stat_children_time(&s->children_user, &s->children_sys);
	return stat_period_start(p, s);
}

/* What --all would have shown, said once at the end where the output has no place for it. */
static void hidden_note(struct stat_ctx *s)
{
	if (s->hidden)
		fprintf(stderr,
			"perfscope stat: %llu zero counts of events matched by a wildcard were not "
			"shown (--all shows them)\n",
			(unsigned long long)s->hidden);
}

/* ---- hooks ---- */

static int stat_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	stat_print_interval(p, priv);
	return 0;
}

/* SIGUSR1: the totals so far; intervals go on unchanged. */
static int stat_sigusr1(struct prof *p, void *priv)
{
	stat_print_totals(p, priv);
	return 0;
}

static int stat_report(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;

	if (s->period_ns)
		return stat_period_report(p, s);
	if (p->opts.interval_ms) {
		stat_print_interval(p, s); /* the last, shorter interval */
		hidden_note(s);
		return 0;
	}
	if (!s->runs) { /* the run ended without its counts: what they hold now */
		stat_print_totals(p, s);
	} else {
		stat_mean_figs(s);
		s->hidden = 0;
		stat_print_header(p, s, s->runs);
		stat_print_rows(p, s, s->wall.mean, -1);
		stat_print_footer(p, s, s->wall.mean / 1e9, stat_stats__sem(&s->wall) / 1e9,
				  s->runs, p->target.has_command);
	}
	if (s->out != STAT_OUT_TEXT)
		hidden_note(s);
	return 0;
}

static void stat_teardown(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;

	for (int i = 0; i < s->nr_ev; i++)
		free(s->ev[i].name);
	free(s->ev);
	free(s->events_text);
	free(s->dur_pos);
	aggr__exit(&s->aggr);
	free(s->now);
	free(s->prev);
	free(s->figs);
	free(s->acc);
	free(s->cs);
	free(s->slots);
}

static const struct prof_opt stat_opts[] = {
	{ "repeat", 'r', "N", PROF_OPT_LONG, offsetof(struct stat_ctx, repeat), 1, 1000000, NULL,
	  "run COMMAND N times: each count's mean and its spread,\n"
	  "( +- N% ), as perf stat -r shows them" },
	{ "field-separator", 'x', "SEP", PROF_OPT_STRING, offsetof(struct stat_ctx, sep), 0, 0,
	  NULL, "CSV in perf stat -x's columns, fields separated by SEP" },
	{ "per-core", 0, NULL, PROF_OPT_FLAG, offsetof(struct stat_ctx, per_core), 0, 0, NULL,
	  "one line per core and event (system-wide modes)" },
	{ "per-socket", 0, NULL, PROF_OPT_FLAG, offsetof(struct stat_ctx, per_socket), 0, 0, NULL,
	  "one line per socket and event (system-wide modes)" },
	{ "period", 0, "T", PROF_OPT_DURATION, offsetof(struct stat_ctx, period_ns), 0, 0, NULL,
	  "read the counters every T (s, ms, us, ns), as perf-prof's stat\n"
	  "does: each -i line (default 1 s) shows the count of every\n"
	  "period T in it, then their total" },
	{ "all", 0, NULL, PROF_OPT_FLAG, offsetof(struct stat_ctx, all), 0, 0, NULL,
	  "show the zero counts of events a wildcard matched too" },
	{ 0 },
};

const struct profiler profiler_stat = {
	.name = "stat",
	.summary = "count events (perf stat): derived figures, intervals, per CPU/core/socket, -r",
	.usage = "[-e EVENTS] [-a | -C CPUS] [-p PID | -t TID | -G CGROUP]\n"
		 "                      [-i MS] [--per-cpu | --per-core | --per-socket] [-r N]\n"
		 "                      [--period T] [--duration S] [--format text|json | -x SEP]\n"
		 "                      [-o FILE]\n"
		 "                      [-- COMMAND ARGS...]",
	.description =
		"Counts events, like perf stat, and prints them on standard error as perf does (so\n"
		"that they do not mix with COMMAND's output); -o FILE writes them to FILE, and\n"
		"--format json to standard output, for pipes. Values are scaled when the kernel had\n"
		"to multiplex counters, and the share of time each event really ran is shown as\n"
		"(NN.NN%). Beside the counts, perf's derived figures: CPUs utilized, rates per\n"
		"second of task-clock, insn per cycle, miss ratios, and the command's user and\n"
		"system CPU time. Events this machine cannot count are shown as <not supported>;\n"
		"the rest still count. Events print as typed (cs, branches); a wildcard's events\n"
		"that counted 0 are left out unless --all. With -a or -C and a COMMAND, the whole\n"
		"machine (or those CPUs) is counted while it runs. A user not allowed to count the\n"
		"kernel (perf_event_paranoid 2) counts the user space of its tasks, as :u.",
	.events_help = "events to count (default: " DEFAULT_EVENTS ")\n"
		       "see 'perfscope list'; e.g. page-faults, cycles:u, sched:sched_switch,\n"
		       "'syscalls:sys_enter_read/fd==0/', msr/tsc/, L1-dcache-load-misses,\n"
		       "duration_time (the wall clock); repeatable: -e a -e b counts both;\n"
		       "{a,b} counts a group together",
	.notes =
		"SIGINT/SIGTERM are passed on to COMMAND (a second one kills it), and no more runs\n"
		"of -r follow; SIGUSR1 prints the counts so far and goes on.\n"
		"\n"
		"Exit status: COMMAND's own status when it ends first (127/126 when it cannot be found or\n"
		"run, 128+N when killed by signal N); else 0; 1 on a runtime failure, 2 on a usage error.",
	.examples = "stat -- make -j2                     # default events for a build\n"
		    "stat -e page-faults,cs,task-clock -- ./a.out\n"
		    "stat -r 5 -e task-clock,page-faults -- ./a.out   # mean of 5 runs\n"
		    "stat -a -e cs,cpu-clock -- sleep 5   # the whole machine while it sleeps\n"
		    "stat -a --per-core -i 1000 -e cs,cpu-clock\n"
		    "stat -x, -e task-clock,cs -- ./a.out # CSV, as perf stat -x,\n"
		    "stat -p 1234 --duration 5 --format json\n"
		    "stat -C 0 -e 'sched:sched_switch,irq:*' --duration 2\n"
		    "stat -e sched:sched_switch -C 0 -i 1000 --period 100ms   # perf-prof's stat",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_PER_CPU | CLI_OPT_TARGET |
		       CLI_OPT_INTERVAL | CLI_OPT_DURATION | CLI_OPT_FORMAT | CLI_OPT_OUTPUT,
	.opts = stat_opts,
	.needs = PROF_TEXT_STDERR,
	.default_groups = (const char *const[]){ DEFAULT_EVENTS, NULL },
	/* JSON: the conformance suite reads results on standard output */
	.conformance_args = "-e task-clock -i 200 --format json",
	.priv_size = sizeof(struct stat_ctx),
	.check = stat_check,
	.event = stat_event,
	.start = stat_start,
	.interval = stat_interval,
	.sigusr1 = stat_sigusr1,
	.run_end = stat_run_end,
	.report = stat_report,
	.teardown = stat_teardown,
};
