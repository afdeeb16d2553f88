/* perfscope hrtimer: a condition on the events counted between each CPU's timer ticks. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "caret.h"
#include "clock.h"
#include "expr.h"
#include "hrslot.h"
#include "json.h"

struct hrtimer {
	uint64_t period;
	long freq;
	struct hrs h;
	struct expr *cond; /* NULL: every tick is printed */
	const char **vars; /* the events' names, then "period"; NULL last */
	uint64_t printed;
	uint64_t *unjudged; /* per event: counted in a CPU's first period or one the end cut */
};

/* clang-format off */
static const struct prof_opt hrt_opts[] = {
	{ "freq", 'F', "HZ", PROF_OPT_LONG, offsetof(struct hrtimer, freq), 1, 100000, NULL,
	  "the timer's frequency (instead of --period)" },
	{ "period", 0, "T", PROF_OPT_DURATION, offsetof(struct hrtimer, period), 0, 0, NULL,
	  "the timer's period (s, ms, us, ns; default 10ms)" },
	{ NULL },
};
/* clang-format on */

static int hrt_check(struct prof *p, void *priv)
{
	struct hrtimer *t = priv;
	uint64_t period = t->period ? t->period : 10000000ull;

	if (t->freq && t->period)
		return prof_usage(p, "-F and --period both set the timer: give one");
	if (t->freq)
		period = 1000000000ull / (uint64_t)t->freq;
	if (p->opts.nr_positional > 1)
		return prof_usage(
			p, "one condition only (quote it: 'sched_switch==0 && period > 1000')");
	return hrs__check(p, &t->h, period);
}

static int hrt_event(struct prof *p, void *priv, struct prof_event *ev,
		     struct perf_event_attr *attr)
{
	hrs__event(p, &((struct hrtimer *)priv)->h, ev, attr);
	return 0;
}

/* The condition, its names the events' (their counts in the slot) and "period" (its ns). */
static int compile_cond(struct prof *p, struct hrtimer *t)
{
	const char *text = p->opts.nr_positional ? p->opts.positional[0] : NULL;
	struct expr_opts o = { .want_int = true };
	struct expr_error err;

	if (!text)
		return 0;
	t->vars = calloc((size_t)t->h.nr_ev + 2, sizeof(*t->vars));
	if (!t->vars)
		return -ENOMEM;
	for (int e = 0; e < t->h.nr_ev; e++)
		t->vars[e] = hrs__name(&p->events_arr[e]);
	t->vars[t->h.nr_ev] = "period";
	o.vars = t->vars;
	t->cond = expr__compile(text, &o, &err);
	if (t->cond)
		return 0;
	if (errno == ENOMEM)
		return -ENOMEM;
	fprintf(stderr, "perfscope hrtimer: the condition %s: %s\n", text, err.msg);
	caret__print(stderr, "  ", NULL, text, err.pos > 0 ? err.pos : 0);
	if (err.unknown_name) {
		fprintf(stderr, "  it may use: period");
		for (int e = 0; e < t->h.nr_ev; e++)
			fprintf(stderr, ", %s", t->vars[e]);
		fprintf(stderr, " (the events' counts in the period: their names or alias=)\n");
	}
	return PROF_USAGE;
}

static int hrt_start(struct prof *p, void *priv)
{
	struct hrtimer *t = priv;
	int err = hrs__start(p, &t->h);

	if (err)
		return err;
	t->unjudged = calloc((size_t)t->h.nr_ev + 1, sizeof(*t->unjudged));
	return t->unjudged ? compile_cond(p, t) : -ENOMEM;
}

static int hrt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		      const struct psc_sample *s)
{
	struct hrtimer *t = priv;
	struct hrs_slot slot;
	struct expr_val v = { 0 };

	if (!hrs__sample(p, &t->h, ev, cpu, s, &slot))
		return 0;
	if (slot.first) { /* it began with the run, not at a tick */
		for (int e = 0; e < t->h.nr_ev; e++)
			t->unjudged[e] += slot.counts[e];
		return 0;
	}
	if (t->cond) {
		for (int e = 0; e < t->h.nr_ev; e++)
			expr__set_var(t->cond, e, slot.counts[e]);
		expr__set_var(t->cond, t->h.nr_ev, slot.ns);
		if (expr__eval(t->cond, NULL, 0, s, &v) || !v.i)
			return 0;
	}
	t->printed++;
	hrs__print_tick(p, &t->h, "hrtimer", ev, cpu, s, &slot);
	return 0;
}

static void hrt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	hrs__lost(&((struct hrtimer *)priv)->h, cpu);
}

static void cut_slot(struct prof *p, void *priv, const struct hrs_slot *slot)
{
	struct hrtimer *t = priv;

	for (int e = 0; e < t->h.nr_ev; e++)
		t->unjudged[e] += slot->counts[e];
}

/*
 * What was not judged, so that every event counted is accounted for: those of a CPU's first
 * period and of the periods the end cut, and the periods in which events were lost.
 */
static int hrt_report(struct prof *p, void *priv)
{
	struct hrtimer *t = priv;
	uint64_t errs = t->cond ? expr__nr_errors(t->cond, NULL) : 0;

	hrs__flush(p, &t->h, mono_ns(), cut_slot, t);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "periods_printed");
		json__u64(&p->json, t->printed);
		JSON_KEY(&p->json, "periods_lost");
		json__u64(&p->json, t->h.slots_lost);
		JSON_KEY(&p->json, "not_judged");
		json__obj(&p->json);
		for (int e = 0; e < t->h.nr_ev; e++) {
			json__key(&p->json, hrs__name(&p->events_arr[e]));
			json__u64(&p->json, t->unjudged[e]);
		}
		json__end_line(&p->json);
	} else if (!p->opts.quiet) {
		fprintf(stderr,
			"perfscope hrtimer: %llu periods printed; %llu not judged: events "
			"were lost in them\n",
			(unsigned long long)t->printed, (unsigned long long)t->h.slots_lost);
		for (int e = 0; e < t->h.nr_ev; e++)
			fprintf(stderr,
				"perfscope hrtimer: %s: %llu events in the periods not judged "
				"(a CPU's first, from the start, and its last, cut by the end)\n",
				hrs__name(&p->events_arr[e]), (unsigned long long)t->unjudged[e]);
	}
	if (errs)
		fprintf(stderr, "perfscope hrtimer: the condition failed to run %llu times\n",
			(unsigned long long)errs);
	return 0;
}

static void hrt_teardown(struct prof *p, void *priv)
{
	struct hrtimer *t = priv;

	expr__delete(t->cond);
	free(t->vars);
	free(t->unjudged);
	hrs__exit(&t->h);
}

const struct profiler profiler_hrtimer = {
	.name = "hrtimer",
	.summary = "a condition on the events counted in each period of a per-CPU timer: the "
		   "periods where it holds, with the stack",
	.usage = "[-e EVENTS] [-F HZ | --period T] [-C CPUS] [-g] [COND] [-- COMMAND ARGS...]",
	.description =
		"perf-prof's hrtimer: each CPU's timer (cpu-clock) fires every --period T (or -F HZ),\n"
		"and the events of -e seen on that CPU since its last tick are counted. COND, a C\n"
		"expression, is then run with each event's count under its name (sched_switch for\n"
		"sched:sched_switch, or its alias=) and period, the period's real length in ns; where\n"
		"it is true (every period without COND) the tick is printed: the task it interrupted,\n"
		"the period, each event's count and, with -g, the stack. A CPU's first period (from\n"
		"the start) and a period in which events were lost are not judged.",
	.events_help = "what to count: tracepoints, software events; ATTRs:\n"
		       "alias=NAME (its name in COND), cpus=LIST",
	.notes =
		"perf-prof reads a group's counters on each tick; here every event is a sample, so a\n"
		"loss is known and its period left out. Whole CPUs are watched: -p, -t or a\n"
		"COMMAND only bound the run.\n"
		"--format json: per period printed, the tick's members {\"time\", \"cpu\", \"pid\",\n"
		"\"tid\", \"comm\", ..., \"stack\"} with \"slot_ns\" and \"counts\":{NAME: N}; at\n"
		"exit {\"periods_printed\", \"periods_lost\", \"not_judged\":{NAME: N}}: the events\n"
		"of the periods not judged (a CPU's first, from the start, its last, cut by the end).\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration or after -N events sampled. Exit status: 0\n"
		"after a clean stop, 1 on a runtime failure, 2 on a usage error.",
	.examples =
		"hrtimer -e sched:sched_switch -C 0 --period 10ms -g sched_switch==0 --duration 1\n"
		"hrtimer -e sched:sched_switch -C 0 --period 50ms 'sched_switch==0' --duration 1\n"
		"hrtimer -e sched:sched_switch,sched:sched_wakeup -C 0-1 --period 50ms -g "
		"'sched_switch==0 && sched_wakeup==0 && period > 50000000' --duration 2\n"
		"hrtimer -e irq:softirq_entry//alias=softirq/ -F 100 'softirq > 2' --format json "
		"--duration 1",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_TARGET | CLI_OPT_CPUS | CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_ORDER |
		       CLI_OPT_EXIT_N | CLI_OPT_QUIET | CLI_OPT_USAGE_SELF | CLI_OPT_CALLCHAIN |
		       CLI_OPT_POSITIONAL,
	.opts = hrt_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_STACKS | PROF_WATCH_TASKS,
	.conformance_args = "-e sched:sched_switch --period 10ms",
	.priv_size = sizeof(struct hrtimer),
	.check = hrt_check,
	.event = hrt_event,
	.start = hrt_start,
	.sample = hrt_sample,
	.lost = hrt_lost,
	.report = hrt_report,
	.teardown = hrt_teardown,
};
