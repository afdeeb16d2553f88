/* Unit tests of common/loop/timer: a periodic timer ticks, a disarmed one does not, one armed at
 * a time already past fires at once, and a bad fd is an error, not a tick. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "timer.h"

/* Does fd become readable within ms? (A generous bound: a loaded machine is slow, not wrong.) */
static int readable(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void test_periodic(void **state)
{
	int fd = timer__open(1000000, 1000000);

	assert_true(fd >= 0);
	/* each period is at least one tick (more when the reader was late) */
	for (int i = 0; i < 2; i++) {
		assert_int_equal(readable(fd, 30000), 1);
		assert_true(timer__ticks(fd) >= 1);
	}
	close(fd);
}

static void test_disarmed_then_armed_at(void **state)
{
	int fd = timer__open(0, 0);

	assert_true(fd >= 0);
	assert_int_equal(timer__ticks(fd), 0);
	assert_int_equal(readable(fd, 0), 0);
	/* a time already past fires at once; so does 0, which would have disarmed it */
	assert_int_equal(timer__arm_at(fd, mono_ns() - 1000), 0);
	assert_int_equal(readable(fd, 30000), 1);
	assert_int_equal(timer__ticks(fd), 1);
	assert_int_equal(timer__arm_at(fd, 0), 0);
	assert_int_equal(readable(fd, 30000), 1);
	assert_int_equal(timer__ticks(fd), 1);
	/* a one-shot: no second tick */
	assert_int_equal(timer__ticks(fd), 0);
	close(fd);
}

static void test_bad_fd(void **state)
{
	assert_int_equal(timer__arm_at(-1, 1), -EBADF);
	assert_int_equal(timer__ticks(-1), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_periodic),
		cmocka_unit_test(test_disarmed_then_armed_at),
		cmocka_unit_test(test_bad_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
