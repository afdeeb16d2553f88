/* perfscope multi-trace: the profiler and its engine, -e groups' events paired by key (pair.h). */
#include "multi_trace.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

/* ---- setup ---- */

/* "a,b -> c": the events of group g (traced ones). */
static void group_name(struct prof *p, int g, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < p->nr_events && n < len; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct mt_ev *me = ev->priv;

		if (me->group != g || me->untraced)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", mt_short_name(ev));
	}
}

int mt_start(struct prof *p, void *priv)
{
	struct mt *mt = priv;
	int nr_traced[MT_MAX_GROUPS] = { 0 };

	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		if (!me->untraced)
			nr_traced[me->group]++;
	}
	for (int g = 0; g < mt->nr_groups; g++)
		if (!nr_traced[g])
			return prof_usage(p,
					  "-e group %d has only untraced events: each group needs "
					  "an event to pair",
					  g + 1);
	if (mt->impl == MT_CALL || mt->impl == MT_CALL_DELAY) {
		int ret = mt_call__start(p, mt, nr_traced);

		if (ret)
			return ret;
		goto links_done;
	}
	if (mt->nr_groups < 2 && !mt->cycle)
		return prof_usage(p, "pairs need two -e groups (starts, then ends), or --cycle "
				     "to pair one group with itself");
	mt->nr_links = mt->cycle ? mt->nr_groups : mt->nr_groups - 1;
	/*
	 * perf-prof keys events without key= by their instance: the CPU when the events are
	 * system wide (rundelay's -p only bounds its run), the thread otherwise. A cycle of one
	 * event (sched_switch out, then in) pairs on a CPU: keyed by thread, prev_pid and next_pid
	 * of one switch are different threads and never pair.
	 */
	mt->key_cpu = mt->cycle && p->target.per_cpu && !p->target.has_command;
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		char a[80], b[80];
		int ret;

		lk->from = l;
		lk->to = (l + 1) % mt->nr_groups;
		group_name(p, lk->from, a, sizeof(a));
		group_name(p, lk->to, b, sizeof(b));
		snprintf(lk->name, sizeof(lk->name), "%s -> %s", a, b);
		if ((ret = mt_link__init(p, mt, lk, &mt_pair_impl)))
			return ret;
		if (mt->impl == MT_KMEMPROF && mt_kmem__new(lk))
			return -ENOMEM;
	}
links_done:
	if (mt->detail && mt_detail__init(p, mt))
		return -ENOMEM;
	mt->ival_start = mono_ns();
	return 0;
}

void mt_teardown(struct prof *p, void *priv)
{
	struct mt *mt = priv;

	for (int l = 0; l < mt->nr_links; l++)
		mt_link__exit(&mt->links[l]);
	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		if (!me)
			continue;
		if (me->own_key)
			expr__delete(me->key);
		if (me->own_size)
			expr__delete(me->size);
	}
	mt_detail__delete(mt->dt);
	mt_call__delete(mt->call);
}

const struct profiler profiler_multi_trace = {
	.name = "multi-trace",
	.summary = "pair events by key across -e groups: latency statistics, outliers, what never "
		   "paired",
	.usage = "-e EVENTS -e EVENTS [-e ...] [-k EXPR] [--impl IMPL] [--than T | --only-than T]\n"
		 "                       [--lower T] [--perins] [--heatmap FILE] [--detail[=SPEC]] "
		 "[--cycle]\n"
		 "                       [-i MS] [-C CPUS] [-p PID | -t TID] [--format text|json] "
		 "[-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"The events of the first -e group start something, those of the second end it; more\n"
		"groups make a chain reduced to consecutive pairs (A -> B, B -> C; --cycle adds C -> A).\n"
		"A start waits, under its key (key=EXPR on the event, or -k EXPR; default the thread),\n"
		"for the next end with the same key. Each pair's latency goes into a log-linear\n"
		"histogram (calls, min, mean, p50, p95, p99, p99.9, max within 1/64); --than T prints\n"
		"each pair slower than T (both events and the latency) and counts them.\n"
		"\n"
		"Every event ends in one counted outcome: paired; replaced (a newer start of the same\n"
		"key came first); no_start (an end with no start); open (still waiting at the end);\n"
		"evicted (more than --max-pending starts waiting: the oldest goes); lost (the kernel\n"
		"dropped events after the start: its latency could span them, so it is never\n"
		"measured); reversed (an end older than its start, out of order); nomem.\n"
		"\n"
		"role=EXPR on an event of a middle group says per event whether it may start (bit 0)\n"
		"and end (bit 1); untraced events are not paired but shown by --detail, which prints\n"
		"the events around each outlier from a backlog of the last 65536 events.\n"
		"\n"
		"--impl call and call-delay (perf-prof's nested-trace) read each -e group as one\n"
		"function, ENTER,EXIT, nested per key (the thread): the end prints the call tree.",
	.events_help = "a group of starts, then a group of ends (-e again); ATTRs: key=EXPR,\n"
		       "printkey=EXPR, role=EXPR, untraced, trigger, stack, size=EXPR,\n"
		       "alias=NAME",
	.notes =
		"With -i the table of the interval is printed every MS milliseconds; at the end the\n"
		"totals. --format json gives one object per line: per pair {\"pair\", \"count\",\n"
		"\"min_ns\", \"max_ns\", \"mean_ns\", \"p50_ns\", \"p95_ns\", \"p99_ns\", \"p999_ns\",\n"
		"\"total_ns\", \"over_than\", \"outcomes\":{...}, \"pending\", \"final\"}, per key\n"
		"(--perins) or system call (--impl syscalls) the same with \"key\" (and the thread's\n"
		"\"comm\" when keyed by thread) or \"syscall\" and \"id\", and per outlier\n"
		"{\"outlier\":true, \"key\", \"latency_ns\", \"start\", \"end\"}.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		"process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		"a runtime failure, 2 on a usage error.",
	.examples =
		"multi-trace -e 'syscalls:sys_enter_clock_nanosleep//key=common_pid/' -e "
		"'syscalls:sys_exit_clock_nanosleep//key=common_pid/' --than 20ms -- sleep 0.03\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000 --impl "
		"pair\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000 --than "
		"100us --detail=-1ms\n"
		"multi-trace -e 'sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_switch/"
		"prev_state==0&&prev_pid>0/key=prev_pid/' -e 'sched:sched_switch//key=next_pid/' "
		"-k pid --than 20ms --detail=samecpu\n"
		"multi-trace -e 'sched:sched_switch//role=(next_pid?1:0)|(prev_pid?2:0)/' --cycle -i "
		"1000\n"
		"multi-trace -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit --impl syscalls "
		"--format json -- ls\n"
		"multi-trace -e 'kmem:kmalloc//key=ptr/stack/' -e 'kmem:kfree//key=ptr/' --impl "
		"kmemprof --duration 1\n"
		"multi-trace -e syscalls:sys_enter_write,syscalls:sys_exit_write -e "
		"'irq:softirq_entry/vec==3/,irq:softirq_exit/vec==3/' --impl call-delay -- bash -c "
		"'echo x >/dev/udp/127.0.0.1/9'",
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS |
		 PROF_SUMMARY,
	.conformance_args = "-e sched:sched_wakeup//key=pid/ -e sched:sched_switch//key=next_pid/ "
			    "-i 200",
	.check = mt_check,
	MT_PROFILER_ENGINE,
};
