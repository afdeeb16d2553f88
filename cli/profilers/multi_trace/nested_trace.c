/* perfscope nested-trace: perf-prof's name for multi-trace --impl call / call-delay. */
#include <string.h>

#include "multi_trace.h"

/*
 * perf-prof's nested-trace takes delay (the default: each function's time), call (the call
 * tree) and call-delay (both). The call tree with each call path's latency is delay's answer
 * too: a function never nested in another is a root of the tree with its own row.
 */
static int nested_check(struct prof *p, void *priv)
{
	struct mt *mt = priv;

	if (!mt->impl_text || !strcmp(mt->impl_text, "delay") ||
	    !strcmp(mt->impl_text, "call-delay"))
		mt->impl_text = "call-delay";
	else if (strcmp(mt->impl_text, "call"))
		return prof_usage(
			p,
			"nested-trace's --impl is delay (the default), call or call-delay, "
			"not '%s' (the others are multi-trace's)",
			mt->impl_text);
	return mt_check(p, priv);
}

const struct profiler profiler_nested_trace = {
	.name = "nested-trace",
	.summary = "nested enter/exit events (function calls, interrupts): call tree and time per "
		   "call path",
	.usage = "-e ENTER,EXIT [-e ENTER,EXIT ...] [-k EXPR] [--impl delay|call|call-delay]\n"
		 "                       [--than T] [--perins] [--heatmap FILE] [-i MS] [-C CPUS]\n"
		 "                       [-p PID | -t TID] [--format text|json] [-o FILE] "
		 "[-- COMMAND ARGS...]",
	.description =
		"perf-prof's nested-trace: multi-trace --impl call-delay under the name users type.\n"
		"Each -e group is one function, its first event entering it and its second leaving\n"
		"it (-e E,E_ret). Per key (the thread by default, -k EXPR or key= otherwise) a stack\n"
		"of the calls in progress says which call an enter is nested in (a softirq inside a\n"
		"system call, a timer inside a softirq). --impl delay (the default) and call-delay\n"
		"print the call tree with each call path's calls and latency statistics; call prints\n"
		"the tree with the calls alone. An exit whose enter was not on top of the stack ends\n"
		"the calls above it (unwound); nothing is measured across lost events. Every\n"
		"multi-trace option applies (see perfscope help multi-trace).",
	.events_help = "one function per -e: ENTER,EXIT (e.g.\n"
		       "irq:softirq_entry/vec==1/,irq:softirq_exit/vec==1/);\n"
		       "ATTRs: key=EXPR, stack, alias=NAME, untraced",
	.notes =
		"--format json: one object per call path {\"path\", \"calls\", ...latencies} and the\n"
		"pairs' outcomes, as multi-trace --impl call-delay.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		"process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		"a runtime failure, 2 on a usage error.",
	.examples =
		"nested-trace -e irq:softirq_entry/vec==1/,irq:softirq_exit/vec==1/ -i 1000 "
		"--duration 2\n"
		"nested-trace -e irq:softirq_entry/vec==1/,irq:softirq_exit/vec==1/ -i 1000 "
		"--impl call-delay --duration 2\n"
		"nested-trace -e irq:softirq_entry/vec==1/,irq:softirq_exit/vec==1/ -e "
		"timer:timer_expire_entry,timer:timer_expire_exit -i 1000 --impl call --duration 2\n"
		"nested-trace -e syscalls:sys_enter_clock_nanosleep,syscalls:sys_exit_clock_nanosleep "
		"--format json -- sleep 0.1",
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS |
		 PROF_SUMMARY,
	.conformance_args = "-e irq:softirq_entry/vec==1/,irq:softirq_exit/vec==1/ -i 200",
	.check = nested_check,
	MT_PROFILER_ENGINE,
};
