/* The session loop shared by streaming profilers: rings, time order, signals, intervals, lost
 * accounting. */
#ifndef PERFSCOPE_COMMON_SESSION_H
#define PERFSCOPE_COMMON_SESSION_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <perfscope/evlist.h>
#include <perfscope/record.h>

struct target;

/*
 * A profiler only sees decoded records. The session owns what is between the rings and those
 * hooks: epoll over every ring fd, a signalfd (SIGINT/SIGTERM stop, SIGUSR1 asks for the current
 * state), a timerfd for -i, --duration, the end of a launched command or of a -p process, the
 * lost-record accounting per event and CPU, and cross-CPU time order.
 *
 * Time order (--order): samples carry CLOCK_MONOTONIC timestamps (attr.use_clockid), so at the
 * start of each round the session reads the clock (now) and then the head of every ring. An
 * event stamped at or before now - slack was published before that read (the kernel stamps and
 * publishes within one non-preemptible section), so every ring already holds all events up to
 * that watermark and a k-way merge of the ring heads (a min-heap) can deliver them in order.
 * Records delivered straight from a ring are decoded where they lie (zero copy). Newer records
 * are copied out of their ring into a per-ring backlog in memory at the end of the round when
 * they fill a quarter of it or more, so the kernel has the ring for new events (at a million
 * events per second the 2 ms of slack alone is most of a 512 KiB ring); the next round takes
 * each ring's backlog before its ring. A record older than one already delivered is still
 * delivered, and counted as out of order (never reordered wrongly in silence). Without
 * ordering, each ring is drained in turn (cheapest). In both modes a long batch (a slow hook,
 * output that takes time) also moves the contents of any ring half full or more to its backlog
 * every 250 us, so the kernel does not drop what memory can hold. The backlogs are bounded
 * together (backlog_max); past the bound records stay in their rings, the kernel may lose
 * events, and that is reported as always.
 *
 * Extra file descriptors (an output waiting for a slow reader, BPF maps, timers) are polled by the
 * same loop: session__add_fd.
 *
 * Hooks return 0 to go on, 1 to stop cleanly, or -errno to stop with an error.
 */
struct session_hooks {
	void *ctx;
	/* A PERF_RECORD_SAMPLE of evsel; rec->sample is decoded, rec->hdr the raw record. */
	int (*sample)(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec);
	/* Any other record (COMM, EXIT, FORK, MMAP2, THROTTLE, ...); evsel may be NULL. */
	int (*record)(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec);
	/*
	 * The kernel dropped n events of evsel (NULL when it cannot be told) on cpu. n = 0: a loss
	 * seen at this point of cpu's stream whose count comes with a later call (kernels with
	 * PERF_FORMAT_LOST count per fd, read after).
	 */
	void (*lost)(void *ctx, struct psc_evsel *evsel, int cpu, uint64_t n);
	/* After every round of reading: flush output here. */
	int (*round_end)(void *ctx);
	/* Every -i interval, after the session's own statistics line. */
	void (*interval)(void *ctx);
	/* SIGUSR1: print the current state (the session prints its statistics first). */
	void (*sigusr1)(void *ctx);
	/*
	 * SIGINT/SIGTERM (not passed on to a command): 1 when the profiler finishes what it is
	 * doing first and stops the loop itself (session__stop) later; a second signal stops at
	 * once. Absent or 0: stop now.
	 */
	int (*stop_signal)(void *ctx, int signo);
	/*
	 * A line the session has to tell the user (no prefix, no newline): its counts, the running
	 * line of -v, a stop that takes long or is cut short, a command that cannot run. The CLI
	 * prints "perfscope NAME: line"; absent, the session says nothing (read session__stats).
	 */
	void (*say)(void *ctx, const char *line);
};

struct session_opts {
	size_t sz;
	bool order; /* merge rings by time */
	uint64_t slack_ns; /* ordering watermark lag; 0: 2 ms */
	long interval_ms; /* 0: none */
	double duration_s; /* 0: until stopped */
	int poll_ms; /* longest wait before looking at the rings anyway; 0: 100 */
	bool quiet_stats; /* no statistics on stderr (the profiler prints its own) */
	struct target *target; /* command to start and watch, or maps only; may be NULL */
	pid_t watch_pid; /* -p / -t: stop when it exits */
	bool watch_is_thread; /* watch_pid is a thread id (-t) */
	/* -p/-t lists: stop once every one has exited (used instead of watch_pid when given) */
	const pid_t *watch_pids;
	int nr_watch;
	/*
	 * Flight recorder: the rings are overwrite (backward) rings that keep the newest events;
	 * nothing is read while the run lasts, and they are read once, paused, when it ends.
	 */
	bool overwrite;
	bool counting; /* no rings: counters only (stat); the loop still waits for the stops */
	/*
	 * Bound on the memory holding records taken out of the rings (the backlogs), in bytes; 0:
	 * SESSION_BACKLOG_DEFAULT (64 MiB, why in order.h).
	 */
	uint64_t backlog_max;
	bool verbose; /* session__say_stats adds the backlog's figures; the running line is said */
	/*
	 * With order: a loss is heard (the lost hook) before any event written after it is
	 * delivered, so that a two-event profiler never pairs a start and an end across a loss on
	 * another CPU's ring, whose LOST record the kernel writes only at that ring's next event.
	 * Before each round, the rings that came near full since the last one have their lost
	 * counts read (loss_watch.h); a round where none did costs two loads per ring.
	 */
	bool lost_early;
};
#define SESSION_BACKLOG_DEFAULT (64ull << 20)

/* Why the loop ended. */
enum session_end {
	SESSION_RUNNING,
	SESSION_SIGNAL, /* SIGINT / SIGTERM */
	SESSION_DURATION, /* --duration elapsed */
	SESSION_COMMAND, /* the launched command exited */
	SESSION_PROCESS, /* the -p / -t target exited */
	SESSION_HOOK, /* a hook asked to stop (1) */
	SESSION_ERROR, /* a hook or the loop failed (-errno from run) */
};

struct session_stats {
	uint64_t samples; /* delivered to the sample hook */
	uint64_t records; /* other records delivered */
	uint64_t lost; /* events the kernel dropped, per event (exact with Linux 6.0+) */
	uint64_t lost_records; /* sum of PERF_RECORD_LOST counts, per ring */
	uint64_t kernel_dropped; /* counted by the kernel, neither delivered nor lost (kdrop.h) */
	uint64_t out_of_order; /* delivered with a time older than one delivered before */
	uint64_t corrupt; /* bogus records met in the rings */
	uint64_t undecodable; /* records the decoder refused (counted, skipped) */
	uint64_t throttled; /* PERF_RECORD_THROTTLE: sampling paused by the kernel for a tick */
	uint64_t rounds;
	uint64_t loss_reads; /* lost_early: rounds that read the lost counts of rings near full */
	uint64_t overwrite_kept; /* --overwrite: records the rings held at the end */
	bool nomem; /* --overwrite: the snapshot could not be copied whole */
	/* records copied out of the rings to wait for their turn in memory (the backlogs) */
	uint64_t backlog_records, backlog_bytes;
	uint64_t backlog_peak; /* most record bytes held at once */
	uint64_t backlog_mem_peak; /* most memory held at once (whole chunks) */
	uint64_t backlog_full; /* times the bound left records in a ring */
};

struct session;

/* Side-band records a profiler wants, carried by a dummy event added to the evlist. */
enum sideband {
	SIDEBAND_COMM = 1 << 0, /* COMM, FORK, EXIT: thread names, process tree */
	SIDEBAND_MMAP = 1 << 1, /* MMAP/MMAP2: user symbols of processes started later */
};
#define SIDEBAND_NAME "side-band"

/*
 * Prepares every evsel of evlist for streaming, before it is opened: PERF_SAMPLE_IDENTIFIER,
 * TID, TIME, CPU added to what the profiler asked for, sample_id_all, CLOCK_MONOTONIC time,
 * PERF_FORMAT_LOST where the kernel has it (exact lost counts per event), wakeups every quarter
 * buffer unless the evsel has its own wakeup_events/wakeup_watermark (pages: data pages per
 * ring, 0 = session_default_ring_pages for every online CPU). With sideband flags, appends a dummy
 * evsel named SIDEBAND_NAME carrying those records, so that the events' own lost counts stay
 * exact. 0 or -errno.
 */
int session_config_evlist(struct psc_evlist *evlist, size_t pages, unsigned int sideband);
/* True for the dummy evsel added by session_config_evlist. */
bool session_is_sideband(const struct psc_evsel *evsel);

/*
 * Data pages per ring when the user gave none (-m), for nr_cpus rings (<= 0: the online CPUs),
 * a power of two. What the kernel lets this process lock decides: with CAP_IPC_LOCK (root) or
 * perf_event_paranoid -1 there is no limit, and it is 4 MiB per CPU (8x perf's 512 KiB: a burst
 * of 16,000 stack samples, 40,000 tracepoint events), less when that would be more than 1/64 of
 * the RAM over all rings, never less than 512 KiB; otherwise it is what perf_event_mlock_kb
 * (per online CPU, for the user's perf rings) allows split over nr_cpus rings, control pages
 * included: 128 pages on every CPU with the default 516 KiB, more when fewer CPUs are traced.
 */
size_t session_default_ring_pages(int nr_cpus);

/*
 * Over an opened and mmapped evlist (psc_evlist__mmap). The evlist stays the caller's. Refuses
 * order=true unless every evsel samples TIME (session_config_evlist). NULL + errno.
 */
struct session *session__new(struct psc_evlist *evlist, const struct session_opts *opts,
				     const struct session_hooks *hooks);
void session__delete(struct session *s);

/*
 * Starts the target (enables the events or releases the command), then loops until a stop
 * condition; then disables the events, delivers everything left in the rings and returns 0,
 * the first -errno a hook returned, or a positive exit code (127/126) when the command could
 * not be started (said, hooks.say). SIGINT/SIGTERM/SIGUSR1 are blocked while it runs
 * and restored after.
 */
int session__run(struct session *s);

/* Asks the loop to stop after the current record (from a hook). */
void session__stop(struct session *s);

/*
 * Extra file descriptors for the loop to poll beside the rings: cb(ctx, fd, revents) runs when
 * epoll reports one of epoll_events (EPOLLIN, EPOLLOUT, ...) or EPOLLERR/EPOLLHUP on fd, and
 * returns as a hook does (0 go on, 1 stop, -errno stop with an error). epoll_events 0 keeps fd
 * registered without polling it (session__mod_fd turns polling on and off, e.g. POLLOUT only
 * while an output has data waiting). When the run ends (after the last records were delivered,
 * with SIGINT/SIGTERM still blocked) and when the session is deleted, every fd still registered
 * gets one call with revents SESSION_FD_END: finish there (an output writes what it still holds,
 * blocking); the fd is unregistered after it. The session never closes fd. Callable before or
 * during session__run, from hooks and callbacks too. 0 or -errno (-EEXIST: fd is registered).
 */
#define SESSION_FD_END (1u << 27) /* not an epoll bit */
int session__add_fd(struct session *s, int fd, uint32_t epoll_events,
		    int (*cb)(void *ctx, int fd, uint32_t revents), void *ctx);
int session__mod_fd(struct session *s, int fd, uint32_t epoll_events);
/* Unregisters fd (no SESSION_FD_END call). 0 or -ENOENT. */
int session__remove_fd(struct session *s, int fd);

/*
 * Switches the events on CPU cpu on or off while the run goes on (a profiler watching one CPU at
 * a time). 0 or -errno (-ENOENT: no event there).
 */
int session__enable_cpu(struct session *s, int cpu, bool on);

enum session_end session__end(const struct session *s);
/* The launched command's exit code (wait status mapped, 128+sig), -1 when there is none. */
int session__command_exit(const struct session *s);
void session__stats(const struct session *s, struct session_stats *out);
/* Per evsel (index in the evlist), all CPUs: samples seen and events lost. */
uint64_t session__evsel_samples(const struct session *s, int evsel_idx);
uint64_t session__evsel_lost(const struct session *s, int evsel_idx);
/* Its hits the kernel counted and dropped silently (kdrop.h): known once the run ended. */
uint64_t session__evsel_kdropped(const struct session *s, int evsel_idx);

/*
 * Says "EVENT: N events, M lost" per event, "EVENT: lost N events on cpu C" per event and CPU
 * that lost any, "EVENT: throttled N times ..." per event the kernel throttled,
 * then out-of-order/corrupt counts when not zero. interval: counts since
 * the previous interval line, else totals. With losses, the totals end with what helps (a
 * bigger -m and the value to try, a kernel filter, --no-order), and say when the backlog's
 * bound was reached; with opts.verbose, a line with the backlog's figures.
 */
void session__say_stats(struct session *s, bool interval);

#endif
