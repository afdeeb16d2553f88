/* perfscope watchdog: hard and soft lockups coming, from the kernel watchdog's own timer and work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <perfscope/cpumap.h>

#include "json.h"
#include "ksyms.h"
#include "profiler.h"

/*
 * The kernel's watchdog: on each CPU an hrtimer (watchdog_timer_fn) runs every 2/5 of
 * watchdog_thresh and queues a stop work (softlockup_fn) that the CPU's stopper thread
 * (migration/N) runs. A hard lockup is a CPU whose timer has not run for watchdog_thresh
 * (interrupts off); a soft one, a CPU whose stop work has not run for twice that (no
 * scheduling). Both are said here at half the way, with the stack of a timer sample on that CPU.
 */
enum { WD_TIMER, WD_STOPPER, WD_SAMPLE };

struct wd_cpu {
	uint64_t timer_ns, stopper_ns; /* the last run of each */
	bool hard_said, soft_due, soft_said; /* in a lockup: each sample says it, with its stack */
};

struct watchdog {
	long freq;
	double thresh_s; /* --thresh: instead of the kernel's watchdog_thresh */
	uint64_t hard_ns, soft_ns; /* said past these */
	int nr_cpus;
	struct wd_cpu *cpu;
	uint64_t timers, hard, soft;
	char events[256];
};

/* clang-format off */
static const struct prof_opt wd_opts[] = {
	{ "freq", 'F', "HZ", PROF_OPT_LONG, offsetof(struct watchdog, freq), 1, 10000, NULL,
	  "samples per second and CPU that look for a lockup coming\n"
	  "and give its stack (default 1)" },
	{ "thresh", 0, "S", PROF_OPT_DOUBLE, offsetof(struct watchdog, thresh_s), 0, 0, NULL,
	  "seconds: the kernel's watchdog_thresh to judge by (default\n"
	  "/proc/sys/kernel/watchdog_thresh)" },
	{ NULL },
};
/* clang-format on */

static double read_thresh(void)
{
	FILE *f = fopen("/proc/sys/kernel/watchdog_thresh", "r");
	double v = 0;

	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static int wd_check(struct prof *p, void *priv)
{
	struct watchdog *wd = priv;
	struct ksyms *ks;
	const struct ksym *fn;
	double t = wd->thresh_s > 0 ? wd->thresh_s : read_thresh();
	int ret;

	if (t <= 0)
		return prof_usage(p,
				  "the kernel's watchdog is off (/proc/sys/kernel/watchdog_thresh "
				  "is 0): give --thresh S to judge by");
	wd->hard_ns = (uint64_t)(t * 1e9 / 2);
	wd->soft_ns = (uint64_t)(t * 1e9);
	ks = ksyms__load(NULL);
	if (!ks)
		return -errno;
	fn = ksyms__lookup(ks, "watchdog_timer_fn");
	if (!fn || !fn->addr) {
		fprintf(stderr,
			"perfscope watchdog: watchdog_timer_fn is not in the kernel's symbols%s%s\n",
			ksyms__problem(ks) ? ": " : " (a kernel without the soft lockup detector)",
			ksyms__problem(ks) ? ksyms__problem(ks) : "");
		ksyms__delete(ks);
		return 1;
	}
	snprintf(wd->events, sizeof(wd->events),
		 "timer:hrtimer_expire_entry/function==0x%llx/,"
		 "sched:sched_switch/next_comm~\"migration/*\"/,cpu-clock//freq=%ld/",
		 (unsigned long long)fn->addr, wd->freq ? wd->freq : 1);
	ksyms__delete(ks);
	if ((ret = prof__use_printer(p)))
		return ret;
	return prof__add_events(p, wd->events, NULL);
}

static int wd_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *attr)
{
	if (ev->idx != WD_SAMPLE)
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
	return 0;
}

static int wd_start(struct prof *p, void *priv)
{
	struct watchdog *wd = priv;

	wd->nr_cpus = psc_cpu__nr_possible();
	wd->cpu = calloc((size_t)wd->nr_cpus, sizeof(*wd->cpu));
	if (!wd->cpu)
		return -ENOMEM;
	if (p->opts.verbose)
		fprintf(stderr,
			"perfscope watchdog: a hard lockup is said after %.1f s without the "
			"watchdog's timer on a CPU, a soft one after %.1f s without its stop work\n",
			wd->hard_ns / 1e9, wd->soft_ns / 1e9);
	return 0;
}

static void say_lockup(struct prof *p, struct watchdog *wd, const char *kind, int cpu,
		       uint64_t since, struct prof_event *ev, const struct psc_sample *s)
{
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "lockup");
		json__str(&p->json, kind);
		JSON_KEY(&p->json, "since_ns");
		json__u64(&p->json, since);
		prof__print_members(p, ev, cpu, s);
		json__end_line(&p->json);
		return;
	}
	out__printf(p->out,
		    "%16s %7u/%u [%03d] %llu.%06u: %s lockup coming: the watchdog's %s "
		    "has not run for %.3f s\n",
		    prof__comm(p, s->pid, s->tid), s->pid, s->tid, cpu,
		    (unsigned long long)(s->time / 1000000000ull),
		    (unsigned int)(s->time % 1000000000ull / 1000), kind,
		    kind[0] == 'h' ? "timer" : "stop work", since / 1e9);
	prof__stack_text(p, s);
}

static int wd_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	struct watchdog *wd = priv;
	struct wd_cpu *c;
	uint64_t t = s->time;

	if (cpu < 0 || cpu >= wd->nr_cpus)
		return 0;
	c = &wd->cpu[cpu];
	if (!c->timer_ns) /* from the start: judged as if both had just run */
		c->timer_ns = c->stopper_ns = p->start_ns;
	switch (ev->idx) {
	case WD_TIMER:
		wd->timers++;
		c->timer_ns = t;
		c->hard_said = false;
		/* the timer judges the stop work: the samples until it runs give the stacks */
		if (t > c->stopper_ns && t - c->stopper_ns > wd->soft_ns)
			c->soft_due = true;
		break;
	case WD_STOPPER:
		c->stopper_ns = t;
		c->soft_due = c->soft_said = false;
		break;
	default:
		/* every sample while it lasts: where the CPU is stuck, and whether it moves */
		if (t > c->timer_ns && t - c->timer_ns > wd->hard_ns) {
			wd->hard += !c->hard_said;
			c->hard_said = true;
			say_lockup(p, wd, "hard", cpu, t - c->timer_ns, ev, s);
		}
		if (c->soft_due) {
			wd->soft += !c->soft_said;
			c->soft_said = true;
			say_lockup(p, wd, "soft", cpu, t - c->stopper_ns, ev, s);
		}
	}
	return 0;
}

static int wd_report(struct prof *p, void *priv)
{
	struct watchdog *wd = priv;

	if (!p->opts.quiet)
		fprintf(stderr,
			"perfscope watchdog: %llu watchdog timer runs seen; %llu hard and "
			"%llu soft lockups said\n",
			(unsigned long long)wd->timers, (unsigned long long)wd->hard,
			(unsigned long long)wd->soft);
	return 0;
}

static void wd_teardown(struct prof *p, void *priv)
{
	free(((struct watchdog *)priv)->cpu);
}

const struct profiler profiler_watchdog = {
	.name = "watchdog",
	.summary = "hard and soft lockups coming, with the stack, from the kernel watchdog's timer "
		   "and work",
	.usage = "[-F HZ] [-C CPUS] [-g] [--thresh S] [--format text|json] [-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"perf-prof's watchdog. The kernel's watchdog runs an hrtimer on each CPU every 2/5\n"
		"of watchdog_thresh (10 s by default) and, from it, a stop work in the CPU's stopper\n"
		"thread (migration/N). It calls a hard lockup a CPU whose timer has not run for\n"
		"watchdog_thresh (interrupts off), a soft one a CPU whose stop work has not run for\n"
		"twice that (nothing scheduled). Both are followed here, from\n"
		"timer:hrtimer_expire_entry of watchdog_timer_fn and the stopper's sched_switch, and\n"
		"said at half the kernel's limit by each timer sample (-F HZ) on that CPU while it\n"
		"lasts, with its stack (-g): what the CPU runs, and whether that moves. -p, -t or a\n"
		"COMMAND only bound the run.",
	.notes =
		"Without a hardware PMU the samples are cpu-clock's, an hrtimer too: during a hard\n"
		"lockup they come only when interrupts are back on (perf-prof's NMI samples need\n"
		"the PMU). The watchdog's own timer must be running: /proc/sys/kernel/watchdog.\n"
		"--format json: per lockup {\"lockup\":\"hard\"|\"soft\", \"since_ns\", \"time\",\n"
		"\"cpu\", \"pid\", \"tid\", \"comm\", ..., \"stack\"}.\n"
		"\n"
		"Stops on SIGINT/SIGTERM or at --duration. Exit status: 0 after a clean stop, 1 on a\n"
		"runtime failure, 2 on a usage error.",
	.examples = "watchdog -F 1 -g --duration 2\n"
		    "watchdog -C 0 -F 1 -g -v --duration 2\n"
		    "watchdog -F 10 -g --thresh 0.2 --duration 2",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_DURATION | CLI_OPT_MMAP |
		       CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_ORDER | CLI_OPT_EXIT_N |
		       CLI_OPT_QUIET | CLI_OPT_USAGE_SELF | CLI_OPT_CALLCHAIN,
	.opts = wd_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_STACKS | PROF_WATCH_TASKS,
	.conformance_args = "-F 100 --thresh 0.2",
	.priv_size = sizeof(struct watchdog),
	.check = wd_check,
	.event = wd_event,
	.start = wd_start,
	.sample = wd_sample,
	.report = wd_report,
	.teardown = wd_teardown,
};
