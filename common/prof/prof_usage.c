/* prof_usage: --usage-self (perfscope's own CPU use every MS ms); extra fds and CPUs for hooks. */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include "clock.h"
#include "prof_internal.h"
#include "session.h"
#include "timer.h"

/* ---- --usage-self ---- */

static uint64_t tv_ns(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000000ull + (uint64_t)tv->tv_usec * 1000ull;
}

/* perfscope's own CPU use since the last line, as perf-prof's --usage-self prints it. */
static int on_usage_timer(void *ctx, int fd, uint32_t revents)
{
	struct prof *p = ctx;
	struct prof_state *st = p->state;
	struct rusage ru;
	uint64_t now = mono_ns(), user, sys, wall;

	if (revents == SESSION_FD_END)
		return 0;
	if (!timer__ticks(fd) || getrusage(RUSAGE_SELF, &ru))
		return 0;
	user = tv_ns(&ru.ru_utime);
	sys = tv_ns(&ru.ru_stime);
	wall = now - st->usage_at;
	if (wall)
		fprintf(stderr,
			"perfscope %s: own CPU use in the last %llu ms: %.2f%% user, %.2f%% sys "
			"(of one CPU), %ld KiB resident at most\n",
			p->name, (unsigned long long)(wall / 1000000),
			100.0 * (double)(user - st->usage_user_ns) / (double)wall,
			100.0 * (double)(sys - st->usage_sys_ns) / (double)wall,
			ru.ru_maxrss);
	st->usage_user_ns = user;
	st->usage_sys_ns = sys;
	st->usage_at = now;
	return 0;
}

int prof_start_usage_self(struct prof *p)
{
	struct prof_state *st = p->state;
	uint64_t ns = (uint64_t)p->opts.usage_self_ms * 1000000ull;
	struct rusage ru;

	if (st->usage_fd < 0) { /* a run again (-r) keeps the timer, in its new session */
		st->usage_fd = timer__open(ns, ns);
		if (st->usage_fd < 0)
			return st->usage_fd;
		if (!getrusage(RUSAGE_SELF, &ru)) {
			st->usage_user_ns = tv_ns(&ru.ru_utime);
			st->usage_sys_ns = tv_ns(&ru.ru_stime);
		}
		st->usage_at = mono_ns();
	}
	return session__add_fd(p->session, st->usage_fd, EPOLLIN, on_usage_timer, p);
}

int prof__add_fd(struct prof *p, int fd, uint32_t epoll_events,
		 int (*cb)(void *ctx, int fd, uint32_t revents), void *ctx)
{
	return session__add_fd(p->session, fd, epoll_events, cb, ctx);
}

int prof__enable_cpu(struct prof *p, int cpu, bool on)
{
	return session__enable_cpu(p->session, cpu, on);
}

