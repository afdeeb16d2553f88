/* Buffered fd output with sticky errors (EPIPE, ENOSPC), a bounded queue for slow readers, and the
 * JSON-lines writer. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "session.h"

/*
 * Queue chunks: below glibc's mmap threshold, so that taking and giving one back is cheap. A
 * chunk holds whole lines, so that what is written from it ends on a newline; a line longer than
 * OUT_CHUNK gets a chunk of its own size (not kept as a spare).
 */
#define OUT_CHUNK (64u * 1024)
#define MAX_SPARE 4
/* the longest line the buffer grows for (a stack of thousands of frames on one line fits) */
#define OUT_LINE_MAX (4u << 20)

struct out_chunk {
	struct out_chunk *next;
	size_t rd, wr; /* written to the fd up to rd; data up to wr */
	size_t cap; /* OUT_CHUNK, or the size of the one long line it holds */
	char data[];
};

/*
 * The length of the next write(2) of p[0..n): whole lines, so that a command sharing our stdout
 * puts its bytes between our lines, never inside one; at most write_max (PIPE_BUF on a pipe,
 * where such a write is atomic, all or nothing), except a single line longer than that, written
 * whole. n when p holds no newline (the end of the output, written as it is).
 */
static size_t piece_len(const struct out *o, const char *p, size_t n)
{
	const char *nl;

	if (!o->write_max || n <= o->write_max)
		return n;
	nl = memrchr(p, '\n', o->write_max);
	if (nl)
		return (size_t)(nl - p) + 1;
	nl = memchr(p + o->write_max, '\n', n - o->write_max);
	return nl ? (size_t)(nl - p) + 1 : n;
}

/* Bytes of p[0..n) up to and including its last newline; 0 without one. */
static size_t lines_len(const char *p, size_t n)
{
	const char *nl = n ? memrchr(p, '\n', n) : NULL;

	return nl ? (size_t)(nl - p) + 1 : 0;
}

/*
 * write_max for fd: PIPE_BUF on a pipe, and on a stream socket (a journal's or a supervisor's
 * stdout, shared with the traced command too: small writes are what such a socket takes whole,
 * in practice); elsewhere any size (a write there ends on a newline).
 */
static size_t write_max_of(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) ? PIPE_BUF : 0;
}

struct out *out__new(int fd, size_t bufsz)
{
	struct out *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->cap = bufsz ? bufsz : 64 * 1024;
	o->buf = malloc(o->cap);
	if (!o->buf) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	o->fd = fd;
	o->stop_fd = -1;
	o->write_max = write_max_of(fd);
	return o;
}

struct out *out__open(const char *path, size_t bufsz)
{
	struct out *o;
	int fd, saved;

	if (!path) {
		o = out__new(STDOUT_FILENO, bufsz);
		if (o)
			o->name = "standard output";
		return o;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	o = out__new(fd, bufsz);
	if (!o) {
		saved = errno;
		close(fd);
		errno = saved;
		return NULL;
	}
	o->own_fd = true;
	o->name = path;
	return o;
}

int out__watch(struct out *o, int stop_fd)
{
	char path[64];
	struct stat st;
	int fd;

	if (fstat(o->fd, &st))
		return -errno;
	if (S_ISFIFO(st.st_mode) && o->own_fd) {
		/* -o FIFO: the description is ours alone already */
		fd = fcntl(o->fd, F_GETFL);
		if (fd < 0 || fcntl(o->fd, F_SETFL, fd | O_NONBLOCK))
			return -errno;
		o->nonblock = true;
	} else if (S_ISFIFO(st.st_mode)) {
		/* a new open file description: O_NONBLOCK on it is ours alone */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", o->fd);
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		o->fd = fd;
		o->own_fd = true;
		o->nonblock = true;
	} else if (S_ISSOCK(st.st_mode)) {
		/* a socket cannot be opened again: each send says MSG_DONTWAIT instead */
		o->sock = true;
		o->nonblock = true;
	}
	o->stop_fd = stop_fd;
	return 0;
}

/* ---- the queue ---- */

static void chunk_free(struct out *o, struct out_chunk *c)
{
	struct out_chunk *s;
	int n = 0;

	for (s = o->q_spare; s; s = s->next)
		n++;
	if (n >= MAX_SPARE || c->cap != OUT_CHUNK) {
		free(c);
		return;
	}
	c->next = o->q_spare;
	o->q_spare = c;
}

/* A new chunk at the queue's end, for at least n bytes; NULL when out of memory. */
static struct out_chunk *chunk_add(struct out *o, size_t n)
{
	struct out_chunk *c = NULL;

	if (n <= OUT_CHUNK) {
		n = OUT_CHUNK;
		c = o->q_spare;
		if (c)
			o->q_spare = c->next;
	}
	if (!c && !(c = malloc(sizeof(*c) + n)))
		return NULL;
	c->next = NULL;
	c->rd = c->wr = 0;
	c->cap = n;
	if (o->q_tail)
		o->q_tail->next = c;
	else
		o->q_head = c;
	o->q_tail = c;
	return c;
}

/* Copies n bytes to the end of the queue, no line split between two chunks. */
static bool queue_append(struct out *o, const char *p, size_t n)
{
	struct out_chunk *c = o->q_tail;
	const char *nl;
	size_t take;

	o->queued += n;
	o->queued_total += n;
	if (o->queued > o->queued_peak)
		o->queued_peak = o->queued;
	while (n) {
		take = c ? c->cap - c->wr : 0;
		if (take < n)
			take = lines_len(p, take);
		else
			take = n;
		if (!take) {
			/* a new chunk, large enough for the first line */
			nl = memchr(p, '\n', n);
			c = chunk_add(o, nl ? (size_t)(nl - p) + 1 : n);
			if (!c)
				break;
			continue;
		}
		memcpy(c->data + c->wr, p, take);
		c->wr += take;
		p += take;
		n -= take;
	}
	if (n) {
		o->queued -= n;
		o->dropped += n;
		o->err = -ENOMEM;
		return false;
	}
	return true;
}

/* An error: what the queue holds will never be written. */
static void queue_drop(struct out *o)
{
	struct out_chunk *c;

	o->dropped += o->queued;
	o->queued = 0;
	while ((c = o->q_head)) {
		o->q_head = c->next;
		chunk_free(o, c);
	}
	o->q_tail = NULL;
}

void out__delete(struct out *o)
{
	struct out_chunk *c;

	if (!o)
		return;
	if (o->sess)
		session__remove_fd(o->sess, o->fd);
	o->sess = NULL;
	o->async = false;
	out__flush(o);
	queue_drop(o);
	while ((c = o->q_spare)) {
		o->q_spare = c->next;
		free(c);
	}
	if (o->own_fd)
		close(o->fd);
	free(o->buf);
	free(o);
}

/*
 * Once a stop signal is pending, a reader that makes room within this is slow (| gzip, ssh), not
 * gone: its output is still written, and a Ctrl-C does not drop the last events.
 */
#define STOP_GRACE_MS 1000

/*
 * Waits until o->fd takes more; false with errno set (EINTR: the stop fd turned readable and the
 * pipe took nothing for STOP_GRACE_MS).
 */
static bool wait_room(struct out *o)
{
	struct pollfd p[2] = { { .fd = o->fd, .events = POLLOUT },
			       { .fd = o->stop_fd, .events = POLLIN } };
	int n;

	if (!o->stopping) {
		if (poll(p, o->stop_fd >= 0 ? 2 : 1, -1) < 0)
			return errno == EINTR;
		if ((p[0].revents & (POLLOUT | POLLERR | POLLHUP)) || !(p[1].revents & POLLIN))
			return true;
		o->stopping = true; /* from now on, every wait ends after the grace */
	}
	n = poll(p, 1, STOP_GRACE_MS);
	if (n > 0 || (n < 0 && errno == EINTR))
		return true;
	errno = EINTR;
	return false;
}

static ssize_t raw_write(struct out *o, const char *p, size_t n)
{
	if (o->sock)
		return send(o->fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return write(o->fd, p, n);
}

/*
 * Writes up to n bytes of p; block: waits for the reader (wait_room), else stops where the fd
 * would block. Returns the bytes written; a failure sets the sticky error.
 */
static size_t write_some(struct out *o, const char *p, size_t n, bool block)
{
	size_t off = 0;
	ssize_t w;

	while (off < n) {
		w = raw_write(o, p + off, piece_len(o, p + off, n - off));
		if (w > 0) {
			off += w;
			o->written += w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		/* A non-blocking stdout (inherited, or ours from out__watch) */
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!block)
				break;
			if (wait_room(o))
				continue;
		}
		o->err = w < 0 ? -errno : -EIO;
		break;
	}
	return off;
}

/* Writes the queue's front until it holds at most keep bytes (block) or the fd is full. */
static void queue_write(struct out *o, bool block, uint64_t keep)
{
	struct out_chunk *c;
	size_t n, w;

	while (!o->err && (c = o->q_head) && o->queued > keep) {
		n = c->wr - c->rd;
		w = write_some(o, c->data + c->rd, n, block);
		c->rd += w;
		o->queued -= w;
		if (c->rd == c->wr) {
			o->q_head = c->next;
			if (!o->q_head)
				o->q_tail = NULL;
			chunk_free(o, c);
		} else if (!block || o->err) {
			break;
		}
	}
	if (o->err)
		queue_drop(o);
}

/* The session polls for POLLOUT exactly while the queue holds something. */
static void want_pollout(struct out *o)
{
	bool want = o->queued && !o->err;

	if (!o->sess || want == o->polling)
		return;
	if (!session__mod_fd(o->sess, o->fd, want ? EPOLLOUT : 0))
		o->polling = want;
}

/* Attached: hands the buffer's first len bytes to the fd as far as it takes them now, the rest to
 * the queue. */
static int flush_async(struct out *o, size_t len)
{
	uint64_t max = o->queue_max ? o->queue_max : OUT_QUEUE_DEFAULT;
	size_t off = 0, rest;

	if (o->queued)
		queue_write(o, false, 0);
	if (!o->queued && !o->err)
		off = write_some(o, o->buf, len, false);
	rest = len - off;
	if (rest && !o->err && o->queued + rest > max) {
		/* past the bound: wait for the reader, as without a queue, until the rest fits */
		o->waits++;
		queue_write(o, true, rest < max ? max - rest : 0);
		if (rest >= max && !o->err) {
			off += write_some(o, o->buf + off, rest, true);
			rest = len - off;
		}
	}
	if (o->err)
		o->dropped += rest;
	else if (rest)
		queue_append(o, o->buf + off, rest);
	want_pollout(o);
	return o->err;
}

/* Writes (or queues) the buffer's first len bytes and keeps the rest, moved to its start. */
static int flush_len(struct out *o, size_t len)
{
	size_t off;

	if (o->err) {
		o->dropped += o->len;
		o->len = 0;
		return o->err;
	}
	if (o->async) {
		flush_async(o, len);
	} else {
		/* what a detached output still queues goes first */
		queue_write(o, true, 0);
		off = o->err ? 0 : write_some(o, o->buf, len, true);
		if (o->err)
			o->dropped += len - off;
	}
	if (o->err) {
		o->dropped += o->len - len;
		o->len = 0;
		return o->err;
	}
	o->len -= len;
	memmove(o->buf, o->buf + len, o->len);
	return 0;
}

int out__flush(struct out *o)
{
	/* attached, a line not finished yet waits for its end: the next batch writes it */
	return flush_len(o, o->async ? lines_len(o->buf, o->len) : o->len);
}

/*
 * Makes room for n more bytes in the buffer: writes its whole lines, and grows it when the
 * unfinished line and n do not fit. 0 or the sticky -errno.
 */
static int make_room(struct out *o, size_t n)
{
	size_t cap, whole;
	char *nb;

	if (o->cap - o->len >= n)
		return 0;
	whole = lines_len(o->buf, o->len);
	/* a "line" of megabytes is not text a reader splits on: written as it comes */
	if (!whole && o->len >= OUT_LINE_MAX)
		whole = o->len;
	if (flush_len(o, whole))
		return o->err;
	if (o->cap - o->len >= n)
		return 0;
	for (cap = o->cap * 2; cap - o->len < n; cap *= 2)
		;
	nb = realloc(o->buf, cap);
	if (!nb) {
		o->err = -ENOMEM;
		return o->err;
	}
	o->buf = nb;
	o->cap = cap;
	return 0;
}

/* The session's callback: POLLOUT (or an error) on the fd, or the end of the run. */
static int on_fd(void *ctx, int fd, uint32_t revents)
{
	struct out *o = ctx;

	if (revents & SESSION_FD_END) {
		/* stopped by a signal: a reader that takes nothing for a while is given up */
		if (session__end(o->sess) == SESSION_SIGNAL)
			o->stopping = true;
		o->sess = NULL;
		o->async = false;
		o->polling = false;
		out__flush(o);
		return 0;
	}
	if (out__drain(o))
		return 1;
	if (o->on_room && out__has_room(o))
		o->on_room(o->on_room_ctx);
	return o->err ? 1 : 0;
}

bool out__has_room(const struct out *o)
{
	uint64_t max = o->queue_max ? o->queue_max : OUT_QUEUE_DEFAULT;

	/* a buffer, and the end of the line it cut (whole lines are written, the rest kept) */
	return !o->async || o->queued + 2 * o->cap <= max;
}

void out__on_room(struct out *o, void (*fn)(void *ctx), void *ctx)
{
	o->on_room = fn;
	o->on_room_ctx = ctx;
}

void out__set_queue(struct out *o, bool on)
{
	o->async = on && o->nonblock;
}

int out__drain(struct out *o)
{
	queue_write(o, false, 0);
	want_pollout(o);
	return o->err;
}

int out__attach(struct out *o, struct session *s)
{
	int err;

	if (!o->nonblock || o->sess)
		return 0;
	err = session__add_fd(s, o->fd, 0, on_fd, o);
	if (err)
		return err;
	o->sess = s;
	out__set_queue(o, true);
	return 0;
}

void out__say_stats(const struct out *o, const struct say *to)
{
	if (!o->queued_total && !o->waits)
		return;
	say(to,
	    "output: %.1f MiB waited in memory for %s to take it; at most %.1f "
	    "MiB at once (bound %.0f MiB); %llu writes waited for the reader at the bound",
	    (double)o->queued_total / (1 << 20), o->name ? o->name : "the output",
		(double)o->queued_peak / (1 << 20),
		(double)(o->queue_max ? o->queue_max : OUT_QUEUE_DEFAULT) / (1 << 20),
		(unsigned long long)o->waits);
}

char *out__reserve(struct out *o, size_t n)
{
	if (o->err || make_room(o, n))
		return NULL;
	return o->buf + o->len;
}

void out__write_slow(struct out *o, const void *p, size_t n)
{
	const char *s = p;
	size_t room;

	if (o->err) {
		o->dropped += n;
		return;
	}
	while (n) {
		room = o->cap - o->len;
		if (!room) {
			/* whole lines out; the unfinished one stays (the buffer grows for it) */
			if (make_room(o, 1)) {
				o->dropped += n;
				return;
			}
			continue;
		}
		if (room > n)
			room = n;
		memcpy(o->buf + o->len, s, room);
		o->len += room;
		s += room;
		n -= room;
	}
}

void out__printf(struct out *o, const char *fmt, ...)
{
	va_list ap;
	size_t room = o->cap - o->len;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < room) {
		o->len += n;
		return;
	}
	p = out__reserve(o, (size_t)n + 1);
	if (!p) {
		o->dropped += n;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	o->len += n;
}

/*
 * Decimal digits of v ending at end, two per division: numbers are written for every field of
 * every event, and a division is the costly part.
 */
static char *u64_digits(char *end, uint64_t v)
{
	static const char pairs[] =
		"00010203040506070809101112131415161718192021222324252627282930"
		"31323334353637383940414243444546474849505152535455565758596061"
		"6263646566676869707172737475767778798081828384858687888990919293"
		"949596979899";

	while (v >= 100) {
		end -= 2;
		memcpy(end, pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, pairs + 2 * v, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

void out__u64(struct out *o, uint64_t v)
{
	char tmp[20], *p = u64_digits(tmp + sizeof(tmp), v);

	out__write(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

void out__u64_width(struct out *o, uint64_t v, int width)
{
	char tmp[20], *p = u64_digits(tmp + sizeof(tmp), v);
	int n = (int)(tmp + sizeof(tmp) - p);

	for (width -= n; width > 0; width--)
		out__putc(o, ' ');
	out__write(o, p, (size_t)n);
}

void out__i64(struct out *o, int64_t v)
{
	if (v < 0) {
		out__putc(o, '-');
		out__u64(o, -(uint64_t)v);
	} else {
		out__u64(o, v);
	}
}

void out__hex(struct out *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[18];
	int i = sizeof(tmp);

	do {
		tmp[--i] = digits[v & 15];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	out__write(o, tmp + i, sizeof(tmp) - i);
}
