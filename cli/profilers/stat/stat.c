/* perfscope stat: count events like `perf stat`, scaled for multiplexing, per interval, CPU, core
 * or socket, with perf's derived figures, repeated runs and CSV. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <perfscope/perfscope.h>

#include "profiler.h"
#include "stat.h"
#include "stat_topo.h"
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
	s->aggr = o->per_cpu	  ? STAT_AGGR_CPU
		  : s->per_core	  ? STAT_AGGR_CORE
		  : s->per_socket ? STAT_AGGR_SOCKET
				  : STAT_AGGR_GLOBAL;
	if (!s->repeat)
		s->repeat = 1;
	if (s->repeat > 1 && !o->command)
		return prof_usage(p, "-r %ld runs a COMMAND %ld times; give one after --",
				  s->repeat, s->repeat);
	if (s->repeat > 1 && o->interval_ms)
		return prof_usage(p, "-r (runs) and -i (intervals) do not go together; give one");
	p->repeat = (int)s->repeat;
	ret = stat_duration_prepare(p, s, o->events);
	if (ret)
		return ret;
	if (s->events_text)
		p->opts.events = s->events_text;
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

static int cmp_unit(const void *a, const void *b)
{
	const struct stat_unit *x = a, *y = b;

	if (x->socket != y->socket)
		return x->socket < y->socket ? -1 : 1;
	if (x->die != y->die)
		return x->die < y->die ? -1 : 1;
	return x->core < y->core ? -1 : x->core > y->core;
}

/* The unit of CPU cpu in units[0..n) by its topology (core: socket, die, core; socket: socket) */
static int find_unit(const struct stat_ctx *s, const struct stat_topo *t)
{
	for (int k = 0; k < s->nr_units; k++) {
		const struct stat_unit *u = &s->units[k];

		if (u->socket == t->socket &&
		    (s->aggr == STAT_AGGR_SOCKET || (u->die == t->die && u->core == t->core)))
			return k;
	}
	return -1;
}

static int make_units(struct prof *p, struct stat_ctx *s)
{
	struct psc_cpumap *cpus = psc_evlist__cpus(p->evlist);
	int n = psc_cpumap__nr(cpus);
	struct stat_topo *topo;

	s->max_cpu = 0;
	for (int i = 0; i < n; i++)
		if (psc_cpumap__cpu(cpus, i) > s->max_cpu)
			s->max_cpu = psc_cpumap__cpu(cpus, i);
	s->unit_of = calloc((size_t)s->max_cpu + 1, sizeof(*s->unit_of));
	s->units = calloc((size_t)n, sizeof(*s->units));
	topo = calloc((size_t)n, sizeof(*topo));
	if (!s->unit_of || !s->units || !topo) {
		free(topo);
		return -ENOMEM;
	}
	if (s->aggr == STAT_AGGR_GLOBAL) {
		s->nr_units = 1;
		s->units[0].nr_cpus = n;
		free(topo);
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int cpu = psc_cpumap__cpu(cpus, i), err;

		if (s->aggr == STAT_AGGR_CPU) {
			s->units[i] = (struct stat_unit){ .cpu = cpu, .nr_cpus = 1 };
			s->unit_of[cpu] = i;
			continue;
		}
		err = stat_topo__read(NULL, cpu, &topo[i]);
		if (err) {
			fprintf(stderr,
				"perfscope stat: cannot tell the core and socket of CPU %d from "
				"/sys/devices/system/cpu/cpu%d/topology: %s\n",
				cpu, cpu, strerror(-err));
			free(topo);
			return -EINVAL;
		}
		if (find_unit(s, &topo[i]) < 0)
			s->units[s->nr_units++] = (struct stat_unit){
				.cpu = -1,
				.socket = topo[i].socket,
				.die = s->aggr == STAT_AGGR_CORE ? topo[i].die : 0,
				.core = s->aggr == STAT_AGGR_CORE ? topo[i].core : 0,
			};
	}
	if (s->aggr == STAT_AGGR_CPU) {
		s->nr_units = n;
		free(topo);
		return 0;
	}
	/* in the order perf prints them, then each CPU to its unit */
	qsort(s->units, (size_t)s->nr_units, sizeof(*s->units), cmp_unit);
	for (int i = 0; i < n; i++) {
		int k = find_unit(s, &topo[i]);

		s->unit_of[psc_cpumap__cpu(cpus, i)] = k;
		s->units[k].nr_cpus++;
	}
	free(topo);
	return 0;
}

static int unit_for(const struct stat_ctx *s, int cpu)
{
	if (s->aggr == STAT_AGGR_GLOBAL || cpu < 0 || cpu > s->max_cpu)
		return 0;
	return s->unit_of[cpu];
}

static void children_time(double *user, double *sys)
{
	struct rusage ru;

	*user = *sys = 0;
	if (getrusage(RUSAGE_CHILDREN, &ru))
		return;
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int stat_start(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;
	size_t n;
	int err;

	if (s->nr_ev != p->nr_events)
		return -EINVAL; /* every event went through stat_event */
	err = make_units(p, s);
	if (err)
		return err;
	n = (size_t)s->nr_ev * (size_t)s->nr_units;
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
	children_time(&s->children_user, &s->children_sys);
	return 0;
}

/* ---- figures ---- */

/* Every event's counts per unit now, summed over the unit's CPUs and the threads. */
static void gather(struct prof *p, struct stat_ctx *s)
{
	memset(s->now, 0, (size_t)s->nr_ev * (size_t)s->nr_units * sizeof(*s->now));
	for (int i = 0; i < s->nr_ev; i++) {
		struct psc_evsel *evsel = p->events_arr[i].evsel;
		struct psc_cpumap *cpus;
		int nc, nt;

		if (!psc_evsel__is_open(evsel))
			continue;
		cpus = psc_evsel__cpus(evsel);
		nc = psc_cpumap__nr(cpus);
		nt = psc_threadmap__nr(psc_evsel__threads(evsel));
		for (int ci = 0; ci < nc; ci++) {
			struct psc_counts *c =
				&s->now[i * s->nr_units + unit_for(s, psc_cpumap__cpu(cpus, ci))];

			for (int th = 0; th < nt; th++) {
				struct psc_counts t;

				if (psc_evsel__counts(evsel, ci, th, &t))
					continue; /* a slot it was not opened on */
				c->val += t.val;
				c->ena += t.ena;
				c->run += t.run;
			}
		}
	}
}

/* s->figs from counts c (totals, or deltas of an interval) over wall_ns. */
static void make_figs(struct stat_ctx *s, const struct psc_counts *c, double wall_ns)
{
	for (int i = 0; i < s->nr_ev; i++)
		for (int u = 0; u < s->nr_units; u++) {
			int k = i * s->nr_units + u;
			struct stat_fig *f = &s->figs[k];

			if (s->ev[i].duration) {
				*f =
					(struct stat_fig){ wall_ns, wall_ns, wall_ns,
							   wall_ns, 0,	     true };
				continue;
			}
			*f = (struct stat_fig){
				.value = psc_counts__scaled(&c[k]),
				.raw = (double)c[k].val,
				.ena = (double)c[k].ena,
				.run = (double)c[k].run,
				.counted = c[k].run > 0,
			};
		}
}

/* The mean of the runs, with perf's spread. */
static void mean_figs(struct stat_ctx *s)
{
	for (int k = 0; k < s->nr_ev * s->nr_units; k++) {
		const struct stat_acc *a = &s->acc[k];

		s->figs[k] = (struct stat_fig){
			.value = a->value.mean,
			.raw = a->raw / s->runs,
			.ena = a->ena / s->runs,
			.run = a->run / s->runs,
			.noise_pct = stat_stats__rel_pct(&a->value),
			.counted = a->counted > 0,
		};
	}
}

static int read_counters(struct prof *p, const char *when)
{
	int err = psc_evlist__read(p->evlist);

	if (err) /* never a silently missing report */
		fprintf(stderr, "perfscope stat: reading the counters %s failed: %s\n", when,
			strerror(-err));
	return err;
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

/* Each run's counts into the sums of the runs, its wall-clock time, its command's CPU time. */
static int stat_run_end(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;
	double wall = prof__elapsed(p) * 1e9, user, sys;

	if (read_counters(p, "at the end of the run"))
		return 0; /* the report says so again, from what it has */
	gather(p, s);
	make_figs(s, s->now, wall);
	for (int k = 0; k < s->nr_ev * s->nr_units; k++) {
		const struct stat_fig *f = &s->figs[k];
		struct stat_acc *a = &s->acc[k];

		stat_stats__add(&a->value, f->value);
		a->raw += f->raw;
		a->ena += f->ena;
		a->run += f->run;
		a->counted += f->counted;
	}
	stat_stats__add(&s->wall, wall);
	s->runs++;
	children_time(&user, &sys);
	s->user_s += user - s->children_user;
	s->sys_s += sys - s->children_sys;
	s->children_user = user;
	s->children_sys = sys;
	return 0;
}

/* One interval's lines: what was counted since the last one. */
static void print_interval(struct prof *p, struct stat_ctx *s)
{
	double now = prof__elapsed(p);
	size_t n = (size_t)s->nr_ev * (size_t)s->nr_units;

	if (read_counters(p, "for an interval"))
		return;
	gather(p, s);
	for (size_t k = 0; k < n; k++) {
		struct psc_counts d = {
			s->now[k].val - s->prev[k].val,
			s->now[k].ena - s->prev[k].ena,
			s->now[k].run - s->prev[k].run,
			0,
			0,
		};

		s->prev[k] = s->now[k];
		s->now[k] = d;
	}
	make_figs(s, s->now, (now - s->last_interval) * 1e9);
	stat_print_rows(p, s, (now - s->last_interval) * 1e9, now);
	s->last_interval = now;
}

static int stat_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	print_interval(p, priv);
	return 0;
}

/* The totals of this run so far, as the final report shows them. */
static void print_totals(struct prof *p, struct stat_ctx *s)
{
	double elapsed = prof__elapsed(p);
	uint64_t hidden = s->hidden; /* -i: what the intervals left out, said at the end */

	if (read_counters(p, "for the report"))
		return;
	gather(p, s);
	make_figs(s, s->now, elapsed * 1e9);
	s->hidden = 0;
	stat_print_header(p, s, 0);
	stat_print_rows(p, s, elapsed * 1e9, -1);
	stat_print_footer(p, s, elapsed, 0, 0, false);
	s->hidden = p->opts.interval_ms ? hidden : s->hidden;
}

/* SIGUSR1: the totals so far; intervals go on unchanged. */
static int stat_sigusr1(struct prof *p, void *priv)
{
	print_totals(p, priv);
	return 0;
}

static int stat_report(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;

	if (p->opts.interval_ms) {
		print_interval(p, s); /* the last, shorter interval */
		hidden_note(s);
		return 0;
	}
	if (!s->runs) { /* the run ended without its counts: what they hold now */
		print_totals(p, s);
	} else {
		mean_figs(s);
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
	free(s->units);
	free(s->unit_of);
	free(s->now);
	free(s->prev);
	free(s->figs);
	free(s->acc);
	free(s->cs);
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
	{ "all", 0, NULL, PROF_OPT_FLAG, offsetof(struct stat_ctx, all), 0, 0, NULL,
	  "show the zero counts of events a wildcard matched too" },
	{ 0 },
};

const struct profiler profiler_stat = {
	.name = "stat",
	.summary = "count events (perf stat): derived figures, intervals, per CPU/core/socket, -r",
	.usage = "[-e EVENTS] [-a | -C CPUS] [-p PID | -t TID | -G CGROUP]\n"
		 "                      [-i MS] [--per-cpu | --per-core | --per-socket] [-r N]\n"
		 "                      [--duration S] [--format text|json | -x SEP] [-o FILE]\n"
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
		    "stat -C 0 -e 'sched:sched_switch,irq:*' --duration 2",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_PER_CPU | CLI_OPT_TARGET |
		       CLI_OPT_INTERVAL | CLI_OPT_DURATION | CLI_OPT_FORMAT | CLI_OPT_OUTPUT,
	.opts = stat_opts,
	.needs = PROF_TEXT_STDERR,
	.default_events = DEFAULT_EVENTS,
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
