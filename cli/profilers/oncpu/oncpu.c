/* perfscope oncpu: which tasks ran on each CPU, or which CPUs each task ran on, per interval. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/cpumap.h>

#include "clock.h"
#include "oncpu.h"

static int oncpu_opt_prio(struct prof *p, void *priv, const char *arg);

/* --detail[=...]: perf-prof's takes a value it does not use here either */
static int oncpu_opt_detail(struct prof *p, void *priv, const char *arg)
{
	((struct oncpu *)priv)->detail = true;
	return 0;
}

/* clang-format off */
static const struct prof_opt oncpu_opts[] = {
	{ "filter", 0, "FILTER", PROF_OPT_STRING, offsetof(struct oncpu, filter), 0, 0, NULL,
	  "the kernel's filter on the event: sched_switch's fields\n"
	  "(CPU mode), sched_stat_runtime's (-p/-t)" },
	{ "detail", 0, "[=...]", PROF_OPT_FN, 0, 0, 0, oncpu_opt_detail,
	  "CPU mode: switches in and the longest run of each task;\n"
	  "thread mode: the runtime events per CPU" },
	{ "only-comm", 0, NULL, PROF_OPT_FLAG, offsetof(struct oncpu, only_comm), 0, 0, NULL,
	  "a row per command name, not per thread" },
	{ "prio", 0, "PRIO[-PRIO],...", PROF_OPT_FN, 0, 0, 0, oncpu_opt_prio,
	  "CPU mode: switches from or to tasks of these priorities\n"
	  "(0-99 real-time, 100-139 the others: 120 + nice)" },
	{ NULL },
};
/* clang-format on */

/* --prio LIST as the kernel's filter on sched_switch, the same as perf-prof builds. */
static int oncpu_opt_prio(struct prof *p, void *priv, const char *arg)
{
	struct oncpu *oc = priv;
	size_t n = 0;
	const char *s = arg;

	oc->prio = arg;
	while (*s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;

		if (end == s || lo < 0 || lo > 139)
			goto bad;
		if (*end == '-') {
			s = end + 1;
			hi = strtol(s, &end, 10);
			if (end == s || hi < lo || hi > 139)
				goto bad;
		}
		if (*end && *end != ',')
			goto bad;
		n += (size_t)snprintf(
			oc->events + n, sizeof(oc->events) - n,
			"%s(prev_prio>=%ld&&prev_prio<=%ld)||(next_prio>=%ld&&next_prio<=%ld)",
			n ? "||" : "", lo, hi, lo, hi);
		if (n >= sizeof(oc->events) - 64)
			return prof_usage(p, "--prio: too many ranges");
		s = *end ? end + 1 : end;
	}
	return 0;
bad:
	return prof_usage(p,
			  "--prio takes PRIO[-PRIO],... within 0-139 (0-99 real-time, 100-139 the "
			  "others: 120 + nice), not '%s'",
			  arg);
}

static int oncpu_check(struct prof *p, void *priv)
{
	struct oncpu *oc = priv;
	char filter[sizeof(oc->events)];

	if (oc->filter && oc->prio)
		return prof_usage(p, "--filter and --prio both filter the events: give one");
	oc->by_thread = p->opts.nr_pids || p->opts.nr_tids || p->opts.command;
	if (oc->prio && oc->by_thread)
		return prof_usage(p, "--prio filters sched_switch (CPU mode): not with -p, -t or a "
				     "COMMAND");
	snprintf(filter, sizeof(filter), "%s",
		 oc->prio     ? oc->events
		 : oc->filter ? oc->filter
			      : "");
	if (strchr(filter, '/'))
		return prof_usage(p, "--filter '%s': a '/' cannot be part of an event's filter",
				  filter);
	if ((size_t)snprintf(oc->events, sizeof(oc->events), "%s/%s/",
			     oc->by_thread ? "sched:sched_stat_runtime" : "sched:sched_switch",
			     filter) >= sizeof(oc->events))
		return prof_usage(p, "the filter is too long");
	if (p->opts.interval_ms <= 0)
		p->opts.interval_ms = 1000; /* perf-prof's default */
	oc->nr_cpus = psc_cpu__nr_possible();
	oc->cpus = calloc((size_t)oc->nr_cpus, sizeof(*oc->cpus));
	if (!oc->cpus)
		return -ENOMEM;
	for (int c = 0; c < oc->nr_cpus; c++)
		if (keymap__init(&oc->cpus[c].tasks, sizeof(struct oncpu_task), 64))
			return -ENOMEM;
	if (keymap__init(&oc->threads,
			 sizeof(struct oncpu_task) + 2 * sizeof(uint64_t) * (size_t)oc->nr_cpus,
			 64))
		return -ENOMEM;
	return prof__add_events(p, oc->events, NULL);
}

static int oncpu_event(struct prof *p, void *priv, struct prof_event *ev,
		       struct perf_event_attr *attr)
{
	struct oncpu *oc = priv;
	const struct psc_tp_format *f = ev->fmt;

	oc->f_prev_pid = psc_tp_format__field(f, "prev_pid");
	oc->f_prev_comm = psc_tp_format__field(f, "prev_comm");
	oc->f_next_pid = psc_tp_format__field(f, "next_pid");
	oc->f_next_comm = psc_tp_format__field(f, "next_comm");
	oc->f_pid = psc_tp_format__field(f, "pid");
	oc->f_comm = psc_tp_format__field(f, "comm");
	oc->f_runtime = psc_tp_format__field(f, "runtime");
	if (oc->by_thread ? !oc->f_pid || !oc->f_comm || !oc->f_runtime
			  : !oc->f_prev_pid || !oc->f_prev_comm || !oc->f_next_pid)
		return prof_usage(p, "%s lacks the fields oncpu reads on this kernel", ev->name);
	return 0;
}

static int oncpu_report(struct prof *p, void *priv)
{
	return oncpu_table(p, priv, mono_ns());
}

static void oncpu_teardown(struct prof *p, void *priv)
{
	struct oncpu *oc = priv;

	for (int c = 0; oc->cpus && c < oc->nr_cpus; c++)
		keymap__exit(&oc->cpus[c].tasks);
	free(oc->cpus);
	keymap__exit(&oc->threads);
}

const struct profiler profiler_oncpu = {
	.name = "oncpu",
	.summary = "which tasks ran on each CPU, or which CPUs each task ran on, per interval",
	.usage = "[-C CPUS | -p PID | -t TID] [--detail] [--filter FILTER] [--only-comm]\n"
		 "                       [--prio PRIO[-PRIO],...] [-i MS] [--format text|json] "
		 "[-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"perf-prof's oncpu, in two modes. CPU mode (the default, -C CPUS): sched:sched_switch\n"
		"on each CPU; the time between a task's switch in and its switch out is its time\n"
		"there. Each interval prints a line per CPU: the time its tasks ran (the idle task\n"
		"apart) and each task, comm:tid(ms), most time first; --detail adds the switches and\n"
		"the longest run. A run is counted in the interval where it ends (at exit: up to then).\n"
		"Thread mode (-p, -t or a COMMAND): sched:sched_stat_runtime of those threads; a\n"
		"line per thread with its time on each CPU it ran on, cpu(ms). --only-comm sums the\n"
		"threads of one name. --prio keeps the switches from or to tasks of those priorities,\n"
		"--filter is any kernel filter on the event. -i defaults to 1000 ms.",
	.notes =
		"--format json: CPU mode, an object per CPU and interval {\"cpu\", \"sum_ns\",\n"
		"\"switches\", \"tasks\":[{\"comm\", \"tid\", \"ns\", \"switches\", \"max_ns\"}]};\n"
		"thread mode, per thread {\"tid\", \"comm\", \"sum_ns\", \"cpus\":[{\"cpu\", \"ns\",\n"
		"\"events\"}]}. After a loss on a CPU, its running task is known again at its next\n"
		"switch; the loss is said on standard error. sched_stat_runtime covers the fair\n"
		"class: real-time threads show in CPU mode only. perf-prof's --detail in thread mode\n"
		"shows SMT siblings' co-running; here it gives the runtime events per CPU.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, or when COMMAND or the -p process exits.\n"
		"Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on a runtime\n"
		"failure, 2 on a usage error.",
	.examples =
		"oncpu -p 1234 --duration 2\n"
		"oncpu -C 0-1 --only-comm --duration 2\n"
		"oncpu --only-comm --detail --duration 2\n"
		"oncpu --prio 100-139 --duration 2\n"
		"oncpu -C 0 --filter 'next_prio<120||prev_prio<120' --duration 2\n"
		"oncpu -i 500 --format json -- taskset -c 1 sh -c 'i=0; while [ $i -lt 100000 ]; "
		"do i=$((i+1)); done'",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL | CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_QUIET |
		       CLI_OPT_USAGE_SELF,
	.opts = oncpu_opts,
	.needs = PROF_RINGS | PROF_TP_FORMAT | PROF_SUMMARY,
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct oncpu),
	.check = oncpu_check,
	.event = oncpu_event,
	.sample = oncpu_sample,
	.lost = oncpu_lost,
	.interval = oncpu_interval,
	.report = oncpu_report,
	.teardown = oncpu_teardown,
};
