/* timer: the timerfds the loop's periodic and one-shot work runs on (CLOCK_MONOTONIC). */
#ifndef PERFSCOPE_TIMER_H
#define PERFSCOPE_TIMER_H

#include <stdint.h>

/*
 * A non-blocking timerfd that fires first after first_ns, then every period_ns (0: once);
 * first_ns 0 leaves it disarmed (timer__arm_at arms it). The fd, or -errno. Register it with
 * session__add_fd (prof__add_fd) and call timer__ticks in its callback.
 */
int timer__open(uint64_t first_ns, uint64_t period_ns);
/* Arms fd to fire once at the CLOCK_MONOTONIC time at_ns (in the past: at once). 0 or -errno. */
int timer__arm_at(int fd, uint64_t at_ns);
/* The expirations since the last call (0: none, a spurious wakeup), the count read off fd. */
uint64_t timer__ticks(int fd);

#endif
