/* Integration tests of tp.h on the running kernel: formats from tracefs, kernel filters selecting
 * events. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include <perfscope/tp.h>
#include <perfscope/tracefs.h>

#define NR_CALLS 100

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Loads sys:name or skips the test when this kernel has no such tracepoint or no tracefs. */
static struct psc_tp_format *load_or_skip(const char *sys, const char *name)
{
	struct psc_tp_format *fmt = psc_tp_format__load(sys, name);

	if (!fmt) {
		print_message("# tracepoint %s:%s unavailable here (%s)\n", sys, name,
			      strerror(errno));
		skip();
	}
	return fmt;
}

static int open_tp(const struct psc_tp_format *fmt, pid_t pid, int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(attr),
		.config = (uint64_t)psc_tp_format__id(fmt),
		.sample_period = 1,
		.disabled = 1,
	};

	return perf_open(&attr, pid, cpu);
}

/*
 * A child stopped on a pipe: once released it makes NR_CALLS write(devnull, buf, k) calls with
 * k = 1..NR_CALLS and NR_CALLS getppid() calls, then exits.
 */
struct child {
	pid_t pid;
	int go;
};

static void child_start(struct child *c)
{
	int p[2];

	assert_int_equal(pipe(p), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (!c->pid) {
		char buf[NR_CALLS], b;
		int fd = open("/dev/null", O_WRONLY);

		close(p[1]);
		memset(buf, 'x', sizeof(buf));
		if (read(p[0], &b, 1) != 1)
			_exit(1);
		for (int k = 1; k <= NR_CALLS; k++)
			if (write(fd, buf, (size_t)k) != k)
				_exit(2);
		for (int k = 0; k < NR_CALLS; k++)
			syscall(SYS_getppid);
		_exit(0);
	}
	close(p[0]);
	c->go = p[1];
}

static void child_run(struct child *c)
{
	int status = -1;

	assert_int_equal(write(c->go, "g", 1), 1);
	close(c->go);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void child_kill(struct child *c)
{
	close(c->go);
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
}

static uint64_t read_count(int fd)
{
	uint64_t v = 0;

	assert_int_equal(read(fd, &v, sizeof(v)), (ssize_t)sizeof(v));
	return v;
}

/* A per-task counter on sys_enter_write with "count > 50": 50 of the child's 100 writes pass. */
static void test_filter_on_task(void **state)
{
	struct psc_tp_format *fmt = load_or_skip("syscalls", "sys_enter_write");
	struct psc_parse_error err;
	struct child c;
	char filter[128];
	int fd;

	child_start(&c);
	fd = open_tp(fmt, c.pid, -1);
	if (fd < 0) {
		print_message("# cannot open syscalls:sys_enter_write: %s\n", strerror(errno));
		child_kill(&c);
		psc_tp_format__delete(fmt);
		skip();
	}
	snprintf(filter, sizeof(filter), "count > %d && fd > 2", NR_CALLS / 2);
	assert_int_equal(psc_tp__check_filter(fmt, filter, &err), 0);
	assert_int_equal(psc_tp__apply_filter(fmt, fd, filter, &err), 0);
	/* the kernel keeps the first filter of a perf event: a second one is refused, with a reason
	 */
	assert_int_equal(psc_tp__apply_filter(fmt, fd, "count > 0", &err), -EEXIST);
	assert_non_null(strstr(err.msg, "already"));
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	child_run(&c);
	assert_int_equal(read_count(fd), NR_CALLS / 2);
	close(fd);
	psc_tp_format__delete(fmt);
}

/* System-wide on every CPU, "common_pid == child": exactly the child's getppid calls. */
static void test_common_pid_filter_all_cpus(void **state)
{
	struct psc_tp_format *fmt = load_or_skip("syscalls", "sys_enter_getppid");
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	struct psc_parse_error err;
	struct child c;
	char filter[64];
	uint64_t total = 0;
	int fds[256], nfd = 0;

	child_start(&c);
	snprintf(filter, sizeof(filter), "common_pid == %d", (int)c.pid);
	for (int cpu = 0; cpu < ncpu && nfd < 256; cpu++) {
		int fd = open_tp(fmt, -1, cpu);

		if (fd < 0) /* offline CPU */
			continue;
		assert_int_equal(psc_tp__apply_filter(fmt, fd, filter, &err), 0);
		assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
		fds[nfd++] = fd;
	}
	if (!nfd) {
		print_message("# cannot open syscalls:sys_enter_getppid on any CPU\n");
		child_kill(&c);
		psc_tp_format__delete(fmt);
		skip();
	}
	/* the test process itself calls getppid too: the filter must drop those */
	for (int k = 0; k < 10; k++)
		syscall(SYS_getppid);
	child_run(&c);
	for (int i = 0; i < nfd; i++) {
		total += read_count(fds[i]);
		close(fds[i]);
	}
	assert_int_equal(total, NR_CALLS);
	psc_tp_format__delete(fmt);
}

static void test_bad_filter_names_fields(void **state)
{
	struct psc_tp_format *fmt = load_or_skip("syscalls", "sys_enter_write");
	struct psc_parse_error err;
	int fd = open_tp(fmt, 0, -1);

	if (fd < 0) {
		psc_tp_format__delete(fmt);
		skip();
	}
	assert_int_equal(psc_tp__apply_filter(fmt, fd, "cout > 5", &err), -EINVAL);
	print_message("# %s\n", err.msg);
	assert_non_null(strstr(err.msg, "unknown field 'cout'"));
	assert_non_null(strstr(err.msg, "did you mean 'count'"));
	assert_non_null(strstr(err.msg, "syscalls:sys_enter_write has fields:"));
	assert_non_null(strstr(err.msg, "__syscall_nr"));
	assert_non_null(strstr(err.msg, "common_pid"));
	assert_int_equal(err.pos, 0);

	/* a filter the kernel refuses for its type: number compared with a string */
	assert_int_equal(psc_tp__apply_filter(fmt, fd, "count == \"abc\"", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "'count' is a number"));
	close(fd);
	psc_tp_format__delete(fmt);
}

/*
 * Filters the grammar allows but the kernel refuses (a value out of range, a bad CPUS{} list, an
 * unknown symbol after .function): the kernel gives no position, so each predicate is tried on
 * its own and the message points at the one refused, with the event's fields.
 */
static void test_kernel_refused_filter_located(void **state)
{
	struct psc_tp_format *fmt = load_or_skip("syscalls", "sys_enter_write");
	const char *big = "count > 1 && fd == 99999999999999999999999";
	const char *cpus = "(fd == 1 || common_pid == CPUS{zz}) && count > 0";
	struct psc_parse_error err;
	int fd = open_tp(fmt, 0, -1);

	if (fd < 0) {
		psc_tp_format__delete(fmt);
		skip();
	}
	/* the grammar is fine with both */
	assert_int_equal(psc_tp__check_filter(fmt, big, &err), 0);
	assert_int_equal(psc_tp__check_filter(fmt, cpus, &err), 0);

	assert_int_equal(psc_tp__apply_filter(fmt, fd, big, &err), -EINVAL);
	print_message("# %s\n", err.msg);
	assert_int_equal(err.pos, (int)(strstr(big, "fd ==") - big));
	assert_non_null(strstr(err.msg, "the kernel rejected 'fd == 99999999999999999999999'"));
	assert_non_null(strstr(err.msg, "syscalls:sys_enter_write has fields:"));
	/* nothing was set on fd: a good filter still applies */
	assert_int_equal(psc_tp__apply_filter(fmt, fd, "count > 0", &err), 0);
	close(fd);

	/* verify: the same answers before any real event is opened */
	assert_int_equal(psc_tp__verify_filter(fmt, cpus, &err), -EINVAL);
	assert_int_equal(err.pos, (int)(strstr(cpus, "common_pid") - cpus));
	assert_non_null(strstr(err.msg, "'common_pid == CPUS{zz}'"));
	assert_int_equal(psc_tp__verify_filter(fmt, "cout > 1", &err), -EINVAL);
	assert_non_null(strstr(err.msg, "unknown field 'cout'"));
	assert_int_equal(psc_tp__verify_filter(fmt, "fd == 1 && count < 0x10", &err), 0);
	psc_tp_format__delete(fmt);
}

static void test_load_from_tracefs(void **state)
{
	struct psc_tp_format *fmt = load_or_skip("sched", "sched_switch");
	const struct psc_tp_field *f = psc_tp_format__field(fmt, "next_pid");

	assert_non_null(f);
	assert_true(f->is_signed);
	assert_int_equal(f->size, 4);
	assert_true(psc_tp_format__id(fmt) > 0);
	assert_non_null(psc_tp_format__field(fmt, "common_pid"));
	psc_tp_format__delete(fmt);

	errno = 0;
	assert_null(psc_tp_format__load("sched", "no_such_tracepoint_xyz"));
	assert_int_equal(errno, ENOENT);
}

/* Loading a format never mounts tracefs: mount it first, as the CLI does (failure: tests skip). */
static int mount_tracefs(void **state)
{
	psc_tracefs__mount();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_from_tracefs),
		cmocka_unit_test(test_filter_on_task),
		cmocka_unit_test(test_common_pid_filter_all_cpus),
		cmocka_unit_test(test_bad_filter_names_fields),
		cmocka_unit_test(test_kernel_refused_filter_located),
	};

	return cmocka_run_group_tests(tests, mount_tracefs, NULL);
}
