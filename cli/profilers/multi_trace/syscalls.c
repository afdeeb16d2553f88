/* perfscope syscalls: system call latency and errors per call, a multi-trace preset. */
#include "multi_trace.h"

#define SC_ENTER "raw_syscalls:sys_enter"
#define SC_EXIT "raw_syscalls:sys_exit"

/* sys_enter -> sys_exit of the same thread, per syscall id of the exit, ret < 0 an error. */
static int syscalls_check(struct prof *p, void *priv)
{
	struct mt *mt = priv;

	if (!mt->impl_text)
		mt->impl_text = "syscalls";
	return mt_check(p, priv);
}

const struct profiler profiler_syscalls = {
	.name = "syscalls",
	.summary = "system call latency and error counts per call (raw_syscalls enter -> exit)",
	.usage = "[-e raw_syscalls:sys_enter[/FILTER/] -e raw_syscalls:sys_exit[/FILTER/]] "
		 "[--than T]\n"
		 "                       [--perins] [--heatmap FILE] [-i MS] [-C CPUS] "
		 "[-p PID | -t TID]\n"
		 "                       [--format text|json] [-o FILE] [-- COMMAND ARGS...]",
	.description =
		"multi-trace with its events and keys written for you: raw_syscalls:sys_enter starts,\n"
		"raw_syscalls:sys_exit of the same thread ends, and each call's latency goes to the row\n"
		"of its system call (name and number, from the exit's id) with the count of those that\n"
		"failed (ret < 0) and their total time; the rows come most total time first (where the\n"
		"time goes). --perins gives a row per thread and call, named comm/tid. Filters narrow\n"
		"it (-e 'raw_syscalls:sys_enter/id==0/' -e\n"
		"'raw_syscalls:sys_exit/id==0/'); every multi-trace option applies (see perfscope\n"
		"help multi-trace), and so do its outcomes: an exit with no enter (a call that began\n"
		"before the run) is no_start, a call still blocked at the end is open.",
	.events_help = "optional: raw_syscalls:sys_enter[/FILTER/], then (-e again)\n"
		       "raw_syscalls:sys_exit[/FILTER/]",
	.notes =
		"--format json: one object per system call {\"syscall\", \"id\", \"count\", \"min_ns\",\n"
		"..., \"total_ns\", \"errors\"} (with --perins \"tid\" and \"comm\" too) after the\n"
		"pair's own object, as multi-trace --impl syscalls.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, or when COMMAND or the -p process exits.\n"
		"Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on a runtime\n"
		"failure, 2 on a usage error.",
	.examples =
		"syscalls -- ls /\n"
		"syscalls -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit -p 1 --perins "
		"--duration 1\n"
		"syscalls -e raw_syscalls:sys_enter/id==0/ -e raw_syscalls:sys_exit/id==0/ -C 0 "
		"--than 10ms --duration 1\n"
		"syscalls --format json -- ls /",
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS | PROF_SUMMARY,
	.default_groups = (const char *const[]){ SC_ENTER, SC_EXIT, NULL },
	/* nanosleep only: all system calls of a busy machine make the stop drain long backlogs */
	.conformance_args =
		"-e raw_syscalls:sys_enter/id==35/ -e raw_syscalls:sys_exit/id==35/ -i 200",
	.check = syscalls_check,
	MT_PROFILER_ENGINE,
};
