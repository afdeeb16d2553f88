/* timer: timerfds made, armed and read in one place (the loop's interval, profilers' ticks). */
#include <errno.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>

#include "timer.h"

#define NS 1000000000ull

static struct timespec ts_of(uint64_t ns)
{
	return (struct timespec){ (time_t)(ns / NS), (long)(ns % NS) };
}

int timer__open(uint64_t first_ns, uint64_t period_ns)
{
	struct itimerspec its = { .it_value = ts_of(first_ns), .it_interval = ts_of(period_ns) };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (first_ns && timerfd_settime(fd, 0, &its, NULL)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int timer__arm_at(int fd, uint64_t at_ns)
{
	/* 0 would disarm it: a time already past fires at once, as 1 ns does */
	struct itimerspec its = { .it_value = ts_of(at_ns ? at_ns : 1) };

	return timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL) ? -errno : 0;
}

uint64_t timer__ticks(int fd)
{
	uint64_t n;

	return read(fd, &n, sizeof(n)) == (ssize_t)sizeof(n) ? n : 0;
}
