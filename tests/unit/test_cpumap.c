/* Unit tests: CPU-list parsing (ranges, strides, strict errors), multiplexing scaling, opts checks,
 * advice. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "internal.h"

static void expect_cpus(const char *list, const int *cpus, int nr)
{
	struct psc_parse_error err = { .pos = -1 };
	struct psc_cpumap *map = psc_cpumap__parse_syntax(list, &err);

	assert_non_null(map);
	assert_int_equal(psc_cpumap__nr(map), nr);
	for (int i = 0; i < nr; i++)
		assert_int_equal(psc_cpumap__cpu(map, i), cpus[i]);
	psc_cpumap__put(map);
}

static void test_ranges(void **state)
{
	expect_cpus("0", (int[]){ 0 }, 1);
	expect_cpus("0-3", (int[]){ 0, 1, 2, 3 }, 4);
	expect_cpus("0-3,6,8-10", (int[]){ 0, 1, 2, 3, 6, 8, 9, 10 }, 8);
	expect_cpus("6,0", (int[]){ 0, 6 }, 2); /* kept sorted */
	expect_cpus("0-7:2", (int[]){ 0, 2, 4, 6 }, 4);
	expect_cpus("1-10:5", (int[]){ 1, 6 }, 2);
}

static void expect_error(const char *list, int pos, const char *needle)
{
	struct psc_parse_error err = { .pos = -1 };

	errno = 0;
	assert_null(psc_cpumap__parse_syntax(list, &err));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(err.pos, pos);
	if (!strstr(err.msg, needle))
		fail_msg("'%s': message '%s' lacks '%s'", list, err.msg, needle);
}

static void test_errors(void **state)
{
	expect_error("", 0, "empty");
	expect_error("1-0", 0, "goes down");
	expect_error("a", 0, "expected a CPU number");
	expect_error("0,", 2, "expected a CPU number");
	expect_error("0,,1", 2, "expected a CPU number");
	expect_error("0-", 2, "last CPU");
	expect_error("0;1", 1, "unexpected ';'");
	expect_error("1,1", 2, "listed twice");
	expect_error("0-3:0", 4, "stride");
	expect_error("99999", 0, "expected a CPU number");
}

static void test_strict_online(void **state)
{
	struct psc_parse_error err = { .pos = -1 };
	struct psc_cpumap *online = psc_cpumap__new_online();
	char list[32];

	assert_non_null(online);
	assert_true(psc_cpumap__nr(online) >= 1);
	snprintf(list, sizeof(list), "%d", psc_cpumap__cpu(online, psc_cpumap__nr(online) - 1) + 1);
	assert_null(psc_cpumap__parse(list, &err));
	assert_non_null(strstr(err.msg, "not online"));
	assert_non_null(strstr(err.msg, "online CPUs:"));
	psc_cpumap__put(online);
}

static void test_refcount(void **state)
{
	struct psc_cpumap *map = psc_cpumap__new_any();

	assert_int_equal(psc_cpumap__cpu(map, 0), -1);
	assert_ptr_equal(psc_cpumap__get(map), map);
	psc_cpumap__put(map);
	assert_int_equal(psc_cpumap__nr(map), 1); /* still alive */
	psc_cpumap__put(map);
	psc_cpumap__put(NULL);
	assert_int_equal(psc_cpumap__cpu(NULL, 0), -1);
	assert_int_equal(psc_cpumap__idx(NULL, 0), -1);
}

static void test_scaling(void **state)
{
	struct psc_counts full = { .val = 1000, .ena = 100, .run = 100 };
	struct psc_counts half = { .val = 1000, .ena = 200, .run = 100 };
	struct psc_counts never = { .val = 0, .ena = 200, .run = 0 };

	assert_true(psc_counts__scaled(&full) == 1000.0);
	assert_true(psc_counts__running_pct(&full) == 100.0);
	assert_true(psc_counts__scaled(&half) == 2000.0);
	assert_true(psc_counts__running_pct(&half) == 50.0);
	assert_true(psc_counts__scaled(&never) == 0.0);
	assert_true(psc_counts__running_pct(&never) == 0.0);
}

/* The EACCES advice of a process without CAP_PERFMON/CAP_SYS_ADMIN: the paranoid level. */
static bool unprivileged_advice_ok(void)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };
	char buf[512];

	/* drop the effective set only; the test process itself is unchanged (this is a child) */
	if (syscall(SYS_capget, &hdr, data))
		return false;
	for (int i = 0; i < _LINUX_CAPABILITY_U32S_3; i++)
		data[i].effective = 0;
	if (syscall(SYS_capset, &hdr, data))
		return false;
	psc_strerror_open(EACCES, "cycles", buf, sizeof(buf));
	return strstr(buf, "perf_event_paranoid is") && strstr(buf, "CAP_PERFMON") &&
	       strstr(buf, "Run as root");
}

static void test_strerror_advice(void **state)
{
	char buf[512];
	pid_t pid = fork();
	int status;

	assert_true(pid >= 0);
	if (pid == 0)
		_exit(unprivileged_advice_ok() ? 0 : 1);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* with the capabilities (tests run as root), a refusal is not about the paranoid level */
	psc_strerror_open(EPERM, "ftrace:function", buf, sizeof(buf));
	if (geteuid() == 0) {
		assert_non_null(strstr(buf, "although this process has CAP_PERFMON"));
		assert_null(strstr(buf, "Run as root"));
	}
	assert_non_null(strstr(psc_strerror_open(-ENOENT, "cycles", buf, sizeof(buf)),
			       "not supported on this machine"));
	assert_non_null(strstr(psc_strerror_open(EMFILE, NULL, buf, sizeof(buf)), "ulimit -n"));
	assert_true(psc_errno_is_unsupported(-EOPNOTSUPP));
	assert_false(psc_errno_is_unsupported(EACCES));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges),		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_strict_online),	cmocka_unit_test(test_refcount),
		cmocka_unit_test(test_scaling),		cmocka_unit_test(test_strerror_advice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
