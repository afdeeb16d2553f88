/* perfscope task-state: time per task state (on CPU, sleeping S/D/..., waiting to run), a preset. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/evsel.h>

#include "expr.h"
#include "task_state.h"

#define TS_EVENTS "sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new"

static const struct prof_opt ts_opts[] = {
	{ "interruptible", 'S', NULL, PROF_OPT_FLAG, offsetof(struct ts, only_s), 0, 0, NULL,
	  "only the S state (TASK_INTERRUPTIBLE); with -D both" },
	{ "uninterruptible", 'D', NULL, PROF_OPT_FLAG, offsetof(struct ts, only_d), 0, 0, NULL,
	  "only the D state (TASK_UNINTERRUPTIBLE); with -S both" },
	{ "no-interruptible", 0, NULL, PROF_OPT_FLAG, offsetof(struct ts, no_s), 0, 0, NULL,
	  "every state but S" },
	{ "no-uninterruptible", 0, NULL, PROF_OPT_FLAG, offsetof(struct ts, no_d), 0, 0, NULL,
	  "every state but D" },
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct ts, c.than), 0, 0, NULL,
	  "print each stay in a shown state longer than T (s, ms,\n"
	  "us, ns): the event that entered it (with its stack\n"
	  "under -g: where a task slept) and the one that left it" },
	{ "filter", 0, "COMM[,COMM...]", PROF_OPT_STRING, offsetof(struct ts, filter), 0, 0, NULL,
	  "only tasks whose name matches one of the globs (java*)" },
	{ "perins", 0, NULL, PROF_OPT_FLAG, offsetof(struct ts, perins), 0, 0, NULL,
	  "rows per thread too" },
	{ "flame-graph", 0, "FILE", PROF_OPT_STRING, offsetof(struct ts, flame_arg), 0, 0, NULL,
	  "the stacks of the stays over --than (-g implied), each\n"
	  "counted once, folded into FILE.folded at the end" },
	{ "max-pending", 0, "N", PROF_OPT_LONG, offsetof(struct ts, c.max_pending), 1, 1L << 30,
	  NULL,
	  "tasks followed at once (default 262144): past it the\n"
	  "one unseen longest is dropped and counted (evicted)" },
	{ NULL },
};

/* ---- setup ---- */

static int ts_check(struct prof *p, void *priv)
{
	struct ts *ts = priv;
	int ret;

	if (p->opts.nr_positional)
		return prof_usage(p, "'%s' is not an option (a COMMAND goes after --)",
				  p->opts.positional[0]);
	if ((ts->only_s && ts->no_s) || (ts->only_d && ts->no_d))
		return prof_usage(p, "-S/-D and --no-interruptible/--no-uninterruptible contradict");
	if ((ret = ts_flame_check(p, ts)))
		return ret;
	/* -p/-t filter system-wide events (PROF_WATCH_TASKS): a task is woken from another's */
	for (int i = 0; i < p->opts.nr_pids; i++)
		ts->pids[ts->nr_pids++] = p->opts.pids[i];
	for (int i = 0; i < p->opts.nr_tids; i++)
		ts->tids[ts->nr_tids++] = p->opts.tids[i];
	if (keymap__init(&ts->member, sizeof(uint8_t), 0))
		return -ENOMEM;
	ret = stage_core__init(p, &ts->c);
	if (ret && !ts->c.inited)
		keymap__exit(&ts->member);
	return ret;
}

static int ts_kind(const struct prof_event *ev)
{
	const char *name = ev->spec->event;

	if (!name || !ev->spec->sys || strcmp(ev->spec->sys, "sched"))
		return TS_OTHER;
	if (!strcmp(name, "sched_switch"))
		return TS_SWITCH;
	if (!strcmp(name, "sched_wakeup") || !strcmp(name, "sched_wakeup_new"))
		return TS_WAKEUP;
	return TS_OTHER;
}

/* An integer field of the format, read with its own offset, size and sign. */
static int int_field(struct prof *p, struct prof_event *ev, const char *name,
		     const struct psc_tp_field **out)
{
	const struct psc_tp_field *f = psc_tp_format__field(ev->fmt, name);

	if (f && !f->is_string && !f->is_array && f->size <= 8) {
		*out = f;
		return 0;
	}
	fprintf(stderr, "perfscope %s: %s has no integer field '%s': not the sched event "
			"task-state knows\n",
		p->name, ev->name, name);
	return -EINVAL;
}

static int ts_event(struct prof *p, void *priv, struct prof_event *ev,
		    struct perf_event_attr *attr)
{
	struct ts *ts = priv;
	struct ts_ev *te = ev->priv;
	char cond[2048];
	int ret;

	te->kind = ts_kind(ev);
	if (te->kind == TS_OTHER)
		return prof_usage(p, "task-state reads sched:sched_switch and sched:sched_wakeup*, "
				     "not %s",
				  ev->name);
	if (!ev->fmt)
		return prof_usage(p, "no format for %s", ev->name);
	if (te->kind == TS_SWITCH) {
		if ((ret = int_field(p, ev, "prev_pid", &te->a)) ||
		    (ret = int_field(p, ev, "next_pid", &te->b)) ||
		    (ret = int_field(p, ev, "prev_state", &te->state)))
			return ret;
		if (!ts->map_ok) {
			ret = tstate_map__init(&ts->map, ev->fmt);
			if (ret) {
				fprintf(stderr, "perfscope %s: cannot read the task states from the "
						"print fmt of %s: its prev_state is not printed as "
						"the kernel's sched.h does\n",
					p->name, ev->name);
				return ret;
			}
			ts->map_ok = true;
		}
		ts_side_cond(ts, "prev_comm", "prev_pid", cond, sizeof(cond));
		if (cond[0] && (ret = stage_compile(p, ev, cond, &te->pass_a)))
			return ret;
		ts_side_cond(ts, "next_comm", "next_pid", cond, sizeof(cond));
		if (cond[0] && (ret = stage_compile(p, ev, cond, &te->pass_b)))
			return ret;
	} else {
		if ((ret = int_field(p, ev, "pid", &te->a)))
			return ret;
		ts_side_cond(ts, "comm", "pid", cond, sizeof(cond));
		if (cond[0] && (ret = stage_compile(p, ev, cond, &te->pass_a)))
			return ret;
	}
	return 0;
}

static int ts_start(struct prof *p, void *priv)
{
	struct ts *ts = priv;
	bool only = ts->only_s || ts->only_d;
	int ret;

	if (!ts->map_ok)
		return prof_usage(p, "task-state needs sched:sched_switch among its events");
	ts->cls_s = tstate_map__find(&ts->map, "S");
	ts->cls_d = tstate_map__find(&ts->map, "D");
	if (only) {
		if (ts->only_s && ts->cls_s > 0)
			ts->shown |= 1ull << ts->cls_s;
		if (ts->only_d && ts->cls_d > 0)
			ts->shown |= 1ull << ts->cls_d;
	} else {
		ts->shown = ~0ull;
		if (ts->no_s && ts->cls_s > 0)
			ts->shown &= ~(1ull << ts->cls_s);
		if (ts->no_d && ts->cls_d > 0)
			ts->shown &= ~(1ull << ts->cls_d);
	}
	ret = stage_core__start(p, &ts->c, &ts_impl, ts);
	if (ret || (ret = ts_flame_start(p, ts)))
		return ret;
	/* a COMMAND: its process's threads, followed as -p follows one */
	if (p->target.has_command && p->target.launch.pid > 0)
		ts->pids[ts->nr_pids++] = p->target.launch.pid;
	ts_apply_filters(p, ts);
	return 0;
}

static void ts_teardown(struct prof *p, void *priv)
{
	struct ts *ts = priv;

	if (ts->c.inited)
		keymap__exit(&ts->member);
	for (int i = 0; i < p->nr_events; i++) {
		struct ts_ev *te = p->events_arr[i].priv;

		if (!te)
			continue;
		expr__delete(te->pass_a);
		expr__delete(te->pass_b);
	}
	stage_core__exit(p, &ts->c);
	ts_flame_exit(ts);
}

const struct profiler profiler_task_state = {
	.name = "task-state",
	.summary = "time per task state: on CPU (R), asleep (S, D, T, I ...), waiting to run (RD)",
	.usage = "[-S] [-D] [--than T] [--filter COMM[,COMM...]] [-p PID[,PID...] | -t TID[,...]]\n"
		 "                       [--perins] [-g [--flame-graph FILE]] [-i MS] [-C CPUS]\n"
		 "                       [--format text|json] [-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"Follows every task through sched:sched_switch and sched:sched_wakeup*: the time from\n"
		"its switch-in to its switch-out is R (on CPU); from a switch-out to its wakeup, the\n"
		"state it switched out in (S, D, T, t, I, P ... as this kernel's sched_switch format\n"
		"prints prev_state); from a wakeup, or a switch-out while still runnable (R, R+), to\n"
		"its switch-in, RD (waiting for a CPU). A sleep whose wakeup was not seen lasts until\n"
		"the switch-in. Each state's stays go into a log-linear histogram (calls, total, min,\n"
		"mean, p50 ... max). --than T prints each stay longer than T in a shown state with\n"
		"the event that began it and the one that ended it; with -g the stack of a sleep's\n"
		"switch-out says where the task slept, and --flame-graph FILE folds those stacks\n"
		"(one count per stay over T, the thread's name as the root) into FILE.folded.\n"
		"\n"
		"A task is followed by one pair engine keyed by its thread id (perfscope help\n"
		"multi-trace): a state that began before a lost window is not measured, a task not seen\n"
		"for long is evicted past --max-pending, and every outcome is counted.",
	.events_help = "optional: sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new\n"
		       "(a subset, with /FILTER/ and stack ATTRs)",
	.notes = "The state letters come from this kernel's sched_switch print fmt (through\n"
		 "libtraceevent), never from fixed bit values: they moved between kernels.\n"
		 "-p, -t and a COMMAND do not make the events per task (a task is woken from another\n"
		 "task's context): they filter system-wide events. -p follows the threads of the\n"
		 "processes, those created later too (/proc is asked once per thread seen); so does a\n"
		 "COMMAND for its own process (not its children).\n"
		 "\n"
		 "--format json: one object per state {\"state\", \"count\", \"min_ns\", \"max_ns\",\n"
		 "\"mean_ns\", \"p50_ns\", \"p95_ns\", \"p99_ns\", \"p999_ns\", \"total_ns\", \"over_than\"},\n"
		 "with \"tid\" and \"comm\" per thread (--perins), then {\"task_state\":\"outcomes\",\n"
		 "\"outcomes\":{...}, \"pending\", \"lost_windows\", \"kernel_dropped\" (at exit: see\n"
		 "perfscope-trace(1)), \"outliers\"}; per outlier {\"outlier\": true, \"tid\", \"comm\",\n"
		 "\"state\", \"latency_ns\", \"start\", \"end\"}.\n"
		 "\n"
		 "Stops on SIGINT/SIGTERM, at --duration, after -N events, when COMMAND ends or the\n"
		 "-p/-t tasks are gone. Exit status: 0 after a clean stop (COMMAND's own when it ends),\n"
		 "1 on a runtime failure, 2 on a usage error.",
	.examples = "task-state -i 1000 --no-interruptible --duration 2\n"
		    "task-state -p 1 --perins --ptrace --duration 1\n"
		    "task-state -p 1 -SD --than 20ms -g --duration 1\n"
		    "task-state --filter 'java,python*' -S --than 100ms -g --duration 1\n"
		    "task-state -D --than 1ms --format json --duration 1\n"
		    "task-state -S --than 10ms -g --flame-graph sleeps --duration 2\n"
		    "task-state -- ip link show lo",
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_CALLCHAIN | CLI_OPT_IDS_FOLLOW,
	.opts = ts_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS | PROF_SUMMARY |
		 PROF_WATCH_TASKS,
	.default_groups = (const char *const[]){ TS_EVENTS, NULL },
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct ts),
	.ev_priv_size = sizeof(struct ts_ev),
	.check = ts_check,
	.event = ts_event,
	.start = ts_start,
	.sample = ts_sample,
	.lost = ts_lost,
	.interval = ts_interval,
	.report = ts_report,
	.teardown = ts_teardown,
};
