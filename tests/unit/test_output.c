/* Unit tests of common/output: buffering, sticky write errors (EPIPE, ENOSPC), the queue for slow
 * readers, JSON escaping and nesting. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "output.h"

/* Everything written to a memfd, as a string. */
static char *contents(int fd)
{
	static char buf[1 << 16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

static void test_numbers_and_text(void **state)
{
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 8); /* tiny: every path through write_slow */

	assert_non_null(o);
	out__u64(o, 0);
	out__putc(o, ' ');
	out__u64(o, UINT64_MAX);
	out__putc(o, ' ');
	out__i64(o, INT64_MIN);
	out__putc(o, ' ');
	out__hex(o, 0xffffffff81000000ull);
	out__putc(o, ' ');
	out__hex(o, 0);
	out__puts(o, " [");
	out__u64_width(o, 42, 6);
	out__printf(o, "] %s-%d", "a long formatted string wider than the buffer", 7);
	assert_int_equal(out__flush(o), 0);
	assert_string_equal(contents(fd), "0 18446744073709551615 -9223372036854775808 "
					  "0xffffffff81000000 0x0 [    42] a long formatted string "
					  "wider than the buffer-7");
	assert_int_equal(o->written, strlen(contents(fd)));
	out__delete(o);
	close(fd);
}

static void test_json(void **state)
{
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct json j;

	json__begin(&j, o);
	json__key(&j, "s");
	json__str(&j, "a\"b\\c\n\t\x01\x7f");
	json__key(&j, "n");
	json__i64(&j, -5);
	json__key(&j, "d");
	json__dbl(&j, 0.1);
	json__key(&j, "nan");
	json__dbl(&j, NAN);
	json__key(&j, "arr");
	json__arr(&j);
	json__u64(&j, 1);
	json__obj(&j);
	json__key(&j, "x");
	json__bool(&j, true);
	json__end(&j);
	json__str(&j, NULL);
	json__hex(&j, 255);
	json__end(&j);
	json__key(&j, "empty");
	json__obj(&j);
	json__end(&j);
	json__key(&j, "open");
	json__arr(&j);
	json__arr(&j);
	json__end_line(&j); /* closes both arrays and the object */
	json__begin(&j, o);
	json__end_line(&j);
	out__flush(o);
	assert_string_equal(
		contents(fd),
		"{\"s\":\"a\\\"b\\\\c\\n\\t\\u0001\x7f\",\"n\":-5,\"d\":0.1,\"nan\":null,"
		"\"arr\":[1,{\"x\":true},null,\"0xff\"],\"empty\":{},\"open\":[[]]}\n{}\n");
	out__delete(o);
	close(fd);
}

/* Every decimal length and both sides of each power of ten, against printf. */
static void test_u64_digits(void **state)
{
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	char want[64];
	uint64_t p = 1;

	for (int e = 0; e < 20; e++, p *= 10) {
		const uint64_t vs[] = { p - 1, p, p + 1, p * 9 / 10 * 10 + 5 };

		for (size_t i = 0; i < 4; i++) {
			assert_int_equal(ftruncate(fd, 0), 0);
			assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
			out__u64(o, vs[i]);
			out__flush(o);
			snprintf(want, sizeof(want), "%llu", (unsigned long long)vs[i]);
			assert_string_equal(contents(fd), want);
		}
	}
	out__delete(o);
	close(fd);
}

/* Pre-rendered keys and values write the same text as the escaping writers. */
static void test_json_raw(void **state)
{
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct json j;
	size_t klen, vlen;
	char *key = json_render("we\"ird\n", true, &klen);
	char *val = json_render("sched:sched_switch", false, &vlen);

	assert_non_null(key);
	assert_non_null(val);
	assert_string_equal(key, "\"we\\\"ird\\n\":");
	assert_int_equal(klen, strlen(key));
	assert_string_equal(val, "\"sched:sched_switch\"");
	json__begin(&j, o);
	JSON_KEY(&j, "event");
	json__raw(&j, val, vlen);
	json__raw_key(&j, key, klen);
	json__u64(&j, 7);
	json__key(&j, "arr");
	json__arr(&j);
	json__raw(&j, val, vlen);
	json__raw(&j, val, vlen);
	json__end_line(&j);
	out__flush(o);
	assert_string_equal(contents(fd),
			    "{\"event\":\"sched:sched_switch\",\"we\\\"ird\\n\":7,"
			    "\"arr\":[\"sched:sched_switch\",\"sched:sched_switch\"]}\n");
	free(key);
	free(val);
	out__delete(o);
	close(fd);
}

static void test_json_utf8(void **state)
{
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct json j;
	/* valid: é, €, 𝄞; invalid: lone continuation, overlong, surrogate, truncated */
	const char in[] =
		"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e|\x80|\xc0\xaf|\xed\xa0\x80|\xe2\x82";

	json__begin(&j, o);
	json__key(&j, "u");
	json__strn(&j, in, sizeof(in) - 1);
	json__end_line(&j);
	out__flush(o);
	assert_string_equal(contents(fd), "{\"u\":\"\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e|"
					  "\xef\xbf\xbd|\xef\xbf\xbd\xef\xbf\xbd|"
					  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd|"
					  "\xef\xbf\xbd\xef\xbf\xbd\"}\n");
	out__delete(o);
	close(fd);
}

static void test_epipe_sticky(void **state)
{
	int p[2];
	struct out *o;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	assert_int_equal(pipe(p), 0);
	close(p[0]);
	o = out__new(p[1], 16);
	out__puts(o, "hello");
	assert_int_equal(out__error(o), 0);
	assert_int_equal(out__flush(o), -EPIPE);
	out__puts(o, "more text than sixteen bytes");
	assert_int_equal(out__flush(o), -EPIPE);
	assert_int_equal(o->written, 0);
	assert_int_equal(o->dropped, 5 + 28);
	assert_null(out__reserve(o, 4));
	out__delete(o);
	close(p[1]);
	signal(SIGPIPE, old);
}

static void test_enospc(void **state)
{
	int fd = open("/dev/full", O_WRONLY);
	struct out *o;

	if (fd < 0)
		skip();
	o = out__new(fd, 0);
	out__puts(o, "x");
	assert_int_equal(out__flush(o), -ENOSPC);
	out__delete(o);
	close(fd);
}

/* A pipe nobody reads and a stop signal pending: the flush gives up instead of blocking. */
static void test_watch_stop(void **state)
{
	static char big[1 << 17];
	int p[2], efd = eventfd(1, EFD_CLOEXEC); /* readable: as a signalfd with a signal pending */
	struct out *o;

	assert_true(efd >= 0);
	assert_int_equal(pipe(p), 0);
	o = out__new(p[1], sizeof(big));
	assert_int_equal(out__watch(o, efd), 0);
	assert_int_not_equal(o->fd, p[1]); /* a private description of the pipe */
	/* the shared one stays blocking, for a command writing to the same stdout */
	assert_false(fcntl(p[1], F_GETFL) & O_NONBLOCK);
	memset(big, 'x', sizeof(big));
	out__write(o, big, sizeof(big)); /* twice a pipe's default 64 KiB */
	assert_int_equal(out__flush(o), -EINTR);
	assert_true(o->written > 0 && o->written < sizeof(big));
	assert_int_equal(o->written + o->dropped, sizeof(big));
	out__delete(o);
	close(p[0]);
	close(p[1]);
	close(efd);
}

/*
 * A stop signal while a slow reader (| gzip, ssh) is still reading: the rest is written, not
 * dropped as if nobody read the pipe (a Ctrl-C of trace | gzip lost its last events).
 */
static void test_watch_stop_slow_reader(void **state)
{
	static char big[1 << 17];
	int p[2], status, efd = eventfd(1, EFD_CLOEXEC); /* a stop signal pending */
	struct out *o;
	pid_t pid;

	assert_true(efd >= 0);
	assert_int_equal(pipe(p), 0);
	o = out__new(p[1], sizeof(big));
	assert_int_equal(out__watch(o, efd), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[4096];

		close(p[1]);
		close(o->fd);
		/* a page every 2 ms: the pipe stays full most of the time, yet it drains */
		while (read(p[0], buf, sizeof(buf)) > 0)
			usleep(2000);
		_exit(0);
	}
	close(p[0]);
	memset(big, 'x', sizeof(big));
	out__write(o, big, sizeof(big));
	assert_int_equal(out__flush(o), 0);
	assert_int_equal(o->written, sizeof(big));
	assert_int_equal(o->dropped, 0);
	out__delete(o);
	close(p[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	close(efd);
}

/* ---- the queue for slow readers ---- */

#define LINE_LEN 9 /* "%08u\n" */

/* Writes lines "00000000\n", "00000001\n", ... from *next on, n of them, then flushes. */
static void put_lines(struct out *o, unsigned int *next, unsigned int n)
{
	char line[16];

	while (n--) {
		snprintf(line, sizeof(line), "%08u\n", (*next)++);
		out__write(o, line, LINE_LEN);
	}
}

/*
 * A reader that checks the numbered lines arrive complete and in order; it waits for the go
 * byte on its own pipe first (a reader that starts late), then reads pause_us apart. Exits 0
 * when it saw exactly want lines in order.
 */
static pid_t start_reader(int rd, int close_fd, int close_fd2, int *go, unsigned int want,
			  useconds_t pause_us)
{
	int g[2];
	pid_t pid;

	assert_int_equal(pipe(g), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char buf[4096], line[16], b;
		size_t have = 0;
		unsigned int seen = 0;
		ssize_t n;

		close(close_fd);
		if (close_fd2 >= 0)
			close(close_fd2);
		close(g[1]);
		if (read(g[0], &b, 1) != 1)
			_exit(3);
		while ((n = read(rd, buf, sizeof(buf))) > 0) {
			for (ssize_t i = 0; i < n; i++) {
				line[have++] = buf[i];
				if (have < LINE_LEN)
					continue;
				line[LINE_LEN] = 0;
				if ((unsigned int)strtoul(line, NULL, 10) != seen++)
					_exit(1);
				have = 0;
			}
			if (pause_us)
				usleep(pause_us);
		}
		_exit(seen == want && have == 0 ? 0 : 2);
	}
	close(g[0]);
	*go = g[1];
	return pid;
}

static int reap(pid_t pid)
{
	int status;

	assert_int_equal(waitpid(pid, &status, 0), pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/*
 * Nobody reads yet: every flush returns at once, what the pipe does not take waits in memory;
 * once the reader starts, out__drain writes it as the pipe takes it, in order, none lost.
 */
static void test_queue_late_reader(void **state)
{
	int p[2], go, efd = eventfd(0, EFD_CLOEXEC); /* no stop signal */
	unsigned int next = 0, i;
	struct out *o;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	o = out__new(p[1], 4096);
	assert_int_equal(out__watch(o, efd), 0);
	out__set_queue(o, true);
	pid = start_reader(p[0], p[1], o->fd, &go, 200000, 0);
	close(p[0]);
	/* 1.8 MB, 28 times what the pipe holds: without the queue the first flushes would block */
	for (i = 0; i < 200; i++) {
		put_lines(o, &next, 1000);
		assert_int_equal(out__flush(o), 0);
	}
	assert_true(o->queued > 1000000);
	assert_int_equal(o->queued + o->written, 200000 * LINE_LEN);
	assert_int_equal(o->waits, 0);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	while (o->queued) {
		struct pollfd pf = { .fd = o->fd, .events = POLLOUT };

		assert_true(poll(&pf, 1, 10000) == 1);
		assert_int_equal(out__drain(o), 0);
	}
	assert_int_equal(o->written, 200000 * LINE_LEN);
	assert_int_equal(o->dropped, 0);
	assert_int_equal(o->queued_peak, o->queued_total);
	out__delete(o);
	close(p[1]);
	assert_int_equal(reap(pid), 0);
	close(efd);
}

/*
 * Past the bound, a flush waits for the reader as without a queue (and what it writes then
 * still comes in order); the queue never holds more than its bound.
 */
static void test_queue_bound(void **state)
{
	int p[2], go, efd = eventfd(0, EFD_CLOEXEC);
	unsigned int next = 0, i;
	struct out *o;
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	o = out__new(p[1], 4096);
	assert_int_equal(out__watch(o, efd), 0);
	out__set_queue(o, true);
	o->queue_max = 256 * 1024;
	/* a reader of 2 MB/s: slower than any build writes, a sanitized one included */
	pid = start_reader(p[0], p[1], o->fd, &go, 100000, 2000);
	close(p[0]);
	/*
	 * The reader starts only once the pipe and the queue are nearly full, so the batches
	 * after it cannot all fit: a flush must wait for the reader.
	 */
	for (i = 0; o->queued + 2 * 1000 * LINE_LEN <= o->queue_max; i++) {
		put_lines(o, &next, 1000);
		assert_int_equal(out__flush(o), 0);
		assert_int_equal(o->waits, 0);
	}
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	for (; i < 100; i++) {
		put_lines(o, &next, 1000);
		assert_int_equal(out__flush(o), 0);
		assert_true(o->queued <= o->queue_max);
	}
	assert_true(o->waits > 0);
	assert_true(o->queued_peak <= o->queue_max);
	out__set_queue(o, false);
	assert_int_equal(out__flush(o), 0); /* off: the rest is written, waiting for the reader */
	assert_int_equal(o->queued, 0);
	assert_int_equal(o->written, 100000 * LINE_LEN);
	out__delete(o);
	close(p[1]);
	assert_int_equal(reap(pid), 0);
	close(efd);
}

/* A stalled reader and a stop signal: the final flush gives up after the grace, counting what
 * it drops, queue included. */
static void test_queue_stalled_stop(void **state)
{
	int p[2], efd = eventfd(1, EFD_CLOEXEC); /* a stop signal pending */
	unsigned int next = 0;
	struct out *o;

	assert_int_equal(pipe(p), 0);
	o = out__new(p[1], 4096);
	assert_int_equal(out__watch(o, efd), 0);
	out__set_queue(o, true);
	put_lines(o, &next, 50000);
	assert_int_equal(out__flush(o), 0);
	assert_true(o->queued > 0);
	out__set_queue(o, false);
	assert_int_equal(out__flush(o), -EINTR);
	assert_int_equal(o->queued, 0);
	assert_int_equal(o->written + o->dropped, 50000 * LINE_LEN);
	out__delete(o);
	close(p[0]);
	close(p[1]);
	close(efd);
}

/* The reader leaves while data waits: EPIPE, and the queue is counted as dropped. */
static void test_queue_epipe(void **state)
{
	int p[2], efd = eventfd(0, EFD_CLOEXEC);
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);
	unsigned int next = 0;
	struct out *o;

	assert_int_equal(pipe(p), 0);
	o = out__new(p[1], 4096);
	assert_int_equal(out__watch(o, efd), 0);
	out__set_queue(o, true);
	put_lines(o, &next, 20000);
	assert_int_equal(out__flush(o), 0);
	assert_true(o->queued > 0);
	close(p[0]);
	assert_int_equal(out__drain(o), -EPIPE);
	assert_int_equal(o->queued, 0);
	assert_int_equal(o->written + o->dropped, 20000 * LINE_LEN);
	out__delete(o);
	close(p[1]);
	close(efd);
	signal(SIGPIPE, old);
}

/* A socket cannot be reopened non-blocking: its writes say MSG_DONTWAIT, and queue the same. */
static void test_queue_socket(void **state)
{
	int sv[2], go, efd = eventfd(0, EFD_CLOEXEC);
	unsigned int next = 0, i;
	struct out *o;
	pid_t pid;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	o = out__new(sv[0], 4096);
	assert_int_equal(out__watch(o, efd), 0);
	assert_int_equal(o->fd, sv[0]);
	assert_false(fcntl(sv[0], F_GETFL) & O_NONBLOCK); /* shared description untouched */
	out__set_queue(o, true);
	pid = start_reader(sv[1], sv[0], -1, &go, 100000, 0);
	close(sv[1]);
	for (i = 0; i < 100; i++) {
		put_lines(o, &next, 1000);
		assert_int_equal(out__flush(o), 0);
	}
	assert_true(o->queued > 0);
	assert_int_equal(write(go, "g", 1), 1);
	close(go);
	out__set_queue(o, false);
	assert_int_equal(out__flush(o), 0);
	assert_int_equal(o->written, 100000 * LINE_LEN);
	out__delete(o);
	close(sv[0]);
	assert_int_equal(reap(pid), 0);
	close(efd);
}

/* Files never wait for a reader: no queue there, whatever is asked. */
static void test_queue_not_for_files(void **state)
{
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 16);

	assert_int_equal(out__watch(o, -1), 0);
	out__set_queue(o, true);
	assert_false(o->async);
	out__puts(o, "written at once, as before");
	assert_int_equal(out__flush(o), 0);
	assert_string_equal(contents(fd), "written at once, as before");
	out__delete(o);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_and_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_utf8),
		cmocka_unit_test(test_epipe_sticky),
		cmocka_unit_test(test_enospc),
		cmocka_unit_test(test_u64_digits),
		cmocka_unit_test(test_json_raw),
		cmocka_unit_test(test_watch_stop),
		cmocka_unit_test(test_watch_stop_slow_reader),
		cmocka_unit_test(test_queue_late_reader),
		cmocka_unit_test(test_queue_bound),
		cmocka_unit_test(test_queue_stalled_stop),
		cmocka_unit_test(test_queue_epipe),
		cmocka_unit_test(test_queue_socket),
		cmocka_unit_test(test_queue_not_for_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
