/* Buffered output to a file descriptor with sticky write errors, and a JSON-lines writer on top. */
#ifndef PERFSCOPE_COMMON_OUTPUT_H
#define PERFSCOPE_COMMON_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "say.h"

/*
 * Profilers write events here instead of stdio so that a write error is seen exactly: EPIPE
 * when the reader went away (`| head`), ENOSPC on a full disk. The first error is kept
 * (out__error) and everything after it is discarded and counted, so a profiler checks once
 * per batch, stops cleanly and reports. Writes happen when the buffer fills and on
 * out__flush(), which the session calls once per batch of events, not per line.
 *
 * Every write(2) ends on a newline, and to a pipe writes at most PIPE_BUF (atomic there), so
 * that a traced command sharing our stdout puts its output between our lines, never inside one.
 * A full buffer writes its whole lines and keeps the unfinished one (growing for a line longer
 * than itself); attached to a session, out__flush keeps it too, until the line ends.
 *
 * A slow or stalled reader (`| less`, `| jq`, ssh, a loaded machine) must not stop the session
 * from draining the rings: once out__watch made the pipe or socket non-blocking for us and
 * out__attach gave it to the session, a write it would not take now is queued in memory (chunks
 * of 64 KiB, bounded by queue_max, OUT_QUEUE_DEFAULT) and out__flush returns at once; the
 * session polls the fd for POLLOUT and writes the queue as the reader takes it. Only past the
 * bound does a write wait for the reader, as without a queue. When the run ends, what is queued
 * is written, waiting for the reader (a stop signal then gives up as out__watch says).
 * Not thread-safe.
 */
struct out_chunk;
struct session;

/*
 * Default bound on what waits in memory for a slow reader: 64 MiB, about 300,000 JSON events
 * (a second of a burst at the highest rates traced here, the whole 200,000-event burst of the
 * late-reader test) or a minute of a busy sched_switch trace; what a pager or jq is behind by in
 * practice, far below what a stalled reader would otherwise cost: the events themselves.
 */
#define OUT_QUEUE_DEFAULT (64ull << 20)

struct out {
	char *buf;
	size_t len, cap;
	int fd;
	const char *name; /* for messages: the -o path, or "standard output" */
	int stop_fd; /* out__watch: readable when waiting for room must end; else -1 */
	bool own_fd; /* fd is ours (-o FILE, or a private description of the pipe): closed at delete
		      */
	bool nonblock; /* out__watch: writes to fd never block (a pipe or a socket) */
	bool sock; /* fd is a socket: written with send(MSG_DONTWAIT) */
	size_t write_max; /* PIPE_BUF on a pipe or socket: the most one write(2) takes; 0: any */
	bool async; /* out__attach: writes that would block are queued */
	bool polling; /* the session polls fd for POLLOUT */
	bool stopping; /* a stop came: waiting for the reader ends after STOP_GRACE_MS idle */
	int err; /* first write error, -errno; 0 while all is well */
	uint64_t written; /* bytes that reached the fd */
	uint64_t dropped; /* bytes discarded after an error */
	/* the queue: written data the fd did not take yet, oldest first */
	struct out_chunk *q_head, *q_tail, *q_spare;
	uint64_t queued; /* bytes in it */
	uint64_t queue_max; /* its bound; 0: OUT_QUEUE_DEFAULT */
	uint64_t queued_total, queued_peak; /* bytes that went through it, most at once */
	uint64_t waits; /* writes that waited for the reader: the queue at its bound */
	struct session *sess; /* out__attach */
	/* out__on_room: called when the reader took some of the queue and there is room again */
	void (*on_room)(void *ctx);
	void *on_room_ctx;
};

/* bufsz 0: 64 KiB. Returns NULL and sets errno. The fd is not owned. */
struct out *out__new(int fd, size_t bufsz);
/* -o FILE: output to path, created or truncated (0644) and closed at delete; NULL path: standard
 * output, as out__new(STDOUT_FILENO). name is path (kept, not copied) or "standard output".
 * Returns NULL and sets errno. */
struct out *out__open(const char *path, size_t bufsz);
/*
 * A profiler stopped by SIGINT/SIGTERM must not stay blocked in write(2) on a pipe its reader has
 * stopped reading (`| less` scrolled back, a stuck consumer): those signals are blocked for
 * signalfd/sigtimedwait, so they would wait behind the full pipe. When o writes to a pipe, this
 * gives it a private non-blocking description of it (the command sharing stdout keeps blocking
 * writes) and waits for room with poll() on the pipe and on stop_fd (a signalfd of the stop
 * signals, polled, never read). When stop_fd turns readable first and the pipe then takes nothing
 * for a second (a slow reader still gets the rest), the error is -EINTR: the rest is dropped and
 * counted, as after EPIPE. Returns 0 or -errno (o unchanged).
 */
int out__watch(struct out *o, int stop_fd);
/*
 * After out__watch, lets the session s poll o's pipe or socket (session__add_fd): writes it
 * would not take now are queued as described above. A no-op for files and terminals (writes do
 * not wait for a reader there). The session finishes o at the end of its run (the queue is
 * written, then o is detached) or o unregisters itself at out__delete. 0 or -errno.
 */
int out__attach(struct out *o, struct session *s);
/*
 * The queue without a session (out__attach turns it on): on, writes the fd would not take now
 * are queued, and out__drain writes them as far as the fd takes them now (0 or the sticky
 * -errno); off, out__flush waits for the reader again, the queue first. Queuing is only for
 * what out__watch made non-blocking (a pipe or a socket).
 */
void out__set_queue(struct out *o, bool on);
int out__drain(struct out *o);
/*
 * Whether a buffer's worth more can be handed to the output now without waiting for the reader:
 * always, unless attached and the queue is within two buffers of its bound. A profiler that keeps
 * its events aside meanwhile (rawq) formats them when fn is called: the reader took some.
 */
bool out__has_room(const struct out *o);
void out__on_room(struct out *o, void (*fn)(void *ctx), void *ctx);
/* "output: ..." what went through the queue, for -v, said to to. */
void out__say_stats(const struct out *o, const struct say *to);
/* Flushes (errors ignored: check out__flush first) and frees. NULL is a no-op. */
void out__delete(struct out *o);
/*
 * Writes the buffer out, or, attached to a session, hands it to the fd or to the queue without
 * waiting (unless the queue is at its bound). Returns 0 or the sticky -errno.
 */
int out__flush(struct out *o);
static inline int out__error(const struct out *o)
{
	return o->err;
}
/* Makes room for n bytes (flushing), returns where to write them, or NULL after an error. */
char *out__reserve(struct out *o, size_t n);

void out__write_slow(struct out *o, const void *p, size_t n);
static inline void out__write(struct out *o, const void *p, size_t n)
{
	if (o->cap - o->len >= n) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
	} else {
		out__write_slow(o, p, n);
	}
}
static inline void out__putc(struct out *o, char c)
{
	if (o->len < o->cap)
		o->buf[o->len++] = c;
	else
		out__write_slow(o, &c, 1);
}
static inline void out__puts(struct out *o, const char *s)
{
	out__write(o, s, strlen(s));
}
void out__printf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Decimal and 0x-hex integers without printf. */
void out__u64(struct out *o, uint64_t v);
void out__i64(struct out *o, int64_t v);
void out__hex(struct out *o, uint64_t v);
/* v padded with spaces on the left to width (text columns). */
void out__u64_width(struct out *o, uint64_t v, int width);

/* The JSON writer that goes with it (most writers of events write both). */
#include "json.h"

#endif
