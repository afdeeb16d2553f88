/* Integration tests of the session loop on real tracepoints: exact counts, exact lost counts,
 * order, stop conditions. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <perfscope/perfscope.h>
#include <perfscope/ring.h>
#include <perfscope/tracefs.h>

#include "session.h"
#include "target.h"

static int getppid_id = -1;

/* A child that makes exactly n getppid() calls once released through the pipe. */
struct child {
	pid_t pid;
	int go;
};

/*
 * For the backlog tests: the child runs on CPU 0 only (its records then fill one ring past
 * the quarter that starts the backlog) and naps every 1000 calls, so that the reader gets its
 * rounds while the child runs, however loaded the machine (else the child may be done before
 * the reader's first round, and the last round needs no backlog).
 */
static bool child_pinned_napping;

static void child_start(struct child *c, long n)
{
	int p[2];
	char b;

	assert_int_equal(pipe(p), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		if (child_pinned_napping) {
			cpu_set_t one;

			CPU_ZERO(&one);
			CPU_SET(0, &one);
			if (sched_setaffinity(0, sizeof(one), &one))
				_exit(1);
		}
		for (long i = 0; i < n; i++) {
			syscall(SYS_getppid);
			if (child_pinned_napping && i % 1000 == 999)
				usleep(100 * 1000);
		}
		_exit(0);
	}
	close(p[0]);
	c->go = p[1];
}

static void child_go(struct child *c)
{
	assert_int_equal(write(c->go, "g", 1), 1);
	close(c->go);
}

static void child_reap(struct child *c)
{
	int status;

	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

struct counter {
	uint64_t samples, bad_pid, not_raw, unordered;
	uint64_t last_time;
	pid_t pid;
	useconds_t stall_first_us;
};

static int count_sample(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	struct counter *c = ctx;

	if (c->stall_first_us && c->samples == 0)
		usleep(c->stall_first_us); /* a slow reader: the small ring overflows meanwhile */
	c->samples++;
	if (c->pid && rec->sample.pid != (uint32_t)c->pid)
		c->bad_pid++;
	if (!rec->sample.raw.data || rec->sample.raw.size < 8)
		c->not_raw++;
	if (rec->sample.time < c->last_time)
		c->unordered++;
	c->last_time = rec->sample.time;
	return 0;
}

/* getppid_evlist leads a group with the tracepoint: a counting task-clock as its member. */
static bool in_group;

static struct psc_evlist *getppid_evlist(struct psc_cpumap *cpus, struct psc_threadmap *threads,
					 size_t pages)
{
	struct perf_event_attr m = {
		.size = sizeof(m),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	struct psc_evsel *leader, *member;
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_TRACEPOINT,
		.config = (uint64_t)getppid_id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
		.disabled = 1,
	};
	struct psc_evlist *evlist = psc_evlist__new();
	PSC_OPTS(psc_evlist_open_opts, oo, .inherit = false);
	PSC_OPTS(psc_mmap_opts, mo, .pages = pages);

	assert_non_null(evlist);
	leader = psc_evsel__new(&a, "syscalls:sys_enter_getppid");
	assert_int_equal(psc_evlist__add(evlist, leader), 0);
	if (in_group) {
		member = psc_evsel__new(&m, "task-clock");
		assert_int_equal(psc_evsel__set_leader(member, leader), 0);
		assert_int_equal(psc_evlist__add(evlist, member), 0);
	}
	assert_int_equal(session_config_evlist(evlist, pages, SIDEBAND_COMM), 0);
	assert_int_equal(psc_evlist__set_maps(evlist, cpus, threads), 0);
	assert_int_equal(psc_evlist__open(evlist, &oo), 0);
	assert_int_equal(psc_evlist__mmap(evlist, &mo), 0);
	return evlist;
}

/* Session options trace_child passes on (0: the defaults). */
static uint64_t child_slack_ns, child_backlog_max;

/* Traces one child making n calls; returns the session's stats. */
static void trace_child(long n, size_t pages, bool order, const char *filter, bool system_wide,
			struct counter *c, struct session_stats *st, enum session_end *end)
{
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads;
	struct psc_evlist *evlist;
	struct session *s;
	struct child ch;
	char f[64];

	child_start(&ch, n);
	c->pid = ch.pid;
	threads = system_wide ? psc_threadmap__new_any() : psc_threadmap__new_tid(ch.pid);
	evlist = getppid_evlist(cpus, threads, pages);
	if (filter) {
		snprintf(f, sizeof(f), "%s%d", filter, (int)ch.pid);
		assert_int_equal(psc_evsel__apply_filter(psc_evlist__at(evlist, 0), f), 0);
	}
	{
		PSC_OPTS(session_opts, so, .order = order, .watch_pid = ch.pid,
			 .quiet_stats = true, .slack_ns = child_slack_ns,
			 .backlog_max = child_backlog_max);
		const struct session_hooks hooks = { .ctx = c, .sample = count_sample };

		s = session__new(evlist, &so, &hooks);
	}
	assert_non_null(s);
	/* Enabled before the child runs (run() enables again, harmlessly). */
	assert_int_equal(psc_evlist__enable(evlist), 0);
	child_go(&ch);
	assert_int_equal(session__run(s), 0);
	child_reap(&ch);
	session__stats(s, st);
	*end = session__end(s);
	assert_int_equal(session__evsel_samples(s, 0), c->samples);
	/* the total also has side-band records (the child's EXIT) lost in a full ring */
	assert_true(session__evsel_lost(s, 0) <= st->lost);
	st->lost = session__evsel_lost(s, 0);
	session__delete(s);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

static void test_exact_count(void **state)
{
	struct counter c = { 0 };
	struct session_stats st;
	enum session_end end;

	/* 1024 pages (4 MiB) per CPU hold all 20000 records (~112 bytes each): even a consumer
	 * starved by a loaded machine loses none, so the exact count tests the code, not the
	 * scheduler */
	trace_child(20000, 1024, false, NULL, false, &c, &st, &end);
	assert_int_equal(end, SESSION_PROCESS);
	assert_int_equal(st.lost, 0);
	assert_int_equal(c.samples, 20000);
	assert_int_equal(c.bad_pid, 0);
	assert_int_equal(c.not_raw, 0);
}

static void test_exact_count_filter_system_wide_ordered(void **state)
{
	struct counter c = { 0 };
	struct session_stats st;
	enum session_end end;

	/* system wide, the kernel filter keeps only the child's calls; buffers as in
	 * test_exact_count */
	trace_child(20000, 1024, true, "common_pid==", true, &c, &st, &end);
	assert_int_equal(st.lost, 0);
	assert_int_equal(c.samples, 20000);
	assert_int_equal(c.bad_pid, 0);
	assert_int_equal(c.unordered, st.out_of_order);
	assert_int_equal(st.out_of_order, 0);
}

/*
 * Records through the backlog: with a watermark a minute back, each round delivers nothing and
 * copies the oldest of what it read to memory while more than a quarter of the ring waits in
 * it; the last round delivers it
 * all, backlog and ring, in time order, exactly. (The ring holds all 20000 records, so a loaded
 * machine cannot turn this into a loss.)
 */
static void test_backlog_exact(void **state)
{
	struct counter c = { 0 };
	struct session_stats st;
	enum session_end end;

	child_slack_ns = 60ull * 1000000000;
	child_pinned_napping = true; /* one ring past its quarter, while the reader runs */
	trace_child(20000, 1024, true, NULL, false, &c, &st, &end);
	child_pinned_napping = false;
	child_slack_ns = 0;
	assert_int_equal(end, SESSION_PROCESS);
	assert_int_equal(st.lost, 0);
	assert_int_equal(c.samples, 20000);
	assert_int_equal(c.unordered, 0);
	assert_true(st.backlog_records > 0);
	assert_true(st.backlog_peak > 0);
	assert_int_equal(st.backlog_full, 0);
}

/*
 * Past the bound, records stay in their ring (which holds them all here) and come out after the
 * backlog's, still exact and in order; the bound is never passed.
 */
static void test_backlog_bound(void **state)
{
	struct counter c = { 0 };
	struct session_stats st;
	enum session_end end;

	child_slack_ns = 60ull * 1000000000;
	child_backlog_max = 256 * 1024;
	child_pinned_napping = true;
	trace_child(20000, 1024, true, NULL, false, &c, &st, &end);
	child_pinned_napping = false;
	child_slack_ns = child_backlog_max = 0;
	assert_int_equal(st.lost, 0);
	assert_int_equal(c.samples, 20000);
	assert_int_equal(c.unordered, 0);
	assert_true(st.backlog_full > 0);
	assert_true(st.backlog_mem_peak <= 256 * 1024);
}

/* ---- extra fds ---- */

struct fdlog {
	int in_calls, in_bytes, ends, late_calls, stop_after;
	int late_fd; /* registered unpolled; polled once the first byte came */
	struct session *s;
};

static int on_in(void *ctx, int fd, uint32_t revents)
{
	struct fdlog *l = ctx;
	char b;

	if (revents & SESSION_FD_END) {
		l->ends++;
		return 0;
	}
	l->in_calls++;
	assert_true(revents & EPOLLIN);
	if (read(fd, &b, 1) == 1)
		l->in_bytes++;
	if (l->in_bytes == 1)
		assert_int_equal(session__mod_fd(l->s, l->late_fd, EPOLLIN), 0);
	return l->in_bytes >= l->stop_after ? 1 : 0;
}

static int on_late(void *ctx, int fd, uint32_t revents)
{
	struct fdlog *l = ctx;
	char b;

	if (revents & SESSION_FD_END) {
		l->ends++;
		return 0;
	}
	l->late_calls++;
	if (read(fd, &b, 1) != 1)
		return -EIO;
	return 0;
}

static int never(void *ctx, int fd, uint32_t revents)
{
	(void)ctx;
	(void)fd;
	(void)revents;
	fail_msg("a removed fd was called");
	return -EINVAL;
}

/*
 * An fd polled for EPOLLIN is served by the loop and can stop it (1); an fd registered with no
 * events is not polled until session__mod_fd asks; a removed one is never called; each still
 * registered at the end gets SESSION_FD_END once.
 */
static void test_extra_fds(void **state)
{
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	struct psc_evlist *evlist = getppid_evlist(cpus, threads, 8);
	PSC_OPTS(session_opts, so, .quiet_stats = true, .duration_s = 30);
	struct fdlog l = { .stop_after = 3 };
	int in[2], late[2], gone[2];
	struct session *s;

	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(late), 0);
	assert_int_equal(pipe(gone), 0);
	s = session__new(evlist, &so, NULL);
	assert_non_null(s);
	l.s = s;
	l.late_fd = late[0];
	assert_int_equal(session__add_fd(s, in[0], EPOLLIN, on_in, &l), 0);
	assert_int_equal(session__add_fd(s, in[0], EPOLLIN, on_in, &l), -EEXIST);
	assert_int_equal(session__add_fd(s, late[0], 0, on_late, &l), 0);
	assert_int_equal(session__add_fd(s, gone[0], EPOLLIN, never, &l), 0);
	assert_int_equal(session__remove_fd(s, gone[0]), 0);
	assert_int_equal(session__remove_fd(s, gone[0]), -ENOENT);
	assert_int_equal(write(gone[1], "x", 1), 1);
	assert_int_equal(write(late[1], "x", 1), 1); /* readable, but not polled yet */
	assert_int_equal(write(in[1], "abc", 3), 3);
	assert_int_equal(session__run(s), 0);
	assert_int_equal(session__end(s), SESSION_HOOK);
	assert_int_equal(l.in_bytes, 3);
	assert_int_equal(l.late_calls, 1);
	assert_int_equal(l.ends, 2);
	session__delete(s); /* the END calls came already: none again */
	assert_int_equal(l.ends, 2);
	for (int i = 0; i < 2; i++) {
		close(in[i]);
		close(late[i]);
		close(gone[i]);
	}
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

static void test_lost_is_exact(void **state)
{
	struct counter c = { .stall_first_us = 300000 };
	struct session_stats st;
	enum session_end end;
	const long n = 200000;

	/* one page per CPU ring and a reader that stalls: most events cannot be kept */
	trace_child(n, 1, false, NULL, false, &c, &st, &end);
	print_message("# %llu delivered + %llu lost (of %ld)\n", (unsigned long long)c.samples,
		      (unsigned long long)st.lost, n);
	assert_true(st.lost > 0);
	assert_int_equal(c.samples + st.lost, n);
}

static int stop_on_interval_calls;
static void send_term(void *ctx)
{
	(void)ctx;
	if (stop_on_interval_calls++ == 0)
		kill(getpid(), SIGTERM);
}

static void test_sigterm_and_duration(void **state)
{
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	struct psc_evlist *evlist = getppid_evlist(cpus, threads, 8);
	struct session *s;
	PSC_OPTS(session_opts, so, .interval_ms = 20, .quiet_stats = true);
	struct session_hooks hooks = { .interval = send_term };

	s = session__new(evlist, &so, &hooks);
	assert_non_null(s);
	assert_int_equal(session__run(s), 0);
	assert_int_equal(session__end(s), SESSION_SIGNAL);
	session__delete(s);

	so.interval_ms = 0;
	so.duration_s = 0.05;
	s = session__new(evlist, &so, NULL);
	assert_non_null(s);
	assert_int_equal(session__run(s), 0);
	assert_int_equal(session__end(s), SESSION_DURATION);
	session__delete(s);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

/*
 * A stop in the middle of a long round, and a second one during the drain (issue 19: SIGINT took
 * minutes when each sample's hook was slow). Each sample costs 1 ms here; the first sends
 * SIGTERM, which must end the round within SIG_CHECK_NS, not after all 5000; the 1500th sends
 * another, which must end the drain (over a second long by then), leaving the rest undelivered.
 */
static uint64_t slow_samples;
static int slow_sample(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	(void)ctx, (void)evsel, (void)cpu, (void)rec;
	if (slow_samples == 0 || slow_samples == 1500)
		kill(getpid(), SIGTERM);
	slow_samples++;
	usleep(1000);
	return 0;
}

static void test_stop_in_long_round(void **state)
{
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads;
	struct psc_evlist *evlist;
	struct session *s;
	struct child ch;
	PSC_OPTS(session_opts, so, .quiet_stats = true);
	const struct session_hooks hooks = { .sample = slow_sample };

	(void)state;
	child_start(&ch, 5000);
	threads = psc_threadmap__new_tid(ch.pid);
	evlist = getppid_evlist(cpus, threads, 1024); /* holds all 5000: nothing lost */
	assert_int_equal(psc_evlist__enable(evlist), 0);
	child_go(&ch);
	child_reap(&ch); /* all 5000 in the ring before the session reads one */
	s = session__new(evlist, &so, &hooks);
	assert_non_null(s);
	slow_samples = 0;
	assert_int_equal(session__run(s), 0);
	assert_int_equal(session__end(s), SESSION_SIGNAL);
	/* the second signal was heard within a check period of the 1500th sample */
	assert_true(slow_samples > 1500);
	assert_true(slow_samples < 5000);
	session__delete(s);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

/* A command through common/target: its exit ends the session; its status comes back. */
static void run_command(char **argv, int *run_ret, int *exit_code, enum session_end *end,
			uint64_t *samples)
{
	struct target_spec o = { .command = argv };
	struct target t;
	struct psc_evlist *evlist;
	struct session *s;
	struct counter c = { 0 };
	char title[128];
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_TRACEPOINT,
		.config = (uint64_t)getppid_id,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_RAW,
		.disabled = 1,
	};
	PSC_OPTS(psc_mmap_opts, mo, .pages = 0);

	assert_int_equal(target_setup(&t, &o, NULL, title, sizeof(title)), 0);
	/* inherited events are mmapped per CPU */
	psc_cpumap__put(t.cpus);
	t.cpus = psc_cpumap__new_online();
	evlist = psc_evlist__new();
	assert_int_equal(psc_evlist__add(evlist, psc_evsel__new(&a, "getppid")), 0);
	assert_int_equal(session_config_evlist(evlist, 0, SIDEBAND_COMM), 0);
	assert_int_equal(target_open(&t, evlist, NULL), 0);
	assert_int_equal(psc_evlist__mmap(evlist, &mo), 0);
	{
		PSC_OPTS(session_opts, so, .target = &t, .quiet_stats = true);
		const struct session_hooks hooks = { .ctx = &c, .sample = count_sample };

		s = session__new(evlist, &so, &hooks);
	}
	assert_non_null(s);
	*run_ret = session__run(s);
	*exit_code = session__command_exit(s);
	*end = session__end(s);
	*samples = c.samples;
	session__delete(s);
	target_release(&t);
	psc_evlist__delete(evlist);
}

static void test_command(void **state)
{
	char *ok[] = { "sh", "-c", "exit 3", NULL };
	char *missing[] = { "perfscope-no-such-command", NULL };
	enum session_end end;
	int ret, code;
	uint64_t n;

	run_command(ok, &ret, &code, &end, &n);
	assert_int_equal(ret, 0);
	assert_int_equal(code, 3);
	assert_int_equal(end, SESSION_COMMAND);

	run_command(missing, &ret, &code, &end, &n);
	assert_int_equal(ret, 127);
	assert_int_equal(n, 0);
}

static int setup(void **state)
{
	const char *dir = psc_tracefs__mount();
	char path[512], buf[32];
	ssize_t n;
	int fd;

	if (!dir)
		return 0;
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_getppid/id", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n > 0) {
		buf[n] = 0;
		getppid_id = atoi(buf);
	}
	return 0;
}

#define NEED_TP()                                                                               \
	do {                                                                                    \
		if (getppid_id < 0) {                                                           \
			print_message("# no syscalls:sys_enter_getppid tracepoint (tracefs or " \
				      "CONFIG_FTRACE_SYSCALLS missing)\n");                     \
			skip();                                                                 \
		}                                                                               \
	} while (0)

/*
 * What config_evlist sets for streaming, and what it leaves: an evsel's own wakeup choice (every
 * N events, or its own watermark) is kept; others wake up every quarter ring.
 */
static void test_config_keeps_wakeup(void **state)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.sample_period = 1,
	};
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_evsel *by_events, *by_default;
	const struct perf_event_attr *got;
	long page = sysconf(_SC_PAGESIZE);

	assert_non_null(evlist);
	a.wakeup_events = 16;
	by_events = psc_evsel__new(&a, "every-16");
	a.wakeup_events = 0;
	by_default = psc_evsel__new(&a, "default");
	assert_int_equal(psc_evlist__add(evlist, by_events), 0);
	assert_int_equal(psc_evlist__add(evlist, by_default), 0);
	assert_int_equal(session_config_evlist(evlist, 8, 0), 0);

	got = psc_evsel__attr(by_events);
	assert_int_equal(got->watermark, 0);
	assert_int_equal(got->wakeup_events, 16);
	got = psc_evsel__attr(by_default);
	assert_int_equal(got->watermark, 1);
	assert_int_equal(got->wakeup_watermark, 8 * page / 4);
	for (int i = 0; i < 2; i++) {
		got = psc_evsel__attr(psc_evlist__at(evlist, i));
		assert_true(got->sample_id_all);
		assert_int_equal(got->sample_type & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
						     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU),
				 PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					 PERF_SAMPLE_CPU);
		assert_true(got->use_clockid);
	}
	psc_evlist__delete(evlist);
}

static void t_exact(void **s)
{
	NEED_TP();
	test_exact_count(s);
}
static void t_filter(void **s)
{
	NEED_TP();
	test_exact_count_filter_system_wide_ordered(s);
}
static void t_lost(void **s)
{
	NEED_TP();
	test_lost_is_exact(s);
}
/* The lost count of an event read through its group's PERF_FORMAT_GROUP layout. */
static void t_lost_group(void **s)
{
	NEED_TP();
	in_group = true;
	test_lost_is_exact(s);
	in_group = false;
}
static void t_stop(void **s)
{
	NEED_TP();
	test_sigterm_and_duration(s);
}
static void t_command(void **s)
{
	NEED_TP();
	test_command(s);
}
static void t_backlog(void **s)
{
	NEED_TP();
	test_backlog_exact(s);
}
static void t_backlog_bound(void **s)
{
	NEED_TP();
	test_backlog_bound(s);
}
static void t_stop_long_round(void **s)
{
	NEED_TP();
	test_stop_in_long_round(s);
}
static void t_extra_fds(void **s)
{
	NEED_TP();
	test_extra_fds(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_exact),
		cmocka_unit_test(t_filter),
		cmocka_unit_test(t_lost),
		cmocka_unit_test(t_lost_group),
		cmocka_unit_test(t_stop),
		cmocka_unit_test(t_command),
		cmocka_unit_test(t_backlog),
		cmocka_unit_test(t_backlog_bound),
		cmocka_unit_test(t_extra_fds),
		cmocka_unit_test(t_stop_long_round),
		cmocka_unit_test(test_config_keeps_wakeup),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
