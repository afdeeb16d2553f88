/* perfscope event-care: perf-prof's per-event loss and order checker over the skeleton's counts. */
#include <stdio.h>

#include "json.h"
#include "profiler.h"

struct ec_ev {
	uint64_t seen, lost, backwards, last_ns;
	uint64_t seen0, lost0, backwards0; /* at the last -i */
};

struct ec {
	uint64_t last_ns; /* of the stream as delivered */
};

/*
 * Events are only counted: the skeleton already counts what each event lost per CPU (and what
 * the kernel dropped without a LOST record) and says it each -i and at exit. What is left to
 * check here is order: an event older than the one delivered before it (in the merged stream,
 * or of the same event), which --no-order shows.
 */
static int ec_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	struct ec *ec = priv;
	struct ec_ev *e = ev->priv;

	e->seen++;
	if (s->time < ec->last_ns || s->time < e->last_ns)
		e->backwards++;
	if (s->time > ec->last_ns)
		ec->last_ns = s->time;
	if (s->time > e->last_ns)
		e->last_ns = s->time;
	return 0;
}

static void ec_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	if (ev)
		((struct ec_ev *)ev->priv)->lost += n;
}

/* Each event's line: its counts since the last -i (ival), or the run's. */
static void ec_print(struct prof *p, bool ival)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct ec_ev *e = ev->priv;
		uint64_t seen = e->seen - (ival ? e->seen0 : 0);
		uint64_t lost = e->lost - (ival ? e->lost0 : 0);
		uint64_t back = e->backwards - (ival ? e->backwards0 : 0);

		e->seen0 = e->seen;
		e->lost0 = e->lost;
		e->backwards0 = e->backwards;
		if (p->json_fmt) {
			json__begin(&p->json, p->out);
			json__key(&p->json, "event");
			json__str(&p->json, ev->name);
			json__key(&p->json, "seen");
			json__u64(&p->json, seen);
			json__key(&p->json, "lost");
			json__u64(&p->json, lost);
			json__key(&p->json, "out_of_order");
			json__u64(&p->json, back);
			json__key(&p->json, "final");
			json__bool(&p->json, !ival);
			json__end_line(&p->json);
			continue;
		}
		out__printf(p->out, "%s: %llu events, %llu lost, %llu out of order%s\n", ev->name,
			    (unsigned long long)seen, (unsigned long long)lost,
			    (unsigned long long)back, ival ? " in the interval" : "");
	}
}

static int ec_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	ec_print(p, true);
	return 0;
}

static int ec_report(struct prof *p, void *priv)
{
	ec_print(p, false);
	return 0;
}

const struct profiler profiler_event_care = {
	.name = "event-care",
	.summary = "check events for loss and order: per event, what was seen, lost and out of "
		   "order",
	.usage = "-e EVENTS [-m PAGES] [--no-order] [-C CPUS] [-p PID | -t TID] [-i MS]\n"
		 "                       [--format text|json] [-o FILE] [-- COMMAND ARGS...]",
	.description =
		"perf-prof's event-care: the events are read and counted, nothing is printed per\n"
		"event. Every loss is said per event and CPU as it is found (\"lost N events on cpu\n"
		"C\"), with each -i interval's counts and the totals at exit, including hits the\n"
		"kernel counted but dropped without a LOST record. At exit a line per event gives\n"
		"its events, those lost and those delivered out of order (older than the event\n"
		"before them: only with --no-order, since the default merge orders them).",
	.events_help = "what to check: sys:name[/filter/], software events; repeatable",
	.notes =
		"--format json: one object per event {\"event\", \"seen\", \"lost\",\n"
		"\"out_of_order\"} at exit.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		"process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		"a runtime failure, 2 on a usage error.",
	.examples = "event-care -e sched:sched_wakeup -m 64 --duration 2\n"
		    "event-care -e sched:sched_wakeup,sched:sched_switch -m 4 --no-order -i 1000 "
		    "--duration 2\n"
		    "event-care -e sched:sched_switch --format json --duration 1",
	.shared_opts = CLI_OPTS_EVENT_RUN,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_SUMMARY,
	.conformance_args = "-e sched:sched_switch -i 200",
	.priv_size = sizeof(struct ec),
	.ev_priv_size = sizeof(struct ec_ev),
	.sample = ec_sample,
	.lost = ec_lost,
	.interval = ec_interval,
	.report = ec_report,
};
