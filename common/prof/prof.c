/* Runs a declared profiler: options, events, target, open, the session, reports, exit status. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "clock.h"
#include "callchain.h"
#include "caret.h"
#include "comm.h"
#include "evprint.h"
#include "flame.h"
#include "prof_embed.h"
#include "prof_evhelp.h"
#include "prof_internal.h"
#include "rawq.h"
#include "session.h"
#include "sdt_notes.h"

double prof__elapsed(const struct prof *p)
{
	return p->start_ns ? (double)(mono_ns() - p->start_ns) / 1e9 : 0;
}

void prof__stop(struct prof *p)
{
	if (p->session)
		session__stop(p->session);
}

const char *prof__comm(struct prof *p, uint32_t pid, uint32_t tid)
{
	return p->state->comm_ready ? comm_cache__get(&p->state->comm, pid, tid) : "";
}

const char *prof__tid_label(struct prof *p, uint32_t tid, char *buf, size_t len)
{
	const char *comm = p->state->comm_ready ? comm_cache__get(&p->state->comm, tid, tid) : "";

	if (comm && *comm)
		snprintf(buf, len, "%s/%u", comm, tid);
	else
		snprintf(buf, len, "%u", tid);
	return buf;
}

struct callchain *prof__callchain(struct prof *p)
{
	return p->state->cc;
}

/* The engines' lines, on stderr under the profiler's name, as every line of the skeleton. */
static void say_line(void *ctx, const char *line)
{
	const struct prof *p = ctx;

	fprintf(stderr, "perfscope %s: %s\n", p->name, line);
}

const struct say *prof__say(struct prof *p)
{
	p->state->say = (struct say){ say_line, p };
	return &p->state->say;
}

void prof__stack_text(struct prof *p, const struct psc_sample *s)
{
	if (p->state->cc && (s->sample_type & PERF_SAMPLE_CALLCHAIN))
		callchain__text(p->state->cc, p->out, s);
}

void prof__stack_json(struct prof *p, const struct psc_sample *s)
{
	if (p->state->cc && (s->sample_type & PERF_SAMPLE_CALLCHAIN))
		callchain__json(p->state->cc, &p->json, s);
	else
		json__null(&p->json);
}

/* ---- session hooks: from evsels and raw records to the profiler's events ---- */

/* --sampling-limit: false when cpu already had its share of this second. */
static bool within_limit(struct prof *p, int cpu, uint64_t time)
{
	struct prof_state *st = p->state;
	uint64_t sec = time / 1000000000ull;

	if (!p->opts.sampling_limit || cpu < 0 || cpu >= st->limit_cpus)
		return true;
	if (st->limit_sec[cpu] != sec) {
		st->limit_sec[cpu] = sec;
		st->limit_nr[cpu] = 0;
	}
	if (st->limit_nr[cpu] >= p->opts.sampling_limit) {
		p->limited++;
		return false;
	}
	st->limit_nr[cpu]++;
	return true;
}

/* --flame-graph: the sample's stack, its thread's name as the root, counted once more. */
static void count_stack(struct prof *p, const struct psc_sample *s)
{
	struct prof_state *st = p->state;
	int n = callchain__fold(st->cc, s, prof__comm(p, s->pid, s->tid), st->fold,
				sizeof(st->fold));

	if (n >= (int)sizeof(st->fold))
		n = (int)sizeof(st->fold) - 1; /* cut at the leaf end: still one stack */
	if (n > 0 && flame__add(st->flame, st->fold, (size_t)n, 1))
		p->flame_dropped++;
}

static int hook_sample(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	struct prof *p = ctx;
	struct prof_event *ev = evsel ? psc_evsel__priv(evsel) : NULL;
	int ret = 0;

	if (!ev)
		return 0; /* the side-band event, or one that cannot be told: counted by the session */
	if (cpu < 0 && (rec->sample.sample_type & PERF_SAMPLE_CPU))
		cpu = (int)rec->sample.cpu;
	/* a filter the kernel refused: what the kernel would have dropped, dropped here */
	if (ev->filter && !prof_expr__pass(ev, &rec->sample))
		return 0;
	/* what the kernel sampled there, before --sampling-limit drops any (perf-prof's count) */
	if (p->state->perfeval)
		prof_perfeval__sample(p, cpu, rec->sample.tid);
	if (!within_limit(p, cpu, rec->sample.time))
		return 0;
	p->nr_samples++;
	if (p->state->flame && (rec->sample.sample_type & PERF_SAMPLE_CALLCHAIN))
		count_stack(p, &rec->sample);
	if (p->state->backlog && (rawq__count(p->state->backlog) || !out__has_room(p->out))) {
		/* the reader is behind: kept raw, in order, formatted when it takes the text */
		if (!rawq__push(p->state->backlog, (uint16_t)ev->idx, cpu, rec->hdr))
			prof_out_drop(p, ev, 1);
	} else if (p->decl->sample) {
		ret = p->decl->sample(p, p->priv, ev, cpu, &rec->sample);
	}
	if (!ret && p->opts.exit_n && p->nr_samples >= p->opts.exit_n)
		ret = 1;
	if (!ret && out__error(p->out))
		ret = 1;
	return ret;
}

/*
 * Events waiting raw in the backlog are named when they become text: a COMM or FORK that came
 * after them waits behind them (an exec must not rename the events its task had before). False
 * when nothing waits, or the record cannot be queued: it is taken at once.
 */
static int hook_record(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	struct prof *p = ctx;

	if (p->state->comm_ready && !prof_backlog_sideband(p, evsel, cpu, rec))
		comm_cache__record(&p->state->comm, rec);
	if (p->state->cc)
		callchain__record(p->state->cc, rec);
	return p->decl->record ? p->decl->record(p, p->priv, rec) : 0;
}

static void hook_lost(void *ctx, struct psc_evsel *evsel, int cpu, uint64_t n)
{
	struct prof *p = ctx;
	struct prof_event *ev = evsel ? psc_evsel__priv(evsel) : NULL;

	if (p->decl->lost)
		p->decl->lost(p, p->priv, ev, cpu, n);
}

static int hook_round_end(void *ctx)
{
	struct prof *p = ctx;

	if (p->state->cc)
		callchain__round_end(p->state->cc);
	if (p->state->backlog)
		prof_backlog_format(p, false);
	return out__flush(p->out) ? 1 : 0;
}

static void hook_interval(void *ctx)
{
	struct prof *p = ctx;

	if (p->decl->interval && p->decl->interval(p, p->priv, mono_ns()) < 0)
		prof__stop(p);
	else if (p->decl->interval)
		prof_incomplete__note(p, &p->state->inc, false);
	if (p->state->perfeval && prof_perfeval__report(p, false))
		prof__stop(p);
	out__flush(p->out);
}

static void hook_sigusr1(void *ctx)
{
	struct prof *p = ctx;

	if (p->decl->sigusr1)
		p->decl->sigusr1(p, p->priv);
	out__flush(p->out);
}

static int hook_stop_signal(void *ctx, int signo)
{
	struct prof *p = ctx;

	return p->decl->stop_signal ? p->decl->stop_signal(p, p->priv, signo) : 0;
}

/* ---- setup ---- */

static int parse_events(struct prof *p)
{
	PSC_OPTS(psc_parse_opts, popts, .usdt_find = usdt__find);
	struct psc_parse_error perr = { .pos = -1 };
	const char *typed;
	int ret;

	p->events = p->opts.events;
	if (!p->events) {
		if (!(p->decl->needs & PROF_EVENTS))
			return 0;
		return prof_usage(p, "which events? give -e EVENTS, e.g. -e sched:sched_switch");
	}
	/* profile/-F 200/untraced/: the event profile samples (the carets below point as typed) */
	typed = p->state->typed = p->events;
	if ((ret = prof_embed__rewrite(p->name, typed, p->state->find, &p->state->embed)))
		return ret;
	if (p->state->embed.text) {
		p->events = p->state->embed.text;
		if (p->opts.verbose)
			fprintf(stderr, "perfscope %s: -e %s\n", p->name, p->events);
	}
	/* parsing has no side effects: tracefs is mounted here, where tracepoints may be named */
	if (strchr(p->events, ':'))
		psc_tracefs__mount(); /* failing is no error unless one is: parse says so */
	ret = psc_parse_events(p->events, &popts, &p->specs, &perr);
	if (!ret)
		return 0;
	perr.pos = prof_embed__pos(&p->state->embed, perr.pos);
	cli_report_parse_error(p->name, typed, &perr, ret);
	/* no memory, tracefs not mounted or not readable: runtime failures, not bad usage */
	/* ... or the kernel lacks what was named (kprobes here) */
	return ret == -ENOMEM || ret == -EACCES || ret == -EPERM || ret == -ENODEV ||
			       ret == -EOPNOTSUPP
		       ? 1
		       : 2;
}

/*
 * uprobe:/kprobe: events become trace events here, before anything opens them; they are removed
 * at the end (prof__main's out:). SIGINT/SIGTERM are blocked from now on, so a stop only ends
 * the session and the probes are removed on the way out; probes left by a perfscope that was
 * killed (SIGKILL) are removed first.
 */
static int create_probes(struct prof *p)
{
	struct psc_parse_error perr = { .pos = -1 };
	sigset_t stop;
	bool any = false;
	int ret;

	for (int i = 0; i < p->specs->nr; i++)
		any |= p->specs->specs[i].probe != NULL;
	if (!any)
		return 0;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	ret = psc_probes__remove_stale(NULL);
	if (ret > 0 && p->opts.verbose)
		fprintf(stderr, "perfscope %s: removed %d probes left by perfscope processes that are gone\n",
			p->name, ret);
	ret = psc_probes__create(p->specs, NULL, &p->state->probes, &perr);
	if (!ret)
		return 0;
	perr.pos = prof_embed__pos(&p->state->embed, perr.pos);
	cli_report_parse_error(p->name, p->state->typed, &perr, ret);
	return 1;
}

void prof_events_caret(const struct prof *p, int pos)
{
	const struct prof_state *st = p->state;

	if (st->embed.text)
		caret__print(stderr, "  ", NULL, st->typed, prof_embed__pos(&st->embed, pos));
	else
		caret__print(stderr, "  ", NULL, p->events, pos);
}

/*
 * Results go to -o FILE or stdout, text to stderr as PROF_TEXT_STDERR and PROF_SUMMARY say; a
 * stop signal must not wait behind a pipe nobody reads.
 */
int prof__report_fd(const struct prof *p)
{
	bool text_stderr = (p->decl->needs & PROF_TEXT_STDERR) ||
			   ((p->decl->needs & PROF_SUMMARY) && p->opts.command);

	if (p->opts.output)
		return -1;
	return text_stderr && p->opts.format == FORMAT_TEXT ? STDERR_FILENO : STDOUT_FILENO;
}

static int open_output(struct prof *p)
{
	sigset_t stop;

	if (prof__report_fd(p) == STDERR_FILENO) {
		p->out = out__new(STDERR_FILENO, 256 * 1024);
		if (p->out)
			p->out->name = "standard error";
	} else {
		p->out = out__open(p->opts.output, 256 * 1024);
	}
	if (!p->out) {
		fprintf(stderr, "perfscope %s: cannot write to '%s': %s\n", p->name,
			p->opts.output ? p->opts.output : "standard output", strerror(errno));
		return 1;
	}
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	p->stop_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (p->stop_fd >= 0)
		out__watch(p->out, p->stop_fd);
	if (p->opts.output_queue_mib)
		p->out->queue_max = (uint64_t)p->opts.output_queue_mib << 20;
	return 0;
}

/* Streaming needs per-CPU rings: inherited per-thread events cannot be mmapped. */
static int per_cpu_maps(struct target *tg)
{
	struct psc_cpumap *online;

	if (psc_cpumap__cpu(tg->cpus, 0) >= 0)
		return 0;
	online = psc_cpumap__new_online();
	if (!online)
		return -errno;
	psc_cpumap__put(tg->cpus);
	tg->cpus = online;
	return 0;
}

static int nr_events_open(const struct prof *p)
{
	int n = 0;

	for (int i = 0; i < p->nr_events; i++)
		n += psc_evsel__is_open(p->events_arr[i].evsel);
	return n;
}

static int map_rings(struct prof *p)
{
	unsigned int pages = p->opts.mmap_pages ? p->opts.mmap_pages : 128;
	int err;

	{
		PSC_OPTS(psc_mmap_opts, mo, .pages = pages, .overwrite = p->opts.overwrite);

		err = psc_evlist__mmap(p->evlist, &mo);
	}
	if (!err)
		return 0;
	/* EPERM: over perf_event_mlock_kb without CAP_PERFMON; ENOMEM: memory itself */
	if (err == -EPERM)
		fprintf(stderr,
			"perfscope %s: cannot map the ring buffers (%s): -m %u pages per CPU exceeds "
			"what this user may lock; use a smaller -m or raise "
			"/proc/sys/kernel/perf_event_mlock_kb\n",
			p->name, strerror(-err), pages);
	else if (err == -ENOMEM)
		fprintf(stderr,
			"perfscope %s: cannot map the ring buffers (%s): -m %u pages is %llu MiB per "
			"CPU, more than the kernel could allocate; use a smaller -m\n",
			p->name, strerror(-err), pages,
			(unsigned long long)pages * (unsigned long long)sysconf(_SC_PAGESIZE) >> 20);
	else
		fprintf(stderr, "perfscope %s: cannot map the ring buffers: %s\n", p->name,
			strerror(-err));
	return 1;
}

static bool any_stack(const struct prof *p)
{
	if (p->callchain || (p->decl->needs & PROF_SYMBOLS))
		return true;
	for (int i = 0; i < p->nr_events; i++)
		if (p->events_arr[i].spec->stack)
			return true;
	return false;
}

static int prepare_streaming(struct prof *p)
{
	struct prof_state *st = p->state;
	int err;

	if (p->opts.flame_graph) {
		st->flame_path = prof__flame_path(p->opts.flame_graph, 0);
		st->flame = flame__new();
		if (!st->flame_path || !st->flame)
			return -ENOMEM;
		st->flame_file = prof__flame_open(p, st->flame_path);
		if (!st->flame_file)
			return 1;
	}
	if ((p->decl->needs & PROF_STACKS) && any_stack(p)) {
		st->cc = callchain__new(prof__say(p));
		if (!st->cc)
			return -ENOMEM;
	}
	if (st->ep) /* the printer prints stacks when there are any */
		evprint__set_callchain(st->ep, st->cc);
	if (p->opts.sampling_limit) {
		st->limit_cpus = psc_cpu__nr_possible();
		st->limit_sec = calloc((size_t)st->limit_cpus, sizeof(*st->limit_sec));
		st->limit_nr = calloc((size_t)st->limit_cpus, sizeof(*st->limit_nr));
		if (!st->limit_sec || !st->limit_nr)
			return -ENOMEM;
	}
	if ((err = prof_perfeval__init(p)))
		return err;
	/* no -m: as large as the kernel lets us lock */
	if (!p->opts.mmap_pages) {
		struct psc_cpumap *online = psc_cpumap__new_online();

		p->opts.mmap_pages = (unsigned int)session_default_ring_pages(
			online ? psc_cpumap__nr(online) : psc_cpu__nr_possible());
		psc_cpumap__put(online);
	}
	err = session_config_evlist(p->evlist, p->opts.mmap_pages,
				    ((p->decl->needs & PROF_COMM) ? SIDEBAND_COMM : 0) |
					    (st->cc ? SIDEBAND_MMAP : 0));
	if (err) {
		fprintf(stderr, "perfscope %s: cannot prepare the events: %s\n", p->name,
			strerror(-err));
		return 1;
	}
	if (p->opts.overwrite) { /* the side-band event shares the rings: backward too */
		struct psc_evsel *evsel;
		int i;

		psc_evlist__for_each(p->evlist, i, evsel)
			psc_evsel__attr_mut(evsel)->write_backward = 1;
	}
	if (p->opts.watermark_pct) {
		size_t ring = (size_t)(p->opts.mmap_pages ? p->opts.mmap_pages : 128) *
			      (size_t)sysconf(_SC_PAGESIZE);
		struct psc_evsel *evsel;
		int i;

		psc_evlist__for_each(p->evlist, i, evsel)
		{
			struct perf_event_attr *a = psc_evsel__attr_mut(evsel);

			size_t wm = ring / 100 * (size_t)p->opts.watermark_pct;

			if (p->opts.watermark_pct < 0) { /* every event: the lowest latency */
				a->watermark = 0;
				a->wakeup_events = 1;
				continue;
			}
			a->watermark = 1;
			/* the attr's field is 32 bits: a 4 GiB ring wakes up a little early */
			a->wakeup_watermark = (uint32_t)(wm < UINT32_MAX ? wm : UINT32_MAX);
		}
	}
	return 0;
}

/*
 * What the events are opened on: the command line's target, but with PROF_WATCH_TASKS no -p/-t
 * (the session watches them) and a COMMAND's events on every CPU (or -C's) while it runs.
 */
static void events_target_spec(const struct prof *p, struct target_spec *spec)
{
	cli_opts_target_spec(&p->opts, spec);
	if (!(p->decl->needs & PROF_WATCH_TASKS))
		return;
	spec->nr_pids = spec->nr_tids = 0;
	spec->pids = spec->tids = NULL;
	spec->tasks_text = NULL;
	if (spec->command)
		spec->all_cpus = true;
}

static int open_target(struct prof *p)
{
	bool rings = p->decl->needs & PROF_RINGS;
	struct target_spec spec;
	int ret;

	events_target_spec(p, &spec);
	ret = target_setup(&p->target, &spec, prof__say(p), p->title, sizeof(p->title));
	if (ret)
		return ret;
	if (p->opts.per_cpu && !p->target.per_cpu)
		return prof_usage(p, "--per-cpu needs system-wide counting (-a, -C or -G); a "
				     "process or command is followed across CPUs instead");
	/* counting, like perf stat: what a followed process forks after we attach is counted */
	p->target.inherit_followed = !rings;
	if (rings && per_cpu_maps(&p->target))
		return -ENOMEM;
	ret = target_open(&p->target, p->evlist, prof__say(p));
	if (ret)
		return ret;
	if (rings && !nr_events_open(p)) {
		/* the side-band event alone opened: nothing would ever be shown */
		fprintf(stderr, "perfscope %s: none of the events can be used on this machine (see "
				"above); 'perfscope list' shows what it provides\n",
			p->name);
		return 1;
	}
	if (rings && (ret = map_rings(p)))
		return ret;
	if ((p->decl->needs & PROF_COMM) && !p->state->comm_ready) {
		if (comm_cache__init(&p->state->comm))
			return -ENOMEM;
		p->state->comm_ready = true;
		if (spec.nr_pids || spec.nr_tids) {
			for (int i = 0; i < spec.nr_pids; i++)
				comm_cache__preload(&p->state->comm, spec.pids[i], 0);
			for (int i = 0; i < spec.nr_tids; i++)
				comm_cache__preload(&p->state->comm, 0, spec.tids[i]);
		} else if (!p->target.has_command || p->target.per_cpu) {
			comm_cache__preload(&p->state->comm, 0, 0);
		}
	}
	return 0;
}


static int start_session(struct prof *p)
{
	bool rings = p->decl->needs & PROF_RINGS;

	PSC_OPTS(session_opts, so, .order = rings && p->order,
		 .interval_ms = p->opts.interval_ms, .duration_s = p->opts.duration_s,
		 .target = &p->target,
		 .watch_pids = p->opts.nr_pids ? p->opts.pids : p->opts.tids,
		 .nr_watch = p->opts.nr_pids ? p->opts.nr_pids : p->opts.nr_tids,
		 .watch_is_thread = p->opts.nr_tids > 0, .counting = !rings,
		 .overwrite = rings && p->opts.overwrite,
		 .quiet_stats = !rings || p->opts.quiet, .verbose = p->opts.verbose > 0,
		 .lost_early = rings && p->decl->lost);
	const struct session_hooks hooks = {
		.ctx = p,
		.sample = hook_sample,
		.record = hook_record,
		.lost = hook_lost,
		.round_end = hook_round_end,
		.interval = hook_interval,
		.sigusr1 = hook_sigusr1,
		.stop_signal = hook_stop_signal,
		.say = say_line,
	};

	p->session = session__new(p->evlist, &so, &hooks);
	if (!p->session) {
		fprintf(stderr, "perfscope %s: cannot start the session: %s\n", p->name,
			strerror(errno));
		return 1;
	}
	/* a slow reader of the pipe: output waits in memory, the rings are still drained */
	out__attach(p->out, p->session);
	return 0;
}

static int run(struct prof *p, bool *again)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	sigset_t stop;
	int err, ret = 0;

	/* what the first stack would load, loaded before the events run */
	if (p->state->cc && p->opts.kernel_callchain != 0)
		callchain__prepare(p->state->cc);
	if (p->state->cc && p->target.follows_tasks)
		callchain__preload(p->state->cc, p->target.threads);
	else if (p->state->cc && p->target.per_cpu && !p->run_idx)
		callchain__preload(p->state->cc, NULL); /* the processes already running */
	if (p->opts.usage_self_ms && (err = prof_start_usage_self(p))) {
		fprintf(stderr, "perfscope %s: --usage-self: %s\n", p->name, strerror(-err));
		return 1;
	}
	/* PROF_DONE: nothing to run after all (a held COMMAND is let go): a clean end, status 0 */
	if (!p->run_idx && p->decl->start && (ret = p->decl->start(p, p->priv)))
		return ret == PROF_DONE ? 0 : ret;
	/* A closed stdout must come back as EPIPE from write, to stop cleanly and say so. */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	/*
	 * SIGINT/SIGTERM stay blocked once the run is over (the session restores the mask it
	 * found): a second one arriving while the report is written must not kill perfscope
	 * half way (a stuck output still gives up on them: out__watch polls their signalfd).
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	p->start_ns = mono_ns();
	err = session__run(p->session);
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (p->state->backlog)
		prof_backlog_format(p, true); /* after the queue: the output waits for its reader now */
	out__flush(p->out);
	if (err > 0)
		return err; /* the command could not be run; already said */
	if (!err && p->decl->run_end && !out__error(p->out))
		ret = p->decl->run_end(p, p->priv);
	if (ret < 0)
		err = ret;
	if (!err && !ret && p->run_idx + 1 < p->repeat && !out__error(p->out) &&
	    !prof_stopped_by_user(p)) {
		*again = true;
		return 0;
	}
	if (p->decl->report && !out__error(p->out) && (ret = p->decl->report(p, p->priv)) < 0)
		err = err ? err : ret;
	else if (p->decl->report || !(p->decl->needs & PROF_SUMMARY)) /* a stream: its end */
		prof_incomplete__note(p, &p->state->inc, true);
	out__flush(p->out);
	prof_report_stats(p);
	ret = prof_report_output(p);
	if (prof_write_flame(p) && !ret)
		ret = 1;
	/* PROF_WATCH_TASKS: the tasks only bounded a run of system-wide events */
	if (session__end(p->session) == SESSION_PROCESS && !p->opts.quiet &&
	    !(p->decl->needs & PROF_WATCH_TASKS))
		fprintf(stderr, "perfscope %s: the %s followed exited; stopped\n", p->name,
			p->opts.tid ? "thread" : "process");
	if (err < 0) {
		fprintf(stderr, "perfscope %s: %s\n", p->name, strerror(-err));
		return 1;
	}
	if (ret)
		return ret;
	/* Its own status when it ended (by itself or by a signal passed on); else a clean stop. */
	if (session__end(p->session) == SESSION_COMMAND)
		return session__command_exit(p->session);
	return 0;
}

/* -r: the run that ended is let go (its command was reaped), its counters closed to open anew. */
static void next_run(struct prof *p)
{
	session__delete(p->session);
	p->session = NULL;
	target_release(&p->target);
	psc_evlist__close(p->evlist);
	p->run_idx++;
	/* what the library warned about (an event not supported here) was said at the first run */
	if (!p->opts.verbose)
		cli_setup_log(-1);
}

static int hook_status(int ret)
{
	if (ret == -ENOMEM) {
		fprintf(stderr, "perfscope: %s\n", strerror(ENOMEM));
		return 1;
	}
	return ret < 0 ? 1 : ret;
}

int prof__main(const struct profiler *decl, prof_find_fn find, int argc, char **argv)
{
	struct prof_state st = { .usage_fd = -1, .find = find };
	struct prof p = { .decl = decl, .name = decl->name, .stop_fd = -1, .state = &st };
	struct target_spec spec;
	int ret;

	p.target.cgroup_fd = -1;
	if (decl->run)
		return decl->run(argc, argv);
	if (decl->priv_size && !(p.priv = calloc(1, decl->priv_size)))
		return hook_status(-ENOMEM);
	ret = prof_opts__parse(&p, argc, argv);
	if (ret) {
		ret = ret == PROF_DONE ? 0 : ret; /* --help */
		goto out;
	}
	if ((ret = prof_event_list__defaults(&p)))
		goto out;
	cli_setup_log(p.opts.verbose);
	p.json_fmt = p.opts.format == FORMAT_JSON;
	p.order = (decl->needs & PROF_ORDER) ? !p.opts.no_order : p.opts.order;
	/* a flame graph is made of stacks */
	p.callchain = p.opts.callchain || p.opts.user_callchain == 1 ||
		      p.opts.kernel_callchain == 1 || p.opts.flame_graph;
	cli_opts_target_spec(&p.opts, &spec);
	if ((ret = target_check_tasks(&spec, prof__say(&p))))
		goto out;
	if (decl->check && (ret = decl->check(&p, p.priv))) {
		ret = ret == PROF_DONE ? 0 : hook_status(ret);
		goto out;
	}
	if ((ret = parse_events(&p)))
		goto out;
	if (p.specs && prof_evhelp__asked(&p, argc, argv)) {
		ret = prof_evhelp__print(&p, argv, stdout);
		goto out;
	}
	if ((p.specs && (ret = create_probes(&p))) ||
	    (ret = open_output(&p)))
		goto out;
	if (p.specs && (ret = prof_events__setup(&p))) {
		ret = ret == PROF_SETUP_DONE ? 0 : hook_status(ret);
		goto out;
	}
	if ((decl->needs & PROF_RINGS) && (ret = hook_status(prepare_streaming(&p))))
		goto out;
	for (;;) {
		bool again = false;

		ret = hook_status(open_target(&p));
		if (ret == TARGET_GONE) { /* the -p tasks exited while it set up: done, as -p is */
			ret = 0;
			goto out;
		}
		if (ret || (ret = start_session(&p)))
			goto out;
		ret = hook_status(run(&p, &again));
		if (!again)
			break;
		next_run(&p);
	}
out:
	if (decl->teardown && p.priv)
		decl->teardown(&p, p.priv);
	session__delete(p.session);
	target_release(&p.target);
	prof_events__free(&p);
	evprint__delete(st.ep); /* after the formats bound to it */
	psc_evlist__delete(p.evlist);
	psc_probes__delete(st.probes); /* once nothing has them open */
	prof_embed__free(&st.embed);
	psc_event_list__delete(p.specs);
	callchain__delete(st.cc);
	flame__delete(st.flame);
	if (st.flame_file)
		fclose(st.flame_file);
	free(st.flame_path);
	if (st.comm_ready)
		comm_cache__exit(&st.comm);
	if (st.usage_fd >= 0)
		close(st.usage_fd);
	free(st.limit_sec);
	free(st.limit_nr);
	free(st.perfeval);
	rawq__delete(st.backlog);
	out__delete(p.out);
	if (p.stop_fd >= 0)
		close(p.stop_fd);
	free(p.priv);
	return ret;
}

