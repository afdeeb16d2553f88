/* Unit tests of common/output's whole lines: what reaches a pipe ends on a newline, a line longer
 * than the buffer is kept whole, and out__has_room leaves a flush's worth below the bound. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "output.h"

/* Line i: "i:" then i % 700 letters, so lines of 3 to ~710 bytes cross every boundary. */
static size_t line_of(unsigned int i, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%u:", i);
	unsigned int k, len = i % 700;

	for (k = 0; k < len && (size_t)n + 2 < size; k++)
		buf[n++] = (char)('a' + (i + k) % 26);
	buf[n++] = '\n';
	return (size_t)n;
}

/* Reads what the pipe holds now (non-blocking) and checks the lines from *next on; returns bytes.
 */
static size_t take(int rfd, unsigned int *next, char *rest, size_t *rest_len)
{
	static char buf[1 << 17];
	char want[1024];
	size_t total = 0, off, len;
	ssize_t n;

	while ((n = read(rfd, buf, sizeof(buf))) > 0) {
		total += (size_t)n;
		memcpy(rest + *rest_len, buf, (size_t)n);
		*rest_len += (size_t)n;
		/* whatever the pipe held ends on a line's end */
		assert_int_equal(rest[*rest_len - 1], '\n');
		for (off = 0; off < *rest_len; off += len) {
			len = line_of((*next)++, want, sizeof(want));
			assert_true(off + len <= *rest_len);
			assert_memory_equal(rest + off, want, len);
		}
		*rest_len = 0;
	}
	return total;
}

/*
 * A reader that is behind: the pipe fills, the rest is queued; what is in the pipe at any time
 * ends on a newline (old code: the pipe took whatever fit, ending inside a line), and all comes in
 * order once it reads.
 */
static void test_pipe_gets_whole_lines(void **state)
{
	int p[2], efd = eventfd(0, EFD_CLOEXEC);
	unsigned int i, next = 0, rounds;
	char line[1024], *rest = malloc(1 << 18);
	size_t rest_len = 0, len;
	struct out *o;

	(void)state;
	assert_non_null(rest);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	o = out__new(p[1], 4096);
	assert_non_null(o);
	assert_int_equal(out__watch(o, efd), 0);
	out__set_queue(o, true);
	for (i = 0, rounds = 0; i < 20000; i++) {
		len = line_of(i, line, sizeof(line));
		out__write(o, line, len);
		if (i % 97 == 96) {
			assert_int_equal(out__flush(o), 0);
			/* now and then the reader takes what the pipe holds, then the queue moves
			 */
			if (++rounds % 5 == 0) {
				take(p[0], &next, rest, &rest_len);
				assert_int_equal(out__drain(o), 0);
			}
		}
	}
	assert_int_equal(out__flush(o), 0);
	while (o->queued) {
		take(p[0], &next, rest, &rest_len);
		assert_int_equal(out__drain(o), 0);
	}
	take(p[0], &next, rest, &rest_len);
	assert_int_equal(next, 20000);
	out__delete(o);
	close(p[0]);
	close(p[1]);
	close(efd);
	free(rest);
}

/* Writes are cut at PIPE_BUF on a pipe and on a stream socket, both shareable with the traced
 * command's own output; a file takes any size. */
static void test_write_max_by_fd(void **state)
{
	int p[2], sv[2];
	FILE *f = tmpfile();
	struct out *o;

	(void)state;
	assert_non_null(f);
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	o = out__new(p[1], 4096);
	assert_non_null(o);
	assert_int_equal(o->write_max, PIPE_BUF);
	out__delete(o);
	o = out__new(sv[1], 4096);
	assert_non_null(o);
	assert_int_equal(o->write_max, PIPE_BUF);
	out__delete(o);
	o = out__new(fileno(f), 4096);
	assert_non_null(o);
	assert_int_equal(o->write_max, 0);
	out__delete(o);
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	fclose(f);
}

/* A line longer than the buffer grows it and reaches the fd whole, with the lines around it. */
static void test_long_line_whole(void **state)
{
	FILE *f = tmpfile();
	char big[10000], got[20100];
	struct out *o;
	size_t n;

	(void)state;
	assert_non_null(f);
	memset(big, 'x', sizeof(big));
	o = out__new(fileno(f), 16);
	assert_non_null(o);
	out__puts(o, "first\n");
	out__write(o, big, sizeof(big));
	out__puts(o, "\nlast\n");
	/* nothing of the long line was written before its end: "first" alone, or nothing */
	assert_true(o->written == 0 || o->written == 6);
	assert_int_equal(out__flush(o), 0);
	assert_int_equal(o->written, 6 + sizeof(big) + 6);
	n = (size_t)pread(fileno(f), got, sizeof(got), 0);
	assert_int_equal(n, 6 + sizeof(big) + 6);
	assert_memory_equal(got, "first\n", 6);
	assert_memory_equal(got + 6, big, sizeof(big));
	assert_memory_equal(got + 6 + sizeof(big), "\nlast\n", 6);
	out__delete(o);
	fclose(f);
}

/* Attached (queued), out__flush keeps an unfinished line for the next batch. */
static void test_flush_keeps_unfinished_line(void **state)
{
	int p[2], efd = eventfd(0, EFD_CLOEXEC);
	char buf[64];
	struct out *o;
	ssize_t n;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	o = out__new(p[1], 0);
	assert_int_equal(out__watch(o, efd), 0);
	out__set_queue(o, true);
	out__puts(o, "one\ntw");
	assert_int_equal(out__flush(o), 0);
	n = read(p[0], buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "one\n", 4);
	out__puts(o, "o\n");
	assert_int_equal(out__flush(o), 0);
	n = read(p[0], buf, sizeof(buf));
	assert_int_equal(n, 4);
	assert_memory_equal(buf, "two\n", 4);
	/* detached, a flush writes everything, the end of the output included */
	out__set_queue(o, false);
	out__puts(o, "end");
	assert_int_equal(out__flush(o), 0);
	n = read(p[0], buf, sizeof(buf));
	assert_int_equal(n, 3);
	out__delete(o);
	close(p[0]);
	close(p[1]);
	close(efd);
}

/* out__has_room: always for a file; for a queued pipe, while two buffers fit below the bound. */
static void test_has_room(void **state)
{
	int p[2], efd = eventfd(0, EFD_CLOEXEC);
	char line[1024];
	unsigned int i = 0;
	struct out *o;
	size_t len;

	(void)state;
	assert_int_equal(pipe2(p, O_CLOEXEC), 0);
	o = out__new(p[1], 4096);
	assert_true(out__has_room(o)); /* not queued: writes wait for the reader */
	assert_int_equal(out__watch(o, efd), 0);
	out__set_queue(o, true);
	o->queue_max = 256 * 1024;
	while (out__has_room(o)) {
		len = line_of(i++, line, sizeof(line));
		out__write(o, line, len);
		out__flush(o);
	}
	assert_true(o->queued + 2 * o->cap > o->queue_max);
	assert_true(o->queued <= o->queue_max);
	assert_int_equal(o->waits, 0);
	/* the reader takes it all, so that out__delete does not wait for it */
	assert_int_equal(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
	while (o->queued) {
		while (read(p[0], line, sizeof(line)) > 0)
			;
		assert_int_equal(out__drain(o), 0);
	}
	out__delete(o);
	close(p[0]);
	close(p[1]);
	close(efd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_gets_whole_lines),
		cmocka_unit_test(test_write_max_by_fd),
		cmocka_unit_test(test_long_line_whole),
		cmocka_unit_test(test_flush_keeps_unfinished_line),
		cmocka_unit_test(test_has_room),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
