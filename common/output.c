/* Buffered fd output with sticky errors (EPIPE, ENOSPC) and the JSON-lines writer. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

struct psc_out *psc_out__new(int fd, size_t bufsz)
{
	struct psc_out *o = calloc(1, sizeof(*o));

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
	return o;
}

struct psc_out *psc_out__open(const char *path, size_t bufsz)
{
	struct psc_out *o;
	int fd, saved;

	if (!path) {
		o = psc_out__new(STDOUT_FILENO, bufsz);
		if (o)
			o->name = "standard output";
		return o;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return NULL;
	o = psc_out__new(fd, bufsz);
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

int psc_out__watch(struct psc_out *o, int stop_fd)
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
	} else if (S_ISFIFO(st.st_mode)) {
		/* a new open file description: O_NONBLOCK on it is ours alone */
		snprintf(path, sizeof(path), "/proc/self/fd/%d", o->fd);
		fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		o->fd = fd;
		o->own_fd = true;
	}
	o->stop_fd = stop_fd;
	return 0;
}

void psc_out__delete(struct psc_out *o)
{
	if (!o)
		return;
	psc_out__flush(o);
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
static bool wait_room(struct psc_out *o)
{
	struct pollfd p[2] = { { .fd = o->fd, .events = POLLOUT },
			       { .fd = o->stop_fd, .events = POLLIN } };

	if (poll(p, o->stop_fd >= 0 ? 2 : 1, -1) < 0)
		return errno == EINTR;
	if (!(p[0].revents & (POLLOUT | POLLERR | POLLHUP)) && (p[1].revents & POLLIN)) {
		if (poll(p, 1, STOP_GRACE_MS) > 0)
			return true;
		errno = EINTR;
		return false;
	}
	return true;
}

int psc_out__flush(struct psc_out *o)
{
	size_t off = 0;
	ssize_t n;

	if (o->err) {
		o->dropped += o->len;
		o->len = 0;
		return o->err;
	}
	while (off < o->len) {
		n = write(o->fd, o->buf + off, o->len - off);
		if (n > 0) {
			off += n;
			o->written += n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		/* A non-blocking stdout (inherited, or ours from psc_out__watch) */
		if (n < 0 && errno == EAGAIN && wait_room(o))
			continue;
		o->err = n < 0 ? -errno : -EIO;
		break;
	}
	if (o->err)
		o->dropped += o->len - off;
	o->len = 0;
	return o->err;
}

char *psc_out__reserve(struct psc_out *o, size_t n)
{
	if (o->err)
		return NULL;
	if (o->cap - o->len < n) {
		psc_out__flush(o);
		if (o->err)
			return NULL;
		if (o->cap < n) {
			char *nb = realloc(o->buf, n);

			if (!nb) {
				o->err = -ENOMEM;
				return NULL;
			}
			o->buf = nb;
			o->cap = n;
		}
	}
	return o->buf + o->len;
}

void psc_out__write_slow(struct psc_out *o, const void *p, size_t n)
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
			if (psc_out__flush(o)) {
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

void psc_out__printf(struct psc_out *o, const char *fmt, ...)
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
	p = psc_out__reserve(o, (size_t)n + 1);
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

void psc_out__u64(struct psc_out *o, uint64_t v)
{
	char tmp[20], *p = u64_digits(tmp + sizeof(tmp), v);

	psc_out__write(o, p, (size_t)(tmp + sizeof(tmp) - p));
}

void psc_out__u64_width(struct psc_out *o, uint64_t v, int width)
{
	char tmp[20], *p = u64_digits(tmp + sizeof(tmp), v);
	int n = (int)(tmp + sizeof(tmp) - p);

	for (width -= n; width > 0; width--)
		psc_out__putc(o, ' ');
	psc_out__write(o, p, (size_t)n);
}

void psc_out__i64(struct psc_out *o, int64_t v)
{
	if (v < 0) {
		psc_out__putc(o, '-');
		psc_out__u64(o, -(uint64_t)v);
	} else {
		psc_out__u64(o, v);
	}
}

void psc_out__hex(struct psc_out *o, uint64_t v)
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
	psc_out__write(o, tmp + i, sizeof(tmp) - i);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid (RFC 3629 table). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void psc_json_escape(struct psc_out *out, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0, len;
	char esc[6];

	while (i < n) {
		unsigned char c = s[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80 && (len = utf8_len(s + i, n - i))) {
			i += len;
			continue;
		}
		psc_out__write(out, s + run, i - run);
		switch (c) {
		case '"':
			psc_out__write(out, "\\\"", 2);
			break;
		case '\\':
			psc_out__write(out, "\\\\", 2);
			break;
		case '\n':
			psc_out__write(out, "\\n", 2);
			break;
		case '\t':
			psc_out__write(out, "\\t", 2);
			break;
		case '\r':
			psc_out__write(out, "\\r", 2);
			break;
		default:
			if (c < 0x20) {
				memcpy(esc, "\\u00", 4);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 15];
				psc_out__write(out, esc, 6);
			} else {
				psc_out__write(out, "\xef\xbf\xbd", 3); /* U+FFFD */
			}
		}
		run = ++i;
	}
	psc_out__write(out, s + run, n - run);
}

static void sep(struct psc_json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->has_items & (1u << j->depth))
		psc_out__putc(j->out, ',');
	j->has_items |= 1u << j->depth;
}

void psc_json__begin(struct psc_json *j, struct psc_out *out)
{
	*j = (struct psc_json){ .out = out };
	psc_json__obj(j);
}

void psc_json__key(struct psc_json *j, const char *key)
{
	sep(j);
	psc_out__putc(j->out, '"');
	psc_json_escape(j->out, key, strlen(key));
	psc_out__write(j->out, "\":", 2);
	j->after_key = true;
}

void psc_json__raw_key(struct psc_json *j, const char *quoted_colon, size_t n)
{
	sep(j);
	psc_out__write(j->out, quoted_colon, n);
	j->after_key = true;
}

void psc_json__raw(struct psc_json *j, const char *json, size_t n)
{
	sep(j);
	psc_out__write(j->out, json, n);
}

char *psc_json_render(const char *s, bool key, size_t *len)
{
	size_t n = strlen(s);
	/* an escape is at most 6 bytes per input byte; quotes, ':' and NUL */
	struct psc_out o = { .fd = -1, .stop_fd = -1, .cap = 6 * n + 4 };

	o.buf = malloc(o.cap);
	if (!o.buf)
		return NULL;
	psc_out__putc(&o, '"');
	psc_json_escape(&o, s, n);
	psc_out__putc(&o, '"');
	if (key)
		psc_out__putc(&o, ':');
	o.buf[o.len] = '\0';
	*len = o.len;
	return o.buf;
}

static void open_container(struct psc_json *j, char c, bool array)
{
	sep(j);
	psc_out__putc(j->out, c);
	if (j->depth + 1 >= PSC_JSON_MAX_DEPTH)
		return; /* deeper nesting is a programming error; keep the text balanced anyway */
	j->depth++;
	j->has_items &= ~(1u << j->depth);
	if (array)
		j->is_array |= 1u << j->depth;
	else
		j->is_array &= ~(1u << j->depth);
}

void psc_json__obj(struct psc_json *j)
{
	open_container(j, '{', false);
}

void psc_json__arr(struct psc_json *j)
{
	open_container(j, '[', true);
}

void psc_json__end(struct psc_json *j)
{
	if (j->depth <= 0)
		return;
	j->after_key = false;
	psc_out__putc(j->out, j->is_array & (1u << j->depth) ? ']' : '}');
	j->depth--;
}

void psc_json__end_line(struct psc_json *j)
{
	if (j->after_key)
		psc_json__null(j);
	while (j->depth > 0)
		psc_json__end(j);
	psc_out__putc(j->out, '\n');
}

void psc_json__strn(struct psc_json *j, const char *s, size_t n)
{
	sep(j);
	psc_out__putc(j->out, '"');
	psc_json_escape(j->out, s, n);
	psc_out__putc(j->out, '"');
}

void psc_json__str(struct psc_json *j, const char *s)
{
	if (!s) {
		psc_json__null(j);
		return;
	}
	psc_json__strn(j, s, strlen(s));
}

void psc_json__u64(struct psc_json *j, uint64_t v)
{
	sep(j);
	psc_out__u64(j->out, v);
}

void psc_json__i64(struct psc_json *j, int64_t v)
{
	sep(j);
	psc_out__i64(j->out, v);
}

void psc_json__dbl(struct psc_json *j, double v)
{
	if (!isfinite(v)) {
		psc_json__null(j);
		return;
	}
	char tmp[32];

	sep(j);
	/* The shortest of %.15g/%.17g that reads back as v: 0.1, not 0.10000000000000001. */
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	psc_out__puts(j->out, tmp);
}

void psc_json__bool(struct psc_json *j, bool v)
{
	sep(j);
	psc_out__puts(j->out, v ? "true" : "false");
}

void psc_json__null(struct psc_json *j)
{
	sep(j);
	psc_out__write(j->out, "null", 4);
}

void psc_json__hex(struct psc_json *j, uint64_t v)
{
	sep(j);
	psc_out__putc(j->out, '"');
	psc_out__hex(j->out, v);
	psc_out__putc(j->out, '"');
}
