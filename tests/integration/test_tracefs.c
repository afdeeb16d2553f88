/* Integration tests of tracefs.h: parsing never mounts tracefs, psc_tracefs__mount() does. Each
 * case runs in a child with a private mount namespace where tracefs and debugfs are unmounted, so
 * the machine's own mounts are never touched. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include <perfscope/perfscope.h>
#include <perfscope/tp.h>

/* Counts tracefs mounts in this process's namespace; -1 when /proc/self/mounts is unreadable. */
static int nr_tracefs_mounts(void)
{
	char dev[256], dir[4096], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");
	int n = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3)
		n += !strcmp(type, "tracefs");
	fclose(f);
	return n;
}

/*
 * Unmounts every tracefs and debugfs of a fresh private mount namespace (innermost first, as
 * listed last). 0, or 77 when this machine cannot give us one (not root, no CONFIG_TRACING).
 */
static int private_namespace_without_tracefs(void)
{
	char dev[256], dirs[64][512], type[64];
	int nr = 0;
	FILE *f;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 77;
	f = fopen("/proc/self/mounts", "re");
	if (!f)
		return 77;
	while (nr < 64 && fscanf(f, "%255s %511s %63s %*[^\n]", dev, dirs[nr], type) == 3)
		nr += !strcmp(type, "tracefs") || !strcmp(type, "debugfs");
	fclose(f);
	while (nr-- > 0)
		if (umount2(dirs[nr], MNT_DETACH))
			return 77;
	return nr_tracefs_mounts() == 0 ? 0 : 77;
}

/* Runs fn in a child in such a namespace: its exit status is the step that failed, 0 if none. */
static void run_in_namespace(int (*fn)(void), const char *what)
{
	int status = 0;
	pid_t pid;

	if (geteuid() != 0) {
		print_message("# skip: a private mount namespace needs root\n");
		skip();
	}
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ret = private_namespace_without_tracefs();

		_exit(ret ? ret : fn());
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		print_message("# skip: cannot unmount tracefs in a private mount namespace here\n");
		skip();
	}
	if (WEXITSTATUS(status))
		print_message("# %s: step %d failed\n", what, WEXITSTATUS(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

static int no_mount_steps(void)
{
	struct psc_parse_error err;
	struct psc_event_list *list = NULL;

	errno = 0;
	if (psc_tracefs__dir() || errno != ENODEV)
		return 1;
	/* a tracepoint: ENODEV, saying why, with no advice for a CLI */
	if (psc_parse_events("sched:sched_switch", NULL, &list, &err) != -ENODEV || list)
		return 2;
	if (!strstr(err.msg, "tracefs is not mounted") || strstr(err.msg, "perfscope"))
		return 3;
	/* an unknown name looks for close tracepoint names: still no mount */
	if (psc_parse_events("sched_swich", NULL, &list, &err) != -ENOENT)
		return 4;
	/* software events need no tracefs */
	if (psc_parse_events("page-faults", NULL, &list, &err))
		return 5;
	psc_event_list__delete(list);
	errno = 0;
	if (psc_tp_format__load("sched", "sched_switch") || errno != ENODEV)
		return 6;
	if (nr_tracefs_mounts() != 0)
		return 7; /* something above mounted it */
	return 0;
}

/* Parsing, suggestions and loading a format: ENODEV, and nothing is mounted. */
static void test_parse_never_mounts(void **state)
{
	run_in_namespace(no_mount_steps, "parse without tracefs");
}

static int mount_steps(void)
{
	struct psc_parse_error err;
	struct psc_event_list *list = NULL;
	const char *dir = psc_tracefs__mount();
	struct psc_tp_format *fmt;

	if (!dir || strcmp(dir, "/sys/kernel/tracing"))
		return 1;
	if (nr_tracefs_mounts() != 1)
		return 2;
	if (!psc_tracefs__dir() || strcmp(psc_tracefs__dir(), dir))
		return 3;
	if (psc_parse_events("sched:sched_switch", NULL, &list, &err))
		return 4;
	psc_event_list__delete(list);
	fmt = psc_tp_format__load("sched", "sched_switch");
	if (!fmt)
		return 5;
	psc_tp_format__delete(fmt);
	/* mounted already: found, not mounted twice */
	if (!psc_tracefs__mount() || nr_tracefs_mounts() != 1)
		return 6;
	return 0;
}

/* psc_tracefs__mount() mounts at /sys/kernel/tracing; then parsing works, and once only. */
static void test_explicit_mount(void **state)
{
	run_in_namespace(mount_steps, "psc_tracefs__mount");
}

static int unprivileged_steps(void)
{
	/* nobody: no CAP_SYS_ADMIN left after setresuid from root */
	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 77;
	errno = 0;
	if (psc_tracefs__mount() || errno != EPERM)
		return 1;
	if (nr_tracefs_mounts() != 0)
		return 2;
	return 0;
}

/* Without the privilege to mount: EPERM, and the parse then reports ENODEV as before. */
static void test_mount_unprivileged(void **state)
{
	run_in_namespace(unprivileged_steps, "psc_tracefs__mount as nobody");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_never_mounts),
		cmocka_unit_test(test_explicit_mount),
		cmocka_unit_test(test_mount_unprivileged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
