/* Unit tests of common/evprint: events from the format fixtures and synthetic samples as trace's
 * text lines and JSON objects, byte for byte; %pS through a synthetic kallsyms; stacks. */
#include <errno.h>
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

#include "evprint.h"
#include "tp_formats.h"

static void put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* What was written to o since the last call. */
struct sink {
	int fd;
	struct out *o;
	char buf[1 << 14];
};

static void sink_open(struct sink *k)
{
	k->fd = memfd_create("out", 0);
	assert_true(k->fd >= 0);
	k->o = out__new(k->fd, 0);
	assert_non_null(k->o);
}

static const char *sink_take(struct sink *k)
{
	ssize_t n;

	assert_int_equal(out__flush(k->o), 0);
	n = pread(k->fd, k->buf, sizeof(k->buf) - 1, 0);
	assert_true(n >= 0);
	k->buf[n] = 0;
	assert_int_equal(ftruncate(k->fd, 0), 0);
	assert_int_equal(lseek(k->fd, 0, SEEK_SET), 0);
	return k->buf;
}

static void sink_close(struct sink *k)
{
	out__delete(k->o);
	close(k->fd);
}

static struct psc_sample tp_sample(const void *raw, uint32_t size)
{
	struct psc_sample s = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
					       PERF_SAMPLE_RAW };

	s.pid = 42;
	s.tid = 43;
	s.time = 5123456789123ull;
	s.period = 1;
	s.raw.size = size;
	s.raw.data = raw;
	return s;
}

static void t_tracepoint(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_wakeup, "sched");
	struct evprint *p = evprint__new(NULL);
	struct evprint_event ev;
	uint8_t raw[36] = { 0 };
	struct psc_sample s;
	const char *line;
	struct sink k;

	(void)state;
	assert_non_null(fmt);
	assert_non_null(p);
	sink_open(&k);
	assert_int_equal(evprint_event__init(&ev, p, "sched:sched_wakeup", fmt), 0);
	put16(raw, 374);
	memcpy(raw + 8, "bash", 5);
	put32(raw + 24, 4242);
	put32(raw + 28, 120);
	put32(raw + 32, 1);
	s = tp_sample(raw, sizeof(raw));

	evprint__text(p, k.o, &ev, 1, "bash", &s);
	assert_string_equal(sink_take(&k), "            bash      42/43 [001] 5123.456789: "
					   "sched:sched_wakeup: comm=bash pid=4242 prio=120 "
					   "target_cpu=001\n");
	evprint__json(p, k.o, &ev, 1, "bash", &s);
	assert_string_equal(
		sink_take(&k),
		"{\"time\":5123456789123,\"cpu\":1,\"pid\":42,\"tid\":43,\"comm\":\"bash\","
		"\"event\":\"sched:sched_wakeup\",\"fields\":{\"common_type\":374,"
		"\"common_flags\":0,\"common_preempt_count\":0,\"common_pid\":0,"
		"\"comm\":\"bash\","
		"\"pid\":4242,\"prio\":120,\"target_cpu\":1}}\n");
	/* a comm of 16 bytes or more is not cut; a long name shifts the line */
	evprint__text(p, k.o, &ev, 12, "a-comm-of-16-chr", &s);
	line = sink_take(&k);
	assert_true(!strncmp(line, "a-comm-of-16-chr      42/43 [012] 5123.456789: ", 47));
	/* a payload too short for its fields */
	s.raw.size = 20;
	evprint__text(p, k.o, &ev, 1, "bash", &s);
	assert_non_null(strstr(sink_take(&k), "sched:sched_wakeup: <undecodable: "));
	evprint_event__exit(&ev);
	evprint_event__exit(&ev); /* twice is harmless */
	psc_tp_format__delete(fmt);
	evprint__delete(p);
	sink_close(&k);
}

/* A print fmt line longer than the printer's first scratch buffer is printed whole. */
static void t_long_line(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_process_exec, "sched");
	struct evprint *p = evprint__new(NULL);
	enum { LEN = 9000 };
	static uint8_t raw[20 + LEN + 1];
	struct evprint_event ev;
	struct psc_sample s;
	const char *line;
	struct sink k;

	(void)state;
	assert_non_null(fmt);
	sink_open(&k);
	assert_int_equal(evprint_event__init(&ev, p, "exec", fmt), 0);
	put16(raw, 365);
	put32(raw + 8, ((uint32_t)(LEN + 1) << 16) | 20); /* filename: data_loc */
	put32(raw + 12, 7);
	put32(raw + 16, 7);
	memset(raw + 20, 'x', LEN);
	raw[20 + LEN] = 0;
	s = tp_sample(raw, sizeof(raw));
	evprint__text(p, k.o, &ev, 0, "sh", &s);
	line = sink_take(&k);
	assert_non_null(strstr(line, "exec: filename=xxx"));
	assert_non_null(strstr(line, "xxx pid=7 old_pid=7\n"));
	assert_int_equal(strlen(line),
			 strlen("              sh      42/43 [000] 5123.456789: exec: "
				"filename= pid=7 old_pid=7\n") +
				 LEN);
	evprint__json(p, k.o, &ev, 0, "sh", &s);
	line = sink_take(&k);
	assert_non_null(strstr(line, "\"common_pid\":0,\"filename\":\"xxx"));
	assert_non_null(strstr(line, "xxx\",\"pid\":7,\"old_pid\":7}}\n"));
	evprint_event__exit(&ev);
	psc_tp_format__delete(fmt);
	evprint__delete(p);
	sink_close(&k);
}

/* Arrays as arrays, strings with bad UTF-8 still valid JSON, an alias that needs escaping. */
static void t_json_types(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_dma_map_sg, "dma");
	struct evprint *p = evprint__new(NULL);
	struct evprint_event ev;
	uint8_t raw[84] = { 0 };
	struct psc_sample s;
	struct json j;
	struct sink k;

	(void)state;
	assert_non_null(fmt);
	sink_open(&k);
	assert_int_equal(evprint_event__init(&ev, p, "dma \"map\"", fmt), 0);
	put16(raw, 431);
	put32(raw + 8, (5u << 16) | 48); /* device "a\xff\"b" */
	put32(raw + 12, (uint32_t)-2); /* full_nents: signed */
	put32(raw + 24, (16u << 16) | 56); /* phys_addrs: 2 x u64 */
	put32(raw + 28, (0u << 16) | 72); /* dma_addrs: empty */
	put32(raw + 32, (12u << 16) | 72); /* lengths: 3 x u32 */
	memcpy(raw + 48, "a\xff\"b", 5);
	put64(raw + 56, 0x1000);
	put64(raw + 64, UINT64_MAX);
	put32(raw + 72, 1);
	put32(raw + 76, 2);
	put32(raw + 80, 3);
	s = tp_sample(raw, sizeof(raw));
	/* members into the caller's own object */
	json__begin(&j, k.o);
	json__key(&j, "mine");
	json__bool(&j, true);
	evprint__json_members(p, &j, &ev, 3, "kworker/3:1", &s);
	json__end_line(&j);
	assert_string_equal(sink_take(&k),
			    "{\"mine\":true,\"time\":5123456789123,\"cpu\":3,\"pid\":42,\"tid\":43,"
			    "\"comm\":\"kworker/3:1\",\"event\":\"dma \\\"map\\\"\",\"fields\":{"
			    "\"common_type\":431,\"common_flags\":0,\"common_preempt_count\":0,"
			    "\"common_pid\":0,"
			    "\"device\":\"a\xef\xbf\xbd\\\"b\",\"full_nents\":-2,\"full_ents\":0,"
			    "\"truncated\":0,\"phys_addrs\":[4096,18446744073709551615],"
			    "\"dma_addrs\":[],\"lengths\":[1,2,3],\"dir\":0,\"attrs\":0}}\n");
	evprint_event__exit(&ev);
	psc_tp_format__delete(fmt);
	evprint__delete(p);
	sink_close(&k);
}

/* Software and hardware events: what the sample carries, nothing else. */
static void t_not_tracepoint(void **state)
{
	struct evprint *p = evprint__new(NULL);
	struct psc_sample s = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					       PERF_SAMPLE_ADDR | PERF_SAMPLE_PERIOD };
	struct evprint_event ev;
	struct sink k;

	(void)state;
	sink_open(&k);
	assert_int_equal(evprint_event__init(&ev, p, "page-faults", NULL), 0);
	assert_int_equal(ev.nr_fields, 0);
	s.pid = 1;
	s.tid = 1;
	s.time = 999999999;
	s.ip = 0x401000;
	s.addr = 0x7f0000001000;
	s.period = 1;
	evprint__text(p, k.o, &ev, 0, "init", &s);
	assert_string_equal(sink_take(&k),
			    "            init       1/1 [000] 0.999999: page-faults: "
			    "ip=0x401000 addr=0x7f0000001000 period=1\n");
	evprint__json(p, k.o, &ev, 0, "init", &s);
	assert_string_equal(sink_take(&k), "{\"time\":999999999,\"cpu\":0,\"pid\":1,\"tid\":1,"
					   "\"comm\":\"init\",\"event\":\"page-faults\","
					   "\"ip\":\"0x401000\",\"addr\":\"0x7f0000001000\","
					   "\"period\":1}\n");
	s.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	s.period = 250000;
	evprint__text(p, k.o, &ev, 1, "init", &s);
	assert_string_equal(sink_take(&k),
			    "            init       1/1 [001] 0.999999: page-faults: "
			    " period=250000\n");
	evprint_event__exit(&ev);
	evprint__delete(p);
	sink_close(&k);
}

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81001000 T kmem_test_alloc\n"
			       "ffffffff81001040 T _etext\n";

/* %pS in a print fmt names the kernel function, from the kallsyms the printer was given. */
static void t_ksym(void **state)
{
	char path[] = "/tmp/perfscope-evprint-XXXXXX";
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_kmalloc, "kmem");
	int fd = mkstemp(path);
	struct evprint *p = evprint__new(path);
	struct evprint_event ev;
	uint8_t raw[56] = { 0 };
	struct psc_sample s;
	const char *line;
	struct sink k;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, kallsyms, sizeof(kallsyms) - 1), (ssize_t)sizeof(kallsyms) - 1);
	close(fd);
	assert_non_null(fmt);
	sink_open(&k);
	assert_int_equal(evprint_event__init(&ev, p, "kmem:kmalloc", fmt), 0);
	put16(raw, 658);
	put64(raw + 8, 0xffffffff81001012ull);
	put64(raw + 16, 0xffff888003a1b000ull);
	put64(raw + 24, 100);
	put64(raw + 32, 128);
	put32(raw + 48, (uint32_t)-1);
	s = tp_sample(raw, sizeof(raw));
	evprint__text(p, k.o, &ev, 0, "cat", &s);
	line = sink_take(&k);
	assert_non_null(strstr(line, "kmem:kmalloc: call_site=kmem_test_alloc+0x12 "
				     "ptr=0xffff888003a1b000 bytes_req=100 bytes_alloc=128 "));
	evprint__json(p, k.o, &ev, 0, "cat", &s);
	line = sink_take(&k);
	/* JSON keeps the numbers: a pointer as hex, call_site as the integer it is */
	assert_non_null(strstr(line, "\"common_pid\":0,\"call_site\":18446744071578849298,"
				     "\"ptr\":\"0xffff888003a1b000\",\"bytes_req\":100,"
				     "\"bytes_alloc\":128,\"gfp_flags\":0,\"node\":-1}}\n"));
	unlink(path);
	evprint_event__exit(&ev);
	psc_tp_format__delete(fmt);
	evprint__delete(p);
	sink_close(&k);
}

__attribute__((noinline)) int evprint_unit_leaf(int x);
__attribute__((noinline)) int evprint_unit_leaf(int x)
{
	return x * 7 + 3;
}

/* With a callchain printer, a sample's stack follows its line, or is its JSON "stack". */
static void t_stack(void **state)
{
	uint64_t ip = (uint64_t)(uintptr_t)&evprint_unit_leaf + 1;
	uint64_t ips[] = { (uint64_t)PERF_CONTEXT_USER, ip };
	struct psc_sample s = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
					       PERF_SAMPLE_CALLCHAIN };
	struct callchain *cc = callchain__new(NULL);
	struct evprint *p = evprint__new(NULL);
	struct evprint_event ev;
	char want[256];
	struct sink k;

	(void)state;
	assert_int_equal(evprint_unit_leaf(1), 10);
	assert_non_null(cc);
	sink_open(&k);
	assert_int_equal(evprint_event__init(&ev, p, "cpu-clock", NULL), 0);
	s.pid = s.tid = (uint32_t)getpid();
	s.ip = ip;
	s.callchain.nr = 2;
	s.callchain.ips = ips;
	/* no callchain printer: no stack */
	evprint__text(p, k.o, &ev, 0, "unit", &s);
	assert_null(strchr(sink_take(&k), '\t'));
	evprint__set_callchain(p, cc);
	evprint__text(p, k.o, &ev, 0, "unit", &s);
	snprintf(want, sizeof(want),
		 "ip=0x%llx\n\t    %16llx evprint_unit_leaf+0x1 (unit_evprint)\n",
		 (unsigned long long)ip, (unsigned long long)ip);
	assert_non_null(strstr(sink_take(&k), want));
	evprint__json(p, k.o, &ev, 0, "unit", &s);
	snprintf(want, sizeof(want),
		 ",\"stack\":[{\"ip\":\"0x%llx\",\"name\":\"evprint_unit_leaf\","
		 "\"sym\":\"evprint_unit_leaf\",\"off\":1,"
		 "\"dso\":\"unit_evprint\",\"kernel\":false}]}\n",
		 (unsigned long long)ip);
	assert_non_null(strstr(sink_take(&k), want));
	evprint_event__exit(&ev);
	evprint__delete(p);
	callchain__delete(cc);
	sink_close(&k);
}

/* A fake source of user strings, by pointer value. */
static int fake_str(void *ctx, uint32_t pid, uint32_t tid, uint64_t ptr, uint64_t time_ns,
		    char *buf, size_t len, bool *cut)
{
	const char *str = ptr == 0x1000	  ? "/etc/hostname"
			  : ptr == 0x2000 ? "a\"b\\c\n\x01\xc3\xa9\xff"
			  : ptr == 0x3000 ? "/a/long/path/cut/here"
					  : NULL;

	(void)ctx;
	assert_int_equal(pid, 42);
	assert_int_equal(tid, 43);
	assert_int_equal(time_ns, 5123456789123ull);
	*cut = ptr == 0x3000;
	if (!str)
		return -1;
	snprintf(buf, len, "%s", str);
	return (int)strlen(buf);
}

/*
 * The string arguments of a system call are printed as strings, escaped, in place of their
 * pointers; one that cannot be read keeps its pointer; JSON adds "strings" beside "fields".
 */
static void t_user_strings(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sys_enter_openat, "syscalls");
	struct evprint *p = evprint__new(NULL);
	struct evprint_event ev;
	uint8_t raw[48] = { 0 };
	struct psc_sample s;
	const char *head = "             cat      42/43 [000] 5123.456789: "
			   "syscalls:sys_enter_openat: ";
	char want[512];
	struct sink k;

	(void)state;
	assert_non_null(fmt);
	assert_non_null(p);
	sink_open(&k);
	assert_int_equal(evprint_event__init(&ev, p, "syscalls:sys_enter_openat", fmt), 0);
	assert_int_equal(ev.nr_user_str, 1);
	put32(raw + 8, 257);
	put64(raw + 16, 0xffffff9cull);
	put64(raw + 24, 0x1000);
	put64(raw + 32, 0x80000);
	s = tp_sample(raw, sizeof(raw));

	/* without a source: the kernel's text, pointers */
	evprint__text(p, k.o, &ev, 0, "cat", &s);
	snprintf(want, sizeof(want),
		 "%sdfd: 0xffffff9c, filename: 0x00001000, flags: 0x00080000, "
		 "mode: 0x00000000\n",
		 head);
	assert_string_equal(sink_take(&k), want);

	evprint__set_user_strings(p, fake_str, NULL);
	evprint__text(p, k.o, &ev, 0, "cat", &s);
	snprintf(want, sizeof(want),
		 "%sdfd: 0xffffff9c, filename: \"/etc/hostname\", "
		 "flags: 0x00080000, mode: 0x00000000\n",
		 head);
	assert_string_equal(sink_take(&k), want);
	evprint__json(p, k.o, &ev, 0, "cat", &s);
	assert_non_null(strstr(sink_take(&k), "\"filename\":\"0x1000\",\"flags\":524288,"
					      "\"mode\":0},\"strings\":{\"filename\":"
					      "\"/etc/hostname\"}}\n"));
	/* escaped as C writes it: quotes, backslashes, control bytes; valid UTF-8 kept */
	put64(raw + 24, 0x2000);
	evprint__text(p, k.o, &ev, 0, "cat", &s);
	assert_non_null(strstr(sink_take(&k), "filename: \"a\\\"b\\\\c\\n\\x01\xc3\xa9\\xff\","));
	/* cut at its bound: ... after it */
	put64(raw + 24, 0x3000);
	evprint__text(p, k.o, &ev, 0, "cat", &s);
	assert_non_null(strstr(sink_take(&k), "filename: \"/a/long/path/cut/here\"..., flags"));
	/* unreadable, or NULL: the pointer stays, and JSON has no "strings" */
	put64(raw + 24, 0x4000);
	evprint__text(p, k.o, &ev, 0, "cat", &s);
	assert_non_null(strstr(sink_take(&k), "filename: 0x00004000, flags"));
	evprint__json(p, k.o, &ev, 0, "cat", &s);
	assert_null(strstr(sink_take(&k), "strings"));
	put64(raw + 24, 0);
	evprint__text(p, k.o, &ev, 0, "cat", &s);
	assert_non_null(strstr(sink_take(&k), "filename: 0x00000000, flags"));
	evprint_event__exit(&ev);
	psc_tp_format__delete(fmt);

	/* the same format under another system is not a system call: nothing read */
	fmt = psc_tp_format__parse(fmt_sys_enter_openat, "notsyscalls");
	assert_int_equal(evprint_event__init(&ev, p, "x:sys_enter_openat", fmt), 0);
	assert_int_equal(ev.nr_user_str, 0);
	evprint_event__exit(&ev);
	psc_tp_format__delete(fmt);
	evprint__delete(p);
	sink_close(&k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_tracepoint),	  cmocka_unit_test(t_long_line),
		cmocka_unit_test(t_json_types),	  cmocka_unit_test(t_not_tracepoint),
		cmocka_unit_test(t_ksym),	  cmocka_unit_test(t_stack),
		cmocka_unit_test(t_user_strings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
