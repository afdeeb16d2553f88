/* perfscope stat: count events like `perf stat`, scaled for multiplexing, per interval or per CPU.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/perfscope.h>

#include "profiler.h"
#include "session.h"

/* perf stat's default set: what every machine should show, hardware ones where present. */
#define DEFAULT_EVENTS                                                                         \
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches," \
	"branch-misses"

/* What stat keeps between reads. */
struct stat_ctx {
	struct psc_counts *prev; /* [evsel][cpu] for interval deltas */
	int nr_cpus;
};

static bool is_clock(const struct psc_evsel *evsel)
{
	const struct perf_event_attr *a = psc_evsel__attr(evsel);

	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

/* One value as a person reads it: clocks in msec, PMU events in their sysfs unit. */
static double display_value(const struct psc_evsel *evsel, double scaled, const char **unit)
{
	if (is_clock(evsel)) {
		*unit = "msec";
		return scaled / 1e6;
	}
	*unit = psc_evsel__unit(evsel) ? psc_evsel__unit(evsel) : "";
	return scaled * psc_evsel__scale(evsel);
}

static void print_line(struct prof *p, const struct psc_evsel *evsel, int cpu,
		       const struct psc_counts *c, double interval_ts)
{
	struct out *out = p->out;
	int open_err = psc_evsel__open_errno(evsel);
	bool supported = psc_evsel__is_open(evsel);
	const char *unit = "";
	double value = supported ? display_value(evsel, psc_counts__scaled(c), &unit) : 0;
	bool counted = supported && c->run > 0;

	if (p->opts.format == FORMAT_JSON) {
		struct json j;

		json__begin(&j, out);
		if (interval_ts >= 0) {
			json__key(&j, "interval");
			json__dbl(&j, interval_ts);
		}
		if (cpu >= 0) {
			json__key(&j, "cpu");
			json__i64(&j, cpu);
		}
		json__key(&j, "event");
		json__str(&j, psc_evsel__name(evsel));
		json__key(&j, "supported");
		json__bool(&j, supported);
		if (supported) {
			json__key(&j, "value");
			if (counted && !is_clock(evsel) && psc_evsel__scale(evsel) == 1.0)
				json__u64(&j, (uint64_t)llround(value));
			else if (counted)
				json__dbl(&j, value);
			else
				json__null(&j);
			json__key(&j, "unit");
			json__str(&j, unit);
			json__key(&j, "raw");
			json__u64(&j, c->val);
			json__key(&j, "enabled_ns");
			json__u64(&j, c->ena);
			json__key(&j, "running_ns");
			json__u64(&j, c->run);
			json__key(&j, "running_pct");
			json__dbl(&j, psc_counts__running_pct(c));
		} else {
			char msg[512];

			const struct psc_evsel *leader = psc_evsel__leader(evsel);

			json__key(&j, "error");
			if (leader != evsel) { /* the event may be fine: its group cannot be */
				char why[512];

				snprintf(msg, sizeof(msg), "%s: its group cannot be counted: %s",
					 psc_evsel__name(evsel),
					 psc_strerror_open(open_err, psc_evsel__name(leader), why,
							   sizeof(why)));
				json__str(&j, msg);
			} else {
				json__str(&j,
					      psc_strerror_open(open_err, psc_evsel__name(evsel),
								msg, sizeof(msg)));
			}
		}
		json__end_line(&j);
		return;
	}
	if (interval_ts >= 0)
		out__printf(out, "%14.6f ", interval_ts);
	if (cpu >= 0)
		out__printf(out, "CPU%-4d", cpu);
	else if (p->opts.per_cpu) /* an unsupported event has no CPUs: keep the columns */
		out__printf(out, "%7s", "");
	if (!supported)
		out__printf(out, "%18s %-5s %s\n", "<not supported>", "",
				psc_evsel__name(evsel));
	else if (!counted)
		out__printf(out, "%18s %-5s %s\n", "<not counted>", "", psc_evsel__name(evsel));
	else if (*unit || value != floor(value))
		out__printf(out, "%18.2f %-5s %s", value, unit, psc_evsel__name(evsel));
	else
		out__printf(out, "%18.0f %-5s %s", value, "", psc_evsel__name(evsel));
	if (counted) {
		if (c->run < c->ena)
			out__printf(out, "  (%.2f%%)", psc_counts__running_pct(c));
		out__putc(out, '\n');
	}
}

static struct psc_counts delta(const struct psc_counts *now, const struct psc_counts *before)
{
	return (struct psc_counts){ now->val - before->val, now->ena - before->ena,
				    now->run - before->run, now->id };
}

/* Prints every event (per CPU when asked); interval_ts < 0 means totals since start. */
static void print_counts(struct prof *p, struct stat_ctx *s, double interval_ts)
{
	struct psc_evlist *evlist = p->evlist;
	struct psc_evsel *evsel;
	int i;

	psc_evlist__for_each(evlist, i, evsel)
	{
		int nr_threads = psc_threadmap__nr(psc_evlist__threads(evlist));

		if (!psc_evsel__is_open(evsel) || !p->opts.per_cpu) {
			struct psc_counts c = { 0 },
					  *prev = &s->prev[i * (s->nr_cpus + 1) + s->nr_cpus];

			if (psc_evsel__is_open(evsel))
				psc_evsel__counts(evsel, -1, -1, &c);
			struct psc_counts d = interval_ts >= 0 ? delta(&c, prev) : c;

			if (interval_ts >= 0)
				*prev = c;
			print_line(p, evsel, -1, &d, interval_ts);
			continue;
		}
		for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
			struct psc_counts c = { 0 }, t,
					  *prev = &s->prev[i * (s->nr_cpus + 1) + cpu];

			for (int th = 0; th < nr_threads; th++) {
				if (psc_evsel__counts(evsel, cpu, th, &t))
					continue; /* a slot it was not opened on */
				c.val += t.val;
				c.ena += t.ena;
				c.run += t.run;
			}
			struct psc_counts d = interval_ts >= 0 ? delta(&c, prev) : c;

			if (interval_ts >= 0)
				*prev = c;
			print_line(p, evsel, psc_cpumap__cpu(psc_evlist__cpus(evlist), cpu), &d,
				   interval_ts);
		}
	}
}

static void print_header(struct prof *p)
{
	if (p->opts.format == FORMAT_TEXT)
		out__printf(p->out, "\n Performance counter stats for %s:\n\n", p->title);
}

static void print_footer(struct prof *p, double secs)
{
	if (p->opts.format == FORMAT_TEXT)
		out__printf(p->out, "\n %14.9f seconds time elapsed\n\n", secs);
}

static int stat_start(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;

	s->nr_cpus = psc_cpumap__nr(psc_evlist__cpus(p->evlist));
	s->prev = calloc((size_t)psc_evlist__nr(p->evlist) * (size_t)(s->nr_cpus + 1),
			 sizeof(*s->prev));
	return s->prev ? 0 : -ENOMEM;
}

/* SIGUSR1: the totals so far, as the final report shows them; the next interval is unchanged. */
static int stat_sigusr1(struct prof *p, void *priv)
{
	int err = psc_evlist__read(p->evlist);

	if (err) {
		fprintf(stderr, "perfscope stat: reading the counters failed: %s\n", strerror(-err));
		return 0;
	}
	print_header(p);
	print_counts(p, priv, -1);
	print_footer(p, prof__elapsed(p));
	return 0;
}

static int stat_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	double now = prof__elapsed(p);
	int err = psc_evlist__read(p->evlist);

	(void)now_ns;
	if (!err)
		print_counts(p, priv, now);
	else /* never a silently missing interval */
		fprintf(stderr, "perfscope stat: reading the counters at %.3f s failed: %s\n", now,
			strerror(-err));
	return 0;
}

static int stat_report(struct prof *p, void *priv)
{
	int err = psc_evlist__read(p->evlist);

	if (err) {
		fprintf(stderr, "perfscope stat: reading counters failed: %s\n", strerror(-err));
		return err;
	}
	if (p->opts.interval_ms) {
		print_counts(p, priv, prof__elapsed(p));
	} else {
		print_header(p);
		print_counts(p, priv, -1);
		print_footer(p, prof__elapsed(p));
	}
	return 0;
}

static void stat_teardown(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;

	(void)p;
	free(s->prev);
}

const struct profiler profiler_stat = {
	.name = "stat",
	.summary = "count events (perf stat), scaled for multiplexing, per interval or CPU",
	.usage = "[-e EVENTS] [-a | -C CPUS] [-p PID | -t TID | -G CGROUP]\n"
		 "                      [-i MS] [--per-cpu] [--duration S] [--format text|json] "
		 "[-o FILE]\n"
		 "                      [-- COMMAND ARGS...]",
	.description =
		"Counts events, like perf stat. Values are scaled when the kernel had to multiplex\n"
		"counters, and the share of time each event really ran is shown as (NN.NN%).\n"
		"Events this machine cannot count are shown as <not supported>; the rest still count.",
	.events_help = "events to count (default: " DEFAULT_EVENTS ")\n"
		       "see 'perfscope list'; e.g. page-faults, cycles:u, sched:sched_switch,\n"
		       "'syscalls:sys_enter_read/fd==0/', msr/tsc/, L1-dcache-load-misses;\n"
		       "repeatable: -e a -e b counts both; {a,b} counts a group together",
	.notes = "SIGINT/SIGTERM are passed on to COMMAND (a second one kills it); SIGUSR1 prints the\n"
		 "counts so far and goes on.\n"
		 "\n"
		 "Exit status: COMMAND's own status when it ends first (127/126 when it cannot be found or\n"
		 "run, 128+N when killed by signal N); else 0; 1 on a runtime failure, 2 on a usage error.",
	.examples = "stat -- make -j2                     # default events for a build\n"
		    "stat -e page-faults,context-switches,task-clock -- ./a.out\n"
		    "stat -a --per-cpu -i 1000 -e context-switches,cpu-migrations\n"
		    "stat -p 1234 --duration 5 --format json\n"
		    "stat --format json -o /tmp/counts.json -- ./a.out\n"
		    "stat -C 0 -e 'sched:sched_switch,irq:*' --duration 2",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_PER_CPU | CLI_OPT_TARGET |
		       CLI_OPT_INTERVAL | CLI_OPT_DURATION | CLI_OPT_FORMAT | CLI_OPT_OUTPUT,
	.needs = 0,
	.default_events = DEFAULT_EVENTS,
	.conformance_args = "-e task-clock -i 200",
	.priv_size = sizeof(struct stat_ctx),
	.start = stat_start,
	.interval = stat_interval,
	.sigusr1 = stat_sigusr1,
	.report = stat_report,
	.teardown = stat_teardown,
};
