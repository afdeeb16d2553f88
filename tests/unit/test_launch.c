/* Unit tests of common/launch: a command held before exec, exec failures, exit codes. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "launch.h"

static void test_exit_status_passed(void **state)
{
	char *argv[] = { "sh", "-c", "exit 7", NULL };
	struct launch l;
	int status = 0;

	assert_int_equal(launch_prepare(&l, argv), 0);
	assert_true(l.pid > 0);
	assert_int_equal(launch_go(&l), 0);
	assert_int_equal(launch_wait(&l, &status, 1), 1);
	assert_int_equal(wait_status_to_exit_code(status), 7);
	assert_int_equal(launch_wait(&l, &status, 1), -ECHILD);
	launch_release(&l);
}

static void test_held_until_go(void **state)
{
	char *argv[] = { "true", NULL };
	struct launch l;
	int status;

	assert_int_equal(launch_prepare(&l, argv), 0);
	usleep(20000);
	/* Still waiting in read(): not exited although `true` would have been done by now. */
	assert_int_equal(launch_wait(&l, &status, 0), 0);
	assert_int_equal(launch_go(&l), 0);
	assert_int_equal(launch_wait(&l, &status, 1), 1);
	assert_int_equal(wait_status_to_exit_code(status), 0);
	launch_release(&l);
}

static void test_not_found(void **state)
{
	char *argv[] = { "perfscope-no-such-command-xyz", NULL };
	struct launch l;
	char buf[256];

	assert_int_equal(launch_prepare(&l, argv), 0);
	assert_int_equal(launch_go(&l), -ENOENT);
	assert_int_equal(l.pid, 0); /* reaped */
	assert_int_equal(launch_exec_exit_code(&l), 127);
	launch_strerror(&l, buf, sizeof(buf));
	assert_non_null(strstr(buf, "cannot run 'perfscope-no-such-command-xyz': No such file"));
	launch_release(&l);
}

static void test_not_executable(void **state)
{
	char path[] = "/tmp/psc-launch-XXXXXX";
	char *argv[] = { path, NULL };
	struct launch l;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(launch_prepare(&l, argv), 0);
	assert_int_equal(launch_go(&l), -EACCES);
	assert_int_equal(launch_exec_exit_code(&l), 126);
	launch_release(&l);
	unlink(path);
}

static void test_release_without_go(void **state)
{
	char *argv[] = { "sleep", "100", NULL };
	struct launch l;
	pid_t pid;

	assert_int_equal(launch_prepare(&l, argv), 0);
	pid = l.pid;
	launch_release(&l);
	assert_int_equal(l.pid, 0);
	/* reaped: no such child any more */
	assert_int_equal(waitpid(pid, NULL, WNOHANG), -1);
	assert_int_equal(errno, ECHILD);
}

static void test_signal_exit_code(void **state)
{
	char *argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct launch l;
	int status;
	sigset_t set, old;

	/* A blocked and an ignored signal in the parent must not reach the command. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	signal(SIGPIPE, SIG_IGN);
	assert_int_equal(launch_prepare(&l, argv), 0);
	assert_int_equal(launch_go(&l), 0);
	assert_int_equal(launch_wait(&l, &status, 1), 1);
	assert_int_equal(wait_status_to_exit_code(status), 128 + SIGTERM);
	sigprocmask(SIG_SETMASK, &old, NULL);
	signal(SIGPIPE, SIG_DFL);
	launch_release(&l);
}

/* nohup's ignored SIGHUP must still protect the command launched under it. */
static void test_inherited_ignore_kept(void **state)
{
	char *argv[] = { "sh", "-c", "kill -HUP $$; exit 3", NULL };
	struct launch l;
	int status;

	signal(SIGHUP, SIG_IGN);
	assert_int_equal(launch_prepare(&l, argv), 0);
	assert_int_equal(launch_go(&l), 0);
	assert_int_equal(launch_wait(&l, &status, 1), 1);
	assert_int_equal(wait_status_to_exit_code(status), 3);
	signal(SIGHUP, SIG_DFL);
	launch_release(&l);
}

static void test_pidfd(void **state)
{
	char *argv[] = { "true", NULL };
	struct launch l;
	int fd, status;

	assert_int_equal(launch_prepare(&l, argv), 0);
	fd = launch_pidfd(&l);
	assert_int_equal(launch_go(&l), 0);
	assert_int_equal(launch_wait(&l, &status, 1), 1);
	if (fd >= 0)
		close(fd);
	else
		assert_int_equal(fd, -ENOSYS);
	launch_release(&l);
}

static void test_bad_argv(void **state)
{
	char *argv[] = { NULL };
	struct launch l;

	assert_int_equal(launch_prepare(&l, argv), -EINVAL);
	launch_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exit_status_passed),
		cmocka_unit_test(test_held_until_go),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_not_executable),
		cmocka_unit_test(test_release_without_go),
		cmocka_unit_test(test_signal_exit_code),
		cmocka_unit_test(test_inherited_ignore_kept),
		cmocka_unit_test(test_pidfd),
		cmocka_unit_test(test_bad_argv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
