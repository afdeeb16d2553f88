/* Unit tests of common/rlimit: raising the soft open-files limit to a need or to the hard limit,
 * never lowering it, refusing a need above the hard limit. Each runs in a child, whose limits are
 * its own. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "rlimit.h"

/* In the child: returns the line of the first check that failed, 0 when all held. */
#define CHECK(cond)                      \
	do {                             \
		if (!(cond))             \
			return __LINE__; \
	} while (0)

static rlim_t soft(void)
{
	struct rlimit rl;

	getrlimit(RLIMIT_NOFILE, &rl);
	return rl.rlim_cur;
}

static int child_checks(void)
{
	struct rlimit rl = { .rlim_cur = 64, .rlim_max = 200 }, was;

	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	/* raised to what is needed, and the limits as found */
	CHECK(rlimit__raise_nofile(100, &was) == 1);
	CHECK(was.rlim_cur == 64 && was.rlim_max == 200);
	CHECK(soft() == 100);
	/* never lowered */
	CHECK(rlimit__raise_nofile(50, NULL) == 0);
	CHECK(rlimit__raise_nofile(100, NULL) == 0);
	CHECK(soft() == 100);
	/* above the hard limit: refused, unchanged, the hard limit told */
	CHECK(rlimit__raise_nofile(201, &was) == -ERANGE);
	CHECK(was.rlim_max == 200);
	CHECK(soft() == 100);
	/* to the hard limit */
	CHECK(rlimit__raise_nofile(RLIMIT_NOFILE_HARD, &was) == 1);
	CHECK(was.rlim_cur == 100);
	CHECK(soft() == 200);
	CHECK(rlimit__raise_nofile(RLIMIT_NOFILE_HARD, NULL) == 0);
	CHECK(rlimit__raise_nofile(200, NULL) == 0);
	return 0;
}

static void t_raise(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(child_checks() & 0xff); /* the failed line, modulo 256 */
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	if (WEXITSTATUS(status))
		fail_msg("check at line %d (mod 256) of %s failed", WEXITSTATUS(status), __FILE__);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_raise),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
