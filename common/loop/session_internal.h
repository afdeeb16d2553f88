/* session_internal: the session's state, shared by its files (session*.c); not for engines' users. */
#ifndef PERFSCOPE_COMMON_SESSION_INTERNAL_H
#define PERFSCOPE_COMMON_SESSION_INTERNAL_H

#include "session.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/bpf.h>
#include <perfscope/cpumap.h>
#include <perfscope/evsel.h>
#include <perfscope/kernel.h>
#include <linux/capability.h>
#include <perfscope/threadmap.h>
#include <perfscope/ring.h>

#include "keymap.h"
#include "kdrop.h"
#include "loss_watch.h"
#include "namelist.h"
#include "order.h"
#include "target.h"

#define DEFAULT_SLACK_NS (2 * 1000 * 1000ull)
#define DEFAULT_POLL_MS 100

_Static_assert(SESSION_BACKLOG_DEFAULT == ORDER_BACKLOG_DEFAULT, "one default backlog bound");

/*
 * epoll data: the low 32 bits a tag, the ring index or one of these (extra fd slot i is
 * TAG_EXTRA - i); the high 32 bits the extra fd slot's generation, so an event of a slot removed
 * and reused within one epoll_wait batch is not taken for the new fd's.
 */
enum {
	TAG_SIGNAL = -1,
	TAG_INTERVAL = -2,
	TAG_DURATION = -3,
	TAG_PIDFD = -4,
	TAG_EXTRA = -16,
};

/* A file descriptor registered with session__add_fd; fd -1: a free slot. */
struct session_fd {
	int fd;
	uint32_t events; /* polled now; 0: registered, not in epoll */
	uint32_t gen;
	int (*cb)(void *ctx, int fd, uint32_t revents);
	void *ctx;
};

struct session {
	struct psc_evlist *evlist;
	struct session_opts opts;
	struct session_hooks hooks;
	struct say say; /* hooks.say with hooks.ctx */
	int nr_evsels, nr_rings;
	struct order_ring *rings; /* nr_rings */
	struct loss_watch loss_watch; /* opts.lost_early: the rings read before a round */
	bool *loss_maybe; /* per ring: loss_watch said it may have lost (scratch of hear_losses) */
	uint64_t *lost_told; /* per ring: the records its LOST records said were lost */
	struct order order;
	/*
	 * per evsel; lost also per evsel x ring, plus a row for unattributed (index nr_evsels);
	 * an evsel's samples are the sum of its row of seen (session_evsel_seen)
	 */
	uint64_t *samples_prev;
	uint64_t *throttled; /* per evsel (+ unattributed): PERF_RECORD_THROTTLE seen */
	uint64_t *lost, *lost_prev, *lost_seen;
	/* per evsel x ring: samples delivered, the kernel's counts, hits it dropped (kdrop.h) */
	uint64_t *seen, *counted, *kdropped;
	uint64_t *period_ns; /* evsel x ring: the periods the samples read stood for (kdrop.h) */
	bool *weighted; /* per evsel: a sample had a period other than 1 (__perf_count) */
	struct session_stats st;
	int epfd, sigfd, intfd, durfd, pidfd;
	sigset_t old_mask;
	bool mask_saved;
	bool stop;
	int err;
	enum session_end end;
	int command_exit;
	bool watch_is_command;
	bool signalled; /* a stop signal was passed on to the command */
	bool stop_deferred; /* the stop_signal hook finishes its work first; a second one stops */
	/*
	 * The signalfd is looked at inside a long round too (a backlog of records whose hooks are
	 * slow: DWARF unwinding, --detail): every SIG_CHECK_NS of delivering. In the drain after a
	 * stop, a second stop signal ends it, and the records not delivered are counted and told.
	 */
	uint64_t deliveries, next_sig_check_ns;
	bool draining, drain_said, drain_cut;
	uint64_t drain_start_ns, drain_delivered;
	int nr_watching; /* -p/-t lists: tasks not yet seen to exit */
	/* PERF_FORMAT_LOST: the kernel's exact count per fd, read at intervals and at the end */
	bool lost_fmt;
	struct session_fd *fds; /* session__add_fd */
	int nr_fds;
	uint32_t fd_gen;
};


/* session.c */
void session_close_fd(int *fd);
/* A hook's return: 1 stops the run, -errno fails it. */
void session_hook_stop(struct session *s, int ret);
static inline void session_hook_result(struct session *s, int ret)
{
	if (__builtin_expect(ret != 0, 0))
		session_hook_stop(s, ret);
}
/* Records read out of the rings and not yet delivered. */
bool session_pending_records(const struct session *s);

/* session_stats.c: the kernel's lost counts read (only: those rings; NULL: all), kernel drops */
void session_refresh_lost(struct session *s, const bool *only);
void session_check_kdrop(struct session *s);
/* Samples delivered of evsel row idx (0..nr_evsels), over every ring. */
uint64_t session_evsel_seen(const struct session *s, int idx);

/* session_watch.c: the fds the loop waits on besides the rings, and what each wakes */
int session_setup_fds(struct session *s);
void session_end_fds(struct session *s);
void session_on_extra_fd(struct session *s, int slot, uint32_t gen, uint32_t revents);
void session_watch_target(struct session *s);
void session_on_target_exit(struct session *s);
void session_on_signal(struct session *s);
/* From inside a long round: a stop signal ends it; in the drain, a second one ends the drain. */
void session_check_signals(struct session *s);
void session_on_timer(struct session *s, int fd, bool interval);
void session_report_cut_drain(struct session *s);
void session_finish_command(struct session *s);

#endif
