/* Example: perfscope's engines without the CLI: a command's wakeups, run delays and stacks. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <perfscope/perfscope.h>
#include <perfscope/record.h>
#include <perfscope/ring.h>
#include <perfscope/tp.h>
#include <perfscope/tracefs.h>

#include "callchain.h" /* symbols/: stacks to names, folded */
#include "clock.h" /* base/: the events' clock, for loss barriers */
#include "comm.h" /* events/: thread names from side-band records */
#include "evprint.h" /* events/: one event as a text line */
#include "flame.h" /* stackfiles/: folded stacks counted, written */
#include "keymap.h" /* base/: the set of the command's threads */
#include "launch.h" /* loop/: a command held before exec */
#include "output.h" /* out/: buffered stdout with sticky errors */
#include "pair.h" /* pair/: start/end pairing, every outcome counted */
#include "session.h" /* loop/: rings, time order, losses, the command's end */

/*
 * usage: example_engines [-n LINES] [-o FOLDED] -- COMMAND [ARGS...]
 *
 * Traces sched:sched_wakeup and sched:sched_switch on every CPU, with kernel and user stacks
 * (perf record -g), while COMMAND runs, and keeps what concerns COMMAND's threads:
 *   - its first LINES events (default 10) printed as text, as `perfscope trace` prints them;
 *   - each wakeup of one of its threads (start, key: the woken pid) paired with the
 *     sched_switch that puts that thread on a CPU (end, key: next_pid), as `perfscope rundelay`
 *     does: the mean run delay, and every outcome of the pair engine;
 *   - the stack of each sched_switch that takes one of its threads off a CPU (prev_pid), folded
 *     ("comm;main;...;schedule") into a table, written to FOLDED for flame graph tools.
 *
 * It is what a program (SQL over events, a Python module) does to reuse the engines of common/
 * without the profilers' skeleton (common/prof/, struct prof): each engine is made, fed and
 * asked for its results by this file, and returns errors that this file prints.
 * Needs root (system-wide tracepoints and stacks). Exit 0, 1 on a runtime failure, 2 on a usage
 * error.
 */

#define PROG "example_engines"

/* One traced event: its format, the fields read, and what evprint prepared for it. */
struct tp_event {
	const char *sys, *name, *full;
	struct psc_tp_format *fmt;
	struct evprint_event print;
	const struct psc_tp_field *f1, *f2; /* wakeup: pid; switch: prev_pid, next_pid */
};

struct engines {
	struct tp_event wakeup, sw;
	struct keymap tids; /* the command's threads: a set (values of size 0) */
	struct comm_cache comm;
	struct callchain *cc;
	struct evprint *ep;
	struct out *out;
	struct pair *pr;
	struct flame *flame;
	struct launch cmd;
	long lines_left; /* events still to print */
	uint64_t delay_sum, delays; /* run delays of the pairs */
	uint64_t folded, fold_failed; /* switches out folded, not foldable */
	uint64_t loss_windows;
	char fold[STACK_FOLD_MAX];
};

/* ---- the pair engine's hook: what a pair means here ---- */

static void on_paired(void *ctx, const struct pair_entry *start, void *data,
		      const struct pair_event *end, uint64_t delta)
{
	struct engines *e = ctx;

	e->delay_sum += delta;
	e->delays++;
}

static const struct pair_impl run_delay = {
	.name = "wakeup->switch-in",
	.paired = on_paired,
};

/* ---- session hooks ---- */

static bool is_ours(const struct engines *e, uint64_t tid)
{
	return tid && keymap__find(&e->tids, tid);
}

static uint64_t field(const struct psc_tp_field *f, const struct psc_sample *s)
{
	uint64_t v = 0;

	psc_tp_field__u64(f, s->raw.data, s->raw.size, &v);
	return v;
}

static void print_event(struct engines *e, const struct tp_event *ev, int cpu,
			const struct psc_sample *s)
{
	if (e->lines_left <= 0)
		return;
	e->lines_left--;
	evprint__text(e->ep, e->out, &ev->print, cpu, comm_cache__get(&e->comm, s->pid, s->tid), s);
}

/* A switch out of one of the command's threads: its stack, folded under the thread's name. */
static void fold_stack(struct engines *e, const struct psc_sample *s)
{
	const char *comm = comm_cache__get(&e->comm, s->pid, s->tid);
	int n = callchain__fold(e->cc, s, comm, e->fold, sizeof(e->fold));

	if (n >= (int)sizeof(e->fold))
		n = (int)sizeof(e->fold) - 1; /* cut at the leaf end: still one stack */
	if (n <= 0 || flame__add(e->flame, e->fold, (size_t)n, 1)) {
		e->fold_failed++;
		return;
	}
	e->folded++;
}

static int on_sample(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	struct engines *e = ctx;
	const struct psc_sample *s = &rec->sample;
	const struct tp_event *ev = psc_evsel__priv(evsel);
	struct pair_event pe = {
		.time = s->time,
		.cpu = cpu,
		.pid = s->pid,
		.tid = s->tid,
		.sample = s,
	};

	if (ev == &e->wakeup) {
		pe.key = field(ev->f1, s); /* the woken thread; the sample is its waker's */
		if (!is_ours(e, pe.key))
			return 0;
		print_event(e, ev, cpu, s);
		pair__start(e->pr, &pe);
	} else if (ev == &e->sw) {
		uint64_t prev = field(ev->f1, s), next = field(ev->f2, s);

		if (!is_ours(e, prev) && !is_ours(e, next))
			return 0;
		print_event(e, ev, cpu, s);
		if (is_ours(e, next)) {
			pe.key = next;
			pair__end(e->pr, &pe);
		}
		if (is_ours(e, prev)) /* the stack is prev's: it is the one leaving the CPU */
			fold_stack(e, s);
	}
	return 0;
}

/* Side-band records: thread names, process maps (user symbols), the command's new threads. */
static int on_record(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	struct engines *e = ctx;

	comm_cache__record(&e->comm, rec);
	callchain__record(e->cc, rec);
	/* a thread or process the command starts is the command too */
	if (rec->type == PERF_RECORD_FORK && is_ours(e, rec->fork.ptid) &&
	    !keymap__insert(&e->tids, rec->fork.tid, NULL))
		return -ENOMEM;
	return 0;
}

/*
 * The kernel dropped events before now: a wakeup older than now may have lost its switch-in,
 * so none may pair any more (counted as lost); the samples' clock is CLOCK_MONOTONIC.
 */
static void on_lost(void *ctx, struct psc_evsel *evsel, int cpu, uint64_t n)
{
	struct engines *e = ctx;

	e->loss_windows++;
	pair__lost(e->pr, mono_ns());
}

static int on_round_end(void *ctx)
{
	struct engines *e = ctx;

	callchain__round_end(e->cc);
	return out__flush(e->out); /* a write error (EPIPE) stops the run */
}

/* ---- setup ---- */

/* The tracepoint's format, the fields wanted, and its event for the session. */
static int add_event(struct engines *e, struct psc_evlist *evlist, struct tp_event *ev,
		     const char *f1, const char *f2)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_TRACEPOINT,
		.sample_period = 1,
		/* the raw event for its fields, its stack (kernel and user parts) */
		.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_CALLCHAIN,
		.disabled = 1,
	};
	struct psc_evsel *evsel;
	int err;

	ev->fmt = psc_tp_format__load(ev->sys, ev->name);
	if (!ev->fmt) {
		err = -errno;
		fprintf(stderr, PROG ": %s: %s\n", ev->full, strerror(-err));
		return err;
	}
	ev->f1 = psc_tp_format__field(ev->fmt, f1);
	ev->f2 = f2 ? psc_tp_format__field(ev->fmt, f2) : NULL;
	if (!ev->f1 || (f2 && !ev->f2)) {
		fprintf(stderr, PROG ": %s: no field %s in this kernel's format\n", ev->full,
			ev->f1 ? f2 : f1);
		return -ENOENT;
	}
	err = evprint_event__init(&ev->print, e->ep, ev->full, ev->fmt);
	if (err)
		return err;
	attr.config = (uint64_t)psc_tp_format__id(ev->fmt);
	evsel = psc_evsel__new(&attr, ev->full);
	if (!evsel || psc_evlist__add(evlist, evsel)) {
		psc_evsel__delete(evsel);
		return -ENOMEM;
	}
	psc_evsel__set_priv(evsel, ev); /* the sample hook tells the events apart by it */
	return 0;
}

/*
 * The events on every online CPU, for every task: the command's wakeups are taken in its
 * wakers' context and its switch-ins in the context of the task it replaces, so events on the
 * command's pid alone would miss them. Side-band COMM/FORK/EXIT and MMAP records come with a
 * dummy event (session_config_evlist).
 */
static struct psc_evlist *open_events(struct engines *e)
{
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	PSC_OPTS(psc_mmap_opts, mo, .pages = session_default_ring_pages(0));
	char msg[512];
	int err = -ENOMEM;

	if (!evlist || !cpus || !threads)
		goto fail;
	if ((err = add_event(e, evlist, &e->wakeup, "pid", NULL)) ||
	    (err = add_event(e, evlist, &e->sw, "prev_pid", "next_pid")))
		goto fail;
	err = session_config_evlist(evlist, mo.pages, SIDEBAND_COMM | SIDEBAND_MMAP);
	if (err)
		goto fail;
	err = psc_evlist__set_maps(evlist, cpus, threads);
	if (!err && (err = psc_evlist__open(evlist, NULL))) {
		fprintf(stderr, PROG ": %s\n",
			psc_strerror_open(err, "sched:sched_switch", msg, sizeof(msg)));
		goto out;
	}
	if (!err)
		err = psc_evlist__mmap(evlist, &mo);
	if (!err)
		goto out;
fail:
	fprintf(stderr, PROG ": cannot set up the events: %s\n", strerror(-err));
out:
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	if (err) {
		psc_evlist__delete(evlist);
		return NULL;
	}
	return evlist;
}

/* The engines themselves: none needs more than its own options. */
static int engines_new(struct engines *e)
{
	struct pair_opts po = { .impl = &run_delay, .ctx = e };
	int err;

	if ((err = keymap__init(&e->tids, 0, 0)) || (err = comm_cache__init(&e->comm)))
		return err;
	/* no profiler name: the callchain prints nothing itself (callchain__problem) */
	e->cc = callchain__new(NULL);
	e->ep = evprint__new(NULL); /* NULL: /proc/kallsyms for %pS functions */
	e->out = out__new(STDOUT_FILENO, 0);
	e->pr = pair__new(&po);
	e->flame = flame__new();
	if (!e->cc || !e->ep || !e->out || !e->pr || !e->flame)
		return errno ? -errno : -ENOMEM;
	return 0;
}

/*
 * The command still running (the run ended on a signal or a failure): asked to end, not left
 * behind. Its exit code (128 + signal when killed), -1 when it never ran.
 */
static int command_end(struct launch *cmd)
{
	int status, r;

	if (cmd->pid <= 0 || cmd->go_fd >= 0) /* never started, or never released */
		return -1;
	r = launch_wait(cmd, &status, 0);
	if (r == 0) {
		/* asked for 2 s, then insisted on: one that ignores SIGTERM must not hang us */
		launch_kill(cmd, SIGTERM);
		for (int i = 0; i < 200 && (r = launch_wait(cmd, &status, 0)) == 0; i++)
			usleep(10000);
		if (r == 0) {
			launch_kill(cmd, SIGKILL);
			r = launch_wait(cmd, &status, 1);
		}
	}
	return r == 1 ? wait_status_to_exit_code(status) : -1;
}

static void engines_delete(struct engines *e)
{
	evprint_event__exit(&e->wakeup.print);
	evprint_event__exit(&e->sw.print);
	psc_tp_format__delete(e->wakeup.fmt);
	psc_tp_format__delete(e->sw.fmt);
	evprint__delete(e->ep);
	flame__delete(e->flame);
	pair__delete(e->pr);
	callchain__delete(e->cc);
	comm_cache__exit(&e->comm);
	keymap__exit(&e->tids);
	out__delete(e->out);
	launch_release(&e->cmd);
}

/* ---- the report ---- */

static void report(struct engines *e, const struct session *s)
{
	struct session_stats st;
	const char *problem = callchain__problem(e->cc);
	struct out *o = e->out;

	session__stats(s, &st);
	/* every wakeup of the command and every switch-in ends in exactly one outcome */
	for (int i = 0; i < PAIR_NR_OUTCOMES; i++)
		out__printf(o, "pair %s %llu\n", pair_outcome__name(i),
			    (unsigned long long)pair__count(e->pr, i));
	if (e->delays)
		out__printf(o, "run delay: %llu pairs, mean %.1f us\n",
			    (unsigned long long)e->delays,
			    (double)e->delay_sum / (double)e->delays / 1e3);
	else
		out__printf(o, "run delay: 0 pairs\n");
	out__printf(o, "stacks: %llu folded, %zu distinct, %llu not foldable\n",
		    (unsigned long long)e->folded, flame__nr_stacks(e->flame),
		    (unsigned long long)e->fold_failed);
	/* what the kernel did not deliver: the pair counts are read with these */
	out__printf(o,
		    "session: %llu samples, %llu lost (%llu loss windows), %llu kernel_dropped\n",
		    (unsigned long long)st.samples, (unsigned long long)st.lost,
		    (unsigned long long)e->loss_windows, (unsigned long long)st.kernel_dropped);
	if (problem)
		fprintf(stderr, PROG ": symbols: %s\n", problem);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-n LINES] [-o FOLDED] -- COMMAND [ARGS...]\n"
		   "  -n LINES   events of COMMAND printed as text (default 10)\n"
		   "  -o FOLDED  the stacks of COMMAND's switches out, folded, written there\n");
}

int main(int argc, char **argv)
{
	struct engines e = {
		.wakeup = { .sys = "sched", .name = "sched_wakeup", .full = "sched:sched_wakeup" },
		.sw = { .sys = "sched", .name = "sched_switch", .full = "sched:sched_switch" },
		.lines_left = 10,
		.cmd = { .go_fd = -1, .err_fd = -1 }, /* launch_release: nothing to release */
	};
	const char *folded_path = NULL;
	struct psc_evlist *evlist = NULL;
	struct session *s = NULL;
	FILE *folded = NULL;
	char msg[512], *end;
	int opt, err, status, ret = 1;

	while ((opt = getopt(argc, argv, "+n:o:h")) != -1) {
		switch (opt) {
		case 'n':
			errno = 0;
			e.lines_left = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || e.lines_left < 0) {
				fprintf(stderr, PROG ": -n wants a number of lines, not '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'o':
			folded_path = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, PROG ": no command to trace\n");
		usage(stderr);
		return 2;
	}
	/* an unwritable FOLDED is said now, not after the run */
	if (folded_path && !(folded = fopen(folded_path, "we"))) {
		fprintf(stderr, PROG ": cannot write '%s': %s\n", folded_path, strerror(errno));
		return 1;
	}
	if (!psc_tracefs__mount()) {
		fprintf(stderr, PROG ": tracefs: %s (run as root)\n", strerror(errno));
		goto out;
	}
	err = engines_new(&e);
	if (err) {
		fprintf(stderr, PROG ": cannot make the engines: %s\n", strerror(-err));
		goto out;
	}
	/* kallsyms read now: at the first kernel frame it would stall the reading of the rings */
	callchain__prepare(e.cc);
	evlist = open_events(&e);
	if (!evlist)
		goto out;

	/* the command, forked and held before its exec: its tid is known before any event */
	err = launch_prepare(&e.cmd, argv + optind);
	if (!err && !keymap__insert(&e.tids, (uint64_t)e.cmd.pid, NULL))
		err = -ENOMEM;
	if (err) {
		fprintf(stderr, PROG ": cannot start '%s': %s\n", argv[optind], strerror(-err));
		goto out;
	}
	{
		/*
		 * Time order: a wakeup on one CPU and its switch-in on another pair in the order
		 * they happened; lost_early: a loss is heard before any event written after it.
		 * watch_pid: the run ends when the command does. quiet_stats: the report is ours.
		 */
		PSC_OPTS(session_opts, so, .order = true, .lost_early = true, .quiet_stats = true,
			 .watch_pid = e.cmd.pid);
		const struct session_hooks hooks = {
			.ctx = &e,
			.sample = on_sample,
			.record = on_record,
			.lost = on_lost,
			.round_end = on_round_end,
		};

		s = session__new(evlist, &so, &hooks);
	}
	if (!s) {
		fprintf(stderr, PROG ": cannot make the session: %s\n", strerror(errno));
		goto out;
	}
	/*
	 * The session enables the events when it runs; the command must be released after that,
	 * and the session has no hook between the two, so they are enabled here first (enabling
	 * twice is harmless).
	 */
	err = psc_evlist__enable(evlist);
	if (err) {
		fprintf(stderr, PROG ": cannot enable the events: %s\n", strerror(-err));
		goto out;
	}
	err = launch_go(&e.cmd);
	if (err) {
		fprintf(stderr, PROG ": %s\n", launch_strerror(&e.cmd, msg, sizeof(msg)));
		goto out;
	}
	err = session__run(s);
	if (err) {
		fprintf(stderr, PROG ": the session failed: %s\n", strerror(err < 0 ? -err : err));
		goto out;
	}
	status = command_end(&e.cmd);
	pair__finish(e.pr); /* the wakeups still waiting: open */
	report(&e, s);
	out__printf(e.out, "command: exit %d\n", status);
	if (folded) {
		err = flame__write_file(e.flame, folded); /* closes it */
		folded = NULL;
		if (err) {
			fprintf(stderr, PROG ": writing '%s': %s\n", folded_path, strerror(-err));
			goto out;
		}
	}
	err = out__flush(e.out);
	if (err) {
		fprintf(stderr, PROG ": standard output: %s\n", strerror(-err));
		goto out;
	}
	ret = 0;
out:
	command_end(&e.cmd);
	if (folded)
		fclose(folded);
	session__delete(s);
	psc_evlist__delete(evlist);
	engines_delete(&e);
	return ret;
}
