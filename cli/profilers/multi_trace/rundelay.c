/* perfscope rundelay: how long tasks wait to run after a wakeup or a preemption (a preset). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <perfscope/evsel.h>

#include "expr.h"
#include "multi_trace.h"
#include "sched_state.h"
#include "session.h"

#define RD_STARTS "sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_switch"
#define RD_ENDS "sched:sched_switch"

/* rundelay's priv: multi-trace's first (its hooks see a struct mt), then its own filters. */
struct rundelay {
	struct mt mt;
	const char *filter_comm; /* --filter */
	char pids[1024]; /* -p/-t: "12,34", filters on the events (system wide) */
	struct expr **pass; /* per event: its condition (prev_state, --filter, -p); NULL: none */
};

/* clang-format off */
/* multi-trace's options, and its filters that also set the keys. */
static const struct prof_opt rd_opts[] = {
	MT_OPTS
	{ "filter", 0, "COMM", PROF_OPT_STRING, offsetof(struct rundelay, filter_comm), 0, 0, NULL,
	  "only tasks whose name matches COMM (a glob: java*)" },
	{ NULL },
};
/* clang-format on */

/* The kind of a sched event by name; 0: none of rundelay's. */
enum { RD_OTHER, RD_WAKEUP, RD_SWITCH_OUT, RD_SWITCH_IN };

static int rd_kind(const struct prof_event *ev, int group)
{
	const char *name = ev->spec->event;

	if (!name || !ev->spec->sys || strcmp(ev->spec->sys, "sched"))
		return RD_OTHER;
	if (!strcmp(name, "sched_wakeup") || !strcmp(name, "sched_wakeup_new"))
		return RD_WAKEUP;
	if (!strcmp(name, "sched_switch"))
		return group ? RD_SWITCH_IN : RD_SWITCH_OUT;
	return RD_OTHER;
}

/* The key of its sched events by name and group. */
static const char *rd_key(const struct prof_event *ev, int group)
{
	switch (rd_kind(ev, group)) {
	case RD_WAKEUP:
		return "pid";
	case RD_SWITCH_OUT:
		return "prev_pid";
	case RD_SWITCH_IN:
		return "next_pid";
	default:
		return NULL;
	}
}

/* "(a==1||a==2)" for -p's list on field a. */
static void pid_cond(char *buf, size_t len, const char *field, const char *pids)
{
	size_t n = (size_t)snprintf(buf, len, "(");
	const char *c = pids;

	while (*c && n < len) {
		size_t l = strcspn(c, ",");

		if (l)
			n += (size_t)snprintf(buf + n, len - n, "%s%s==%.*s", n > 1 ? "||" : "",
					      field, (int)l, c);
		c += l + (c[l] == ',');
	}
	if (n < len)
		snprintf(buf + n, len - n, ")");
}

/* The condition rundelay adds to one of its events, "" when none. */
static void rd_cond(struct rundelay *rd, struct prof_event *ev, int kind, char *buf, size_t len)
{
	const char *comm = kind == RD_WAKEUP	   ? "comm"
			   : kind == RD_SWITCH_OUT ? "prev_comm"
						   : "next_comm";
	const char *pid = kind == RD_WAKEUP	  ? "pid"
			  : kind == RD_SWITCH_OUT ? "prev_pid"
						  : "next_pid";
	size_t n = 0;

	buf[0] = 0;
	if (kind == RD_SWITCH_OUT) {
		uint64_t r = ev->fmt ? sched_switch__preempted_state(ev->fmt) : 0;

		if (r)
			n += (size_t)snprintf(buf + n, len - n, "(prev_state==0||prev_state==%llu)",
					      (unsigned long long)r);
		else
			n += (size_t)snprintf(buf + n, len - n, "prev_state==0");
	}
	if (rd->filter_comm && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%s~\"%s\"", n ? "&&" : "", comm,
				      rd->filter_comm);
	if (rd->pids[0] && n < len) {
		char pc[1024];

		pid_cond(pc, sizeof(pc), pid, rd->pids);
		snprintf(buf + n, len - n, "%s%s", n ? "&&" : "", pc);
	}
}

static int rd_pass(struct prof *p, struct mt *mt, struct prof_event *ev,
		   const struct psc_sample *s);

static const struct mt_hooks rd_hooks = { .key = rd_key, .pass = rd_pass };

static int rundelay_check(struct prof *p, void *priv)
{
	struct rundelay *rd = priv;

	rd->mt.hooks = &rd_hooks;
	/*
	 * -p/-t become filters: the events stay system wide, since a task is woken from another
	 * task's context. rundelay stops when they are all gone (PROF_WATCH_TASKS). A COMMAND is
	 * watched system wide while it runs (its children have pids of their own).
	 */
	for (int i = 0, n = 0; i < p->opts.nr_pids + p->opts.nr_tids; i++) {
		pid_t id =
			i < p->opts.nr_pids ? p->opts.pids[i] : p->opts.tids[i - p->opts.nr_pids];

		n += snprintf(rd->pids + n, sizeof(rd->pids) - (size_t)n, "%s%d", n ? "," : "",
			      (int)id);
		if ((size_t)n >= sizeof(rd->pids))
			return prof_usage(p, "too many -p/-t ids");
	}
	return mt_check(p, priv);
}

static int rundelay_event(struct prof *p, void *priv, struct prof_event *ev,
			  struct perf_event_attr *attr)
{
	struct rundelay *rd = priv;
	struct mt_ev *me = ev->priv;
	int ret = mt_event(p, priv, ev, attr);
	int kind = rd_kind(ev, me->group);
	char cond[2048];
	struct expr_opts o;
	struct expr_error err;

	if (ret || kind == RD_OTHER)
		return ret;
	rd_cond(rd, ev, kind, cond, sizeof(cond));
	if (!cond[0])
		return 0;
	if (!rd->pass) {
		rd->pass = calloc((size_t)p->nr_events, sizeof(*rd->pass));
		if (!rd->pass)
			return -ENOMEM;
	}
	prof__expr_opts(p, ev, &o);
	o.want_int = true;
	rd->pass[ev->idx] = expr__compile(cond, &o, &err);
	if (!rd->pass[ev->idx]) {
		if (errno == ENOMEM)
			return -ENOMEM;
		return prof_usage(p, "--filter/-p on %s: %s (%s)", ev->name, err.msg, cond);
	}
	return 0;
}

/* The same conditions in the kernel, beside the user's own filter, so fewer events come. */
static int rundelay_start(struct prof *p, void *priv)
{
	struct rundelay *rd = priv;

	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct mt_ev *me = ev->priv;
		int kind = rd_kind(ev, me->group);
		char cond[2048], text[4096];

		if (kind == RD_OTHER || ev->filter)
			continue; /* a user filter the kernel refused: all in user space */
		rd_cond(rd, ev, kind, cond, sizeof(cond));
		if (!cond[0])
			continue;
		if (ev->spec->filter)
			snprintf(text, sizeof(text), "(%s)&&(%s)", ev->spec->filter, cond);
		else
			snprintf(text, sizeof(text), "%s", cond);
		if (psc_evsel__apply_filter(ev->evsel, text) && p->opts.verbose)
			fprintf(stderr,
				"perfscope rundelay: the kernel refused the filter '%s' on "
				"%s: applied in user space\n",
				text, ev->name);
	}
	return mt_start(p, priv);
}

static void rundelay_teardown(struct prof *p, void *priv)
{
	struct rundelay *rd = priv;

	mt_teardown(p, priv);
	if (rd->pass)
		for (int i = 0; i < p->nr_events; i++)
			expr__delete(rd->pass[i]);
	free(rd->pass);
}

/* The pass hook: the event's own condition, where it has one. */
static int rd_pass(struct prof *p, struct mt *mt, struct prof_event *ev, const struct psc_sample *s)
{
	struct rundelay *rd = (struct rundelay *)mt;
	struct expr *e = rd->pass ? rd->pass[ev->idx] : NULL;
	struct expr_val v;

	if (!e)
		return 1;
	if (expr__eval(e, s->raw.data, s->raw.size, s, &v))
		return -1;
	return v.i != 0;
}

const struct profiler profiler_rundelay = {
	.name = "rundelay",
	.summary = "scheduling delay: wakeup or preemption -> running, per task, with outliers",
	.usage = "[-e STARTS -e ENDS] [--filter COMM] [-p PID,... | -t TID,...] [--than T]\n"
		 "                       [--perins] [--detail[=SPEC]] [--heatmap FILE] [-i MS] "
		 "[-C CPUS]\n"
		 "                       [--format text|json] [-o FILE] [-- COMMAND ARGS...]",
	.description =
		"multi-trace with its events, keys and filters written for you: a task's run delay\n"
		"starts when it is woken (sched_wakeup, sched_wakeup_new: key pid) or preempted while\n"
		"runnable (sched_switch whose prev_state is R or R+: key prev_pid) and ends when it is\n"
		"switched in (sched_switch: key next_pid). --filter COMM and -p/-t IDS become filters on\n"
		"those events (comm, prev_comm, next_comm; pid, prev_pid, next_pid), in the kernel\n"
		"where it takes them; the events stay system wide (a wakeup comes from another task)\n"
		"and rundelay stops when the tasks of -p/-t are gone. With -- COMMAND every task is\n"
		"watched while COMMAND runs. perf-prof's form works too: -e 'sched:sched_wakeup*,sched:\n"
		"sched_switch' -e sched:sched_switch gets the same keys and filters; other events\n"
		"(untraced ones for --detail) are left as they are. Every multi-trace option applies.",
	.events_help = "optional: sched:sched_wakeup*,sched:sched_switch, then (-e again)\n"
		       "sched:sched_switch; ATTRs as multi-trace's",
	.notes =
		"The prev_state of a preempted task is read from this kernel's sched_switch format\n"
		"(the value printed as R+), not assumed.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, when COMMAND ends or the\n"
		"-p/-t tasks are gone. Exit status: 0 after a clean stop (COMMAND's own when it ends),\n"
		"1 on a runtime failure, 2 on a usage error.",
	.examples =
		"rundelay --than 4ms -i 1000 --duration 2\n"
		"rundelay -e 'sched:sched_wakeup*,sched:sched_switch' -e sched:sched_switch -p 1 "
		"-i 1000 --than 4ms --duration 2\n"
		"rundelay -e 'sched:sched_wakeup*,sched:sched_switch' -e "
		"'sched:sched_switch//stack/' --filter 'java*' -i 1000 --than 4ms --duration 2\n"
		"rundelay -e 'sched:sched_wakeup*,sched:sched_switch' -e "
		"'sched:sched_switch,sched:sched_migrate_task//untraced/stack/' -i 1000 --than "
		"10ms --detail=samecpu --duration 2\n"
		"rundelay --perins --format json --duration 1",
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_CALLCHAIN,
	.opts = rd_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS | PROF_SUMMARY |
		 PROF_WATCH_TASKS,
	.attrs = mt_attrs,
	.default_groups = (const char *const[]){ RD_STARTS, RD_ENDS, NULL },
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct rundelay),
	.ev_priv_size = sizeof(struct mt_ev),
	.check = rundelay_check,
	.event = rundelay_event,
	.start = rundelay_start,
	.sample = mt_sample,
	.lost = mt_lost,
	.interval = mt_interval,
	.report = mt_report,
	.teardown = rundelay_teardown,
};
