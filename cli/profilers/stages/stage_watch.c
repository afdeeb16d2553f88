/* stage_watch: -p/-t taken out of the options and watched on /proc with a 100 ms timer. */
#include "stage_watch.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <sys/epoll.h>
#include <sys/timerfd.h>

#include "session.h"

void stage_watch__take(struct prof *p, struct stage_watch *w)
{
	w->fd = -1;
	for (int i = 0; i < p->opts.nr_pids + p->opts.nr_tids && w->nr < CLI_MAX_TASKS; i++) {
		bool is_pid = i < p->opts.nr_pids;

		w->ids[w->nr] = is_pid ? p->opts.pids[i] : p->opts.tids[i - p->opts.nr_pids];
		w->is_pid[w->nr++] = is_pid;
	}
	p->opts.nr_pids = p->opts.nr_tids = 0;
	p->opts.pid = p->opts.tid = 0;
	if (p->opts.command)
		p->opts.all_cpus = true;
}

/* Gone once /proc has no entry for it or it is a zombie. */
static bool task_alive(pid_t id)
{
	char path[64], buf[512], *rp;
	bool alive = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)id);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) && rp[1] == ' ')
		alive = rp[2] != 'Z' && rp[2] != 'X' && rp[2] != 'x';
	fclose(f);
	return alive;
}

static int watch_tick(void *ctx, int fd, uint32_t revents)
{
	struct stage_watch *w = ctx;
	uint64_t ticks;

	if (revents & SESSION_FD_END)
		return 0;
	if (read(fd, &ticks, sizeof(ticks)) < 0 && errno != EAGAIN)
		return -errno;
	for (int i = 0; i < w->nr; i++)
		if (task_alive(w->ids[i]))
			return 0;
	return 1; /* every task watched has exited: a clean stop */
}

int stage_watch__start(struct prof *p, struct stage_watch *w)
{
	struct itimerspec its = { .it_interval = { 0, 100000000 }, .it_value = { 0, 100000000 } };

	if (!w->nr)
		return 0;
	w->fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (w->fd < 0 || timerfd_settime(w->fd, 0, &its, NULL))
		return -errno;
	return prof__add_fd(p, w->fd, EPOLLIN, watch_tick, w);
}

void stage_watch__close(struct stage_watch *w)
{
	if (w->fd > 0) /* 0: never set up (a zeroed priv) */
		close(w->fd);
	w->fd = -1;
}
