/* perfscope trigger: watch CPU shares and event rates cheaply, capture stacks when one holds. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "profiler.h"
#include "trigger.h"

#define OFF(f) offsetof(struct trigger, f)

static const struct prof_opt trigger_opts[] = {
	{ "sys", 0, "PCT", PROF_OPT_FN, 0, 0, 0, trigger_opt_sys,
	  "capture when a CPU spends PCT% or more of its time in the kernel\n(system time, as top's "
	  "%sy)" },
	{ "user", 0, "PCT", PROF_OPT_FN, 0, 0, 0, trigger_opt_user,
	  "... in user space (user + nice)" },
	{ "cpu", 0, "PCT", PROF_OPT_FN, 0, 0, 0, trigger_opt_cpu,
	  "... busy (not idle, not iowait)" },
	{ "iowait", 0, "PCT", PROF_OPT_FN, 0, 0, 0, trigger_opt_iowait,
	  "... idle waiting for I/O" },
	{ "rate", 0, "EVENT>N", PROF_OPT_FN, 0, 0, 0, trigger_opt_rate,
	  "... when EVENT happens N times a second or more (counted,\nnot sampled), e.g. "
	  "'sched:sched_switch>50000'; repeatable" },
	{ "latency", 0, "START,END>T", PROF_OPT_FN, 0, 0, 0, trigger_opt_latency,
	  "... when the latency from event START to event END (same\nkey=EXPR, default the thread) "
	  "is above T (s, ms, us, ns)\non the CPU of END: the longest of each period counts;\n"
	  "values in ms; repeatable" },
	{ "for", 0, "S", PROF_OPT_DOUBLE, OFF(for_s), 0, 0, NULL,
	  "a condition must hold S seconds in a row (default 1)" },
	{ "machine", 0, NULL, PROF_OPT_FLAG, OFF(machine), 0, 0, NULL,
	  "conditions over the whole machine (the CPUs of -C together),\nnot per CPU; captures "
	  "take every CPU" },
	{ "capture", 0, "S", PROF_OPT_DOUBLE, OFF(capture_s), 0, 0, NULL,
	  "seconds profiled once a condition fires (default 3)" },
	{ "before", 0, "S", PROF_OPT_FN, 0, 0, 0, trigger_opt_before,
	  "seconds before the fire put into the capture from the flight\nrecorder (default: "
	  "--for + 2, so the onset is in it; 0: none)" },
	{ "freq", 'F', "HZ", PROF_OPT_LONG, OFF(freq), 1, 100000, NULL,
	  "stack samples per second during a capture (default 99)" },
	{ "standby-hz", 0, "HZ", PROF_OPT_LONG, OFF(standby_hz), 1, 1000, NULL,
	  "flight recorder's samples per second and CPU while waiting\n(default 10)" },
	{ "period", 0, "MS", PROF_OPT_LONG, OFF(period_ms), 10, 10000, NULL,
	  "how often the conditions are measured (default 200)" },
	{ "output-dir", 'o', "DIR", PROF_OPT_STRING, OFF(dir), 0, 0, NULL,
	  "where captures are written (default: the current directory),\ncreated if missing" },
	{ "cooldown", 0, "S", PROF_OPT_FN, 0, 0, 0, trigger_opt_cooldown,
	  "no new capture of a CPU (or the machine) for S seconds after\none ends (default 10)" },
	{ "max", 0, "N", PROF_OPT_LONG, OFF(max), 0, 1000000000, NULL,
	  "stop after N captures (default 0: no limit)" },
	{ "max-disk", 0, "SIZE", PROF_OPT_FN, 0, 0, 0, trigger_opt_max_disk,
	  "keep the captures in DIR under SIZE (k, M, G), removing the\noldest first (default "
	  "100M; 0: no limit)" },
	{ "log", 0, "FILE", PROF_OPT_STRING, OFF(log.path), 0, 0, NULL,
	  "also append every line (captures, notes) to FILE, reopened on\nSIGHUP (logrotate)" },
	{ NULL },
};

/* ---- hooks (trigger_check is in trigger_opts.c) ---- */

static int trigger_event(struct prof *p, void *priv, struct prof_event *ev,
			 struct perf_event_attr *attr)
{
	struct trigger *t = priv;
	int ret = tlat_set__event(&t->lat, p, ev, attr);

	if (ret) /* a --latency event: set up there */
		return ret == 1 ? 0 : ret;
	attr->freq = 0;
	attr->sample_period = NS / (uint64_t)t->standby_hz;
	/* stacks in every sample: the flight recorder and the captures are made of them */
	attr->sample_type |= PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	return 0;
}

/* The units watched: each CPU of the target, or one for the machine or the process. */
static int set_units(struct trigger *t, struct psc_cpumap *cpus)
{
	int bad_cpu;

	t->nr_cpus = psc_cpu__nr_possible();
	return aggr__init(&t->units, t->process || t->machine ? AGGR_GLOBAL : AGGR_CPU, cpus, NULL,
			  &bad_cpu);
}

static int trigger_start(struct prof *p, void *priv)
{
	struct trigger *t = priv;
	int err;

	if ((err = set_units(t, p->target.cpus)))
		return err;
	if (t->process)
		cpustat__task_init(&t->task,
				   p->opts.nr_pids ? p->opts.pids[0] : p->target.launch.pid);
	t->cc = callchain__new(prof__say(p));
	if (!t->cc)
		return -ENOMEM;
	callchain__prepare(t->cc); /* kallsyms now, not in the loop at the first capture */
	t->caps = calloc((size_t)t->units.nr_units, sizeof(*t->caps));
	if (!t->caps)
		return -ENOMEM;
	t->sched.cooldown_ns = (uint64_t)(t->cooldown_s * 1e9);
	t->sched.grace_ns = TRIGGER_END_GRACE_NS;
	t->sched.max = t->max;
	if ((err = capsched__init(&t->sched, t->units.nr_units)))
		return err;
	/* history: what --before needs at --standby-hz, with room for a faster kernel */
	if (t->before_s > 0) {
		size_t slots = (size_t)(t->before_s * (double)t->standby_hz * 1.5) + 8;

		t->fr = flightrec__new(t->nr_cpus, slots);
		if (!t->fr)
			return -ENOMEM;
	}
	if ((err = prof__add_fd(p, t->sched.end_fd, EPOLLIN, trigger_on_end_timer, t)))
		return err;
	/* SIGHUP reopens the log instead of ending the run */
	if ((err = svclog__watch_hup(&t->log, p)))
		return err;
	/* the conditions: measured from now on, the first readings the base of the first period */
	if ((err = trigger_watch_start(t)))
		return err;
	trigger_status_line(t);
	return 0;
}

static int trigger_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
			  const struct psc_sample *s)
{
	struct trigger *t = priv;
	int unit;

	if (tlat_set__sample(&t->lat, ev, cpu, s))
		return 0;
	if (cpu < 0 || cpu >= t->nr_cpus)
		return 0;
	if (t->fr)
		flightrec__add(t->fr, cpu, s);
	unit = aggr__find(&t->units, cpu);
	if (unit < 0)
		return 0;
	trigger_add(t, unit, s);
	return 0;
}

/*
 * Exits and execs only: a pid's maps are dropped when it is gone or replaced, and read again
 * from /proc at its next lookup. An exec is passed on as an exit of the old image: the
 * callchain's own exec handling waits for MMAP2 records, which trigger does not ask for (it
 * would leave the new image without maps).
 */
static int trigger_record(struct prof *p, void *priv, const struct psc_record *rec)
{
	struct trigger *t = priv;

	if (!t->cc)
		return 0;
	if (rec->type == PERF_RECORD_EXIT) {
		callchain__record(t->cc, rec);
	} else if (rec->type == PERF_RECORD_COMM && rec->comm.exec) {
		struct psc_record gone = { .type = PERF_RECORD_EXIT };

		gone.fork.pid = gone.fork.tid = rec->comm.pid;
		callchain__record(t->cc, &gone);
	}
	return 0;
}

static void trigger_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct trigger *t = priv;

	tlat_set__lost(&t->lat);
	t->lost += n;
	for (int u = 0; u < t->units.nr_units; u++)
		if (t->sched.win[u].active &&
		    (aggr__unit_cpu(&t->units, u) < 0 || aggr__unit_cpu(&t->units, u) == cpu))
			t->caps[u].lost += n;
}

static int trigger_stop_signal(struct prof *p, void *priv, int signo)
{
	struct trigger *t = priv;
	uint64_t now = trigger_now(CLOCK_MONOTONIC), end;

	t->sched.stopping = true;
	end = t->sched.win ? capsched__last_end(&t->sched) : 0;
	if (!end)
		return 0;
	svclog__note(&t->log,
		     "%s: finishing the capture in progress (%.1f s left); another signal stops "
		     "at once",
		     strsignal(signo), end > now ? (double)(end - now) / 1e9 : 0);
	return 1;
}

static void summary(struct trigger *t, const char *when)
{
	svclog__note(&t->log,
		     "%s%d captures (%d written, %d failed), %llu removed for --max-disk, %d in %s "
		     "(%llu KiB), %llu samples lost, log reopened %llu times",
		     when, t->sched.nr_started, t->nr_written, t->nr_failed,
		     (unsigned long long)t->ds.removed, t->ds.captures, t->dir,
		     (unsigned long long)(t->ds.bytes / 1024), (unsigned long long)t->lost,
		     (unsigned long long)t->log.reopened);
}

static int trigger_sigusr1(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	summary(t, "so far: ");
	return 0;
}

static void lat_line(void *ctx, const char *text)
{
	struct trigger *t = ctx;

	svclog__note(&t->log, "%s", text);
}

static int trigger_report(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	for (int u = 0; t->sched.win && u < t->units.nr_units; u++)
		trigger_finish(t, u, true);
	capdir__enforce(t->dir, TRIGGER_CAP_PREFIX, t->max_disk, NULL, &t->ds);
	if (t->fr && flightrec__cut(t->fr))
		svclog__note(
			&t->log,
			"%llu stacks deeper than %d frames were cut (outermost frames left out)",
			(unsigned long long)flightrec__cut(t->fr), FLIGHTREC_MAX_FRAMES);
	tlat_set__report(&t->lat, lat_line, t);
	summary(t, "");
	return 0;
}

static void trigger_teardown(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	for (int i = 0; i < t->nr_conds; i++)
		cond__free(&t->conds[i]);
	for (int u = 0; t->caps && u < t->units.nr_units; u++)
		stack_table__exit(&t->caps[u].stacks);
	free(t->caps);
	aggr__exit(&t->units);
	flightrec__delete(t->fr);
	tlat_set__free(&t->lat);
	callchain__delete(t->cc);
	if (t->cs_ready)
		cpustat__exit(&t->cs);
	/* the descriptors are only set (-1 or open) once check ran: an option error stops before */
	if (!t->p)
		return;
	if (t->timer_fd >= 0)
		close(t->timer_fd);
	capsched__exit(&t->sched);
	svclog__close(&t->log);
}

const struct profiler profiler_trigger = {
	.name = "trigger",
	.summary = "wait for a CPU, event-rate or latency condition, then capture stacks (with the "
		   "onset)",
	.usage = "(--sys|--user|--cpu|--iowait PCT | --rate EVENT>N | --latency START,END>T)...\n"
		 "                       [--for S] [--machine] [-C CPUS | -p PID | -- COMMAND]\n"
		 "                       [--capture S] [--before S] [-F HZ]\n"
		 "                       [-o DIR] [--cooldown S] [--max N] [--max-disk SIZE] "
		 "[--format json]",
	.description =
		"Watches conditions continuously at a low cost and profiles what runs when one holds:\n"
		"a CPU's (or, with --machine, the machine's) share of system, user, busy or iowait time\n"
		"read from /proc/stat every --period, the rate of any event counted by the kernel\n"
		"(--rate sched:sched_switch>50000), or the latency from one event to another paired by\n"
		"key (--latency 'START,END>10ms': the longest of each period on the CPU of END, in ms).\n"
		"A condition that holds --for seconds in a row fires a capture of that CPU (or of every\n"
		"CPU, or of the process with -p/COMMAND): stacks sampled at -F HZ for --capture\n"
		"seconds, plus the seconds --before the fire taken from a flight recorder (stacks\n"
		"sampled at --standby-hz all along, kept in memory), so that the onset of the condition\n"
		"is in the capture.\n"
		"\n"
		"Each capture is written into DIR as trigger-DATE-TIME.MS-CONDITION-cpuN.folded (folded\n"
		"stacks, root first, counts in samples at -F HZ: flamegraph.pl, inferno, speedscope),\n"
		"named by its UTC time, its condition and its CPU (cpuN, all, pidN), and announced by\n"
		"one line on standard output (one JSON object with --format json: capture, cpu, start,\n"
		"condition, value, threshold, samples, before_samples, lost, files ...).",
	.notes =
		"Standby cost: one read of /proc/stat per --period and --standby-hz stack samples per\n"
		"CPU (about 0.1% of one CPU with the defaults on a small machine: bench/README.md).\n"
		"\n"
		"An unattended run cannot fill a disk: --cooldown, --max and --max-disk (the oldest\n"
		"captures of DIR, earlier runs' too, are removed first; each removal is said). Samples\n"
		"the kernel dropped are counted per capture (\"lost\"); the end report sums everything.\n"
		"\n"
		"As a service (examples/perfscope-trigger.service): SIGHUP reopens --log FILE; SIGINT or\n"
		"SIGTERM finish the capture in progress, write it and exit 0 (a second signal stops at\n"
		"once, the capture written as it is, marked cut); SIGUSR1 prints the counts so far.\n"
		"-i MS prints the values measured every MS ms. Exit status: 0 after a clean stop (or the\n"
		"COMMAND's status), 1 on a runtime failure, 2 on a usage error.",
	.examples = "trigger --sys 50 --for 1 -o /var/tmp/captures\n"
		    "trigger --cpu 90 --for 5 --capture 10 --max 3 -C 0-3 --format json\n"
		    "trigger --rate 'sched:sched_switch>50000' --machine --cooldown 60 -o /tmp/cs\n"
		    "trigger --iowait 30 --for 2 --max-disk 500M -o /var/lib/perfscope\n"
		    "trigger --sys 20 --for 0.5 -- ./my-server\n"
		    "trigger --sys 99 --for 60 -i 1000\n"
		    "trigger --latency 'sched:sched_wakeup//key=pid/,sched:sched_switch//"
		    "key=next_pid/>10ms' --for 2\n"
		    "trigger --latency 'syscalls:sys_enter_clock_nanosleep//key=common_pid/,syscalls:"
		    "sys_exit_clock_nanosleep//key=common_pid/>20ms' --for 1 --capture 1 --max 1 "
		    "--format json",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL | CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_QUIET | CLI_OPT_USAGE_SELF,
	.opts = trigger_opts,
	.attrs = tlat_attrs,
	.needs = PROF_RINGS | PROF_COMM,
	.default_groups = (const char *const[]){ "cpu-clock", NULL },
	.conformance_args = "--sys 99 --for 3600 -i 300 -o /tmp/perfscope-trigger-conformance",
	.priv_size = sizeof(struct trigger),
	.check = trigger_check,
	.event = trigger_event,
	.start = trigger_start,
	.sample = trigger_sample,
	.record = trigger_record,
	.lost = trigger_lost,
	.interval = trigger_interval,
	.sigusr1 = trigger_sigusr1,
	.stop_signal = trigger_stop_signal,
	.report = trigger_report,
	.teardown = trigger_teardown,
};
