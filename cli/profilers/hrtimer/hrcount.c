/* perfscope hrcount: events counted per CPU in fixed high-resolution slots, and their histogram. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "hist.h"
#include "hrslot.h"
#include "json.h"

struct hrc_series {
	uint64_t *v;
	size_t nr, cap;
};

struct hrcount {
	uint64_t period;
	bool perins;
	struct hrs h;
	int n; /* nr_cpus * nr_ev */
	struct hrc_series *ser; /* [cpu * nr_ev + e]: this interval's slots */
	struct hist *hist; /* [cpu * nr_ev + e]: the whole run's slot counts */
	uint64_t *total; /* [cpu * nr_ev + e] */
	uint64_t nomem;
};

/* clang-format off */
static const struct prof_opt hrc_opts[] = {
	{ "period", 0, "T", PROF_OPT_DURATION, offsetof(struct hrcount, period), 0, 0, NULL,
	  "the slot: each CPU's timer fires every T (s, ms, us, ns;\n"
	  "default 10ms)" },
	{ "perins", 0, NULL, PROF_OPT_FLAG, offsetof(struct hrcount, perins), 0, 0, NULL,
	  "a row per CPU, not the CPUs' slots summed" },
	{ NULL },
};
/* clang-format on */

static int hrc_check(struct prof *p, void *priv)
{
	struct hrcount *c = priv;

	if (p->opts.interval_ms <= 0)
		p->opts.interval_ms = 1000;
	return hrs__check(p, &c->h, c->period ? c->period : 10000000ull);
}

static int hrc_event(struct prof *p, void *priv, struct prof_event *ev,
		     struct perf_event_attr *attr)
{
	hrs__event(p, &((struct hrcount *)priv)->h, ev, attr);
	return 0;
}

static int hrc_start(struct prof *p, void *priv)
{
	struct hrcount *c = priv;
	int err = hrs__start(p, &c->h);

	if (err)
		return err;
	c->n = c->h.nr_cpus * c->h.nr_ev;
	c->ser = calloc((size_t)c->n, sizeof(*c->ser));
	c->hist = calloc((size_t)c->n, sizeof(*c->hist));
	c->total = calloc((size_t)c->n, sizeof(*c->total));
	if (!c->ser || !c->hist || !c->total)
		return -ENOMEM;
	for (int i = 0; i < c->n; i++)
		hist__init(&c->hist[i]);
	return 0;
}

static void add_slot(struct prof *p, void *priv, const struct hrs_slot *slot)
{
	struct hrcount *c = priv;

	for (int e = 0; e < c->h.nr_ev; e++) {
		int i = slot->cpu * c->h.nr_ev + e;
		struct hrc_series *s = &c->ser[i];

		if (s->nr == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 128;
			uint64_t *v = realloc(s->v, cap * sizeof(*v));

			if (!v) {
				c->nomem++;
				continue;
			}
			s->v = v;
			s->cap = cap;
		}
		s->v[s->nr++] = slot->counts[e];
		if (hist__add(&c->hist[i], slot->counts[e]))
			c->nomem++;
		c->total[i] += slot->counts[e];
	}
}

static int hrc_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		      const struct psc_sample *s)
{
	struct hrcount *c = priv;
	struct hrs_slot slot;

	if (hrs__sample(p, &c->h, ev, cpu, s, &slot))
		add_slot(p, c, &slot);
	return 0;
}

static void hrc_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	hrs__lost(&((struct hrcount *)priv)->h, cpu);
}

/* One row: the slots (summed over CPUs by their rank in the interval without --perins). */
static void print_row(struct prof *p, struct hrcount *c, int cpu, int e)
{
	size_t nr = 0;
	uint64_t total = 0;
	const char *name = hrs__name(&p->events_arr[e]);

	for (int k = 0; k < c->h.nr_cpus; k++)
		if ((cpu < 0 || k == cpu) && c->ser[k * c->h.nr_ev + e].nr > nr)
			nr = c->ser[k * c->h.nr_ev + e].nr;
	if (cpu >= 0 && !nr)
		return;
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "event");
		json__str(&p->json, name);
		if (cpu >= 0) {
			JSON_KEY(&p->json, "cpu");
			json__u64(&p->json, (uint64_t)cpu);
		}
		JSON_KEY(&p->json, "slots");
		json__arr(&p->json);
	} else if (cpu >= 0) {
		out__printf(p->out, "[%03d] %20s ", cpu, name);
	} else {
		out__printf(p->out, "%20s ", name);
	}
	for (size_t i = 0; i < nr; i++) {
		uint64_t v = 0;

		for (int k = 0; k < c->h.nr_cpus; k++) {
			const struct hrc_series *s = &c->ser[k * c->h.nr_ev + e];

			if ((cpu < 0 || k == cpu) && i < s->nr)
				v += s->v[i];
		}
		total += v;
		if (p->json_fmt)
			json__u64(&p->json, v);
		else
			out__printf(p->out, "%s%2llu", i ? "| " : "", (unsigned long long)v);
	}
	if (p->json_fmt) {
		json__end(&p->json);
		JSON_KEY(&p->json, "total");
		json__u64(&p->json, total);
		json__end_line(&p->json);
	} else {
		out__printf(p->out, " | total %llu\n", (unsigned long long)total);
	}
}

static int hrc_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct hrcount *c = priv;

	if (!p->json_fmt) {
		time_t now = time(NULL);
		struct tm tm;
		char buf[32];

		localtime_r(&now, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
		out__printf(p->out, "%s\n", buf);
	}
	for (int k = c->perins ? 0 : -1; k < (c->perins ? c->h.nr_cpus : 0); k++)
		for (int e = 0; e < c->h.nr_ev; e++)
			print_row(p, c, k, e);
	for (int i = 0; i < c->n; i++)
		c->ser[i].nr = 0;
	return 0;
}

/* The run's histogram of slot counts of event e (on cpu, or every CPU's slots: cpu < 0). */
static int print_hist(struct prof *p, struct hrcount *c, int cpu, int e)
{
	struct hist h;
	uint64_t total = 0;
	char per[32], label[96];

	hist__init(&h);
	for (int k = 0; k < c->h.nr_cpus; k++) {
		if (cpu >= 0 && k != cpu)
			continue;
		if (hist__merge(&h, &c->hist[k * c->h.nr_ev + e])) {
			hist__exit(&h);
			return -ENOMEM;
		}
		total += c->total[k * c->h.nr_ev + e];
	}
	if (cpu >= 0 && !hist__count(&h)) {
		hist__exit(&h);
		return 0;
	}
	hist_fmt(per, sizeof(per), c->h.period_ns, "ns");
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "event");
		json__str(&p->json, hrs__name(&p->events_arr[e]));
		if (cpu >= 0) {
			JSON_KEY(&p->json, "cpu");
			json__u64(&p->json, (uint64_t)cpu);
		}
		JSON_KEY(&p->json, "period_ns");
		json__u64(&p->json, c->h.period_ns);
		JSON_KEY(&p->json, "events");
		json__u64(&p->json, total);
		JSON_KEY(&p->json, "slots_lost");
		json__u64(&p->json, c->h.slots_lost);
		JSON_KEY(&p->json, "final");
		json__bool(&p->json, true);
		hist__json(&h, &p->json, NULL);
		json__end_line(&p->json);
	} else {
		if (cpu >= 0)
			snprintf(label, sizeof(label), "[%03d] %s", cpu,
				 hrs__name(&p->events_arr[e]));
		else
			snprintf(label, sizeof(label), "%s", hrs__name(&p->events_arr[e]));
		out__printf(p->out,
			    "%s: %llu slots of %s, %llu events; events per slot: "
			    "min %llu, p50 %llu, p99 %llu, max %llu\n",
			    label, (unsigned long long)hist__count(&h), per,
			    (unsigned long long)total, (unsigned long long)hist__min(&h),
			    (unsigned long long)hist__percentile(&h, 50),
			    (unsigned long long)hist__percentile(&h, 99),
			    (unsigned long long)hist__max(&h));
		hist__print_log2(&h, p->out);
	}
	hist__exit(&h);
	return 0;
}

static int hrc_report(struct prof *p, void *priv)
{
	struct hrcount *c = priv;
	int err = 0;

	/* the slots going on at the end: every event seen is in a slot */
	hrs__flush(p, &c->h, mono_ns(), add_slot, c);
	hrc_interval(p, c, 0);
	for (int k = c->perins ? 0 : -1; k < (c->perins ? c->h.nr_cpus : 0) && !err; k++)
		for (int e = 0; e < c->h.nr_ev && !err; e++)
			err = print_hist(p, c, k, e);
	if (c->h.slots_lost && !p->json_fmt)
		out__printf(p->out, "%llu slots not counted: events were lost in them\n",
			    (unsigned long long)c->h.slots_lost);
	if (c->nomem)
		fprintf(stderr, "perfscope hrcount: %llu slot counts not kept: out of memory\n",
			(unsigned long long)c->nomem);
	return err;
}

static void hrc_teardown(struct prof *p, void *priv)
{
	struct hrcount *c = priv;

	for (int i = 0; c->ser && i < c->n; i++)
		free(c->ser[i].v);
	for (int i = 0; c->hist && i < c->n; i++)
		hist__exit(&c->hist[i]);
	free(c->ser);
	free(c->hist);
	free(c->total);
	hrs__exit(&c->h);
}

const struct profiler profiler_hrcount = {
	.name = "hrcount",
	.summary = "events counted per CPU in fixed high-resolution slots (--period), and the "
		   "histogram of the slot counts",
	.usage = "-e EVENTS [--period T] [-C CPUS] [-i MS] [--perins] [--format text|json] "
		 "[-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"perf-prof's hrcount: each CPU's timer (cpu-clock) fires every --period T, and the\n"
		"events of -e seen on that CPU since its last tick are that slot's count. Every -i\n"
		"(default 1000 ms) a line per event gives the interval's slots, a| b| c | total N,\n"
		"summed over the CPUs by their rank in the interval, or a line per CPU with\n"
		"--perins. At exit the whole run's distribution of the slot counts: a log2\n"
		"histogram with min, p50, p99 and max. Every event is counted in one slot (the\n"
		"first slot of a CPU begins when the events are enabled, the last one ends at exit),\n"
		"so the slots add up to the events seen; a slot in which events were lost is left\n"
		"out and counted.",
	.events_help = "what to count: tracepoints, software events; ATTRs:\n"
		       "alias=NAME (the row's name), cpus=LIST",
	.notes =
		"perf-prof reads the counters of a group on each tick (PERF_SAMPLE_READ); here every\n"
		"event is a sample, so nothing is lost without being said. Whole CPUs are counted:\n"
		"-p, -t or a COMMAND only bound the run.\n"
		"--format json: per interval and event {\"event\", (\"cpu\",) \"slots\":[...],\n"
		"\"total\"}; at exit {\"event\", \"period_ns\", \"events\", \"slots_lost\", \"final\",\n"
		"\"count\" (slots), \"min\", \"max\", \"mean\", \"p50\" ... \"p999\"}.\n"
		"\n"
		"Stops on SIGINT/SIGTERM or at --duration. Exit status: 0 after a clean stop, 1 on a\n"
		"runtime failure, 2 on a usage error.",
	.examples =
		"hrcount -e sched:sched_switch -C 0 --period 50ms -i 1000 --duration 2\n"
		"hrcount -e sched:sched_switch,sched:sched_wakeup//alias=wakeup/ -C 0-1 --period "
		"50ms -i 1000 --duration 2\n"
		"hrcount -e sched:sched_switch,sched:sched_wakeup//cpus=1/ -C 0-1 --period 200ms -i "
		"1000 --perins --duration 2\n"
		"hrcount -e sched:sched_switch -C 0-1 --period 10ms -i 500 --perins --duration 1\n"
		"hrcount -e irq:softirq_entry --period 1ms --format json --duration 1",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_TARGET | CLI_OPT_CPUS | CLI_OPT_INTERVAL |
		       CLI_OPT_DURATION | CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT |
		       CLI_OPT_ORDER | CLI_OPT_QUIET | CLI_OPT_USAGE_SELF,
	.opts = hrc_opts,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_SUMMARY | PROF_WATCH_TASKS,
	.conformance_args = "-e sched:sched_switch --period 10ms -i 200",
	.priv_size = sizeof(struct hrcount),
	.check = hrc_check,
	.event = hrc_event,
	.start = hrc_start,
	.sample = hrc_sample,
	.lost = hrc_lost,
	.interval = hrc_interval,
	.report = hrc_report,
	.teardown = hrc_teardown,
};
