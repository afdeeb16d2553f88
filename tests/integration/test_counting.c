/* Integration: real counters on this kernel: software events, groups, unsupported events, CPUs,
 * cgroups, meters. */
#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <perfscope/perfscope.h>

static struct perf_event_attr sw_attr(uint64_t config)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE, .config = config };

	return a;
}

static struct perf_event_attr hw_attr(uint64_t config)
{
	struct perf_event_attr a = { .type = PERF_TYPE_HARDWARE, .config = config };

	return a;
}

/* Uninstrumented: ASan's shadow-memory checks would fault in shadow pages and skew the count. */
__attribute__((no_sanitize_address)) static void touch_pages(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p =
		mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	for (int i = 0; i < n; i++)
		p[i * page] = 1;
	munmap((void *)p, n * page);
}

/* Counts the open evlist around touching `pages` fresh pages, then reads it. */
static void count_touching(struct psc_evlist *evlist, int pages)
{
	assert_int_equal(psc_evlist__enable(evlist), 0);
	touch_pages(pages);
	assert_int_equal(psc_evlist__disable(evlist), 0);
	assert_int_equal(psc_evlist__read(evlist), 0);
}

/* Counts the open evlist around a child that touches `pages` fresh pages and exits. */
static void count_child_touching(struct psc_evlist *evlist, int pages)
{
	int status;
	pid_t child;

	assert_int_equal(psc_evlist__enable(evlist), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		touch_pages(pages);
		_exit(0);
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(psc_evlist__disable(evlist), 0);
	assert_int_equal(psc_evlist__read(evlist), 0);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* A self-monitoring evlist: this thread, any CPU. */
static struct psc_evlist *self_evlist(void)
{
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_any();
	struct psc_threadmap *threads = psc_threadmap__new_tid(gettid());

	assert_non_null(evlist);
	assert_int_equal(psc_evlist__set_maps(evlist, cpus, threads), 0);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return evlist;
}

static void test_page_faults_counted(void **state)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct psc_evlist *evlist = self_evlist();
	struct psc_evsel *pf = psc_evsel__new(&a, "page-faults");
	struct psc_counts c;

	assert_int_equal(psc_evlist__add(evlist, pf), 0);
	assert_int_equal(psc_evlist__open(evlist, NULL), 0);
	count_touching(evlist, 500);
	assert_int_equal(psc_evsel__counts(pf, 0, 0, &c), 0);
	/* exactly the 500 touched pages, plus at most a few from the test's own code */
	assert_in_range(c.val, 500, 520);
	assert_true(c.ena > 0 && c.run == c.ena);
	assert_true(c.id != 0);
	assert_ptr_equal(psc_evlist__evsel_by_id(evlist, c.id), pf);
	psc_evlist__delete(evlist);
}

static void test_group_one_read(void **state)
{
	struct perf_event_attr a0 = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr a1 = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr a2 = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	struct psc_evlist *evlist = self_evlist();
	struct psc_evsel *leader = psc_evsel__new(&a0, "task-clock");
	struct psc_evsel *pf = psc_evsel__new(&a1, "page-faults");
	struct psc_evsel *cs = psc_evsel__new(&a2, "context-switches");
	struct psc_counts c;

	assert_int_equal(psc_evsel__set_leader(pf, leader), 0);
	assert_int_equal(psc_evsel__set_leader(cs, leader), 0);
	assert_int_equal(psc_evsel__set_leader(leader, pf), -EINVAL); /* no nesting */
	psc_evlist__add(evlist, leader);
	psc_evlist__add(evlist, pf);
	psc_evlist__add(evlist, cs);
	assert_int_equal(psc_evlist__open(evlist, NULL), 0);
	assert_true(psc_evsel__attr(leader)->read_format & PERF_FORMAT_GROUP);
	assert_int_equal(psc_evlist__enable(evlist), 0);
	touch_pages(100);
	usleep(2000); /* one voluntary switch at least */
	psc_evlist__disable(evlist);
	/* one read(2) of the leader fills every member */
	assert_int_equal(psc_evsel__read_group(leader, 0, 0), 0);
	psc_evsel__counts(pf, 0, 0, &c);
	assert_in_range(c.val, 100, 130);
	psc_evsel__counts(cs, 0, 0, &c);
	assert_true(c.val >= 1);
	psc_evsel__counts(leader, 0, 0, &c);
	assert_true(c.val > 0);
	/* a member cannot be read on its own once grouped */
	assert_int_equal(psc_evsel__read(pf, 0, 0, NULL), -EINVAL);
	psc_evlist__delete(evlist);
}

/*
 * Extra read_format bits an evsel may carry: the streaming session adds PERF_FORMAT_LOST to every
 * event, which puts a lost count after the id of each value the kernel returns.
 */
static void test_read_with_lost_format(void **state)
{
	struct perf_event_attr a0 = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr a1 = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr a2 = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct psc_evlist *evlist = self_evlist();
	struct psc_evsel *pf, *leader, *member;
	struct psc_counts c;
	int err;

	a0.read_format = a1.read_format = a2.read_format = PERF_FORMAT_LOST;
	pf = psc_evsel__new(&a0, "page-faults");
	leader = psc_evsel__new(&a1, "task-clock");
	member = psc_evsel__new(&a2, "page-faults");
	assert_int_equal(psc_evsel__set_leader(member, leader), 0);
	psc_evlist__add(evlist, pf);
	psc_evlist__add(evlist, leader);
	psc_evlist__add(evlist, member);
	err = psc_evlist__open(evlist, NULL);
	if (err == -EINVAL) {
		print_message("# skip: PERF_FORMAT_LOST needs Linux 6.0\n");
		psc_evlist__delete(evlist);
		skip();
	}
	assert_int_equal(err, 0);
	count_touching(evlist, 100);
	assert_int_equal(psc_evsel__counts(pf, 0, 0, &c), 0);
	assert_in_range(c.val, 100, 130);
	assert_true(c.ena > 0 && c.run == c.ena);
	assert_ptr_equal(psc_evlist__evsel_by_id(evlist, c.id), pf);
	assert_int_equal(psc_evsel__counts(member, 0, 0, &c), 0);
	assert_in_range(c.val, 100, 130);
	assert_ptr_equal(psc_evlist__evsel_by_id(evlist, c.id), member);
	assert_int_equal(psc_evsel__counts(leader, 0, 0, &c), 0);
	assert_true(c.val > 0);
	assert_ptr_equal(psc_evlist__evsel_by_id(evlist, c.id), leader);
	psc_evlist__delete(evlist);
}

/* An evsel alone whose attr asks for PERF_FORMAT_GROUP itself is read as a group of one. */
static void test_lone_evsel_with_group_format(void **state)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct psc_evlist *evlist = self_evlist();
	struct psc_evsel *pf;
	struct psc_counts c;

	a.read_format = PERF_FORMAT_GROUP;
	pf = psc_evsel__new(&a, "page-faults");
	assert_int_equal(psc_evlist__add(evlist, pf), 0);
	assert_int_equal(psc_evlist__open(evlist, NULL), 0);
	count_touching(evlist, 100);
	assert_int_equal(psc_evsel__counts(pf, 0, 0, &c), 0);
	assert_in_range(c.val, 100, 130);
	assert_true(c.ena > 0 && c.run == c.ena);
	assert_ptr_equal(psc_evlist__evsel_by_id(evlist, c.id), pf);
	psc_evlist__delete(evlist);
}

/* A child process with two threads; the second one exits when `go` is written. */
struct two_threads {
	pid_t pid, tid; /* the process, its second thread */
	int go, end;
};

static int thread_fd;

static void *second_thread(void *arg)
{
	pid_t tid = gettid();
	char b;

	(void)arg;
	if (write(thread_fd, &tid, sizeof(tid)) != sizeof(tid) || read(thread_fd, &b, 1) != 1)
		_exit(1);
	return NULL;
}

static void two_threads_start(struct two_threads *t)
{
	int sv[2], end[2];
	pthread_t th;
	char b;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	assert_int_equal(pipe(end), 0);
	t->pid = fork();
	assert_true(t->pid >= 0);
	if (t->pid == 0) {
		close(sv[0]);
		close(end[1]);
		thread_fd = sv[1];
		if (pthread_create(&th, NULL, second_thread, NULL) || pthread_join(th, NULL))
			_exit(1);
		if (read(end[0], &b, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(sv[1]);
	close(end[0]);
	t->go = sv[0];
	t->end = end[1];
	assert_int_equal(read(t->go, &t->tid, sizeof(t->tid)), sizeof(t->tid));
}

/* Lets the second thread exit and waits until the kernel no longer lists it. */
static void two_threads_drop_second(struct two_threads *t)
{
	char path[64];

	assert_int_equal(write(t->go, "g", 1), 1);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)t->pid, (int)t->tid);
	while (access(path, F_OK) == 0)
		usleep(1000);
}

static void two_threads_end(struct two_threads *t)
{
	int status;

	close(t->end);
	close(t->go);
	assert_int_equal(waitpid(t->pid, &status, 0), t->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/*
 * A thread of the map that exits before the events are opened (-p of a process whose threads
 * come and go): there is nothing of it to count, and the open goes on with the others; only a
 * map whose every thread is gone fails, with ESRCH.
 */
static void test_thread_gone_before_open(void **state)
{
	struct perf_event_attr a0 = sw_attr(PERF_COUNT_SW_TASK_CLOCK);
	struct perf_event_attr a1 = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr a2 = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_any();
	struct psc_threadmap *threads;
	struct psc_evsel *leader, *member, *alone;
	struct two_threads t;
	int gone = -1;

	two_threads_start(&t);
	threads = psc_threadmap__new_pid(t.pid);
	assert_non_null(threads);
	assert_int_equal(psc_threadmap__nr(threads), 2);
	for (int i = 0; i < 2; i++)
		if (psc_threadmap__tid(threads, i) == t.tid)
			gone = i;
	assert_true(gone >= 0);
	two_threads_drop_second(&t);

	leader = psc_evsel__new(&a0, "task-clock");
	member = psc_evsel__new(&a1, "page-faults");
	alone = psc_evsel__new(&a2, "context-switches");
	assert_int_equal(psc_evsel__set_leader(member, leader), 0);
	psc_evlist__add(evlist, leader);
	psc_evlist__add(evlist, member);
	psc_evlist__add(evlist, alone);
	assert_int_equal(psc_evlist__set_maps(evlist, cpus, threads), 0);
	assert_int_equal(psc_evlist__open(evlist, NULL), 0);
	assert_int_equal(psc_evsel__fd(leader, 0, gone), -1);
	assert_int_equal(psc_evsel__fd(member, 0, gone), -1);
	assert_int_equal(psc_evsel__fd(alone, 0, gone), -1);
	assert_true(psc_evsel__fd(leader, 0, !gone) >= 0);
	assert_int_equal(psc_evlist__enable(evlist), 0);
	assert_int_equal(psc_evlist__disable(evlist), 0);
	assert_int_equal(psc_evlist__read(evlist), 0);
	psc_evlist__close(evlist);

	/* the whole process gone: nothing can be counted */
	two_threads_end(&t);
	assert_int_equal(psc_evlist__open(evlist, NULL), -ESRCH);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

/* On machines without a PMU hardware events fail; with skip_unsupported the rest still count. */
static void test_unsupported_skipped(void **state)
{
	struct perf_event_attr hw = hw_attr(PERF_COUNT_HW_CPU_CYCLES);
	struct perf_event_attr sw = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct psc_evlist *evlist = self_evlist();
	struct psc_evsel *cycles = psc_evsel__new(&hw, "cycles");
	struct psc_evsel *pf = psc_evsel__new(&sw, "page-faults");
	int probe = psc_attr__probe(&hw);
	struct psc_counts c;

	psc_evlist__add(evlist, cycles);
	psc_evlist__add(evlist, pf);
	PSC_OPTS(psc_evlist_open_opts, oo, .skip_unsupported = true);
	assert_int_equal(psc_evlist__open(evlist, &oo), 0);
	if (probe == 0) {
		print_message("# hardware PMU present: cycles opened too\n");
		assert_int_equal(psc_evlist__nr_open(evlist), 2);
	} else {
		assert_true(psc_errno_is_unsupported(probe));
		assert_int_equal(psc_evlist__nr_open(evlist), 1);
		assert_false(psc_evsel__is_open(cycles));
		assert_int_equal(psc_evsel__open_errno(cycles), -probe);
	}
	psc_evlist__enable(evlist);
	touch_pages(10);
	psc_evlist__disable(evlist);
	assert_int_equal(psc_evlist__read(evlist), 0);
	psc_evsel__counts(pf, -1, -1, &c);
	assert_true(c.val >= 10);
	psc_evlist__delete(evlist);
}

/*
 * A group whose middle member cannot be opened: the group read has only the members that are
 * there, and each value still lands on its own evsel (page-faults and minor-faults agree, the
 * context switches of a page-touching loop are few).
 */
static void test_group_with_missing_member(void **state)
{
	struct perf_event_attr a_pf = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr a_bad = { .type = PERF_TYPE_SOFTWARE, .config = 0xdead };
	struct perf_event_attr a_cs = sw_attr(PERF_COUNT_SW_CONTEXT_SWITCHES);
	struct perf_event_attr a_min = sw_attr(PERF_COUNT_SW_PAGE_FAULTS_MIN);
	struct psc_evlist *evlist = self_evlist();
	struct psc_evsel *pf = psc_evsel__new(&a_pf, "page-faults");
	struct psc_evsel *bad = psc_evsel__new(&a_bad, "bogus");
	struct psc_evsel *cs = psc_evsel__new(&a_cs, "context-switches");
	struct psc_evsel *min = psc_evsel__new(&a_min, "minor-faults");
	struct psc_counts c_pf, c_cs, c_min;

	assert_int_equal(psc_evsel__set_leader(bad, pf), 0);
	assert_int_equal(psc_evsel__set_leader(cs, pf), 0);
	assert_int_equal(psc_evsel__set_leader(min, pf), 0);
	psc_evlist__add(evlist, pf);
	psc_evlist__add(evlist, bad);
	psc_evlist__add(evlist, cs);
	psc_evlist__add(evlist, min);
	PSC_OPTS(psc_evlist_open_opts, oo, .skip_unsupported = true);
	assert_int_equal(psc_evlist__open(evlist, &oo), 0);
	assert_int_equal(psc_evlist__nr_open(evlist), 3);
	assert_false(psc_evsel__is_open(bad));
	for (int round = 0; round < 2; round++) {
		psc_evlist__reset(evlist);
		psc_evlist__enable(evlist);
		touch_pages(200);
		psc_evlist__disable(evlist);
		assert_int_equal(psc_evlist__read(evlist), 0);
		psc_evsel__counts(pf, 0, 0, &c_pf);
		psc_evsel__counts(cs, 0, 0, &c_cs);
		psc_evsel__counts(min, 0, 0, &c_min);
		assert_in_range(c_pf.val, 200, 230);
		assert_in_range(c_min.val, 200, 230);
		assert_true(c_cs.val < 50);
		/* every member knows its kernel id, learnt from the read or asked for */
		assert_int_equal(c_min.id, psc_evsel__id(min, 0, 0));
		assert_true(c_min.id != 0 && c_min.id != c_pf.id && c_min.id != c_cs.id);
	}
	psc_evlist__delete(evlist);
}

/* inherit: counters follow the children created after open, their counts added at exit. */
static void test_inherit_counts_children(void **state)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct psc_evlist *evlist = self_evlist();
	struct psc_evsel *pf = psc_evsel__new(&a, "page-faults");
	struct psc_counts c;

	psc_evlist__add(evlist, pf);
	PSC_OPTS(psc_evlist_open_opts, oo, .inherit = true);
	assert_int_equal(psc_evlist__open(evlist, &oo), 0);
	count_child_touching(evlist, 500);
	psc_evsel__counts(pf, -1, -1, &c);
	assert_true(c.val >= 500);
	psc_evlist__delete(evlist);

	/* a group with inherit: the member's count, children included, is read too */
	struct perf_event_attr b = sw_attr(PERF_COUNT_SW_PAGE_FAULTS_MIN);
	struct psc_evsel *leader, *member;

	evlist = self_evlist();
	leader = psc_evsel__new(&a, "page-faults");
	member = psc_evsel__new(&b, "minor-faults");
	psc_evlist__add(evlist, leader);
	psc_evlist__add(evlist, member);
	assert_int_equal(psc_evsel__set_leader(member, leader), 0);
	assert_int_equal(psc_evlist__open(evlist, &oo), 0);
	count_child_touching(evlist, 500);
	psc_evsel__counts(leader, -1, -1, &c);
	assert_true(c.val >= 500);
	psc_evsel__counts(member, -1, -1, &c);
	if (c.val < 500)
		print_message("# inherited group member minor-faults read %llu\n",
			      (unsigned long long)c.val);
	assert_true(c.val >= 500);
	psc_evlist__delete(evlist);
}

/* add_specs keeps the groups the list wrote ({a,b}), or makes one group of all when asked. */
static void test_add_specs_groups(void **state)
{
	struct psc_parse_error err;
	struct psc_event_list *specs = NULL;
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_evsel *e[5];

	assert_int_equal(
		psc_parse_events("cs,{page-faults,minor-faults},task-clock", NULL, &specs, &err),
		0);
	assert_int_equal(psc_evlist__add_specs(evlist, specs, false), 0);
	/* appended after what is there: the second time round, leaders are the new evsels */
	assert_int_equal(psc_evlist__add_specs(evlist, specs, false), 0);
	assert_int_equal(psc_evlist__nr(evlist), 8);
	for (int i = 0; i < 4; i++)
		e[i] = psc_evlist__at(evlist, 4 + i);
	assert_ptr_equal(psc_evsel__leader(e[0]), e[0]);
	assert_ptr_equal(psc_evsel__leader(e[1]), e[1]);
	assert_ptr_equal(psc_evsel__leader(e[2]), e[1]);
	assert_ptr_equal(psc_evsel__leader(e[3]), e[3]);
	assert_ptr_equal(psc_evsel__leader(psc_evlist__at(evlist, 2)), psc_evlist__at(evlist, 1));
	psc_evlist__delete(evlist);

	evlist = psc_evlist__new();
	assert_int_equal(psc_evlist__add_specs(evlist, specs, true), 0);
	e[4] = psc_evlist__at(evlist, 0);
	for (int i = 0; i < 4; i++)
		assert_ptr_equal(psc_evsel__leader(psc_evlist__at(evlist, i)), e[4]);
	psc_evlist__delete(evlist);
	psc_event_list__delete(specs);
}

/* Without skip_unsupported, a failure rolls back every fd the open made. */
static void test_failed_open_rolls_back(void **state)
{
	struct perf_event_attr ok = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	struct perf_event_attr bad = { .type = PERF_TYPE_SOFTWARE, .config = 0xdead };
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	int before = count_fds();

	psc_evlist__set_maps(evlist, cpus, threads);
	psc_evlist__add(evlist, psc_evsel__new(&ok, "page-faults"));
	psc_evlist__add(evlist, psc_evsel__new(&bad, "bogus"));
	assert_true(psc_evlist__open(evlist, NULL) < 0);
	assert_int_equal(psc_evlist__nr_open(evlist), 0);
	assert_int_equal(count_fds(), before);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

static void test_per_cpu_system_wide(void **state)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	struct psc_evsel *clk = psc_evsel__new(&a, "cpu-clock");

	psc_evlist__set_maps(evlist, cpus, threads);
	psc_evlist__add(evlist, clk);
	assert_int_equal(psc_evlist__open(evlist, NULL), 0);
	psc_evlist__enable(evlist);
	usleep(50000);
	psc_evlist__disable(evlist);
	assert_int_equal(psc_evlist__read(evlist), 0);
	for (int i = 0; i < psc_cpumap__nr(cpus); i++) {
		struct psc_counts c;

		psc_evsel__counts(clk, i, 0, &c);
		/* cpu-clock counts wall time on every CPU, idle or not */
		assert_true(c.val >= 40000000ull);
	}
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

/* One CPU switched off while the others count: its count stands still, then goes on. */
static void test_enable_disable_cpu(void **state)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_CPU_CLOCK);
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	struct psc_evsel *clk = psc_evsel__new(&a, "cpu-clock");
	struct psc_counts c0, c1, d0, d1;
	int last;

	(void)state;
	if (psc_cpumap__nr(cpus) < 2) {
		print_message("# one CPU online: nothing to switch off beside it\n");
		psc_evlist__delete(evlist);
		psc_cpumap__put(cpus);
		psc_threadmap__put(threads);
		psc_evsel__delete(clk);
		skip();
	}
	last = psc_cpumap__nr(cpus) - 1;
	psc_evlist__set_maps(evlist, cpus, threads);
	psc_evlist__add(evlist, clk);
	assert_int_equal(psc_evlist__open(evlist, NULL), 0);
	psc_evlist__enable(evlist);
	assert_int_equal(psc_evlist__disable_cpu(evlist, psc_cpumap__cpu(cpus, last)), 0);
	assert_int_equal(psc_evlist__read(evlist), 0);
	psc_evsel__counts(clk, 0, 0, &c0);
	psc_evsel__counts(clk, last, 0, &c1);
	usleep(30000);
	assert_int_equal(psc_evlist__read(evlist), 0);
	psc_evsel__counts(clk, 0, 0, &d0);
	psc_evsel__counts(clk, last, 0, &d1);
	assert_true(d0.val - c0.val >= 20000000ull); /* CPU 0 went on counting wall time */
	assert_int_equal(d1.val, c1.val); /* the one switched off did not */
	assert_int_equal(psc_evlist__enable_cpu(evlist, psc_cpumap__cpu(cpus, last)), 0);
	usleep(30000);
	assert_int_equal(psc_evlist__read(evlist), 0);
	psc_evsel__counts(clk, last, 0, &d1);
	assert_true(d1.val - c1.val >= 20000000ull);
	/* a CPU the events are not on, an index outside the map */
	assert_int_equal(psc_evlist__disable_cpu(evlist, 100000), -ENOENT);
	assert_int_equal(psc_evsel__disable_cpu(clk, psc_cpumap__nr(cpus)), -EINVAL);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
}

/* The cgroup2 mount from /proc/mounts, or NULL. */
static char *cgroup2_mount(void)
{
	static char dir[256];
	char line[512], fs[64];
	FILE *f = fopen("/proc/mounts", "r");
	char *found = NULL;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%*s %255s %63s", dir, fs) == 2 && !strcmp(fs, "cgroup2")) {
			found = dir;
			break;
		}
	if (f)
		fclose(f);
	return found;
}

/*
 * A cgroup of our own with a child in it that makes exactly 500 page faults and waits: counting the
 * cgroup on every CPU sees those faults, and nothing of this process outside it.
 */
static void test_cgroup_target(void **state)
{
	struct perf_event_attr a = sw_attr(PERF_COUNT_SW_PAGE_FAULTS);
	char *mnt = cgroup2_mount(), path[320], procs[340], pid_s[16];
	int go[2], done[2], cgfd, fd, err, read_err = -1;
	bool moved, ran = false, removed;
	struct psc_evlist *evlist;
	struct psc_cpumap *cpus;
	struct psc_threadmap *threads;
	struct psc_evsel *pf;
	struct psc_counts c = { 0 };
	pid_t child;
	char b = 0;

	assert_int_equal(psc_cgroup__open("no/such/cgroup/here"), -ENOENT);
	/* a directory that is no cgroup: refused here, not by every perf_event_open with EBADF */
	assert_int_equal(psc_cgroup__open("/proc"), -ENOTDIR);
	assert_int_equal(psc_cgroup__open(""), -EINVAL);
	snprintf(path, sizeof(path), "%s/perfscope-test-%d", mnt ? mnt : "", (int)getpid());
	if (!mnt || mkdir(path, 0755)) {
		print_message("# skip: no cgroup2 mount where a test group can be made (%s)\n",
			      mnt ? strerror(errno) : "none in /proc/mounts");
		skip();
	}
	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* wait until counted, fault 500 fresh pages, say so, wait to be killed */
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		touch_pages(500);
		if (write(done[1], &b, 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	/* No assertion until the child is killed and the group removed: a failure must not leave
	 * them behind. */
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", path);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)child);
	fd = open(procs, O_WRONLY);
	moved = fd >= 0 && write(fd, pid_s, strlen(pid_s)) > 0;
	if (fd >= 0)
		close(fd);
	cgfd = psc_cgroup__open(path);
	evlist = psc_evlist__new();
	cpus = psc_cpumap__new_online();
	threads = psc_threadmap__new_any();
	pf = psc_evsel__new(&a, "page-faults");
	psc_evlist__set_maps(evlist, cpus, threads);
	psc_evlist__add(evlist, pf);
	PSC_OPTS(psc_evlist_open_opts, oo, .cgroup_fd = cgfd);
	err = cgfd < 0 ? cgfd : psc_evlist__open(evlist, &oo);
	if (moved && !err) {
		psc_evlist__enable(evlist);
		touch_pages(300); /* ours, outside the cgroup: not counted */
		ran = write(go[1], &b, 1) == 1 && read(done[0], &b, 1) == 1;
		psc_evlist__disable(evlist);
		read_err = psc_evlist__read(evlist);
		psc_evsel__counts(pf, -1, -1, &c);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	if (cgfd >= 0)
		close(cgfd);
	close(go[0]);
	close(go[1]);
	close(done[0]);
	close(done[1]);
	removed = rmdir(path) == 0;

	assert_true(moved);
	assert_int_equal(err, 0);
	assert_true(ran);
	assert_int_equal(read_err, 0);
	print_message("# page faults in the cgroup: %llu\n", (unsigned long long)c.val);
	/* the child's 500 and the few of its own code path, none of our 300 */
	assert_true(c.val >= 500 && c.val < 800);
	assert_true(removed);
}

static void fault_100(void *arg)
{
	touch_pages(*(int *)arg);
}

static void test_measure_function(void **state)
{
	struct psc_meter_value v[3];
	struct psc_parse_error err = { .pos = -1 };
	int n = 100;
	int ret = psc_measure(fault_100, &n, "page-faults,instructions,task-clock", v, 3, &err);

	assert_int_equal(ret, 3);
	assert_string_equal(v[0].name, "page-faults");
	assert_true(v[0].supported);
	assert_in_range(v[0].raw, 100, 120);
	if (!v[1].supported)
		assert_true(psc_errno_is_unsupported(v[1].open_errno));
	assert_true(v[2].supported && v[2].raw > 0);

	/* every event countable: the one-shot path, as a group and alone */
	ret = psc_measure(fault_100, &n, "page-faults,task-clock,context-switches", v, 3, &err);
	assert_int_equal(ret, 3);
	assert_string_equal(v[0].name, "page-faults");
	assert_string_equal(v[1].name, "task-clock");
	assert_true(v[0].supported && v[1].supported && v[2].supported);
	assert_in_range(v[0].raw, 100, 120);
	assert_true(v[1].raw > 0 && v[1].ena > 0 && v[1].scaled == (double)v[1].raw);
	ret = psc_measure(fault_100, &n, "minor-faults", v, 1, &err);
	assert_int_equal(ret, 1);
	assert_string_equal(v[0].name, "minor-faults");
	assert_in_range(v[0].raw, 100, 120);

	/* a meter reused: start/stop/read twice, the second reading covers only its own work */
	struct psc_meter *m = psc_meter__new("page-faults,context-switches", NULL, &err);

	assert_non_null(m);
	assert_int_equal(psc_meter__nr(m), 2);
	psc_meter__start(m);
	touch_pages(300);
	psc_meter__stop(m);
	psc_meter__read(m, v, 2);
	assert_in_range(v[0].raw, 300, 320);
	psc_meter__start(m);
	touch_pages(50);
	psc_meter__stop(m);
	psc_meter__read(m, v, 2);
	assert_in_range(v[0].raw, 50, 70);
	psc_meter__delete(m);

	/*
	 * A grouped software clock keeps counting after the first start: members follow their
	 * leader and are never toggled on their own (the kernel would restart the clock from a
	 * stale time and report 0).
	 */
	m = psc_meter__new("page-faults,task-clock", NULL, &err);
	assert_non_null(m);
	for (int i = 0; i < 4; i++) {
		psc_meter__start(m);
		touch_pages(64);
		psc_meter__stop(m);
		assert_int_equal(psc_meter__read(m, v, 2), 2);
		assert_in_range(v[0].raw, 64, 84);
		assert_true(v[1].supported && v[1].raw > 0);
	}
	psc_meter__delete(m);

	/* misuse is refused, not a crash: no function, no room for values, a negative count */
	assert_int_equal(psc_measure(NULL, NULL, "page-faults", v, 1, NULL), -EINVAL);
	assert_int_equal(psc_measure(fault_100, &n, "page-faults", NULL, 1, NULL), -EINVAL);
	assert_int_equal(psc_measure(fault_100, &n, "page-faults", v, -1, NULL), -EINVAL);
	assert_int_equal(psc_measure(fault_100, &n, "page-faults", NULL, 0, NULL), 1);
	assert_int_equal(psc_measure(fault_100, &n, NULL, v, 1, &err), -EINVAL);
	m = psc_meter__new("page-faults", NULL, &err);
	assert_non_null(m);
	assert_int_equal(psc_meter__read(m, NULL, 1), -EINVAL);
	assert_int_equal(psc_meter__read(m, v, -2), -EINVAL);
	assert_int_equal(psc_meter__read(NULL, v, 1), -EINVAL);
	psc_meter__delete(m);

	/* bad event list: NULL, errno, and the parser's message */
	assert_null(psc_meter__new("page-fault", NULL, &err));
	assert_true(err.msg[0] != '\0');
	psc_meter__delete(NULL);
}

static void test_thread_map_of_pid(void **state)
{
	struct psc_threadmap *t = psc_threadmap__new_pid(getpid());

	assert_non_null(t);
	assert_true(psc_threadmap__nr(t) >= 1);
	assert_int_equal(psc_threadmap__tid(t, 0), getpid());
	psc_threadmap__put(t);
	errno = 0;
	assert_null(psc_threadmap__new_pid(999999));
	assert_int_equal(errno, ESRCH);
	assert_null(psc_threadmap__new_tid(999999));
}

/* -p 1,2: the union of two maps, sorted, each thread once; "any" maps refused. */
static void test_thread_map_merge(void **state)
{
	struct two_threads tt;
	struct psc_threadmap *all, *self, *one, *m, *any = psc_threadmap__new_any();

	(void)state;
	two_threads_start(&tt);
	all = psc_threadmap__new_pid(tt.pid); /* a process of two threads */
	self = psc_threadmap__new_tid(tt.pid);
	one = psc_threadmap__new_tid(tt.tid);
	assert_non_null(all);
	m = psc_threadmap__merge(one, self); /* given out of order */
	assert_non_null(m);
	assert_int_equal(psc_threadmap__nr(m), 2);
	assert_true(psc_threadmap__tid(m, 0) < psc_threadmap__tid(m, 1));
	psc_threadmap__put(m);
	m = psc_threadmap__merge(all, self); /* self is in all already */
	assert_int_equal(psc_threadmap__nr(all), 2);
	assert_int_equal(psc_threadmap__nr(m), 2);
	for (int i = 0; i < psc_threadmap__nr(m); i++)
		assert_int_equal(psc_threadmap__tid(m, i), psc_threadmap__tid(all, i));
	psc_threadmap__put(m);
	errno = 0;
	assert_null(psc_threadmap__merge(all, any));
	assert_int_equal(errno, EINVAL);
	psc_threadmap__put(all);
	psc_threadmap__put(self);
	psc_threadmap__put(one);
	psc_threadmap__put(any);
	two_threads_drop_second(&tt);
	two_threads_end(&tt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_faults_counted),
		cmocka_unit_test(test_group_one_read),
		cmocka_unit_test(test_read_with_lost_format),
		cmocka_unit_test(test_lone_evsel_with_group_format),
		cmocka_unit_test(test_thread_gone_before_open),
		cmocka_unit_test(test_unsupported_skipped),
		cmocka_unit_test(test_group_with_missing_member),
		cmocka_unit_test(test_inherit_counts_children),
		cmocka_unit_test(test_add_specs_groups),
		cmocka_unit_test(test_failed_open_rolls_back),
		cmocka_unit_test(test_per_cpu_system_wide),
		cmocka_unit_test(test_enable_disable_cpu),
		cmocka_unit_test(test_cgroup_target),
		cmocka_unit_test(test_measure_function),
		cmocka_unit_test(test_thread_map_of_pid),
		cmocka_unit_test(test_thread_map_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
