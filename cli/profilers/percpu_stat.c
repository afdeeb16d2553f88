/* perfscope percpu-stat: per-CPU counts of handpicked scheduler, interrupt and memory events. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <perfscope/perfscope.h>

#include "clock.h"
#include "json.h"
#include "profiler.h"

/* perf-prof's columns, in its order; a tracepoint this kernel lacks has no column. */
static const struct pcs_col {
	const char *event, *name;
	bool syscalls; /* --syscalls only */
} pcs_cols[] = {
	{ "context-switches", "csw" },
	{ "cpu-migrations", "cpu-mig" },
	{ "minor-faults", "minflt" },
	{ "major-faults", "majflt" },
	{ "raw_syscalls:sys_enter", "syscalls", true },
	{ "irq:irq_handler_entry", "hardirq" },
	{ "irq:softirq_entry", "softirq" },
	{ "timer:hrtimer_expire_entry", "hrtimer" },
	{ "workqueue:workqueue_execute_start", "workqueue" },
	{ "kvm:kvm_exit", "kvm-exit" },
	{ "net:netif_receive_skb", "net-recv" },
	{ "net:net_dev_xmit", "net-xmit" },
	{ "net:napi_gro_receive_entry", "net-gro" },
	{ "kmem:mm_page_alloc", "page-alloc" },
	{ "compaction:mm_compaction_migratepages", "compact" },
	{ "vmscan:mm_vmscan_direct_reclaim_begin", "reclaim" },
	{ "migrate:mm_migrate_pages", "migrate" },
	{ "filemap:mm_filemap_add_to_page_cache", "page-cache" },
	{ "writeback:wbc_writepage", "wb-pages" },
	{ "power:cpu_idle", "idle" },
};
#define PCS_NR (sizeof(pcs_cols) / sizeof(pcs_cols[0]))

struct pcs {
	bool syscalls;
	char events[1024];
	const struct pcs_col *col[PCS_NR]; /* of each -e event, in order */
	int nr_cpus;
	uint64_t *prev; /* [event * nr_cpus + cpu]: the counts read last */
	uint64_t *now; /* the same this interval; the row ALL last */
	uint64_t last_ns;
};

/* clang-format off */
static const struct prof_opt pcs_opts[] = {
	{ "syscalls", 0, NULL, PROF_OPT_FLAG, offsetof(struct pcs, syscalls), 0, 0, NULL,
	  "system calls too (raw_syscalls:sys_enter): a busy machine\n"
	  "makes many" },
	{ NULL },
};
/* clang-format on */

static bool tp_exists(const char *event)
{
	char sys[64];
	const char *colon = strchr(event, ':');
	struct psc_tp_format *f;

	if (!colon)
		return true; /* a software event */
	snprintf(sys, sizeof(sys), "%.*s", (int)(colon - event), event);
	f = psc_tp_format__load(sys, colon + 1);
	psc_tp_format__delete(f);
	return f != NULL;
}

static int pcs_check(struct prof *p, void *priv)
{
	struct pcs *s = priv;
	size_t n = 0;

	if (p->opts.interval_ms <= 0)
		p->opts.interval_ms = 1000; /* perf-prof's default */
	for (size_t i = 0; i < PCS_NR; i++) {
		if ((pcs_cols[i].syscalls && !s->syscalls) || !tp_exists(pcs_cols[i].event))
			continue;
		n += (size_t)snprintf(s->events + n, sizeof(s->events) - n, "%s%s", n ? "," : "",
				      pcs_cols[i].event);
	}
	return prof__add_events(p, s->events, NULL);
}

static int pcs_event(struct prof *p, void *priv, struct prof_event *ev,
		     struct perf_event_attr *attr)
{
	struct pcs *s = priv;

	for (size_t i = 0; i < PCS_NR; i++)
		if (!strcmp(ev->spec->name, pcs_cols[i].event) ||
		    (ev->spec->event && strchr(pcs_cols[i].event, ':') &&
		     !strcmp(strchr(pcs_cols[i].event, ':') + 1, ev->spec->event)))
			s->col[ev->idx] = &pcs_cols[i];
	return 0;
}

static int pcs_start(struct prof *p, void *priv)
{
	struct pcs *s = priv;
	size_t n;

	s->nr_cpus = psc_cpu__nr_possible();
	n = (size_t)p->nr_events * (size_t)(s->nr_cpus + 1);
	s->prev = calloc(n, sizeof(*s->prev));
	s->now = calloc(n, sizeof(*s->now));
	s->last_ns = mono_ns();
	return s->prev && s->now ? 0 : -ENOMEM;
}

/* The counts since the last read into s->now, per CPU and (the last row) all. */
static int read_counts(struct prof *p, struct pcs *s)
{
	int err = psc_evlist__read(p->evlist);
	int w = s->nr_cpus + 1;

	if (err)
		return err;
	memset(s->now, 0, (size_t)p->nr_events * (size_t)w * sizeof(*s->now));
	for (int e = 0; e < p->nr_events; e++) {
		struct psc_evsel *evsel = p->events_arr[e].evsel;
		const struct psc_cpumap *cpus = psc_evsel__cpus(evsel);

		if (!psc_evsel__is_open(evsel) || !cpus)
			continue;
		for (int i = 0; i < psc_cpumap__nr(cpus); i++) {
			int cpu = psc_cpumap__cpu(cpus, i);
			struct psc_counts c;
			uint64_t v;

			if (cpu < 0 || cpu >= s->nr_cpus || psc_evsel__counts(evsel, i, 0, &c))
				continue;
			v = (uint64_t)psc_counts__scaled(&c);
			s->now[e * w + cpu] = v - s->prev[e * w + cpu];
			s->now[e * w + s->nr_cpus] += s->now[e * w + cpu];
			s->prev[e * w + cpu] = v;
		}
	}
	return 0;
}

static void print_row(struct prof *p, struct pcs *s, int cpu, uint64_t ns)
{
	int w = s->nr_cpus + 1;

	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "cpu");
		if (cpu < s->nr_cpus)
			json__u64(&p->json, (uint64_t)cpu);
		else
			json__str(&p->json, "all");
		JSON_KEY(&p->json, "interval_ns");
		json__u64(&p->json, ns);
		for (int e = 0; e < p->nr_events; e++) {
			json__key(&p->json, s->col[e] ? s->col[e]->name : p->events_arr[e].name);
			json__u64(&p->json, s->now[e * w + cpu]);
		}
		json__end_line(&p->json);
		return;
	}
	if (cpu < s->nr_cpus)
		out__printf(p->out, "[%03d]", cpu);
	else
		out__puts(p->out, "[ALL]");
	for (int e = 0; e < p->nr_events; e++) {
		int width = s->col[e] ? (int)strlen(s->col[e]->name) : 8;

		out__printf(p->out, " %*llu", width < 8 ? 8 : width,
			    (unsigned long long)s->now[e * w + cpu]);
	}
	out__putc(p->out, '\n');
}

static int pcs_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct pcs *s = priv;
	uint64_t t = mono_ns(), ns = t - s->last_ns;
	int err = read_counts(p, s);

	s->last_ns = t;
	if (err)
		return err;
	if (!p->json_fmt) {
		time_t now = time(NULL);
		struct tm tm;
		char buf[32];

		localtime_r(&now, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
		out__printf(p->out, "%s percpu-stat, the last %.0f ms\n[CPU]", buf, ns / 1e6);
		for (int e = 0; e < p->nr_events; e++) {
			const char *n = s->col[e] ? s->col[e]->name : p->events_arr[e].name;

			out__printf(p->out, " %*s", (int)strlen(n) < 8 ? 8 : (int)strlen(n), n);
		}
		out__putc(p->out, '\n');
	}
	for (int c = 0; c < s->nr_cpus; c++) {
		bool counted = false;

		for (int e = 0; e < p->nr_events && !counted; e++)
			counted = psc_cpumap__idx(psc_evsel__cpus(p->events_arr[e].evsel), c) >= 0;
		if (counted)
			print_row(p, s, c, ns);
	}
	print_row(p, s, s->nr_cpus, ns);
	return 0;
}

static int pcs_report(struct prof *p, void *priv)
{
	struct pcs *s = priv;

	/* the last interval, unless the run ended on one */
	return mono_ns() - s->last_ns > 1000000 ? pcs_interval(p, priv, 0) : 0;
}

static void pcs_teardown(struct prof *p, void *priv)
{
	struct pcs *s = priv;

	free(s->prev);
	free(s->now);
}

const struct profiler profiler_percpu_stat = {
	.name = "percpu-stat",
	.summary = "per-CPU counts of handpicked scheduler, interrupt, network and memory events",
	.usage = "[--syscalls] [-C CPUS] [-i MS] [--format text|json] [-o FILE] "
		 "[-- COMMAND ARGS...]",
	.description =
		"perf-prof's percpu-stat: counters on each CPU, read every -i (default 1000 ms): a\n"
		"line per CPU and one for all, a column per event: context switches (csw), CPU\n"
		"migrations, minor and major faults, hard and soft interrupts, hrtimers, workqueue\n"
		"items, KVM exits, network receive, transmit and GRO, page allocations, compaction,\n"
		"direct reclaim, page migrations, page cache additions, pages written back and idle\n"
		"entries; --syscalls adds system calls. A tracepoint this kernel lacks has no column;\n"
		"-p, -t or a COMMAND only bound the run.\n"
		"The events are counted in the kernel: nothing is sampled, nothing can be lost.",
	.notes =
		"--format json: per interval an object per CPU and one with \"cpu\":\"all\", each\n"
		"{\"cpu\", \"interval_ns\", \"csw\", \"cpu-mig\", ...}: the counts of the interval.\n"
		"\n"
		"Stops on SIGINT/SIGTERM or at --duration. Exit status: 0 after a clean stop, 1 on a\n"
		"runtime failure, 2 on a usage error.",
	.examples = "percpu-stat -C 0 --duration 2\n"
		    "percpu-stat --syscalls -i 2000 --duration 2\n"
		    "percpu-stat -i 500 --format json --duration 1",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL | CLI_OPT_DURATION |
		       CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_QUIET | CLI_OPT_USAGE_SELF,
	.opts = pcs_opts,
	.needs = PROF_SUMMARY | PROF_WATCH_TASKS,
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct pcs),
	.check = pcs_check,
	.event = pcs_event,
	.start = pcs_start,
	.interval = pcs_interval,
	.report = pcs_report,
	.teardown = pcs_teardown,
};
