/* perfscope stat: count events like `perf stat`, scaled for multiplexing, per interval or per CPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/perfscope.h>
#include <perfscope/tp.h>

#include "caret.h"
#include "launch.h"
#include "options.h"
#include "output.h"
#include "profiler.h"
#include "target.h"

/* perf stat's default set: what every machine should show, hardware ones where present. */
#define DEFAULT_EVENTS                                                                         \
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions,branches," \
	"branch-misses"

static const char stat_help[] =
	"usage: perfscope stat [-e EVENTS] [-a | -C CPUS] [-p PID | -t TID | -G CGROUP]\n"
	"                      [-i MS] [--per-cpu] [--duration S] [--format text|json] [-o FILE]\n"
	"                      [-- COMMAND ARGS...]\n"
	"\n"
	"Counts events, like perf stat. Values are scaled when the kernel had to multiplex\n"
	"counters, and the share of time each event really ran is shown as (NN.NN%).\n"
	"Events this machine cannot count are shown as <not supported>; the rest still count.\n"
	"\n"
	"  -e, --event EVENTS    events to count (default: " DEFAULT_EVENTS ")\n"
	"                        see 'perfscope list'; e.g. page-faults, cycles:u, sched:sched_switch,\n"
	"                        'syscalls:sys_enter_read/fd==0/', msr/tsc/, L1-dcache-load-misses;\n"
	"                        repeatable: -e a -e b counts both\n"
	"  -a, --all-cpus        count on every online CPU (the default without a target)\n"
	"  -C, --cpu CPUS        count on these CPUs only: 0-3,6\n"
	"  -p, --pid PID         count the threads of an existing process (and what they fork\n"
	"                        from then on), until it exits\n"
	"  -t, --tid TID         count one thread, until it exits\n"
	"  -G, --cgroup CGROUP   count tasks of a cgroup (path under the cgroup2 mount, or absolute)\n"
	"  -i, --interval MS     print the counts of every MS milliseconds\n"
	"      --per-cpu         one line per CPU and event (system-wide modes)\n"
	"      --duration S      stop after S seconds (a COMMAND still running is sent SIGTERM)\n"
	"      --format F        text (default) or json: one object per line\n"
	"  -o, --output FILE     write the counts to FILE, not standard output (COMMAND keeps it)\n"
	"  -v, --verbose         library diagnostics on stderr (-vv: debug)\n"
	"  -- COMMAND ARGS...    run COMMAND and count it (and its children); exit with its status\n"
	"\n"
	"SIGINT/SIGTERM are passed on to COMMAND (a second one kills it); SIGUSR1 prints the\n"
	"counts so far and goes on.\n"
	"\n"
	"Exit status: COMMAND's own status when it ends first (127/126 when it cannot be found or\n"
	"run, 128+N when killed by signal N); else 0; 1 on a runtime failure, 2 on a usage error.\n"
	"\n"
	"Examples:\n"
	"  perfscope stat -- make -j2                     # default events for a build\n"
	"  perfscope stat -e page-faults,context-switches,task-clock -- ./a.out\n"
	"  perfscope stat -a --per-cpu -i 1000 -e context-switches,cpu-migrations\n"
	"  perfscope stat -p 1234 --duration 5 --format json\n"
	"  perfscope stat --format json -o /tmp/counts.json -- ./a.out\n"
	"  perfscope stat -C 0 -e 'sched:sched_switch,irq:*' --duration 2\n";

struct stat_ctx {
	struct cli_opts o;
	struct target target;
	struct out *out;
	struct psc_counts *prev; /* [evsel][cpu] for interval deltas */
	int nr_cpus;
	struct timespec start;
	char title[256];
};

static bool is_clock(const struct psc_evsel *evsel)
{
	const struct perf_event_attr *a = psc_evsel__attr(evsel);

	return a->type == PERF_TYPE_SOFTWARE &&
	       (a->config == PERF_COUNT_SW_TASK_CLOCK || a->config == PERF_COUNT_SW_CPU_CLOCK);
}

static double elapsed_s(const struct stat_ctx *s)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - s->start.tv_sec) + (now.tv_nsec - s->start.tv_nsec) / 1e9;
}

/* One value as a person reads it: clocks in msec, PMU events in their sysfs unit. */
static double display_value(const struct psc_evsel *evsel, double scaled, const char **unit)
{
	if (is_clock(evsel)) {
		*unit = "msec";
		return scaled / 1e6;
	}
	*unit = psc_evsel__unit(evsel) ? psc_evsel__unit(evsel) : "";
	return scaled * psc_evsel__scale(evsel);
}

static void print_line(struct stat_ctx *s, const struct psc_evsel *evsel, int cpu,
		       const struct psc_counts *c, double interval_ts)
{
	struct out *out = s->out;
	int open_err = psc_evsel__open_errno(evsel);
	bool supported = psc_evsel__is_open(evsel);
	const char *unit = "";
	double value = supported ? display_value(evsel, psc_counts__scaled(c), &unit) : 0;
	bool counted = supported && c->run > 0;

	if (s->o.format == FORMAT_JSON) {
		struct json j;

		json__begin(&j, out);
		if (interval_ts >= 0) {
			json__key(&j, "interval");
			json__dbl(&j, interval_ts);
		}
		if (cpu >= 0) {
			json__key(&j, "cpu");
			json__i64(&j, cpu);
		}
		json__key(&j, "event");
		json__str(&j, psc_evsel__name(evsel));
		json__key(&j, "supported");
		json__bool(&j, supported);
		if (supported) {
			json__key(&j, "value");
			if (counted && !is_clock(evsel) && psc_evsel__scale(evsel) == 1.0)
				json__u64(&j, (uint64_t)llround(value));
			else if (counted)
				json__dbl(&j, value);
			else
				json__null(&j);
			json__key(&j, "unit");
			json__str(&j, unit);
			json__key(&j, "raw");
			json__u64(&j, c->val);
			json__key(&j, "enabled_ns");
			json__u64(&j, c->ena);
			json__key(&j, "running_ns");
			json__u64(&j, c->run);
			json__key(&j, "running_pct");
			json__dbl(&j, psc_counts__running_pct(c));
		} else {
			char msg[512];

			const struct psc_evsel *leader = psc_evsel__leader(evsel);

			json__key(&j, "error");
			if (leader != evsel) { /* the event may be fine: its group cannot be */
				char why[512];

				snprintf(msg, sizeof(msg), "%s: its group cannot be counted: %s",
					 psc_evsel__name(evsel),
					 psc_strerror_open(open_err, psc_evsel__name(leader), why,
							   sizeof(why)));
				json__str(&j, msg);
			} else {
				json__str(&j,
					      psc_strerror_open(open_err, psc_evsel__name(evsel),
								msg, sizeof(msg)));
			}
		}
		json__end_line(&j);
		return;
	}
	if (interval_ts >= 0)
		out__printf(out, "%14.6f ", interval_ts);
	if (cpu >= 0)
		out__printf(out, "CPU%-4d", cpu);
	else if (s->o.per_cpu) /* an unsupported event has no CPUs: keep the columns */
		out__printf(out, "%7s", "");
	if (!supported)
		out__printf(out, "%18s %-5s %s\n", "<not supported>", "",
				psc_evsel__name(evsel));
	else if (!counted)
		out__printf(out, "%18s %-5s %s\n", "<not counted>", "", psc_evsel__name(evsel));
	else if (*unit || value != floor(value))
		out__printf(out, "%18.2f %-5s %s", value, unit, psc_evsel__name(evsel));
	else
		out__printf(out, "%18.0f %-5s %s", value, "", psc_evsel__name(evsel));
	if (counted) {
		if (c->run < c->ena)
			out__printf(out, "  (%.2f%%)", psc_counts__running_pct(c));
		out__putc(out, '\n');
	}
}

static struct psc_counts delta(const struct psc_counts *now, const struct psc_counts *before)
{
	return (struct psc_counts){ now->val - before->val, now->ena - before->ena,
				    now->run - before->run, now->id };
}

/* Prints every event (per CPU when asked); interval_ts < 0 means totals since start. */
static void print_counts(struct stat_ctx *s, struct psc_evlist *evlist, double interval_ts)
{
	struct psc_evsel *evsel;
	int i;

	psc_evlist__for_each(evlist, i, evsel)
	{
		int nr_threads = psc_threadmap__nr(psc_evlist__threads(evlist));

		if (!psc_evsel__is_open(evsel) || !s->o.per_cpu) {
			struct psc_counts c = { 0 },
					  *prev = &s->prev[i * (s->nr_cpus + 1) + s->nr_cpus];

			if (psc_evsel__is_open(evsel))
				psc_evsel__counts(evsel, -1, -1, &c);
			struct psc_counts d = interval_ts >= 0 ? delta(&c, prev) : c;

			if (interval_ts >= 0)
				*prev = c;
			print_line(s, evsel, -1, &d, interval_ts);
			continue;
		}
		for (int cpu = 0; cpu < s->nr_cpus; cpu++) {
			struct psc_counts c = { 0 }, t,
					  *prev = &s->prev[i * (s->nr_cpus + 1) + cpu];

			for (int th = 0; th < nr_threads; th++) {
				psc_evsel__counts(evsel, cpu, th, &t);
				c.val += t.val;
				c.ena += t.ena;
				c.run += t.run;
			}
			struct psc_counts d = interval_ts >= 0 ? delta(&c, prev) : c;

			if (interval_ts >= 0)
				*prev = c;
			print_line(s, evsel, psc_cpumap__cpu(psc_evlist__cpus(evlist), cpu), &d,
				   interval_ts);
		}
	}
}

static void print_header(struct stat_ctx *s)
{
	if (s->o.format == FORMAT_TEXT)
		out__printf(s->out, "\n Performance counter stats for %s:\n\n", s->title);
}

static void print_footer(struct stat_ctx *s, double secs)
{
	if (s->o.format == FORMAT_TEXT)
		out__printf(s->out, "\n %14.9f seconds time elapsed\n\n", secs);
}

/* SIGUSR1: the totals so far, as the final report shows them; the next interval is unchanged. */
static int print_so_far(struct stat_ctx *s, struct psc_evlist *evlist)
{
	int err = psc_evlist__read(evlist);

	if (err) {
		fprintf(stderr, "perfscope stat: reading the counters failed: %s\n",
			strerror(-err));
		return 0;
	}
	print_header(s);
	print_counts(s, evlist, -1);
	print_footer(s, elapsed_s(s));
	return out__flush(s->out) ? -1 : 0;
}

#define TASK_POLL_S 0.1

/*
 * Waits for a stop signal, the command's end, the end of the -p/-t threads, the next interval or
 * the end of --duration.
 */
static int run_loop(struct stat_ctx *s, struct psc_evlist *evlist, const sigset_t *sigs,
		    int *exit_code)
{
	double next_interval = s->o.interval_ms ? s->o.interval_ms / 1000.0 : INFINITY;
	double deadline = s->o.duration_s > 0 ? s->o.duration_s : INFINITY;
	bool forwarded = false;

	for (;;) {
		double now = elapsed_s(s), wake = fmin(next_interval, deadline);
		struct timespec ts, *tsp = NULL;
		siginfo_t si;
		int sig;

		if (now >= deadline || !target_alive(&s->target))
			return 0;
		if (now >= next_interval) {
			int err = psc_evlist__read(evlist);

			if (!err)
				print_counts(s, evlist, now);
			else /* never a silently missing interval */
				fprintf(stderr,
					"perfscope stat: reading the counters at %.3f s failed: %s\n",
					now, strerror(-err));
			if (out__flush(s->out))
				return -1;
			next_interval += s->o.interval_ms / 1000.0;
			continue;
		}
		/* -p/-t: look every 100 ms whether the threads followed are still there */
		if (s->target.follows_tasks)
			wake = fmin(wake, now + TASK_POLL_S);
		if (isfinite(wake)) {
			double left = wake - now;

			ts.tv_sec = (time_t)left;
			ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
			tsp = &ts;
		}
		sig = sigtimedwait(sigs, &si, tsp);
		if (sig < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		if (sig == SIGUSR1) {
			if (print_so_far(s, evlist))
				return -1;
			continue;
		}
		if (sig == SIGCHLD) {
			int status, r = target_reap(&s->target, &status);

			if (r > 0) {
				*exit_code = wait_status_to_exit_code(status);
				return 0;
			}
			continue;
		}
		/*
		 * SIGINT/SIGTERM: a command gets the signal too and we report once it ends (its
		 * SIGCHLD). One that ignores it is killed at the second signal, rather than
		 * waited for with every further Ctrl-C blocked.
		 */
		if (s->target.has_command) {
			target_forward_signal(&s->target, forwarded ? SIGKILL : sig);
			forwarded = true;
			continue;
		}
		return 0;
	}
}

/*
 * Tracepoint filters are checked against the event's fields before anything is opened, so a
 * typo in a field name is a usage error that lists the fields, not the kernel's bare EINVAL.
 * When the format cannot be read here the kernel is left to judge the filter at open.
 */
static int check_filters(const struct psc_event_list *specs)
{
	for (int i = 0; i < specs->nr; i++) {
		const struct psc_event_spec *spec = &specs->specs[i];
		struct psc_parse_error perr = { .pos = -1 };
		struct psc_tp_format *fmt;
		int bad;

		if (!spec->filter || spec->kind != PSC_EVENT_TRACEPOINT)
			continue;
		fmt = psc_tp_format__load(spec->sys, spec->event);
		if (!fmt)
			continue;
		/* grammar and fields here, then the kernel on a scratch event */
		bad = psc_tp__verify_filter(fmt, spec->filter, &perr) == -EINVAL;
		psc_tp_format__delete(fmt);
		if (!bad)
			continue;
		fprintf(stderr, "perfscope stat: bad filter on %s: %s\n", spec->name, perr.msg);
		caret__print(stderr, "  ", NULL, spec->filter, perr.pos);
		return 2;
	}
	return 0;
}

static int stat_run(int argc, char **argv)
{
	struct stat_ctx s = { 0 };
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs = NULL;
	struct psc_evlist *evlist = NULL;
	sigset_t sigs, stop;
	int ret, exit_code = 0, stop_fd = -1;

	ret = cli_opts_parse(&s.o, argc, argv,
				 CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_PER_CPU | CLI_OPT_TARGET |
					 CLI_OPT_INTERVAL | CLI_OPT_DURATION | CLI_OPT_FORMAT |
					 CLI_OPT_OUTPUT,
				 NULL, stat_help);
	if (ret)
		return ret == 1 ? 0 : ret;
	cli_setup_log(s.o.verbose);

	const char *events = s.o.events ? s.o.events : DEFAULT_EVENTS;

	ret = psc_parse_events(events, NULL, &specs, &perr);
	if (ret) {
		cli_report_parse_error("stat", events, &perr);
		/* no memory, or tracefs not readable here: runtime failures, not bad usage */
		return ret == -ENOMEM || ret == -EACCES || ret == -EPERM ? 1 : 2;
	}
	ret = check_filters(specs);
	if (ret) {
		psc_event_list__delete(specs);
		return ret;
	}

	s.out = out__open(s.o.output, 0);
	if (!s.out && s.o.output) {
		fprintf(stderr, "perfscope stat: cannot write to '%s': %s\n", s.o.output,
			strerror(errno));
		psc_event_list__delete(specs);
		return 1;
	}
	evlist = psc_evlist__new();
	if (!s.out || !evlist || psc_evlist__add_specs(evlist, specs, false)) {
		fprintf(stderr, "perfscope stat: out of memory\n");
		ret = 1;
		goto out;
	}

	/* Signals are taken synchronously (sigtimedwait) so no handler races the loop. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGCHLD);
	sigaddset(&sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	/* a stop signal must not wait behind a pipe nobody reads (output.h) */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	stop_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (stop_fd >= 0)
		out__watch(s.out, stop_fd);

	ret = target_setup(&s.target, &s.o, "stat", s.title, sizeof(s.title));
	if (ret)
		goto out;
	if (s.o.per_cpu && !s.target.per_cpu) {
		fprintf(stderr,
			"perfscope stat: --per-cpu needs system-wide counting (-a, -C or -G);\n"
			"a process or command is followed across CPUs instead.\n");
		ret = 2;
		goto out;
	}
	/* like perf stat: what a followed process forks after we attach is counted with it */
	s.target.inherit_followed = true;
	ret = target_open(&s.target, evlist, "stat");
	if (ret)
		goto out;
	s.nr_cpus = psc_cpumap__nr(psc_evlist__cpus(evlist));
	s.prev = calloc((size_t)psc_evlist__nr(evlist) * (s.nr_cpus + 1), sizeof(*s.prev));
	if (!s.prev) {
		ret = 1;
		goto out;
	}

	clock_gettime(CLOCK_MONOTONIC, &s.start);
	ret = target_start(&s.target, evlist, "stat");
	if (ret) {
		exit_code = ret;
		goto out;
	}
	if (run_loop(&s, evlist, &sigs, &exit_code) < 0 && out__error(s.out) == 0) {
		fprintf(stderr, "perfscope stat: %s\n", strerror(errno));
		ret = 1;
		goto out;
	}
	psc_evlist__disable(evlist);
	if ((ret = psc_evlist__read(evlist))) {
		fprintf(stderr, "perfscope stat: reading counters failed: %s\n", strerror(-ret));
		ret = 1;
		goto out;
	}
	if (s.o.interval_ms) {
		print_counts(&s, evlist, elapsed_s(&s));
	} else {
		print_header(&s);
		print_counts(&s, evlist, -1);
		print_footer(&s, elapsed_s(&s));
	}
	/* a reader that left (| head) is no failure, as in trace and list: the command's status */
	if (out__flush(s.out) && out__error(s.out) != -EPIPE) {
		if (out__error(s.out) == -EINTR)
			fprintf(stderr,
				"perfscope stat: stopped while %s was not being read; the counts "
				"were not written\n",
				s.out->name);
		else
			fprintf(stderr, "perfscope stat: writing the results to %s failed: %s\n",
				s.out->name, strerror(-out__error(s.out)));
		ret = 1;
		goto out;
	}
	ret = exit_code;
out:
	target_release(&s.target);
	psc_evlist__delete(evlist);
	psc_event_list__delete(specs);
	out__delete(s.out);
	if (stop_fd >= 0)
		close(stop_fd);
	free(s.prev);
	return ret;
}

const struct profiler profiler_stat = {
	.name = "stat",
	.summary = "count events (perf stat), scaled for multiplexing, per interval or CPU",
	.help = stat_help,
	.run = stat_run,
};
