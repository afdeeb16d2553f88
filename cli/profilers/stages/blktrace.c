/* perfscope blktrace: the latency of each stage of a block request on one device (a preset). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/evsel.h>

#include "blktrace.h"
#include "expr.h"

#define BT_EVENTS "block:block_getrq,block:block_rq_insert,block:block_rq_issue,block:block_rq_complete"

static const char *const stage_names[BT_NR_STAGES] = { "getrq", "insert", "issue", "complete" };
static const char *const stage_events[BT_NR_STAGES] = { "block_getrq", "block_rq_insert",
							"block_rq_issue", "block_rq_complete" };

/* The key of a request: its sector (the device is one, by filter). */
#define BT_KEY "sector"

static const struct prof_opt bt_opts[] = {
	{ "device", 'd', "DEV", PROF_OPT_STRING, offsetof(struct bt, device), 0, 0, NULL,
	  "the block device: sda, /dev/vda, nvme0n1, loop0 or\n"
	  "MAJ:MIN (a partition means its disk)" },
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct bt, c.than), 0, 0, NULL,
	  "print each stage longer than T (s, ms, us, ns) with its\n"
	  "two events" },
	{ "max-pending", 0, "N", PROF_OPT_LONG, offsetof(struct bt, c.max_pending), 1, 1L << 30,
	  NULL,
	  "requests followed at once (default 262144): past it the\n"
	  "oldest is dropped and counted (evicted)" },
	{ NULL },
};

static int bt_check(struct prof *p, void *priv)
{
	struct bt *bt = priv;
	int ret;

	if (p->opts.nr_positional)
		return prof_usage(p, "'%s' is not an option (a COMMAND goes after --)",
				  p->opts.positional[0]);
	/* the device's requests, whoever submits them: -p/-t/COMMAND only bound the run */
	if (!bt->device)
		return prof_usage(p, "-d DEV is required: the block device to follow (lsblk lists "
				     "them)");
	if ((ret = bt_resolve_device(p, bt)))
		return ret;
	return stage_core__init(p, &bt->c);
}

static int bt_stage(const struct prof_event *ev)
{
	if (!ev->spec->event || !ev->spec->sys || strcmp(ev->spec->sys, "block"))
		return -1;
	for (int i = 0; i < BT_NR_STAGES; i++)
		if (!strcmp(ev->spec->event, stage_events[i]))
			return i;
	return -1;
}

static int bt_event(struct prof *p, void *priv, struct prof_event *ev,
		    struct perf_event_attr *attr)
{
	struct bt_ev *be = ev->priv;
	int ret;

	be->stage = bt_stage(ev);
	if (be->stage < 0)
		return prof_usage(p, "blktrace reads block:block_getrq, block_rq_insert, "
				     "block_rq_issue and block_rq_complete, not %s",
				  ev->name);
	if (!ev->fmt)
		return prof_usage(p, "no format for %s", ev->name);
	if ((ret = stage_compile(p, ev, BT_KEY, &be->key)) ||
	    (ret = stage_compile(p, ev, "dev", &be->dev)))
		return ret;
	return 0;
}

static int bt_start(struct prof *p, void *priv)
{
	struct bt *bt = priv;
	int ret = stage_core__start(p, &bt->c, &bt_impl, bt);

	if (ret)
		return ret;
	/* the device in the kernel: only its requests come */
	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct bt_ev *be = ev->priv;
		char text[2048];
		size_t n = 0;

		if (ev->filter)
			continue;
		if (ev->spec->filter)
			n += (size_t)snprintf(text, sizeof(text), "(%s)&&", ev->spec->filter);
		n += (size_t)snprintf(text + n, sizeof(text) - n, "(");
		for (int d = 0; d < (be->stage == 0 ? bt->nr_devs : 1) && n < sizeof(text); d++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%sdev==%llu", d ? "||" : "",
					      (unsigned long long)bt->devs[d]);
		if (n < sizeof(text))
			snprintf(text + n, sizeof(text) - n, ")");
		stage_apply_filter(p, ev, text);
	}
	return 0;
}

void bt_row_name(uint64_t id, char *buf, size_t len)
{
	if (id == BT_ROW_TOTAL)
		snprintf(buf, len, "total");
	else
		snprintf(buf, len, "%s -> %s", stage_names[id / BT_NR_STAGES],
			 stage_names[id % BT_NR_STAGES]);
}

static void json_row(struct prof *p, void *ctx, const struct lat_row *r)
{
	struct bt *bt = ctx;
	char name[64];

	bt_row_name(r->id, name, sizeof(name));
	JSON_KEY(&p->json, "device");
	json__str(&p->json, bt->disk);
	JSON_KEY(&p->json, "stage");
	json__str(&p->json, name);
}

static void text_label(struct prof *p, void *ctx, const struct lat_row *r, char *buf,
		       size_t len)
{
	char name[64];

	bt_row_name(r->id, name, sizeof(name));
	snprintf(buf, len, "  %s", name);
}

static void json_outcomes(struct prof *p, void *ctx)
{
	struct bt *bt = ctx;

	JSON_KEY(&p->json, "device");
	json__str(&p->json, bt->disk);
}

/* The table: a header naming the device, a row per pair of stages and total. */
static void table(struct bt *bt, struct stage_table *t, char *head, size_t len)
{
	snprintf(head, len, "%s (%u:%u)", bt->disk, bt->major, bt->minor);
	*t = (struct stage_table){ .width = 22, .head = head, .ctx = bt, .json_row = json_row,
				   .text_label = text_label, .json_outcomes = json_outcomes };
}

static int bt_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct stage_table t;
	char head[96];

	table(priv, &t, head, sizeof(head));
	return stage_core__interval(p, priv, &t);
}

static int bt_report(struct prof *p, void *priv)
{
	struct stage_table t;
	char head[96];

	table(priv, &t, head, sizeof(head));
	return stage_core__report(p, priv, &t, "stages");
}

static void bt_teardown(struct prof *p, void *priv)
{
	struct bt *bt = priv;

	for (int i = 0; i < p->nr_events; i++) {
		struct bt_ev *be = p->events_arr[i].priv;

		if (!be)
			continue;
		expr__delete(be->key);
		expr__delete(be->dev);
	}
	stage_core__exit(p, &bt->c);
}

const struct profiler profiler_blktrace = {
	.name = "blktrace",
	.summary = "block request latency per stage (getrq -> insert -> issue -> complete) of a "
		   "device",
	.usage = "-d DEV [--than T] [-i MS] [-C CPUS] [--format text|json] [-o FILE]\n"
		 "                       [-p PID | -t TID | -- COMMAND ARGS...]",
	.description =
		"Follows each request of the block device DEV through block:block_getrq (a request\n"
		"allocated for a bio), block_rq_insert (queued to the I/O scheduler; skipped when\n"
		"issued directly), block_rq_issue (sent to the driver) and block_rq_complete, keyed by\n"
		"its sector. The time between consecutive stages goes to the row \"from -> to\"\n"
		"(getrq -> insert, getrq -> issue, insert -> issue, issue -> complete: iostat's await\n"
		"in parts) and the whole life of a request to \"total\", each a log-linear histogram.\n"
		"--than T prints each stage slower than T with its two events.\n"
		"\n"
		"The fields are read through this kernel's formats (dev, sector), not fixed layouts.\n"
		"One pair engine follows the requests (perfscope help multi-trace): a request begun\n"
		"before a lost window is not measured, a completion whose request began before the\n"
		"run is no_start, and every outcome is counted.\n"
		"\n"
		"Every request of the device counts, whoever submitted it: -p/-t and a COMMAND only\n"
		"bound the run (it ends when they are gone, or when COMMAND ends).",
	.events_help = "optional: the four block events (a subset, with /FILTER/)",
	.notes = "--format json: one object per stage {\"device\", \"stage\", \"count\", \"min_ns\",\n"
		 "\"max_ns\", \"mean_ns\", \"p50_ns\", \"p95_ns\", \"p99_ns\", \"p999_ns\", \"total_ns\",\n"
		 "\"over_than\"}, then {\"device\", \"outcomes\":{...}, \"pending\", \"lost_windows\",\n"
		 "\"kernel_dropped\" (at exit: see perfscope-trace(1)), \"outliers\"}; per outlier\n"
		 "{\"outlier\":true, \"stage\", \"sector\", \"latency_ns\", \"start\", \"end\"}.\n"
		 "\n"
		 "Stops on SIGINT/SIGTERM, at --duration, after -N events, when COMMAND ends or the\n"
		 "-p/-t tasks are gone. Exit status: 0 after a clean stop (COMMAND's own when it ends),\n"
		 "1 on a runtime failure, 2 on a usage error (an unknown device too).",
	.examples = "blktrace -d loop0 -i 1000 --duration 1\n"
		    "blktrace -d /dev/loop0 -i 1000 --than 10ms --duration 1\n"
		    "blktrace -d 7:0 --format json --duration 1\n"
		    "blktrace -d loop0 -i 500 -- sleep 1",
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_CALLCHAIN,
	.opts = bt_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS | PROF_SUMMARY |
		 PROF_WATCH_TASKS,
	.default_groups = (const char *const[]){ BT_EVENTS, NULL },
	.conformance_args = "-d loop0 -i 200",
	.priv_size = sizeof(struct bt),
	.ev_priv_size = sizeof(struct bt_ev),
	.check = bt_check,
	.event = bt_event,
	.start = bt_start,
	.sample = bt_sample,
	.lost = bt_lost,
	.interval = bt_interval,
	.report = bt_report,
	.teardown = bt_teardown,
};
