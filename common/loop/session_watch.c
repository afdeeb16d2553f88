/* session_watch: what the loop waits on besides the rings: extra fds, timers, the target's pidfds,
 * signals and the drain they may cut. */
#include <stdio.h>

#include "session_internal.h"
#include "timer.h"

/* ---- epoll tags: which fd woke the loop ---- */

static uint64_t tag_data(int tag, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint32_t)tag;
}

static int epoll_add(struct session *s, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag_data(tag, 0) };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* ---- extra file descriptors ---- */

static struct session_fd *find_fd(struct session *s, int fd)
{
	int i;

	for (i = 0; i < s->nr_fds; i++)
		if (s->fds[i].fd == fd && fd >= 0)
			return &s->fds[i];
	return NULL;
}

/* Puts f's epoll registration in line with events (0: out of epoll). */
static int poll_fd(struct session *s, struct session_fd *f, uint32_t events)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = tag_data(TAG_EXTRA - (int)(f - s->fds), f->gen),
	};
	int op;

	if (events == f->events)
		return 0;
	op = !f->events ? EPOLL_CTL_ADD : !events ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
	if (epoll_ctl(s->epfd, op, f->fd, &ev))
		return -errno;
	f->events = events;
	return 0;
}

int session__add_fd(struct session *s, int fd, uint32_t epoll_events,
		    int (*cb)(void *ctx, int fd, uint32_t revents), void *ctx)
{
	struct session_fd *f = NULL;
	int i, err;

	if (fd < 0 || !cb)
		return -EINVAL;
	if (find_fd(s, fd))
		return -EEXIST;
	for (i = 0; i < s->nr_fds && !f; i++)
		if (s->fds[i].fd < 0)
			f = &s->fds[i];
	if (!f) {
		struct session_fd *n = realloc(s->fds, (s->nr_fds + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->fds = n;
		f = &s->fds[s->nr_fds++];
	}
	*f = (struct session_fd){ .fd = fd, .gen = ++s->fd_gen, .cb = cb, .ctx = ctx };
	err = poll_fd(s, f, epoll_events);
	if (err)
		f->fd = -1;
	return err;
}

int session__mod_fd(struct session *s, int fd, uint32_t epoll_events)
{
	struct session_fd *f = find_fd(s, fd);

	return f ? poll_fd(s, f, epoll_events) : -ENOENT;
}

int session__remove_fd(struct session *s, int fd)
{
	struct session_fd *f = find_fd(s, fd);

	if (!f)
		return -ENOENT;
	poll_fd(s, f, 0);
	f->fd = -1;
	return 0;
}

void session_on_extra_fd(struct session *s, int slot, uint32_t gen, uint32_t revents)
{
	struct session_fd *f;

	if (slot < 0 || slot >= s->nr_fds)
		return;
	f = &s->fds[slot];
	if (f->fd < 0 || f->gen != gen)
		return; /* removed (and maybe reused) since epoll_wait */
	session_hook_result(s, f->cb(f->ctx, f->fd, revents));
}

/* The run is over: every fd still registered finishes (SESSION_FD_END) and is unregistered. */
void session_end_fds(struct session *s)
{
	int i, fd;

	for (i = 0; i < s->nr_fds; i++) {
		struct session_fd *f = &s->fds[i];

		if (f->fd < 0)
			continue;
		fd = f->fd;
		if (s->epfd >= 0)
			poll_fd(s, f, 0);
		f->fd = -1;
		f->cb(f->ctx, fd, SESSION_FD_END);
	}
}

static int open_pidfd(pid_t pid, bool thread)
{
#ifdef SYS_pidfd_open
	long fd = -1;

	/*
	 * A thread: PIDFD_THREAD (Linux 6.9). Before it, a pidfd is a process's only (EINVAL for
	 * any other thread, the whole process for its leader): the caller polls /proc instead.
	 */
	fd = syscall(SYS_pidfd_open, pid, thread ? O_EXCL : 0);
	return fd < 0 ? -errno : (int)fd;
#else
	return -ENOSYS;
#endif
}

int session_setup_fds(struct session *s)
{
	sigset_t mask;
	int i, fd, err;

	/* overwrite rings are read once, at the end: their wakeups would only cost */
	for (i = 0; i < s->nr_rings && !s->opts.overwrite; i++) {
		fd = psc_ring__fd(s->rings[i].ring);
		if (fd >= 0 && (err = epoll_add(s, fd, i)))
			return err;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, &s->old_mask))
		return -errno;
	s->mask_saved = true;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0 || (err = epoll_add(s, s->sigfd, TAG_SIGNAL)))
		return s->sigfd < 0 ? -errno : err;
	if (s->opts.interval_ms > 0) {
		uint64_t ns = (uint64_t)s->opts.interval_ms * 1000000ull;

		s->intfd = timer__open(ns, ns);
		if (s->intfd < 0 || (err = epoll_add(s, s->intfd, TAG_INTERVAL)))
			return s->intfd < 0 ? s->intfd : err;
	}
	if (s->opts.duration_s > 0) {
		uint64_t ns = (uint64_t)(s->opts.duration_s * 1e9);

		s->durfd = timer__open(ns ? ns : 1, 0);
		if (s->durfd < 0 || (err = epoll_add(s, s->durfd, TAG_DURATION)))
			return s->durfd < 0 ? s->durfd : err;
	}
	return 0;
}

/* Tasks no pidfd can watch (a thread before Linux 6.9), looked at in /proc every 100 ms. */
struct watch_poll {
	struct session *s;
	int nr;
	pid_t ids[]; /* 0 once seen gone */
};

#define WATCH_POLL_NS 100000000ull

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

static int on_watch_poll(void *ctx, int fd, uint32_t revents)
{
	struct watch_poll *w = ctx;
	struct session *s = w->s;

	if (revents == SESSION_FD_END) {
		close(fd);
		free(w);
		return 0;
	}
	if (!timer__ticks(fd))
		return 0;
	for (int i = 0; i < w->nr; i++) {
		if (!w->ids[i] || task_alive(w->ids[i]))
			continue;
		w->ids[i] = 0;
		if (--s->nr_watching == 0 && s->end == SESSION_RUNNING) {
			s->end = SESSION_PROCESS;
			return 1;
		}
	}
	return 0;
}

/* Starts polling ids (counted in nr_watching already). 0 or -errno. */
static int watch_poll(struct session *s, const pid_t *ids, int nr)
{
	struct watch_poll *w = calloc(1, sizeof(*w) + sizeof(pid_t) * (size_t)nr);
	int fd, err;

	if (!w)
		return -ENOMEM;
	w->s = s;
	w->nr = nr;
	memcpy(w->ids, ids, sizeof(pid_t) * (size_t)nr);
	fd = timer__open(WATCH_POLL_NS, WATCH_POLL_NS);
	if (fd < 0) {
		free(w);
		return fd;
	}
	if ((err = session__add_fd(s, fd, EPOLLIN, on_watch_poll, w))) {
		close(fd);
		free(w);
	}
	return err;
}

/* One of several -p/-t tasks exited: the run ends with the last. */
static int on_watched_exit(void *ctx, int fd, uint32_t revents)
{
	struct session *s = ctx;

	session__remove_fd(s, fd);
	close(fd);
	if (revents != SESSION_FD_END && --s->nr_watching == 0 && s->end == SESSION_RUNNING) {
		s->end = SESSION_PROCESS;
		return 1;
	}
	return 0;
}

static void watch_tasks(struct session *s)
{
	pid_t *polled = calloc((size_t)s->opts.nr_watch, sizeof(*polled));
	int nr_polled = 0;

	for (int i = 0; i < s->opts.nr_watch; i++) {
		pid_t id = s->opts.watch_pids[i];
		int fd = open_pidfd(id, s->opts.watch_is_thread);

		if (fd == -ESRCH || (fd < 0 && !task_alive(id)))
			continue; /* gone between setup and now */
		s->nr_watching++;
		if (fd >= 0 && !session__add_fd(s, fd, EPOLLIN, on_watched_exit, s))
			continue;
		if (fd >= 0)
			close(fd);
		if (polled)
			polled[nr_polled++] = id;
	}
	/* without memory to poll them, those tasks are never counted as gone: -i/--duration end it */
	if (nr_polled)
		watch_poll(s, polled, nr_polled);
	free(polled);
	if (!s->nr_watching) {
		s->end = SESSION_PROCESS;
		s->stop = true;
	}
}

/* After the target started: a pidfd for the command or the -p/-t process. */
void session_watch_target(struct session *s)
{
	struct target *t = s->opts.target;

	if (!(t && t->launched) && s->opts.nr_watch > 0) {
		watch_tasks(s);
		return;
	}
	if (t && t->launched) {
		s->pidfd = launch_pidfd(&t->launch);
		s->watch_is_command = true;
	} else if (s->opts.watch_pid > 0) {
		s->pidfd = open_pidfd(s->opts.watch_pid, s->opts.watch_is_thread);
		if (s->pidfd == -ESRCH ||
		    (s->pidfd < 0 && !task_alive(s->opts.watch_pid))) {
			/* gone between setup and now */
			s->end = SESSION_PROCESS;
			s->stop = true;
		} else if (s->pidfd < 0) {
			s->nr_watching = 1; /* no pidfd for it: /proc says when it is gone */
			watch_poll(s, &s->opts.watch_pid, 1);
		}
	}
	if (s->pidfd >= 0 && epoll_add(s, s->pidfd, TAG_PIDFD))
		session_close_fd(&s->pidfd);
}

void session_on_target_exit(struct session *s)
{
	struct target *t = s->opts.target;
	int status;

	if (s->watch_is_command) {
		/*
		 * Reaped only once its events are delivered (session_finish_command): a sample read
		 * after its exit whose COMM is in another CPU's ring, not yet read (unordered),
		 * still finds its name in /proc.
		 */
		if (target_exited(t, &status) > 0)
			s->command_exit = wait_status_to_exit_code(status);
		else
			return; /* not really gone yet */
		if (s->end == SESSION_RUNNING)
			s->end = SESSION_COMMAND;
	} else if (s->end == SESSION_RUNNING) {
		s->end = SESSION_PROCESS;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pidfd, NULL);
	session_close_fd(&s->pidfd);
	s->stop = true;
}

/* SIGUSR1: the counts so far, and the profiler's own report, running or draining. */
static void on_sigusr1(struct session *s)
{
	session_refresh_lost(s, NULL);
	if (!s->opts.quiet_stats)
		session__say_stats(s, false);
	if (s->hooks.sigusr1)
		s->hooks.sigusr1(s->hooks.ctx);
}

void session_on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			on_sigusr1(s);
			continue;
		}
		/*
		 * A terminal sends SIGINT to the command too; a kill(1) of perfscope does not. A
		 * command still running is given the signal and watched until it ends, so that
		 * what it does while it stops is still seen and its status is ours; one that
		 * ignores it is killed at the second signal rather than waited for forever.
		 */
		if (s->watch_is_command && s->pidfd >= 0) {
			target_forward_signal(s->opts.target,
					      s->signalled ? SIGKILL : (int)si.ssi_signo);
			s->signalled = true;
			continue;
		}
		if (s->hooks.stop_signal && !s->stop_deferred &&
		    s->hooks.stop_signal(s->hooks.ctx, (int)si.ssi_signo) == 1) {
			s->stop_deferred = true;
			continue;
		}
		if (s->end == SESSION_RUNNING)
			s->end = SESSION_SIGNAL;
		s->stop = true;
		if (s->opts.target)
			target_forward_signal(s->opts.target, (int)si.ssi_signo);
	}
}

#define SIG_CHECK_NS 50000000ull /* how often a long round looks at the signalfd */
#define DRAIN_SAY_NS 1000000000ull /* a drain this long says how to cut it short */

/*
 * From inside a round, every SIG_CHECK_NS: a stop signal ends the round (the drain of what was
 * read before it follows); during that drain, a second one ends the drain.
 */
void session_check_signals(struct session *s)
{
	struct signalfd_siginfo si;
	uint64_t now = mono_ns();

	if (now < s->next_sig_check_ns || s->sigfd < 0)
		return;
	s->next_sig_check_ns = now + SIG_CHECK_NS;
	if (!s->draining) {
		if (!s->stop)
			session_on_signal(s);
		return;
	}
	if (!s->drain_said && now - s->drain_start_ns > DRAIN_SAY_NS) {
		say(&s->say,
		    "stopping: delivering the events read before the stop (%llu so far); SIGINT or "
		    "SIGTERM again ends now without the rest",
		    (unsigned long long)s->drain_delivered);
		s->drain_said = true;
	}
	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			on_sigusr1(s);
			continue;
		}
		if (s->watch_is_command && s->pidfd >= 0)
			target_forward_signal(s->opts.target, SIGKILL);
		s->drain_cut = true;
		s->stop = true;
	}
}

void session_on_timer(struct session *s, int fd, bool interval)
{
	if (!timer__ticks(fd))
		return;
	if (!interval) {
		if (s->end == SESSION_RUNNING)
			s->end = SESSION_DURATION;
		s->stop = true;
		return;
	}
	session_refresh_lost(s, NULL);
	/* a flight recorder reads nothing before the end: an interval would say "0 events" */
	if (!s->opts.quiet_stats && !s->opts.overwrite)
		session__say_stats(s, true);
	if (s->hooks.interval)
		s->hooks.interval(s->hooks.ctx);
}

/* A drain ended by a second stop signal: what it left is said, never silently dropped. */
void session_report_cut_drain(struct session *s)
{
	uint64_t records = 0, bytes = 0;

	for (int i = 0; i < s->nr_rings; i++) {
		records += s->rings[i].backlog.records;
		bytes += psc_ring__pending(s->rings[i].ring);
	}
	say(&s->say,
	    "stopped by a second signal: %llu events waiting in memory%s were not delivered (%llu "
	    "delivered after the first)",
	    (unsigned long long)records,
		bytes ? " and the unread rest of the rings" : "",
		(unsigned long long)s->drain_delivered);
}

/* A command still running when we stop (signal, duration): ask it to end, then insist. */
void session_finish_command(struct session *s)
{
	int status;

	if (!s->opts.target)
		return;
	if (s->command_exit >= 0) {
		target_reap(s->opts.target, &status); /* the zombie session_on_target_exit left */
		return;
	}
	if (target_stop_command(s->opts.target, &status) > 0)
		s->command_exit = wait_status_to_exit_code(status);
}
