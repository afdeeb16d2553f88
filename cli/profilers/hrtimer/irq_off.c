/* perfscope irq-off: interrupts disabled longer than --than, from timer ticks that came late. */
#include <stdio.h>

#include "hrslot.h"

struct irqoff {
	uint64_t period, than;
	struct hrs h;
	uint64_t printed, ticks;
};

/* clang-format off */
static const struct prof_opt io_opts[] = {
	{ "period", 0, "T", PROF_OPT_DURATION, offsetof(struct irqoff, period), 0, 0, NULL,
	  "the timer's period (s, ms, us, ns; default 10ms)" },
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct irqoff, than), 0, 0, NULL,
	  "print the ticks that came more than T after the last one\n"
	  "(above --period; default twice --period)" },
	{ NULL },
};
/* clang-format on */

static int io_check(struct prof *p, void *priv)
{
	struct irqoff *io = priv;

	if (!io->period)
		io->period = 10000000ull;
	if (!io->than)
		io->than = 2 * io->period;
	if (io->than <= io->period)
		return prof_usage(
			p,
			"--than %llu ns is not above --period %llu ns: every tick would be "
			"late",
			(unsigned long long)io->than, (unsigned long long)io->period);
	return hrs__check(p, &io->h, io->period);
}

/*
 * A tick interrupt cannot come while the CPU has interrupts off: it comes when they are turned
 * back on, late by about as long as they were off, and its stack is where they were.
 */
static int io_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	struct irqoff *io = priv;
	struct hrs_slot slot;

	if (!hrs__sample(p, &io->h, ev, cpu, s, &slot) || slot.first)
		return 0;
	io->ticks++;
	if (slot.ns <= io->than)
		return 0;
	io->printed++;
	hrs__print_tick(p, &io->h, "irq-off", ev, cpu, s, &slot);
	return 0;
}

static void io_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	hrs__lost(&((struct irqoff *)priv)->h, cpu);
}

static int io_start(struct prof *p, void *priv)
{
	return hrs__start(p, &((struct irqoff *)priv)->h);
}

static int io_report(struct prof *p, void *priv)
{
	struct irqoff *io = priv;

	if (!p->opts.quiet)
		fprintf(stderr,
			"perfscope irq-off: %llu of %llu ticks came more than %.3f ms after "
			"the last one\n",
			(unsigned long long)io->printed, (unsigned long long)io->ticks,
			io->than / 1e6);
	return 0;
}

static void io_teardown(struct prof *p, void *priv)
{
	hrs__exit(&((struct irqoff *)priv)->h);
}

const struct profiler profiler_irq_off = {
	.name = "irq-off",
	.summary = "interrupts disabled longer than --than: timer ticks that came late, with the "
		   "stack",
	.usage = "--period T --than T [-C CPUS] [-g] [--format text|json] [-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"perf-prof's irq-off: each CPU's timer (cpu-clock, an hrtimer) fires every --period\n"
		"T. While a CPU runs with interrupts disabled its tick cannot come: it comes when they\n"
		"are enabled again, late by about as long as they were off. A tick that comes more\n"
		"than --than after the CPU's last one is printed: the task, the real period and, with\n"
		"-g, the stack, where interrupts were just enabled again. On a virtual machine a vCPU\n"
		"the host did not run for a while looks the same. Whole CPUs are watched: -p, -t or a\n"
		"COMMAND only bound the run.",
	.notes =
		"At exit the count of late ticks among those judged goes to standard error.\n"
		"--format json: per late tick {\"time\", \"cpu\", \"pid\", \"tid\", \"comm\", ...,\n"
		"\"slot_ns\", \"stack\"}.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration or after -N ticks sampled. Exit status: 0 after\n"
		"a clean stop, 1 on a runtime failure, 2 on a usage error.",
	.examples = "irq-off --period 10ms --than 20ms -g --duration 2\n"
		    "irq-off -C 0 --period 10ms --than 20ms -g --duration 2\n"
		    "irq-off --period 1ms --than 1100us --format json --duration 1",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_DURATION | CLI_OPT_MMAP |
		       CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_ORDER | CLI_OPT_EXIT_N |
		       CLI_OPT_QUIET | CLI_OPT_USAGE_SELF | CLI_OPT_CALLCHAIN,
	.opts = io_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_STACKS | PROF_WATCH_TASKS,
	.conformance_args = "--period 1ms --than 1001us",
	.priv_size = sizeof(struct irqoff),
	.check = io_check,
	.start = io_start,
	.sample = io_sample,
	.lost = io_lost,
	.report = io_report,
	.teardown = io_teardown,
};
