/* Unit tests of common/callchain: a sample's stack in this process as text lines and JSON, the
 * profiler's name in its messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "callchain.h"
#include "said.h"

/* A function of this binary, out of line so that its address is its own. */
__attribute__((noinline)) int callchain_unit_leaf(int x);
__attribute__((noinline)) int callchain_unit_leaf(int x)
{
	return x * 5 + 2;
}

static char *contents(int fd)
{
	static char buf[1 << 14];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

static void t_text_json(void **state)
{
	uint64_t ip = (uint64_t)(uintptr_t)&callchain_unit_leaf + 3;
	uint64_t ips[] = { (uint64_t)PERF_CONTEXT_USER, ip };
	struct psc_sample s = { .sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TID };
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct callchain *cc = callchain__new(&(struct say){ said_line, "unitprof" });
	char want[256], *stats;
	struct json j;
	size_t len;
	FILE *f;

	(void)state;
	assert_int_equal(callchain_unit_leaf(1), 7);
	assert_non_null(o);
	assert_non_null(cc);
	s.pid = s.tid = (uint32_t)getpid();
	s.callchain.nr = 2;
	s.callchain.ips = ips;
	callchain__text(cc, o, &s);
	assert_int_equal(out__flush(o), 0);
	snprintf(want, sizeof(want), "\t    %16llx callchain_unit_leaf+0x3 (unit_callchain)\n",
		 (unsigned long long)ip);
	assert_string_equal(contents(fd), want);

	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	json__begin(&j, o);
	json__key(&j, "stack");
	callchain__json(cc, &j, &s);
	json__end_line(&j);
	assert_int_equal(out__flush(o), 0);
	snprintf(want, sizeof(want),
		 "{\"stack\":[{\"ip\":\"0x%llx\",\"name\":\"callchain_unit_leaf\","
		 "\"sym\":\"callchain_unit_leaf\",\"off\":3,"
		 "\"dso\":\"unit_callchain\",\"kernel\":false}]}\n",
		 (unsigned long long)ip);
	assert_string_equal(contents(fd), want);

	/* statistics name the profiler given, not "trace" */
	stats = NULL;
	said_to = f = open_memstream(&stats, &len);
	callchain__say_stats(cc);
	fclose(f);
	said_to = NULL;
	assert_true(
		!strncmp(stats, "perfscope unitprof: symbols: 1 processes and 1 binaries held",
			 strlen("perfscope unitprof: symbols: 1 processes and 1 binaries held")));
	free(stats);
	callchain__delete(cc);
	out__delete(o);
	close(fd);
}

/* A process's maps go a full round after its exit, and come back when its pid is reused. */
static void t_exit_rounds(void **state)
{
	uint64_t ip = (uint64_t)(uintptr_t)&callchain_unit_leaf + 1;
	uint64_t ips[] = { (uint64_t)PERF_CONTEXT_USER, ip };
	struct psc_sample s = { .sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TID };
	struct psc_record exit_rec = { .type = PERF_RECORD_EXIT };
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct callchain *cc = callchain__new(&(struct say){ said_line, "unitprof" });
	char *stats = NULL;
	size_t len;
	FILE *f;

	(void)state;
	s.pid = s.tid = (uint32_t)getpid();
	s.callchain.nr = 2;
	s.callchain.ips = ips;
	callchain__text(cc, o, &s);
	exit_rec.fork.pid = exit_rec.fork.tid = (uint32_t)getpid();
	callchain__record(cc, &exit_rec);
	callchain__round_end(cc); /* its samples may still be in other rings: kept */
	callchain__text(cc, o, &s);
	callchain__round_end(cc); /* now dropped */
	said_to = f = open_memstream(&stats, &len);
	callchain__say_stats(cc);
	fclose(f);
	said_to = NULL;
	assert_non_null(strstr(stats, "symbols: 0 processes"));
	free(stats);
	assert_int_equal(out__flush(o), 0);
	/* both samples printed before the maps went had the symbol */
	assert_non_null(strstr(contents(fd), "callchain_unit_leaf+0x1 (unit_callchain)\n"));
	assert_null(strstr(contents(fd), "[unknown]"));
	callchain__delete(cc);
	out__delete(o);
	close(fd);
}

/*
 * Records are read per CPU, not in time order: the EXIT of an earlier process of a reused pid can
 * come after the new process is known. Older than what is known of the pid, it drops nothing.
 */
static void t_exit_older_than_known(void **state)
{
	uint64_t ip = (uint64_t)(uintptr_t)&callchain_unit_leaf + 1;
	uint64_t ips[] = { (uint64_t)PERF_CONTEXT_USER, ip };
	struct psc_sample s = { .sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TID };
	struct psc_record exit_rec = { .type = PERF_RECORD_EXIT };
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct callchain *cc = callchain__new(&(struct say){ said_line, "unitprof" });
	char *stats = NULL;
	size_t len;
	FILE *f;

	(void)state;
	s.pid = s.tid = (uint32_t)getpid();
	s.callchain.nr = 2;
	s.callchain.ips = ips;
	callchain__see(cc, (pid_t)s.pid); /* its maps read now, from /proc */
	exit_rec.fork.pid = exit_rec.fork.tid = (uint32_t)getpid();
	exit_rec.fork.time = 1; /* long before: not this process's exit */
	callchain__record(cc, &exit_rec);
	callchain__round_end(cc);
	callchain__round_end(cc);
	said_to = f = open_memstream(&stats, &len);
	callchain__say_stats(cc);
	fclose(f);
	said_to = NULL;
	assert_non_null(strstr(stats, "symbols: 1 processes"));
	free(stats);
	stats = NULL;
	callchain__text(cc, o, &s);
	assert_int_equal(out__flush(o), 0);
	assert_non_null(strstr(contents(fd), "callchain_unit_leaf+0x1 (unit_callchain)\n"));
	/* its own exit (later than its maps) does drop them */
	exit_rec.fork.time = UINT64_MAX;
	callchain__record(cc, &exit_rec);
	callchain__round_end(cc);
	callchain__round_end(cc);
	said_to = f = open_memstream(&stats, &len);
	callchain__say_stats(cc);
	fclose(f);
	said_to = NULL;
	assert_non_null(strstr(stats, "symbols: 0 processes"));
	free(stats);
	callchain__delete(cc);
	out__delete(o);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_text_json),
		cmocka_unit_test(t_exit_rounds),
		cmocka_unit_test(t_exit_older_than_known),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
