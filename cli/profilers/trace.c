/* perfscope trace: print every event as it happens (tracepoints, software, sampled hardware). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "evprint.h"
#include "profiler.h"
#include "ustr.h"

struct trace {
	struct ustr *us; /* system calls' string arguments */
	bool us_refused; /* said once at -v why they are read late */
	bool us_any; /* some event has string arguments */
};

static int read_user_str(void *ctx, uint32_t pid, uint32_t tid, uint64_t ptr, uint64_t time_ns,
			 char *buf, size_t len, bool *cut)
{
	return ustr__read(ctx, pid, tid, ptr, time_ns, buf, len, cut);
}

static int trace_check(struct prof *p, void *priv)
{
	struct trace *t = priv;
	int err = prof__use_printer(p);

	if (err)
		return err;
	t->us = ustr__new();
	if (!t->us)
		return -errno;
	evprint__set_user_strings(prof__printer(p), read_user_str, t->us);
	return 0;
}

static int trace_event(struct prof *p, void *priv, struct prof_event *ev,
		       struct perf_event_attr *attr)
{
	struct trace *t = priv;
	char why[256];

	if (ev->fmt && ustr__fields(ev->fmt, NULL, 0) > 0)
		t->us_any = true;
	/*
	 * String arguments are copied when the call happens, before the events are enabled; when
	 * that cannot be set up they are read when printed, which misses short-lived processes.
	 */
	if (ev->fmt && ustr__watch(t->us, ev->fmt, why, sizeof(why)) < 0 &&
	    !t->us_refused) {
		t->us_refused = true;
		if (p->opts.verbose)
			fprintf(stderr,
				"perfscope trace: %s; system calls' string arguments are read from "
				"the process when printed (too late for one that has exited)\n",
				why);
	}
	return 0;
}

static int trace_start(struct prof *p, void *priv)
{
	struct trace *t = priv;

	/*
	 * A slow reader: events wait raw and are printed when it takes them, unless string
	 * arguments must be read near the call (their copies do not wait that long)
	 */
	return t->us_any ? 0 : prof__defer_output(p);
}

static int trace_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
			const struct psc_sample *s)
{
	prof__print(p, ev, cpu, s);
	return 0;
}

static void trace_teardown(struct prof *p, void *priv)
{
	struct trace *t = priv;

	ustr__delete(t->us);
}

const struct profiler profiler_trace = {
	.name = "trace",
	.summary = "print events as they happen: tracepoints with filters, software events, stacks",
	.usage = "-e EVENTS [-C CPUS] [-p PID | -t TID | -G CGROUP] [-g] [--no-order]\n"
		 "                       [-m PAGES] [--duration S] [-i MS] [--format text|json] "
		 "[-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"Prints every event as it happens: time, CPU, comm/pid/tid, event name (or its alias), its\n"
		"fields through the kernel's own print format, and its stack with -g or /stack/. Events are\n"
		"filtered in the kernel and read from per-CPU ring buffers; nothing is written to disk.\n"
		"Standard output carries only the events (pipe it to jq, grep, wc -l); the count of events\n"
		"seen and lost per event goes to standard error each interval and at exit.",
	.events_help =
		"what to trace: sys:name[/filter/ATTR/.../], wildcards (sched:sched_*),\n"
		"software events (page-faults, context-switches: every one;\n"
		"cpu-clock, task-clock: sampled at 1000 Hz unless period=/freq=),\n"
		"hardware events where the machine has them. The filter is the\n"
		"kernel's ftrace filter on the event's fields (a field it does not\n"
		"have is answered with the list of them; they are also in\n"
		"/sys/kernel/tracing/events/SYS/NAME/format). Repeatable: -e a -e b",
	.notes =
		"Events are merged in time order across CPUs by default (a k-way merge, cheap), which also\n"
		"makes thread names and user symbols of new processes known before their events.\n"
		"\n"
		"System calls' string arguments (paths, names) are printed as the strings they point\n"
		"to, copied when the call is made (BPF: root) or else read from the process when printed\n"
		"(too late for one that has exited: its pointer stays).\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, when COMMAND or the -p process\n"
		"exits, or when standard output is closed (e.g. '| head'). SIGUSR1 prints the counts so far.\n"
		"Lost events (the kernel found the ring full) are counted and reported per event and CPU:\n"
		"\"lost N events on cpu C\"; raise -m or filter more if you see them. In JSON, the last\n"
		"line then says it too: {\"incomplete\":{\"lost\",\"kernel_dropped\",\"output_dropped\",\n"
		"\"filtered\",\"seen\",...}}.\n"
		"\n"
		"Exit status: COMMAND's status when it ends (127/126 when it cannot be run; 128+N when\n"
		"killed by signal N, including one passed on from perfscope); 0 after any other clean stop\n"
		"(a COMMAND still running is sent SIGTERM); 1 on a runtime failure (including a failed write\n"
		"to standard output), 2 on a usage error.",
	.examples = "trace -e sched:sched_switch -C 0 --duration 1\n"
		    "trace -e 'syscalls:sys_enter_openat//stack/' -- cat /etc/hostname\n"
		    "trace -e syscalls:sys_enter_openat -- cat /etc/hostname\n"
		    "trace -e 'sched:sched_wakeup/comm==\"cat\"/alias=wakeup_cat/' -- sh -c '(sleep 0.1; echo hi) | cat'\n"
		    "trace -e 'syscalls:sys_enter_read/fd==0/' --format json | jq .fields.count\n"
		    "trace -e 'sched:sched_*' -i 1000 > /tmp/sched.txt\n"
		    "trace -e page-faults -g -- ./a.out\n"
		    "trace -e cpu-clock -g --call-graph dwarf,16384 -- ./a.out\n"
		    "trace -e sched:sched_wakeup -C 0 -g --flame-graph wakeup.folded",
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_CALLCHAIN | CLI_OPT_FLAME |
		       CLI_OPT_SAMPLING_LIMIT | CLI_OPT_OVERWRITE | CLI_OPT_OUTPUT_QUEUE,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS,
	.conformance_args = "-e sched:sched_switch",
	.priv_size = sizeof(struct trace),
	.check = trace_check,
	.event = trace_event,
	.start = trace_start,
	.sample = trace_sample,
	.teardown = trace_teardown,
};
