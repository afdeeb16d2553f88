/* Unit tests of tp.h: real kernel format files, synthetic PERF_SAMPLE_RAW payloads, print fmt,
 * filters. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <perfscope/tp.h>

#include "tp_formats.h"

/* A synthetic __rel_loc event, as the kernel's trace-events-sample module defines one. */
static const char fmt_rel[] = "name: foo_rel_loc\n"
			      "ID: 1234\n" TP_FORMAT_COMMON_FIELDS
			      "\tfield:__rel_loc char[] foo;\toffset:8;\tsize:4;\tsigned:0;\n"
			      "\tfield:int bar;\toffset:12;\tsize:4;\tsigned:1;\n"
			      "\n"
			      "print fmt: \"foo=%s bar=%d\", __get_rel_str(foo), REC->bar\n";

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

/* A sched_switch payload: bash(123, S) -> swapper/0. */
static void make_switch(uint8_t *raw)
{
	memset(raw, 0, 64);
	put16(raw + 0, 372);
	put32(raw + 4, 123);
	memcpy(raw + 8, "bash", 4);
	put32(raw + 24, 123);
	put32(raw + 28, 120);
	put64(raw + 32, 1); /* TASK_INTERRUPTIBLE */
	memcpy(raw + 40, "swapper/0", 9);
	put32(raw + 56, 0);
	put32(raw + 60, 120);
}

static void test_parse_sched_switch(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_switch, "sched");
	const struct psc_tp_field *f;

	assert_non_null(fmt);
	assert_string_equal(psc_tp_format__name(fmt), "sched_switch");
	assert_string_equal(psc_tp_format__system(fmt), "sched");
	assert_int_equal(psc_tp_format__id(fmt), 372);
	assert_int_equal(psc_tp_format__nr_fields(fmt), 11);

	f = psc_tp_format__field(fmt, "prev_comm");
	assert_non_null(f);
	assert_int_equal(f->offset, 8);
	assert_int_equal(f->size, 16);
	assert_true(f->is_string);
	assert_true(f->is_array);
	assert_false(f->is_dynamic);
	assert_int_equal(f->kind, PSC_TP_KIND_STRING);

	f = psc_tp_format__field(fmt, "prev_pid");
	assert_non_null(f);
	assert_int_equal(f->offset, 24);
	assert_int_equal(f->size, 4);
	assert_true(f->is_signed);
	assert_false(f->is_common);
	assert_int_equal(f->kind, PSC_TP_KIND_SIGNED);

	f = psc_tp_format__field(fmt, "common_pid");
	assert_non_null(f);
	assert_true(f->is_common);
	assert_int_equal(f->offset, 4);

	f = psc_tp_format__field(fmt, "common_type");
	assert_non_null(f);
	assert_int_equal(f->kind, PSC_TP_KIND_UNSIGNED);

	errno = 0;
	assert_null(psc_tp_format__field(fmt, "prev_pd"));
	assert_int_equal(errno, ENOENT);
	psc_tp_format__delete(fmt);
}

static void test_field_iteration(void **state)
{
	static const char *const names[] = { "common_type", "common_flags", "common_preempt_count",
					     "common_pid",  "prev_comm",    "prev_pid",
					     "prev_prio",   "prev_state",   "next_comm",
					     "next_pid",    "next_prio" };
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_switch, "sched");

	assert_non_null(fmt);
	for (int i = 0; i < psc_tp_format__nr_fields(fmt); i++) {
		const struct psc_tp_field *f = psc_tp_format__field_at(fmt, i);

		assert_non_null(f);
		assert_string_equal(f->name, names[i]);
		assert_int_equal(f->is_common, i < 4);
	}
	assert_string_equal(psc_tp_format__field_at(fmt, 4)->type, "char[16]");
	assert_string_equal(psc_tp_format__field_at(fmt, 7)->type, "long");
	errno = 0;
	assert_null(psc_tp_format__field_at(fmt, 11));
	assert_int_equal(errno, ERANGE);
	assert_null(psc_tp_format__field_at(fmt, -1));
	psc_tp_format__delete(fmt);
}

static void test_read_fields(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_switch, "sched");
	const struct psc_tp_field *pid, *comm, *state_f, *next_comm, *cpid, *ctype;
	uint8_t raw[64];
	uint64_t u = 0;
	int64_t s = 0;
	uint32_t len = 0;
	const char *str;

	assert_non_null(fmt);
	make_switch(raw);
	pid = psc_tp_format__field(fmt, "prev_pid");
	comm = psc_tp_format__field(fmt, "prev_comm");
	state_f = psc_tp_format__field(fmt, "prev_state");
	next_comm = psc_tp_format__field(fmt, "next_comm");
	cpid = psc_tp_format__field(fmt, "common_pid");
	ctype = psc_tp_format__field(fmt, "common_type");

	assert_int_equal(psc_tp_field__u64(pid, raw, sizeof(raw), &u), 0);
	assert_int_equal(u, 123);
	assert_int_equal(psc_tp_field__u64(cpid, raw, sizeof(raw), &u), 0);
	assert_int_equal(u, 123);
	assert_int_equal(psc_tp_field__u64(ctype, raw, sizeof(raw), &u), 0);
	assert_int_equal(u, 372);
	assert_int_equal(psc_tp_field__s64(state_f, raw, sizeof(raw), &s), 0);
	assert_int_equal(s, 1);

	/* signed fields sign-extend */
	put32(raw + 24, (uint32_t)-5);
	assert_int_equal(psc_tp_field__s64(pid, raw, sizeof(raw), &s), 0);
	assert_int_equal(s, -5);

	str = psc_tp_field__str(comm, raw, sizeof(raw), &len);
	assert_non_null(str);
	assert_int_equal(len, 4);
	assert_memory_equal(str, "bash", 4);
	str = psc_tp_field__str(next_comm, raw, sizeof(raw), &len);
	assert_int_equal(len, 9);
	assert_memory_equal(str, "swapper/0", 9);

	/* a full char[16] has no NUL: the length stops at the field's end */
	memcpy(raw + 8, "0123456789abcdef", 16);
	str = psc_tp_field__str(comm, raw, sizeof(raw), &len);
	assert_int_equal(len, 16);
	assert_memory_equal(str, "0123456789abcdef", 16);

	/* strings are not numbers */
	assert_int_equal(psc_tp_field__u64(comm, raw, sizeof(raw), &u), -EINVAL);
	psc_tp_format__delete(fmt);
}

static void test_bounds(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_switch, "sched");
	const struct psc_tp_field *next_prio, *next_comm;
	uint8_t raw[64];
	uint64_t u = 77;
	uint32_t len = 0;
	char buf[256];

	assert_non_null(fmt);
	make_switch(raw);
	next_prio = psc_tp_format__field(fmt, "next_prio");
	next_comm = psc_tp_format__field(fmt, "next_comm");
	/* next_prio is bytes 60..63: a 63-byte payload does not hold it */
	assert_int_equal(psc_tp_field__u64(next_prio, raw, 63, &u), -ERANGE);
	assert_int_equal(u, 77);
	assert_int_equal(psc_tp_field__u64(next_prio, raw, 64, &u), 0);
	assert_int_equal(u, 120);
	assert_null(psc_tp_field__str(next_comm, raw, 50, &len));
	assert_int_equal(psc_tp_field__elem(next_prio, raw, 64, 1, &u), -ERANGE);
	assert_int_equal(psc_tp_format__print(fmt, raw, 40, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(psc_tp_field__snprint(next_prio, raw, 10, buf, sizeof(buf)), -ERANGE);
	psc_tp_format__delete(fmt);
}

/* sched_process_exec with filename "/bin/true" stored behind the fixed fields. */
static uint32_t make_exec(uint8_t *raw)
{
	memset(raw, 0, 64);
	put16(raw, 365);
	put32(raw + 4, 42);
	put32(raw + 8, (10u << 16) | 20); /* __data_loc: len 10 at offset 20 */
	put32(raw + 12, 42);
	put32(raw + 16, 41);
	memcpy(raw + 20, "/bin/true", 10);
	return 32;
}

static void test_data_loc_string(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_process_exec, "sched");
	const struct psc_tp_field *f;
	uint8_t raw[64];
	uint32_t size = make_exec(raw), len = 0;
	const char *str;
	char buf[128];

	assert_non_null(fmt);
	f = psc_tp_format__field(fmt, "filename");
	assert_non_null(f);
	assert_true(f->is_dynamic);
	assert_true(f->is_string);
	assert_int_equal(f->kind, PSC_TP_KIND_STRING);
	assert_string_equal(f->type, "__data_loc char[]");

	str = psc_tp_field__str(f, raw, size, &len);
	assert_non_null(str);
	assert_int_equal(len, 9);
	assert_memory_equal(str, "/bin/true", 9);
	assert_int_equal(psc_tp_field__snprint(f, raw, size, buf, sizeof(buf)), 9);
	assert_string_equal(buf, "/bin/true");

	/* the locator points past the payload: refused, not read */
	put32(raw + 8, (10u << 16) | 28);
	assert_null(psc_tp_field__str(f, raw, size, &len));
	assert_int_equal(psc_tp_format__print(fmt, raw, size, buf, sizeof(buf)), -EINVAL);
	psc_tp_format__delete(fmt);
}

static void test_data_loc_array(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_dma_map_sg, "dma");
	const struct psc_tp_field *phys, *lengths, *device, *truncated;
	uint8_t raw[128] = { 0 };
	uint64_t v = 0;
	char buf[128];

	assert_non_null(fmt);
	phys = psc_tp_format__field(fmt, "phys_addrs");
	lengths = psc_tp_format__field(fmt, "lengths");
	device = psc_tp_format__field(fmt, "device");
	truncated = psc_tp_format__field(fmt, "truncated");
	assert_non_null(phys);
	assert_non_null(lengths);
	assert_true(phys->is_dynamic);
	assert_false(phys->is_string);
	assert_int_equal(phys->kind, PSC_TP_KIND_ARRAY);
	assert_int_equal(phys->elem_size, 8);
	assert_int_equal(lengths->elem_size, 4);
	assert_int_equal(device->kind, PSC_TP_KIND_STRING);
	assert_int_equal(truncated->size, 1);

	put16(raw, 431);
	put32(raw + 8, (5u << 16) | 48); /* device "0000\0" */
	put32(raw + 24, (16u << 16) | 56); /* phys_addrs: 2 x u64 */
	put32(raw + 28, (0u << 16) | 72); /* dma_addrs: empty */
	put32(raw + 32, (12u << 16) | 72); /* lengths: 3 x u32 */
	memcpy(raw + 48, "0000", 5);
	put64(raw + 56, 0x1000);
	put64(raw + 64, 0x2000);
	put32(raw + 72, 1);
	put32(raw + 76, 2);
	put32(raw + 80, 3);

	assert_int_equal(psc_tp_field__count(phys, raw, 84), 2);
	assert_int_equal(psc_tp_field__elem(phys, raw, 84, 1, &v), 0);
	assert_int_equal(v, 0x2000);
	assert_int_equal(psc_tp_field__elem(phys, raw, 84, 2, &v), -ERANGE);
	/* an index whose idx + 1 wraps a u32 is still past the end, not element -1 + 1 */
	v = 7;
	assert_int_equal(psc_tp_field__elem(phys, raw, 84, UINT32_MAX, &v), -ERANGE);
	assert_int_equal(psc_tp_field__elem(lengths, raw, 84, UINT32_MAX, &v), -ERANGE);
	assert_int_equal(v, 7);
	assert_int_equal(psc_tp_field__count(lengths, raw, 84), 3);
	assert_int_equal(psc_tp_field__elem(lengths, raw, 84, 2, &v), 0);
	assert_int_equal(v, 3);
	assert_int_equal(psc_tp_field__count(psc_tp_format__field(fmt, "dma_addrs"), raw, 84), 0);
	assert_int_equal(psc_tp_field__snprint(lengths, raw, 84, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "{1,2,3}");
	/* the array's data ends past a shorter payload */
	assert_int_equal(psc_tp_field__count(lengths, raw, 80), 0);
	psc_tp_format__delete(fmt);
}

/* __u8 saddr[4] is four numbers (as the kernel's filter sees it), char[16] is text. */
static void test_u8_arrays_are_numbers(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_inet_sock_set_state, "sock");
	const struct psc_tp_field *daddr, *daddr6;
	uint8_t raw[72] = { 0 };
	uint64_t v = 0;
	char buf[512];

	assert_non_null(fmt);
	daddr = psc_tp_format__field(fmt, "daddr");
	daddr6 = psc_tp_format__field(fmt, "daddr_v6");
	assert_non_null(daddr);
	assert_non_null(daddr6);
	assert_false(daddr->is_string);
	assert_int_equal(daddr->kind, PSC_TP_KIND_ARRAY);
	assert_int_equal(daddr->elem_size, 1);
	assert_int_equal(daddr->array_len, 4);
	assert_int_equal(daddr6->kind, PSC_TP_KIND_ARRAY);
	assert_int_equal(daddr6->array_len, 16);

	put16(raw, 2287);
	put32(raw + 16, 7); /* TCP_CLOSE -> */
	put32(raw + 20, 2); /* TCP_SYN_SENT */
	put16(raw + 26, 80);
	put16(raw + 28, 2); /* AF_INET */
	put16(raw + 30, 6); /* IPPROTO_TCP */
	memcpy(raw + 36, "\x7f\x00\x00\x01", 4);
	assert_int_equal(psc_tp_field__count(daddr, raw, sizeof(raw)), 4);
	assert_int_equal(psc_tp_field__elem(daddr, raw, sizeof(raw), 0, &v), 0);
	assert_int_equal(v, 127);
	assert_int_equal(psc_tp_field__elem(daddr, raw, sizeof(raw), 3, &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(psc_tp_field__snprint(daddr, raw, sizeof(raw), buf, sizeof(buf)), 21);
	assert_string_equal(buf, "{0x7f,0x00,0x00,0x01}");
	/* the print fmt still shows it as an address */
	assert_true(psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "daddr=127.0.0.1"));
	assert_non_null(strstr(buf, "newstate=TCP_SYN_SENT"));
	/* no string operators on it in a filter */
	assert_int_equal(psc_tp__check_filter(fmt, "daddr ~ \"127*\"", NULL), -EINVAL);
	psc_tp_format__delete(fmt);
}

static void test_rel_loc(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_rel, "sample");
	const struct psc_tp_field *f;
	uint8_t raw[32] = { 0 };
	uint32_t len = 0;
	const char *str;
	char buf[64];

	assert_non_null(fmt);
	f = psc_tp_format__field(fmt, "foo");
	assert_non_null(f);
	assert_true(f->is_dynamic);
	assert_true(f->is_relative);
	put16(raw, 1234);
	/* __rel_loc offsets count from the end of the locator (byte 12): data at 16 */
	put32(raw + 8, (6u << 16) | 4);
	put32(raw + 12, 7);
	memcpy(raw + 16, "hello", 6);
	str = psc_tp_field__str(f, raw, 22, &len);
	assert_non_null(str);
	assert_int_equal(len, 5);
	assert_memory_equal(str, "hello", 5);
	assert_int_equal(psc_tp_format__print(fmt, raw, 22, buf, sizeof(buf)), 15);
	assert_string_equal(buf, "foo=hello bar=7");
	psc_tp_format__delete(fmt);
}

static void test_pointer_fields(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_kmalloc, "kmem");
	const struct psc_tp_field *ptr, *site, *bytes, *node;
	uint8_t raw[56] = { 0 };
	uint64_t v;
	char buf[512];

	assert_non_null(fmt);
	ptr = psc_tp_format__field(fmt, "ptr");
	site = psc_tp_format__field(fmt, "call_site");
	bytes = psc_tp_format__field(fmt, "bytes_req");
	node = psc_tp_format__field(fmt, "node");
	assert_true(ptr->is_pointer);
	assert_int_equal(ptr->kind, PSC_TP_KIND_POINTER);
	assert_int_equal(site->kind, PSC_TP_KIND_UNSIGNED);
	assert_int_equal(bytes->kind, PSC_TP_KIND_UNSIGNED);
	assert_int_equal(node->kind, PSC_TP_KIND_SIGNED);
	put16(raw, 658);
	put64(raw + 16, 0xffff888003a1b000ull);
	put64(raw + 24, 100);
	put64(raw + 32, 128);
	put32(raw + 48, (uint32_t)-1);
	assert_int_equal(psc_tp_field__u64(ptr, raw, sizeof(raw), &v), 0);
	assert_int_equal(v, 0xffff888003a1b000ull);
	psc_tp_field__snprint(ptr, raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "0xffff888003a1b000");
	psc_tp_field__snprint(node, raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, "-1");
	/* the kernel's print fmt with its gfp flag table */
	assert_true(psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "bytes_req=100 bytes_alloc=128"));
	psc_tp_format__delete(fmt);
}

/* A resolver that knows one function, 0x40 bytes from 0xffffffff81001000. */
static const char *one_ksym(void *priv, uint64_t addr, uint64_t *start)
{
	int *calls = priv;

	(*calls)++;
	if (addr < 0xffffffff81001000ull || addr >= 0xffffffff81001040ull)
		return NULL;
	*start = 0xffffffff81001000ull;
	return "kmem_test_alloc";
}

/* %pS in the print fmt: name+offset through the resolver, as perf script prints it. */
static void test_print_ksym(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_kmalloc, "kmem");
	uint8_t raw[56] = { 0 };
	char buf[512];
	int calls = 0;

	assert_non_null(fmt);
	put16(raw, 658);
	put64(raw + 8, 0xffffffff81001012ull);
	assert_true(psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "call_site=0xffffffff81001012 ")); /* no resolver: bare */
	assert_int_equal(psc_tp_format__set_ksym_resolver(fmt, one_ksym, &calls), 0);
	assert_true(psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "call_site=kmem_test_alloc+0x12 "));
	assert_true(calls > 0);
	/* an address in no function stays bare */
	put64(raw + 8, 0xffffffff82000000ull);
	assert_true(psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "call_site=0xffffffff82000000 "));
	/* and the resolver can be taken away again */
	put64(raw + 8, 0xffffffff81001012ull);
	assert_int_equal(psc_tp_format__set_ksym_resolver(fmt, NULL, NULL), 0);
	assert_true(psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "call_site=0xffffffff81001012 "));
	assert_int_equal(psc_tp_format__set_ksym_resolver(NULL, one_ksym, NULL), -EINVAL);
	psc_tp_format__delete(fmt);
}

static void test_print(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_switch, "sched");
	const char *want = "prev_comm=bash prev_pid=123 prev_prio=120 prev_state=S ==> "
			   "next_comm=swapper/0 next_pid=0 next_prio=120";
	uint8_t raw[64];
	char buf[256], small[10];
	int n;

	assert_non_null(fmt);
	make_switch(raw);
	n = psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf));
	assert_string_equal(buf, want);
	assert_int_equal(n, (int)strlen(want));
	/* snprintf-style truncation */
	n = psc_tp_format__print(fmt, raw, sizeof(raw), small, sizeof(small));
	assert_int_equal(n, (int)strlen(want));
	assert_string_equal(small, "prev_comm");
	/* a payload from another event type still prints as this format */
	put16(raw, 1);
	assert_int_equal(psc_tp_format__print(fmt, raw, sizeof(raw), buf, sizeof(buf)),
			 (int)strlen(want));
	psc_tp_format__delete(fmt);

	fmt = psc_tp_format__parse(fmt_sched_process_exec, "sched");
	assert_non_null(fmt);
	{
		uint8_t e[64];
		uint32_t size = make_exec(e);

		psc_tp_format__print(fmt, e, size, buf, sizeof(buf));
		assert_string_equal(buf, "filename=/bin/true pid=42 old_pid=41");
	}
	psc_tp_format__delete(fmt);
}

static void test_parse_errors(void **state)
{
	errno = 0;
	assert_null(psc_tp_format__parse("this is not a format", "sched"));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(psc_tp_format__parse(fmt_sched_switch, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(psc_tp_format__load("..", "sched_switch"));
	assert_int_equal(errno, EINVAL);
	assert_null(psc_tp_format__load("sched", "a/b"));
	psc_tp_format__delete(NULL);
}

static void expect_filter_ok(const struct psc_tp_format *fmt, const char *filter)
{
	struct psc_parse_error err;
	int ret = psc_tp__check_filter(fmt, filter, &err);

	if (ret)
		print_message("# filter '%s': %s\n", filter, err.msg);
	assert_int_equal(ret, 0);
}

static void expect_filter_bad(const struct psc_tp_format *fmt, const char *filter, int pos,
			      const char *msg_part)
{
	struct psc_parse_error err;

	assert_int_equal(psc_tp__check_filter(fmt, filter, &err), -EINVAL);
	if (!strstr(err.msg, msg_part) || err.pos != pos)
		print_message("# filter '%s': pos %d: %s\n", filter, err.pos, err.msg);
	assert_int_equal(err.pos, pos);
	assert_non_null(strstr(err.msg, msg_part));
}

static void test_filter_check(void **state)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(fmt_sched_switch, "sched");
	struct psc_tp_format *km = psc_tp_format__parse(fmt_kmalloc, "kmem");
	struct psc_parse_error err;

	assert_non_null(fmt);
	assert_non_null(km);
	expect_filter_ok(fmt, "prev_pid == 1");
	expect_filter_ok(fmt, "prev_pid == 1 && next_comm ~ \"kworker*\"");
	expect_filter_ok(fmt, "common_pid != 0 || (prev_prio < 100 && next_prio >= -1)");
	expect_filter_ok(fmt, "!(prev_pid == 0)");
	expect_filter_ok(fmt, "prev_state & 0x2");
	expect_filter_ok(fmt, "CPU == 1 && comm == bash");
	expect_filter_ok(fmt, "prev_comm == 'sshd'");
	expect_filter_ok(km, "bytes_req > 4096 && call_site.function == kmalloc_trace");
	expect_filter_ok(km, "CPU & CPUS{0-1}");

	expect_filter_bad(fmt, "prev_pd == 1", 0,
			  "unknown field 'prev_pd'; did you mean 'prev_pid'");
	assert_int_equal(psc_tp__check_filter(fmt, "prev_pd == 1", &err), -EINVAL);
	/* the message lists the event's fields */
	assert_non_null(strstr(err.msg, "sched:sched_switch has fields: common_type,"));
	assert_non_null(strstr(err.msg, "next_prio"));

	expect_filter_bad(fmt, "prev_pid == 1 && nxt_pid > 3", 17, "unknown field 'nxt_pid'");
	expect_filter_bad(fmt, "prev_pid ==", 11, "expected a value after '=='");
	expect_filter_bad(fmt, "prev_pid = 1", 9, "expected an operator");
	expect_filter_bad(fmt, "prev_comm < 3", 10, "does not apply to string field 'prev_comm'");
	expect_filter_bad(fmt, "prev_pid ~ \"1*\"", 9, "applies to strings only");
	expect_filter_bad(fmt, "prev_pid == abc", 12, "is not an integer");
	expect_filter_bad(fmt, "(prev_pid == 1", 14, "expected ')'");
	expect_filter_bad(fmt, "prev_pid == 1 &&", 16, "expected a field name");
	expect_filter_bad(fmt, "prev_pid == 1 prev_prio == 2", 14, "expected '&&', '||'");
	expect_filter_bad(fmt, "", 0, "empty filter");
	expect_filter_bad(fmt, "prev_comm == \"bash", 13, "expected a value");
	expect_filter_bad(fmt, "prev_pid.hex == 1", 8, "unknown field suffix");
	psc_tp_format__delete(fmt);
	psc_tp_format__delete(km);
}

static void test_apply_filter_bad_fd(void **state)
{
	struct psc_parse_error err;

	assert_int_equal(psc_tp__apply_filter(NULL, -1, "x == 1", &err), -EINVAL);
	/* not a perf fd: the ioctl fails and the message says so */
	assert_true(psc_tp__apply_filter(NULL, 0, "x == 1", &err) < 0);
	assert_non_null(strstr(err.msg, "x == 1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_sched_switch),
		cmocka_unit_test(test_field_iteration),
		cmocka_unit_test(test_read_fields),
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_data_loc_string),
		cmocka_unit_test(test_data_loc_array),
		cmocka_unit_test(test_rel_loc),
		cmocka_unit_test(test_u8_arrays_are_numbers),
		cmocka_unit_test(test_pointer_fields),
		cmocka_unit_test(test_print),
		cmocka_unit_test(test_print_ksym),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_filter_check),
		cmocka_unit_test(test_apply_filter_bad_fd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
