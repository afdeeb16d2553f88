/* perfscope num-dist: the distribution of num=EXPR over events, per event, key or instance. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "num_dist.h"

static const struct prof_attr nd_attrs[] = {
	{ "num", PROF_ATTR_EXPR, false, "num=EXPR: the number whose distribution is shown" },
	{ "key", PROF_ATTR_EXPR, false, "key=EXPR: one distribution per value of EXPR" },
	{ NULL },
};

static int nd_check(struct prof *p, void *priv)
{
	struct nd *nd = priv;

	if (p->opts.nr_positional && strcmp(p->opts.positional[0], "help"))
		return prof_usage(p, "'%s' is not an option: the number goes in num=EXPR on the "
				     "event ('help' lists the names it may use; a COMMAND goes after --)",
				  p->opts.positional[0]);
	return nd->than_text ? prof__use_printer(p) : 0;
}

static int nd_event(struct prof *p, void *priv, struct prof_event *ev,
		    struct perf_event_attr *attr)
{
	struct nd *nd = priv;
	struct nd_ev *ne = ev->priv;
	const struct prof_attr_val *num = prof_event__attr(ev, "num");
	const struct prof_attr_val *key = prof_event__attr(ev, "key");

	/* perf-prof's 'num-dist -e EVENT help': the names num= and key= may use */
	if (p->opts.nr_positional == 1 && !strcmp(p->opts.positional[0], "help")) {
		struct expr_opts o;

		prof__expr_opts(p, ev, &o);
		expr_print_names(stdout, "", ev->spec->name, &o);
		fflush(stdout);
		return ev->idx == p->nr_events - 1 ? 1 : 0;
	}
	if (!num)
		return prof_usage(p,
				  "%s has no num=EXPR: say which number to take the distribution "
				  "of, e.g. -e '%s//num=FIELD/' ('perfscope expr -e %s help' lists "
				  "the fields)",
				  ev->name, ev->spec->name, ev->spec->name);
	ne->num = num->expr;
	ne->key = key ? key->expr : NULL;
	if (keymap__init(&ne->dists, sizeof(struct nd_dist *), 0))
		return -ENOMEM;
	if (nd->heatmap) {
		ne->hm = heatmap__new(NULL);
		if (!ne->hm)
			return -errno;
	}
	return 0;
}

static void print_than(struct prof *p, struct nd *nd, const struct prof_event *ev, int cpu,
		       const struct psc_sample *s, uint64_t v)
{
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		prof__print_members(p, ev, cpu, s); /* its stack too */
		JSON_KEY(&p->json, "num");
		json__u64(&p->json, v);
		json__end_line(&p->json);
		return;
	}
	prof__print_line(p, ev, cpu, s);
	out__printf(p->out, "  num %llu > %llu\n", (unsigned long long)v,
		    (unsigned long long)nd->than);
	prof__stack_text(p, s);
}

static int nd_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	struct nd *nd = priv;
	struct nd_ev *ne = ev->priv;
	struct expr_val v;
	struct nd_dist *d, **slot;
	uint64_t key = 0, num;

	if (expr__eval(ne->num, s->raw.data, s->raw.size, s, &v)) {
		ne->errors++;
		return 0;
	}
	num = v.i;
	if (ne->key) {
		if (expr__eval(ne->key, s->raw.data, s->raw.size, s, &v)) {
			ne->errors++;
			return 0;
		}
		key = v.i;
	} else if (nd->perins) {
		key = p->target.per_cpu ? (uint64_t)cpu : s->tid;
	}
	slot = keymap__insert(&ne->dists, key, NULL);
	if (slot && !*slot)
		*slot = calloc(1, sizeof(**slot));
	if (!slot || !*slot) {
		nd->dropped++;
		return 0;
	}
	d = *slot;
	hist__add(&d->total, num);
	if (p->opts.interval_ms)
		hist__add(&d->ival, num);
	if (ne->hm)
		heatmap__add(ne->hm, s->time, num);
	if (nd->than_text && num > nd->than)
		print_than(p, nd, ev, cpu, s, num);
	return 0;
}

static int nd_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	return nd_print(p, priv, false);
}

static void nd_teardown(struct prof *p, void *priv)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct nd_ev *ne = p->events_arr[i].priv;
		struct keymap_iter it;
		struct nd_dist **d;
		uint64_t key;

		if (!ne)
			continue;
		if (ne->dists.slots || ne->dists.has_zero)
			keymap__for_each(&ne->dists, &it, key, d)
			{
				if (!*d)
					continue;
				hist__exit(&(*d)->total);
				hist__exit(&(*d)->ival);
				free(*d);
			}
		keymap__exit(&ne->dists);
		heatmap__delete(ne->hm);
	}
}

static const struct prof_opt nd_opts[] = {
	{ "perins", 0, NULL, PROF_OPT_FLAG, offsetof(struct nd, perins), 0, 0, NULL,
	  "one distribution per instance: per CPU system-wide\n"
	  "or with -C, per thread with -p/-t/COMMAND" },
	{ "than", 0, "N", PROF_OPT_DURATION, offsetof(struct nd, than), 0, 0, NULL,
	  "print each event whose number is above N (units\n"
	  "s, ms, us, ns: 10ms is 10000000), its stack with -g",
	  .given = PROF_OPT_GIVEN(struct nd, than_text) },
	{ "heatmap", 0, "FILE", PROF_OPT_HEATMAP, offsetof(struct nd, heatmap), 0, 0, NULL,
	  "write a heatmap (time x number) as an SVG file" },
	{ NULL },
};

const struct profiler profiler_num_dist = {
	.name = "num-dist",
	.summary = "the distribution of a number of each event (num=EXPR): percentiles, histogram",
	.usage = "-e EVENT//num=EXPR/ [--perins] [--than N] [--heatmap FILE] [-g] [-i MS]\n"
		 "                       [-C CPUS] [-p PID | -t TID] [--format text|json] [-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"Takes num=EXPR on every event and shows its distribution: count, min, mean, max,\n"
		"p50, p90, p95, p99, p99.9 (within 1.6% of the exact values) and a log2 histogram.\n"
		"key=EXPR on an event gives one distribution per value of the key; --perins one per\n"
		"CPU or per thread. With -i each interval's distribution is printed, and at exit the\n"
		"whole run's.",
	.events_help = "the events, each with num=EXPR (the number), key=EXPR, alias=NAME",
	.notes = "--format json: one object per event (and key) per interval: time, event, the key,\n"
		 "count, min, max, mean, p50, p90, p95, p99, p999; at exit with \"final\": true.\n"
		 "\n"
		 "Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		 "process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		 "a runtime failure, 2 on a usage error.",
	.examples = "num-dist -e sched:sched_stat_runtime help\n"
		    "num-dist -e 'syscalls:sys_enter_write//num=count/' -- dd if=/dev/zero "
		    "of=/dev/null bs=512 count=100 status=none\n"
		    "num-dist -e sched:sched_stat_runtime//num=runtime/ -C 0 -i 1000\n"
		    "num-dist -e 'sched:sched_stat_runtime//num=\"runtime/1000\"/alias=runtime(us)/' "
		    "-C 0 -i 1000\n"
		    "num-dist -e 'sched:sched_switch//num=prev_prio/' --perins --duration 1\n"
		    "num-dist -e 'sched:sched_stat_runtime//num=runtime/' --than 1ms -g --duration 5\n"
		    "num-dist -e 'sched:sched_stat_runtime//num=runtime/' --heatmap runtime.svg "
		    "--duration 10",
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_CALLCHAIN | CLI_OPT_SAMPLING_LIMIT |
		       CLI_OPT_POSITIONAL,
	.opts = nd_opts,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS | PROF_SUMMARY,
	.attrs = nd_attrs,
	.conformance_args = "-e sched:sched_switch//num=prev_prio/ -i 200",
	.priv_size = sizeof(struct nd),
	.ev_priv_size = sizeof(struct nd_ev),
	.check = nd_check,
	.event = nd_event,
	.sample = nd_sample,
	.interval = nd_interval,
	.report = nd_report,
	.teardown = nd_teardown,
};
