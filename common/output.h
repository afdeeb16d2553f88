/* Buffered output to a file descriptor with sticky write errors, and a JSON-lines writer on top. */
#ifndef PERFSCOPE_COMMON_OUTPUT_H
#define PERFSCOPE_COMMON_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/*
 * Profilers write events here instead of stdio so that a write error is seen exactly: EPIPE
 * when the reader went away (`| head`), ENOSPC on a full disk. The first error is kept
 * (psc_out__error) and everything after it is discarded and counted, so a profiler checks once
 * per batch, stops cleanly and reports. Writes happen when the buffer fills and on
 * psc_out__flush(), which the session calls once per batch of events, not per line.
 * Not thread-safe.
 */
struct psc_out {
	char *buf;
	size_t len, cap;
	int fd;
	const char *name; /* for messages: the -o path, or "standard output" */
	int stop_fd; /* psc_out__watch: readable when waiting for room must end; else -1 */
	bool own_fd; /* fd is ours (-o FILE, or a private description of the pipe): closed at delete
		      */
	int err; /* first write error, -errno; 0 while all is well */
	uint64_t written; /* bytes that reached the fd */
	uint64_t dropped; /* bytes discarded after an error */
};

/* bufsz 0: 64 KiB. Returns NULL and sets errno. The fd is not owned. */
struct psc_out *psc_out__new(int fd, size_t bufsz);
/* -o FILE: output to path, created or truncated (0644) and closed at delete; NULL path: standard
 * output, as psc_out__new(STDOUT_FILENO). name is path (kept, not copied) or "standard output".
 * Returns NULL and sets errno. */
struct psc_out *psc_out__open(const char *path, size_t bufsz);
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
int psc_out__watch(struct psc_out *o, int stop_fd);
/* Flushes (errors ignored: check psc_out__flush first) and frees. NULL is a no-op. */
void psc_out__delete(struct psc_out *o);
/* Writes the buffer out. Returns 0 or the sticky -errno. */
int psc_out__flush(struct psc_out *o);
static inline int psc_out__error(const struct psc_out *o)
{
	return o->err;
}
/* Makes room for n bytes (flushing), returns where to write them, or NULL after an error. */
char *psc_out__reserve(struct psc_out *o, size_t n);

void psc_out__write_slow(struct psc_out *o, const void *p, size_t n);
static inline void psc_out__write(struct psc_out *o, const void *p, size_t n)
{
	if (o->cap - o->len >= n) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
	} else {
		psc_out__write_slow(o, p, n);
	}
}
static inline void psc_out__putc(struct psc_out *o, char c)
{
	if (o->len < o->cap)
		o->buf[o->len++] = c;
	else
		psc_out__write_slow(o, &c, 1);
}
static inline void psc_out__puts(struct psc_out *o, const char *s)
{
	psc_out__write(o, s, strlen(s));
}
void psc_out__printf(struct psc_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Decimal and 0x-hex integers without printf. */
void psc_out__u64(struct psc_out *o, uint64_t v);
void psc_out__i64(struct psc_out *o, int64_t v);
void psc_out__hex(struct psc_out *o, uint64_t v);
/* v padded with spaces on the left to width (text columns). */
void psc_out__u64_width(struct psc_out *o, uint64_t v, int width);

/*
 * JSON writer: one object per line. Commas and nesting are tracked, so a profiler writes
 *
 *   psc_json__begin(&j, out);           {
 *   psc_json__key(&j, "cpu");           "cpu":
 *   psc_json__u64(&j, 1);               1
 *   psc_json__key(&j, "stack");         ,"stack":
 *   psc_json__arr(&j);                  [
 *   psc_json__str(&j, "main");          "main"
 *   psc_json__end(&j);                  ]
 *   psc_json__end_line(&j);             }\n
 *
 * Strings are escaped per RFC 8259; bytes that are not valid UTF-8 become U+FFFD so that the
 * line stays valid JSON whatever a kernel string holds. NaN and infinities are written as null.
 */
#define PSC_JSON_MAX_DEPTH 32
struct psc_json {
	struct psc_out *out;
	int depth;
	bool after_key;
	uint32_t has_items; /* bit d: container at depth d has an item */
	uint32_t is_array; /* bit d: container at depth d is an array */
};

void psc_json__begin(struct psc_json *j, struct psc_out *out);
void psc_json__key(struct psc_json *j, const char *key);
void psc_json__obj(struct psc_json *j);
void psc_json__arr(struct psc_json *j);
void psc_json__end(struct psc_json *j);
/* Closes every open container and ends the line. */
void psc_json__end_line(struct psc_json *j);
void psc_json__str(struct psc_json *j, const char *s);
void psc_json__strn(struct psc_json *j, const char *s, size_t n);
void psc_json__u64(struct psc_json *j, uint64_t v);
void psc_json__i64(struct psc_json *j, int64_t v);
void psc_json__dbl(struct psc_json *j, double v);
void psc_json__bool(struct psc_json *j, bool v);
void psc_json__null(struct psc_json *j);
/* "0x..." as a JSON string: addresses exceed the 2^53 integers JSON readers keep exact. */
void psc_json__hex(struct psc_json *j, uint64_t v);

/*
 * Per-event writers render what repeats once: a key or value already in JSON form is written as
 * is. PSC_JSON_KEY takes a string literal that needs no escaping (plain ASCII names).
 */
void psc_json__raw_key(struct psc_json *j, const char *quoted_colon, size_t n);
void psc_json__raw(struct psc_json *j, const char *json, size_t n);
#define PSC_JSON_KEY(j, lit) psc_json__raw_key((j), "\"" lit "\":", sizeof(lit) + 2)
/* s as a JSON string ("...", escaped), followed by ':' when key; malloc'd, NUL-terminated, its
 * length in *len. NULL when out of memory. */
char *psc_json_render(const char *s, bool key, size_t *len);

/* Escaped string contents (no quotes) into out; shared with writers of other formats. */
void psc_json_escape(struct psc_out *out, const char *s, size_t n);

#endif
