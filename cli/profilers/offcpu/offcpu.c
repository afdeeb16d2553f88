/* perfscope offcpu: stacks weighted by the time tasks spent off-CPU, from sched_switch alone. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include "clock.h"
#include "offcpu.h"
#include "profiler.h"

static const char *const format_names[] = { "text", "folded", "json", "svg", "pprof" };

static int oc_opt_format(struct prof *p, void *priv, const char *arg)
{
	struct offcpu *oc = priv;

	for (int f = 0; f < (int)(sizeof(format_names) / sizeof(*format_names)); f++)
		if (!strcmp(arg, format_names[f])) {
			oc->fmt = f;
			oc->format_arg = arg;
			return 0;
		}
	return prof_usage(p, "--format '%s': not one of text, folded, json, svg, pprof", arg);
}

/* --state S,D,R+,R,...: the rows counted, by this kernel's letters (known once the format is). */
static int oc_states(struct prof *p, struct offcpu *oc)
{
	char buf[128], *save = NULL;

	if (!oc->state_arg) {
		oc->shown = ~0ull;
		return 0;
	}
	snprintf(buf, sizeof(buf), "%s", oc->state_arg);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int cls = tstate_map__find(&oc->map, t);

		if (!strcmp(t, "R+"))
			cls = OC_ROW_PREEMPT;
		else if (!strcmp(t, "R"))
			cls = OC_ROW_RUNQ;
		if (cls < 0)
			return prof_usage(p,
					  "--state: '%s' is no task state this kernel's "
					  "sched_switch names (S, D, R+, R ...)",
					  t);
		oc->shown |= 1ull << cls;
	}
	oc->shown |= 1ull << OC_ROW_ONCPU;
	return 0;
}

static int oc_check(struct prof *p, void *priv)
{
	struct offcpu *oc = priv;
	char *ev = oc->events;
	size_t len = sizeof(oc->events);
	int n, ret;

	if (p->opts.nr_positional)
		return prof_usage(p, "'%s' is not an option (a COMMAND goes after --)",
				  p->opts.positional[0]);
	if (!oc->format_arg && oc->output) {
		oc->fmt = prof__ends_with(oc->output, ".folded") ? OC_FOLDED
			  : prof__ends_with(oc->output, ".svg")	 ? OC_SVG
			  : prof__ends_with(oc->output, ".json") ? OC_JSON
			  : prof__ends_with(oc->output, ".pb.gz") ||
					  prof__ends_with(oc->output, ".pprof")
				  ? OC_PPROF
				  : OC_TEXT;
	}
	if (oc->fmt == OC_JSON)
		p->json_fmt = true;
	if (oc->freq && !oc->wall)
		return prof_usage(p, "-F samples the CPUs for --wall: add --wall");
	if (oc->waker && p->opts.dwarf)
		return prof_usage(p, "--waker with --call-graph dwarf: a waker's user stack is "
				     "unwound from a copy too; not supported, use frame pointers");
	oc->period_ns = 1000000000ull / (uint64_t)(oc->freq ? oc->freq : 99);
	p->callchain = true; /* an off-CPU profile is its stacks */
	for (int i = 0; i < p->opts.nr_pids; i++)
		oc->pids[oc->nr_pids++] = p->opts.pids[i];
	for (int i = 0; i < p->opts.nr_tids; i++)
		oc->tids[oc->nr_tids++] = p->opts.tids[i];
	oc->self = getpid();
	/*
	 * Only the switch-outs are samples (the switch-ins are side-band records): the kernel
	 * drops the idle task's (no stack walked for them), and with -t every other task's
	 */
	n = snprintf(ev, len, "sched:sched_switch/");
	for (int i = 0; i < oc->nr_tids && n < (int)len - 64; i++)
		n += snprintf(ev + n, len - (size_t)n, "%sprev_pid==%d", i ? "||" : "",
			      oc->tids[i]);
	if (!oc->nr_tids)
		n += snprintf(ev + n, len - (size_t)n, "prev_pid!=0");
	snprintf(ev + n, len - (size_t)n, "/");
	if (oc->waker) { /* the woken task's pid: filtered the same way */
		n = (int)strlen(ev);
		n += snprintf(ev + n, len - (size_t)n, ",sched:sched_wakeup");
		for (int i = 0; i < oc->nr_tids && n < (int)len - 64; i++)
			n += snprintf(ev + n, len - (size_t)n, "%spid==%d", i ? "||" : "/",
				      oc->tids[i]);
		if (oc->nr_tids)
			snprintf(ev + n, len - (size_t)n, "/");
	}
	if (oc->wall)
		strncat(ev, ",cpu-clock", len - strlen(ev) - 1);
	if ((ret = prof__add_events(p, ev, NULL)))
		return ret;
	if (oc->output && oc->fmt != OC_TEXT && oc->fmt != OC_JSON) {
		bool existed = access(oc->output, F_OK) == 0;
		FILE *f =
			fopen(oc->output, "we"); /* an unwritable -o said now, not after the run */

		if (f && p->opts.interval_ms && !existed)
			unlink(oc->output); /* -i writes FILE.0001.EXT ... instead */
		if (!f) {
			fprintf(stderr, "perfscope %s: cannot write to '%s': %s\n", p->name,
				oc->output, strerror(errno));
			return -EIO; /* said: exit status 1 */
		}
		fclose(f);
	} else if (oc->output && !(oc->file = out__open(oc->output, 0))) {
		fprintf(stderr, "perfscope %s: cannot write to '%s': %s\n", p->name, oc->output,
			strerror(errno));
		return -EIO;
	}
	if (keymap__init(&oc->member, 0, 0) || keymap__init(&oc->on_since, sizeof(uint64_t), 0) ||
	    keymap__init(&oc->func_idx, sizeof(size_t), 0) || stack_table__init(&oc->stacks, true))
		return -ENOMEM;
	return 0;
}

static int oc_field(struct prof *p, struct prof_event *ev, const char *name,
		    const struct psc_tp_field **out)
{
	*out = ev->fmt ? psc_tp_format__field(ev->fmt, name) : NULL;
	if (*out && !(*out)->is_string && !(*out)->is_array && (*out)->size <= 8)
		return 0;
	fprintf(stderr, "perfscope %s: %s has no integer field '%s'\n", p->name, ev->name, name);
	return -EINVAL;
}

static int oc_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *a)
{
	struct offcpu *oc = priv;
	struct oc_ev *oe = ev->priv;
	int ret;

	if (a->type == PERF_TYPE_SOFTWARE) {
		oe->kind = OC_CLOCK;
		a->freq = 0;
		a->sample_period = oc->period_ns; /* each sample weighs its period in ns */
		return 0;
	}
	if (!strcmp(ev->spec->event, "sched_wakeup")) {
		oe->kind = OC_WAKEUP;
		return oc_field(p, ev, "pid", &oe->pid);
	}
	oe->kind = OC_SWITCH;
	/*
	 * The switch-in from a side-band record made in the task's own context (current is the
	 * task coming in): some kernels drop, silently, samples taken while a CPU idles, the
	 * sched_switch from the idle task among them (kdrop.h)
	 */
	a->context_switch = 1;
	if ((ret = oc_field(p, ev, "prev_pid", &oe->prev_pid)) ||
	    (ret = oc_field(p, ev, "prev_state", &oe->state)))
		return ret;
	if (tstate_map__init(&oc->map, ev->fmt)) {
		fprintf(stderr,
			"perfscope %s: cannot read the task states from the print fmt of "
			"%s\n",
			p->name, ev->name);
		return -EINVAL;
	}
	oc->map_ok = true;
	for (const char *const *d = (const char *const[]){ "X", "Z", "x", NULL }; *d; d++) {
		int cls = tstate_map__find(&oc->map, *d);

		if (cls > 0)
			oc->dead |= 1ull << cls;
	}
	return oc_states(p, oc);
}

static int oc_start(struct prof *p, void *priv)
{
	struct offcpu *oc = priv;
	struct pair_opts po = { .impl = &oc_impl, .ctx = oc };

	if (!oc->map_ok)
		return prof_usage(p, "offcpu needs sched:sched_switch");
	oc->pr = pair__new(&po);
	if (!oc->pr)
		return -errno;
	/* a COMMAND: its process's threads, followed as -p follows one, and named so */
	if (p->target.has_command && p->target.launch.pid > 0) {
		int n = 0;

		oc->pids[oc->nr_pids++] = p->target.launch.pid;
		for (char **a = p->opts.command; *a && n < (int)sizeof(p->title) - 2; a++)
			n += snprintf(p->title + n, sizeof(p->title) - (size_t)n, "%s%s",
				      a == p->opts.command ? "'" : " ", *a);
		if (n < (int)sizeof(p->title) - 1)
			snprintf(p->title + n, sizeof(p->title) - (size_t)n, "'");
	}
	callchain__hold_exits(prof__callchain(p), true); /* symbolized at the report */
	oc->slice_start_mono = mono_ns();
	oc->slice_wall_ns = realtime_ns();
	return 0;
}

static int oc_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	return oc_write(p, priv);
}

static int oc_report(struct prof *p, void *priv)
{
	struct offcpu *oc = priv;
	int err = oc_write(p, oc);

	if (oc->file && out__flush(oc->file)) {
		fprintf(stderr, "perfscope %s: writing to '%s' failed: %s\n", p->name, oc->output,
			strerror(-out__error(oc->file)));
		err = -EIO;
	}
	pair__finish(oc->pr);
	oc_say_losses(p, oc);
	return err;
}

static void oc_teardown(struct prof *p, void *priv)
{
	struct offcpu *oc = priv;

	pair__delete(oc->pr);
	stack_table__exit(&oc->stacks);
	oc_funcs_clear(oc);
	free(oc->funcs);
	keymap__exit(&oc->func_idx);
	keymap__exit(&oc->member);
	keymap__exit(&oc->on_since);
	out__delete(oc->file);
}

#define OFF(f) offsetof(struct offcpu, f)
static const struct prof_opt oc_opts[] = {
	{ "format", 0, "F", PROF_OPT_FN, 0, 0, 0, oc_opt_format,
	  "text (default: time by state and function), folded,\n"
	  "json, svg (a flame graph), pprof (gzipped profile.proto).\n"
	  "Without it, -o's name decides: .folded, .json, .svg, .pb.gz" },
	{ "output", 'o', "FILE", PROF_OPT_STRING, OFF(output), 0, 0, NULL,
	  "write the profile to FILE (with -i: FILE.0001.EXT ... for\n"
	  "folded, svg and pprof)" },
	{ "flame-graph", 0, "FILE", PROF_OPT_STRING, OFF(flame_graph), 0, 0, NULL,
	  "also write the folded stacks to FILE.folded (weights: ns)" },
	{ "waker", 0, NULL, PROF_OPT_FLAG, OFF(waker), 0, 0, NULL,
	  "add sched:sched_wakeup: the waker's stack on top of each\n"
	  "sleep (bcc's offwaketime), and the wait for a CPU after\n"
	  "the wakeup apart, as state R" },
	{ "wall", 0, NULL, PROF_OPT_FLAG, OFF(wall), 0, 0, NULL,
	  "wall-clock profile: cpu-clock samples of the same tasks\n"
	  "too, each weighing its period in ns: where the time went,\n"
	  "running or not" },
	{ "freq", 'F', "HZ", PROF_OPT_LONG, OFF(freq), 1, 100000, NULL,
	  "--wall: on-CPU samples per second (default 99)" },
	{ "state", 0, "S,D,...", PROF_OPT_STRING, OFF(state_arg), 0, 0, NULL,
	  "only these states: this kernel's letters (S, D, I ...),\n"
	  "R+ (switched out runnable: preempted) and R (woken,\n"
	  "waiting for a CPU: --waker)" },
	{ "than", 0, "T", PROF_OPT_DURATION, OFF(than), 0, 0, NULL,
	  "only off-CPU stays of at least T (s, ms, us, ns)" },
	{ "per-thread", 0, NULL, PROF_OPT_FLAG, OFF(per_thread), 0, 0, NULL,
	  "root frame comm-PID/TID" },
	{ "top", 0, "N", PROF_OPT_LONG, OFF(top), 0, 1000000, NULL,
	  "text: the N functions with the most time (default 30, 0: all)" },
	{ 0 },
};

const struct profiler profiler_offcpu = {
	.name = "offcpu",
	.summary =
		"off-CPU and wall-clock profiles: stacks weighted by the time tasks were blocked",
	.usage =
		"[--waker] [--wall [-F HZ]] [--state S,D,...] [--than T]\n"
		"                      [-a | -C CPUS] [-p PID,... | -t TID,...] [--call-graph fp|dwarf]\n"
		"                      [--format text|folded|json|svg|pprof] [-o FILE] [--flame-graph FILE]\n"
		"                      [-i MS] [--duration S] [-- COMMAND ARGS...]",
	.description =
		"Where tasks waited: every sched:sched_switch is sampled with the kernel and user stack\n"
		"of the task switched out (taken in its context, at the point it blocked) and its state;\n"
		"the switch that brings it back in ends its off-CPU time, which is added to that stack\n"
		"(in ns). No kprobe and no BPF: perf's --off-cpu needs BPF on finish_task_switch,\n"
		"which many kernels lack. The time is broken down by state: S (sleeping), D\n"
		"(uninterruptible, e.g. disk), the other sleeps this kernel names, R+ (switched out\n"
		"while runnable: preempted). --waker adds sched:sched_wakeup: the sleep ends at the\n"
		"wakeup, with the waker's stack above it (bcc offwaketime's layout: the task's stack,\n"
		"the state, '--', the waker's stack from its leaf, its comm), and the wait for a CPU\n"
		"after it is R. --wall adds cpu-clock samples of the same tasks, each weighing its\n"
		"period: a wall-clock profile, running and waiting in one flame graph.\n"
		"\n"
		"The outputs are profile's: text (time by state and by function), folded stacks (each\n"
		"with its state as a '[off-cpu S]' frame above the task's leaf; weights in ns), an SVG\n"
		"flame graph, pprof (switches and off-cpu nanoseconds, with comm, pid and state labels)\n"
		"and JSON. Tasks still off-CPU when a profile is written count up to then.",
	.notes =
		"-p, -t and a COMMAND filter system-wide switches (a task comes back in on any CPU); -t\n"
		"in the kernel too. A COMMAND's own process is followed, not its children. -C sees only\n"
		"those CPUs: a task that comes back on another one is counted as replaced, and only\n"
		"whole stays count. perfscope's own threads and the idle tasks are never profiled;\n"
		"exiting tasks are counted (exits).\n"
		"\n"
		"Nothing lost is silent: ring losses (and the switch-outs before them, never paired across\n"
		"a loss), switch-ins whose switch-out was not seen, switch-outs replaced (their switch-in\n"
		"missed), stacks not kept, and stacks cut short (a user stack stopping before main:\n"
		"frame pointers missing) are counted, in the text, the JSON \"lost\" object, the pprof\n"
		"comments and on standard error.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, when COMMAND ends or the -p/-t\n"
		"tasks are gone. Exit status: COMMAND's own when it ends; 0 after any other clean stop;\n"
		"1 on a runtime failure; 2 on a usage error.",
	.examples = "offcpu --duration 5\n"
		    "offcpu -o off.svg -- sleep 1\n"
		    "offcpu -p 1 --format folded -o off.folded --duration 2\n"
		    "offcpu --waker -o wake.svg --duration 3\n"
		    "offcpu --wall -F 999 -o wall.svg -- ./a.out\n"
		    "offcpu --state D --than 1ms --duration 5\n"
		    "offcpu -o off.pb.gz --duration 5 && go tool pprof -top off.pb.gz\n"
		    "offcpu --format json --duration 2 | jq .states\n"
		    "offcpu -i 1000 --flame-graph off --duration 3",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL | CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_CALLCHAIN | CLI_OPT_EXIT_N | CLI_OPT_QUIET |
		       CLI_OPT_USAGE_SELF,
	.opts = oc_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS |
		 PROF_WATCH_TASKS,
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct offcpu),
	.ev_priv_size = sizeof(struct oc_ev),
	.check = oc_check,
	.event = oc_event,
	.start = oc_start,
	.sample = oc_sample,
	.record = oc_record,
	.lost = oc_lost,
	.interval = oc_interval,
	.report = oc_report,
	.teardown = oc_teardown,
};
