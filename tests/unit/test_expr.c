/* Unit tests of common/expr: the expression language over format-text fixtures (this kernel's and
 * older ones), synthetic records, and the formats of the running kernel. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <perfscope/tp.h>
#include <perfscope/tracefs.h>

#include "expr.h"
#include "expr_internal.h"
#include "ksyms.h"
#include "syscall_names.h"
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

/* sched_switch: bash(123, prio 120, S) -> swapper/0. */
static void make_switch(uint8_t *raw)
{
	memset(raw, 0, 64);
	put16(raw + 0, 372);
	put32(raw + 4, 123);
	memcpy(raw + 8, "bash", 4);
	put32(raw + 24, 123);
	put32(raw + 28, 120);
	put64(raw + 32, 1);
	memcpy(raw + 40, "swapper/0", 9);
	put32(raw + 56, 0);
	put32(raw + 60, 120);
}

static struct psc_tp_format *parse(const char *text, const char *sys)
{
	struct psc_tp_format *fmt = psc_tp_format__parse(text, sys);

	assert_non_null(fmt);
	return fmt;
}

static struct expr *compile_ok(const char *text, const struct expr_opts *opts)
{
	struct expr_error err;
	struct expr *e = expr__compile(text, opts, &err);

	if (!e)
		fail_msg("'%s' did not compile: %s (at %d)", text, err.msg, err.pos);
	return e;
}

/* The integer text gives on raw, through the VM. */
static uint64_t run(const struct psc_tp_format *fmt, const char *text, const void *raw,
		    uint32_t size)
{
	struct expr_opts opts = { .fmt = fmt };
	struct expr *e = compile_ok(text, &opts);
	struct expr_val v;
	int err = expr__eval(e, raw, size, NULL, &v);

	if (err)
		fail_msg("'%s' failed to run: %d", text, err);
	assert_int_equal(expr__type(e).kind, EXPR_INT);
	expr__delete(e);
	return v.i;
}

static void compile_fails(const struct expr_opts *opts, const char *text, int pos, const char *part)
{
	struct expr_error err;
	struct expr *e = expr__compile(text, opts, &err);

	if (e)
		fail_msg("'%s' compiled; expected '%s'", text, part);
	assert_int_equal(errno, EINVAL);
	if (!strstr(err.msg, part))
		fail_msg("'%s': message '%s' does not say '%s'", text, err.msg, part);
	if (err.pos != pos)
		fail_msg("'%s': error at %d, expected %d (%s)", text, err.pos, pos, err.msg);
}

/* C's precedence and associativity, folded at compile time. */
static void test_constants(void **state)
{
	static const struct {
		const char *text;
		int64_t v;
	} cases[] = {
		{ "1 + 2 * 3", 7 },
		{ "(1 + 2) * 3", 9 },
		{ "10 - 3 - 2", 5 },
		{ "2 * 3 % 4", 2 },
		{ "1 << 4 | 1", 17 },
		{ "7 & 3 ^ 1", 2 },
		{ "1 | 2 ^ 3 & 4", 3 },
		{ "1 < 2 == 1", 1 },
		{ "3 > 2 > 1", 0 },
		{ "1 && 0 || 1", 1 },
		{ "0 || 0 && 1", 0 },
		{ "1 ? 2 : 3 ? 4 : 5", 2 },
		{ "0 ? 2 : 0 ? 4 : 5", 5 },
		{ "!0 + !5", 1 },
		{ "~0", -1 },
		{ "-5 / 2", -2 },
		{ "-5 % 2", -1 },
		{ "- -3", 3 },
		{ "0x10 + 010 + 0b11", 27 },
		{ "'a'", 97 },
		{ "'\\n' + '\\x41'", 10 + 65 },
		{ "1 << 40", 1LL << 40 },
		{ "-1 >> 70", -1 },
		{ "1 << 64", 0 },
		{ "(-9223372036854775807 - 1) / -1", INT64_MIN },
		{ "10ms", 10000000 },
		{ "1.5us", 1500 },
		{ "2s + 5ns", 2000000005 },
		{ "0.25ms", 250000 },
		{ "100ul + 1LL", 101 },
		{ "(char)300", 44 },
		{ "(unsigned char)-1", 255 },
		{ "(int)0x1ffffffff", -1 },
		{ "(unsigned)-1", 4294967295LL },
		{ "(unsigned short)65537", 1 },
		{ "(signed char)200", -56 },
		{ "(long long int)-2", -2 },
		{ "(u8)257 + (s16)-1", 0 },
		{ "-1 < 0u", 1 }, /* with a 64-bit int, 0u widens to a signed long */
		{ "-1 < 0ul", 0 }, /* unsigned long: C's conversion */
		{ "0xffffffffffffffff == -1", 1 },
		{ "18446744073709551615 > 0", 1 },
		{ "ntohs(0x1234)", 0x3412 },
		{ "ntohl(0x12345678)", 0x78563412 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct expr *e = compile_ok(cases[i].text, NULL);
		struct expr_val v;

		if (!strstr(cases[i].text, "ntoh"))
			assert_true(expr__is_const(e));
		assert_int_equal(expr__eval(e, NULL, 0, NULL, &v), 0);
		if ((int64_t)v.i != cases[i].v)
			fail_msg("'%s' = %lld, expected %lld", cases[i].text, (long long)v.i,
				 (long long)cases[i].v);
		expr__delete(e);
	}
}

/* The same operators through the VM, on fields: sched_switch's bash(123) -> swapper/0. */
static void test_fields(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_switch, "sched");
	uint8_t raw[64];

	make_switch(raw);
	assert_int_equal(run(fmt, "prev_pid", raw, 64), 123);
	assert_int_equal(run(fmt, "prev_pid + prev_prio * 2", raw, 64), 363);
	assert_int_equal(run(fmt, "(prev_pid + prev_prio) * 2", raw, 64), 486);
	assert_int_equal(run(fmt, "prev_pid - prev_prio - 2", raw, 64), 1);
	assert_int_equal(run(fmt, "prev_pid / 10 % 10", raw, 64), 2);
	assert_int_equal(run(fmt, "prev_pid << 1 | 1", raw, 64), 247);
	assert_int_equal(run(fmt, "prev_pid > 100 && prev_prio < 121", raw, 64), 1);
	assert_int_equal(run(fmt, "prev_pid > 200 || prev_prio == 120", raw, 64), 1);
	assert_int_equal(run(fmt, "prev_pid > 200 || prev_prio", raw, 64), 1);
	assert_int_equal(run(fmt, "prev_pid && next_pid", raw, 64), 0);
	assert_int_equal(run(fmt, "100 < prev_pid", raw, 64), 1); /* swapped to prev_pid > 100 */
	assert_int_equal(run(fmt, "200 - prev_pid", raw, 64), 77);
	assert_int_equal(run(fmt, "prev_pid < prev_prio", raw, 64), 0); /* field to field */
	assert_int_equal(run(fmt, "prev_prio == next_prio", raw, 64), 1);
	assert_int_equal(run(fmt, "(prev_state & 1) != 0", raw, 64), 1);
	assert_int_equal(run(fmt, "prev_state ? prev_pid : next_pid", raw, 64), 123);
	assert_int_equal(run(fmt, "!prev_state ? prev_pid : next_pid", raw, 64), 0);
	assert_int_equal((int64_t)run(fmt, "next_pid - 1", raw, 64), -1);
	assert_int_equal((int64_t)run(fmt, "-prev_pid", raw, 64), -123);
	assert_int_equal((int64_t)run(fmt, "~prev_pid", raw, 64), -124);
	assert_int_equal(run(fmt, "!next_pid", raw, 64), 1);
	assert_int_equal(run(fmt, "(char)(prev_pid + 200)", raw, 64), 67);
	assert_int_equal((int64_t)run(fmt, "(signed char)(prev_pid + 10)", raw, 64), -123);
	assert_int_equal(run(fmt, "(u16)-prev_pid", raw, 64), 65536 - 123);
	/* common_* fields, unsigned short common_type: promoted to a signed long */
	assert_int_equal(run(fmt, "common_type - 400 < 0", raw, 64), 1);
	assert_int_equal(run(fmt, "common_pid == prev_pid", raw, 64), 1);
	psc_tp_format__delete(fmt);
}

/* Pointers into the event, as perf-prof writes them: their values are offsets in the record. */
static void test_pointers(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_switch, "sched");
	struct expr_opts opts = { .fmt = fmt };
	struct expr_val v;
	struct expr *e;
	uint8_t raw[64];

	make_switch(raw);
	assert_int_equal(run(fmt, "*(unsigned int *)&prev_pid", raw, 64), 123);
	assert_int_equal(run(fmt, "*(unsigned int *)&prev_pid == prev_pid", raw, 64), 1);
	assert_int_equal(run(fmt, "(unsigned long)&prev_pid", raw, 64), 24);
	assert_int_equal(run(fmt, "(unsigned long)(unsigned int *)prev_comm", raw, 64), 8);
	assert_int_equal(run(fmt, "(unsigned long)((unsigned int *)prev_comm + 2)", raw, 64), 16);
	assert_int_equal(run(fmt, "(unsigned long)(2 + (short *)prev_comm - 1)", raw, 64), 10);
	assert_int_equal(run(fmt, "*(unsigned int *)prev_comm", raw, 64), 0x68736162); /* "bash" */
	assert_int_equal(run(fmt, "*((unsigned char *)prev_comm + 1)", raw, 64), 'a');
	assert_int_equal(run(fmt, "*((unsigned char *)prev_comm + 1) == prev_comm[1]", raw, 64), 1);
	/* an offset known at run time only */
	assert_int_equal(run(fmt, "*((unsigned char *)prev_comm + (prev_pid - 121))", raw, 64), 's');
	assert_int_equal((int64_t)run(fmt, "*(signed char *)((unsigned char *)&next_pid - 1)", raw,
				      64), 0);
	e = compile_ok("(unsigned int *)prev_comm + 2", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "unsigned int *");
	expr__delete(e);
	/* read inside the record only */
	e = compile_ok("*((unsigned long *)prev_comm + prev_pid)", &opts);
	assert_int_equal(expr__eval(e, raw, 64, NULL, &v), -ERANGE);
	expr__delete(e);
	compile_fails(&opts, "*prev_pid", 1, "reads pointers into the event only");
	compile_fails(&opts, "*(void *)prev_pid", 1, "an address outside it");
	compile_fails(&opts, "&(prev_pid + 1)", 2, "takes the address of a field");
	compile_fails(&opts, "(int *)prev_comm + (int *)next_comm", 17, "two pointers");
	compile_fails(&opts, "1 - (int *)prev_comm", 2, "minus a pointer");
	psc_tp_format__delete(fmt);
}

/* 64-bit values stay exact: kernel addresses, unsigned comparison of pointers and u64. */
static void test_64bit(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_kmalloc, "kmem");
	struct expr_opts opts = { .fmt = fmt };
	uint8_t raw[56] = { 0 };
	struct expr *e;
	struct expr_val v;
	char buf[64];

	put64(raw + 8, 0xffffffff8123abcdull);
	put64(raw + 16, 0xffff888012345678ull);
	put64(raw + 24, 10);
	put64(raw + 32, 16);
	assert_true(run(fmt, "call_site", raw, 56) == 0xffffffff8123abcdull);
	assert_true(run(fmt, "call_site + 1", raw, 56) == 0xffffffff8123abceull);
	assert_int_equal(run(fmt, "call_site > 0xffff000000000000", raw, 56), 1);
	assert_int_equal(run(fmt, "ptr > call_site", raw, 56), 0);
	assert_int_equal(run(fmt, "(long)call_site < 0", raw, 56), 1);
	assert_int_equal(run(fmt, "call_site >> 60", raw, 56), 15);
	assert_int_equal(run(fmt, "(long)call_site >> 60", raw, 56), (uint64_t)-1);
	assert_int_equal(run(fmt, "bytes_req - bytes_alloc > 0", raw, 56), 1); /* u64 wraps */
	assert_int_equal(run(fmt, "(long)bytes_req - (long)bytes_alloc", raw, 56), (uint64_t)-6);
	assert_int_equal(run(fmt, "call_site / 0x100000000", raw, 56), 0xffffffff);
	assert_int_equal(run(fmt, "call_site % 0x10", raw, 56), 0xd);

	e = compile_ok("ptr", &opts);
	assert_true(expr__type(e).is_ptr);
	assert_string_equal(expr_type__name(expr__type(e)), "void *");
	assert_int_equal(expr__eval(e, raw, 56, NULL, &v), 0);
	expr_val__snprint(expr__type(e), &v, buf, sizeof(buf));
	assert_string_equal(buf, "0xffff888012345678");
	expr__delete(e);
	e = compile_ok("bytes_alloc - 1", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "unsigned long");
	expr__delete(e);
	e = compile_ok("node + 1", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "long");
	expr__delete(e);
	e = compile_ok("(u32)node", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "unsigned int");
	expr__delete(e);
	e = compile_ok("node", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "int");
	expr__delete(e);
	/* comparisons and logic give an int, whatever they compare */
	e = compile_ok("call_site > ptr", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "int");
	expr__delete(e);
	e = compile_ok("call_site && !ptr", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "int");
	expr__delete(e);
	e = compile_ok("node << 1", &opts);
	assert_string_equal(expr_type__name(expr__type(e)), "long");
	expr__delete(e);
	psc_tp_format__delete(fmt);
}

static int str_run(const struct psc_tp_format *fmt, const char *text, const void *raw,
		   uint32_t size)
{
	return (int)run(fmt, text, raw, size);
}

/* ==, != and ~ on char arrays, literals and each other. */
static void test_strings(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_switch, "sched");
	struct expr_opts opts = { .fmt = fmt };
	uint8_t raw[64];
	struct expr *e;
	struct expr_val v;

	make_switch(raw);
	assert_int_equal(str_run(fmt, "prev_comm == \"bash\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "\"bash\" == prev_comm", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm != \"bash\"", raw, 64), 0);
	assert_int_equal(str_run(fmt, "prev_comm == \"bas\"", raw, 64), 0);
	assert_int_equal(str_run(fmt, "prev_comm == \"bashx\"", raw, 64), 0);
	assert_int_equal(str_run(fmt, "next_comm ~ \"swapper*\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "next_comm =~ \"swapper/?\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "next_comm ~ \"swapper\"", raw, 64), 0);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"*sh\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"[a-c]ash\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"[!b]ash\"", raw, 64), 0);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"[^x]a?h\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"b*a*s*h*\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"*\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"\\\\bash\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm == next_comm", raw, 64), 0);
	assert_int_equal(str_run(fmt, "prev_comm != next_comm", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm ~ prev_comm", raw, 64), 1);
	assert_int_equal(
		str_run(fmt, "(prev_pid > 1 ? prev_comm : next_comm) == \"bash\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "\"ab\" \"c\" == \"abc\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm[0] == 'b' && prev_comm[4] == 0", raw, 64), 1);
	/* a comm of 16 bytes has no NUL: all 16 count, nothing past them */
	memcpy(raw + 8, "0123456789abcdef", 16);
	assert_int_equal(str_run(fmt, "prev_comm == \"0123456789abcdef\"", raw, 64), 1);
	assert_int_equal(str_run(fmt, "prev_comm ~ \"*f\"", raw, 64), 1);
	e = compile_ok("prev_comm", &opts);
	assert_int_equal(expr__type(e).kind, EXPR_STR);
	assert_int_equal(expr__eval(e, raw, 64, NULL, &v), 0);
	assert_int_equal(v.len, 16);
	assert_memory_equal(v.s, "0123456789abcdef", 16);
	expr__delete(e);
	psc_tp_format__delete(fmt);
}

/* Globs on their own: classes, escapes, stars that backtrack, bytes over 127. */
static void test_glob(void **state)
{
#define G(p, s) expr_glob(p, (uint32_t)strlen(p), s, (uint32_t)strlen(s))
	assert_true(G("", ""));
	assert_false(G("", "a"));
	assert_true(G("*", ""));
	assert_true(G("a*b*c", "aXXbYYc"));
	assert_false(G("a*b*c", "aXXbYY"));
	assert_true(G("*aab", "aaaab"));
	assert_true(G("kworker/*:*", "kworker/0:1H"));
	assert_true(G("[]]", "]"));
	assert_true(G("[a-]", "-"));
	assert_false(G("[a-c]", "d"));
	assert_true(G("[!a-c]", "d"));
	assert_true(G("[", "[")); /* no closing bracket: a literal */
	assert_true(G("a\\*", "a*"));
	assert_false(G("a\\*", "ab"));
	assert_true(G("\xe9t\xe9", "\xe9t\xe9"));
	assert_true(G("[\xe0-\xef]", "\xe9"));
	assert_true(G("?", "\xff"));
#undef G
}

/* __data_loc strings and arrays, and fixed arrays indexed. */
static void test_dynamic(void **state)
{
	struct psc_tp_format *exec = parse(fmt_sched_process_exec, "sched");
	struct psc_tp_format *dma = parse(fmt_dma_map_sg, "dma");
	struct psc_tp_format *sys = parse(fmt_raw_sys_enter, "raw_syscalls");
	struct expr_opts opts = { .fmt = sys };
	uint8_t raw[96] = { 0 };
	struct expr *e;
	struct expr_val v;

	/* filename at 20, 8 bytes with its NUL */
	put32(raw + 8, 8u << 16 | 20);
	put32(raw + 12, 42);
	memcpy(raw + 20, "/bin/sh", 8);
	assert_int_equal(str_run(exec, "filename == \"/bin/sh\"", raw, 28), 1);
	assert_int_equal(str_run(exec, "filename != \"/bin/sh\"", raw, 28), 0);
	assert_int_equal(str_run(exec, "filename ~ \"*/sh\" && pid == 42", raw, 28), 1);
	assert_int_equal(str_run(exec, "filename[1] == 'b'", raw, 28), 1);

	/* dma_map_sg: device "nvme0" at 44, dma_addrs (u64[]) two at 52, lengths (u32[]) at 68 */
	memset(raw, 0, sizeof(raw));
	put32(raw + 8, 6u << 16 | 44);
	memcpy(raw + 44, "nvme0", 6);
	put32(raw + 28, 16u << 16 | 52);
	put64(raw + 52, 0x1000);
	put64(raw + 60, 0xfffff000ull);
	put32(raw + 32, 8u << 16 | 68);
	put32(raw + 68, 4096);
	put32(raw + 72, 512);
	assert_int_equal(str_run(dma, "device == \"nvme0\"", raw, 76), 1);
	assert_true(run(dma, "dma_addrs[1]", raw, 76) == 0xfffff000ull);
	assert_int_equal(run(dma, "lengths[0] + lengths[1]", raw, 76), 4608);

	/* sys_enter: args[6] */
	memset(raw, 0, sizeof(raw));
	put64(raw + 8, 257);
	for (int i = 0; i < 6; i++)
		put64(raw + 16 + 8 * i, 100 + (uint64_t)i);
	assert_int_equal(run(sys, "args[0] + args[5]", raw, 64), 205);
	assert_int_equal(run(sys, "args[id - 256]", raw, 64), 101);
	/* an index past the array at run time: an error counted, not a read */
	e = compile_ok("args[id]", &opts);
	assert_int_equal(expr__eval(e, raw, 64, NULL, &v), -ERANGE);
	assert_int_equal(expr__nr_errors(e, NULL), 1);
	expr__delete(e);
	compile_fails(&opts, "args[6]", 5, "6 elements");
	compile_fails(&opts, "args", 0, "take one element: args[0]");
	compile_fails(&opts, "id[0]", 2, "not an array");
	psc_tp_format__delete(exec);
	psc_tp_format__delete(dma);
	psc_tp_format__delete(sys);
}

/*
 * char's signedness as the format says, old kernel (signed:1) and new (signed:0): strings
 * compare and match the same either way; an element read as a number follows the format.
 */
static void test_char_signedness(void **state)
{
	const char *texts[2] = { fmt_sched_switch_signed_char, fmt_sched_switch };
	uint8_t raw[64];

	for (int k = 0; k < 2; k++) {
		struct psc_tp_format *fmt = parse(texts[k], "sched");

		make_switch(raw);
		assert_int_equal(psc_tp_format__field(fmt, "prev_comm")->is_signed, k == 0);
		assert_int_equal(str_run(fmt, "prev_comm == \"bash\"", raw, 64), 1);
		assert_int_equal(str_run(fmt, "prev_comm ~ \"ba*\"", raw, 64), 1);
		assert_int_equal(
			str_run(fmt, "prev_comm ~ \"*sh\" || next_comm ~ \"*sh\"", raw, 64), 1);
		assert_int_equal(str_run(fmt, "prev_comm != next_comm", raw, 64), 1);
		raw[8] = 0xe9; /* "\xe9ash": a byte over 127 */
		assert_int_equal(str_run(fmt, "prev_comm == \"\\xe9ash\"", raw, 64), 1);
		assert_int_equal(str_run(fmt, "prev_comm ~ \"[\\xe0-\\xef]a*\"", raw, 64), 1);
		if (k == 0)
			assert_int_equal((int64_t)run(fmt, "prev_comm[0]", raw, 64), -23);
		else
			assert_int_equal(run(fmt, "prev_comm[0]", raw, 64), 233);
		psc_tp_format__delete(fmt);
	}
	/* the old sched_wakeup, with its success field */
	{
		struct psc_tp_format *fmt = parse(fmt_sched_wakeup_signed_char, "sched");

		memset(raw, 0, sizeof(raw));
		memcpy(raw + 8, "kworker/0:1", 11);
		put32(raw + 24, 7);
		put32(raw + 28, 120);
		put32(raw + 32, 1);
		assert_int_equal(str_run(fmt, "comm ~ \"kworker/*\" && success", raw, 40), 1);
		assert_int_equal(str_run(fmt, "pid < prio", raw, 40), 1);
		psc_tp_format__delete(fmt);
	}
}

/* _cpu, _pid, _tid, _time, _period from the sample; NULL sample: zeros. */
static void test_builtins(void **state)
{
	struct psc_sample s = {
		.cpu = 3, .pid = 100, .tid = 101, .time = 5000000000ull, .period = 7
	};
	struct expr *e = compile_ok("(_cpu << 16) | _tid", NULL);
	struct expr_val v;

	assert_int_equal(expr__eval(e, NULL, 0, &s, &v), 0);
	assert_int_equal(v.i, (3 << 16) | 101);
	assert_int_equal(expr__eval(e, NULL, 0, NULL, &v), 0);
	assert_int_equal(v.i, 0);
	expr__delete(e);
	e = compile_ok("_time > 4s && _pid == 100 && _period == 7", NULL);
	assert_int_equal(expr__eval(e, NULL, 0, &s, &v), 0);
	assert_int_equal(v.i, 1);
	assert_string_equal(expr_type__name(expr__type(e)), "int");
	expr__delete(e);
	e = compile_ok("_time", NULL);
	assert_string_equal(expr_type__name(expr__type(e)), "unsigned long");
	expr__delete(e);
}

static const char *fake_comm(void *ctx, uint32_t pid)
{
	(void)ctx;
	return pid == 1 ? "systemd" : pid == 2 ? NULL : "other";
}

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81001000 T do_one\n"
			       "ffffffff81002000 t do_two\n"
			       "ffffffffc0001000 t mod_fn\t[mymod]\n";

static struct ksyms *test_ksyms;

static const struct ksyms *get_ksyms(void *ctx)
{
	(void)ctx;
	return test_ksyms;
}

static const char *str_eval(struct expr *e, const void *raw, uint32_t size, char *buf, size_t len)
{
	struct expr_val v;

	assert_int_equal(expr__type(e).kind, EXPR_STR);
	assert_int_equal(expr__eval(e, raw, size, NULL, &v), 0);
	snprintf(buf, len, "%.*s", (int)v.len, v.s);
	return buf;
}

/* ksymbol, syscall_name, comm_get, printf and the caller's variables. */
static void test_functions(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_switch, "sched");
	static const char *const vars[] = { "key", NULL };
	struct expr_opts opts = { .fmt = fmt, .comm = fake_comm, .ksyms = get_ksyms, .vars = vars };
	struct psc_tp_format *kfmt = parse(fmt_kmalloc, "kmem");
	struct expr_opts kopts = { .fmt = kfmt, .ksyms = get_ksyms };
	char path[] = "/tmp/test_expr_XXXXXX", buf[512];
	uint8_t raw[64], kraw[56];
	struct expr *e;
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, kallsyms, sizeof(kallsyms) - 1), (ssize_t)sizeof(kallsyms) - 1);
	close(fd);
	test_ksyms = ksyms__load(path);
	unlink(path);
	assert_non_null(test_ksyms);
	make_switch(raw);
	memset(kraw, 0, sizeof(kraw));
	memcpy(kraw + 8, &(uint64_t){ 0xffffffff81001010ull }, 8);

	e = compile_ok("ksymbol(call_site)", &kopts);
	assert_string_equal(str_eval(e, kraw, 56, buf, sizeof(buf)), "do_one");
	expr__delete(e);
	e = compile_ok("ksymbol(0xffffffff81001010)", &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "do_one");
	expr__delete(e);
	e = compile_ok("ksymbol(prev_state)", &opts); /* 1: in no function */
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "Unknown");
	expr__delete(e);
	e = compile_ok("ksymbol(0xffffffffc0001004) == \"mod_fn\"", &opts);
	{
		struct expr_val v;

		assert_int_equal(expr__eval(e, raw, 64, NULL, &v), 0);
		assert_int_equal(v.i, 1);
	}
	expr__delete(e);

	e = compile_ok("syscall_name(prev_state - 1)", &opts);
	if (syscall__arch())
		assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "read");
	expr__delete(e);
	e = compile_ok("syscall_name(99999)", &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "syscall_99999");
	expr__delete(e);

	e = compile_ok("comm_get(prev_state)", &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "systemd");
	expr__delete(e);
	e = compile_ok("comm_get(2)", &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "");
	expr__delete(e);

	e = compile_ok("printf(\"%d-%s|%5d|%-5s|%x|%%|%c\", prev_pid, prev_comm, 1, \"ab\", -1, "
		       "'z')",
		       &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)),
			    "123-bash|    1|ab   |ffffffff|%|z");
	expr__delete(e);
	e = compile_ok("printf(\"%lx %hhx %hd %lu %.3s %p %08X %i\", -1, 0x1ff, 65535, -1, "
		       "prev_comm, 0xff, 255, -7)",
		       &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)),
			    "ffffffffffffffff ff -1 18446744073709551615 bas 0xff 000000FF -7");
	expr__delete(e);
	e = compile_ok("printf(\"%p|%p\", 0, call_site)", &kopts);
	assert_string_equal(str_eval(e, kraw, 56, buf, sizeof(buf)), "0x0|0xffffffff81001010");
	expr__delete(e);
	e = compile_ok("printf(\"plain\")", &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "plain");
	expr__delete(e);
	/* nested: each call has its own text */
	e = compile_ok("printf(\"<%s>\", printf(\"%d\", prev_pid))", &opts);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "<123>");
	expr__delete(e);
	/* output longer than a call's text is cut, never overrun */
	e = compile_ok("printf(\"%200d%200d\", 1, 2)", &opts);
	assert_int_equal(strlen(str_eval(e, raw, 64, buf, sizeof(buf))), 255);
	expr__delete(e);

	/* printkey=printf("0x%x", key) */
	e = compile_ok("printf(\"0x%x\", key)", &opts);
	expr__set_var(e, 0, 0xbeef);
	assert_string_equal(str_eval(e, raw, 64, buf, sizeof(buf)), "0xbeef");
	expr__delete(e);
	e = compile_ok("key * 2", &opts);
	expr__set_var(e, 0, 21);
	{
		struct expr_val v;

		assert_int_equal(expr__eval(e, raw, 64, NULL, &v), 0);
		assert_int_equal(v.i, 42);
	}
	expr__delete(e);

	compile_fails(&opts, "printf(\"%s\", prev_pid)", 13, "argument 1 is a number");
	compile_fails(&opts, "printf(\"%d\", prev_comm)", 13, "argument 1 is a string");
	compile_fails(&opts, "printf(\"%d %d\", 1)", 0, "more conversions");
	compile_fails(&opts, "printf(\"%d\", 1, 2)", 16, "argument 2 has no conversion");
	compile_fails(&opts, "printf(\"%f\", 1)", 7, "bad conversion");
	compile_fails(&opts, "printf(\"%*d\", 1)", 7, "'*' widths");
	compile_fails(&opts, "printf(\"%999d\", 1)", 7, "width or precision");
	compile_fails(&opts, "printf(prev_comm)", 7, "must be a string in quotes");
	compile_fails(&opts, "printf()", 0, "needs a format");
	compile_fails(&opts, "ksymbol()", 0, "takes 1 argument, and 0 are given");
	compile_fails(&opts, "ksymbol(1, 2)", 0, "takes 1 argument, and 2 are given");
	compile_fails(&opts, "ksymbol(prev_comm)", 8, "takes a number");
	compile_fails(&opts, "strlen(prev_comm)", 0, "unknown function 'strlen'");
	{
		struct expr_opts bare = { .fmt = fmt };

		compile_fails(&bare, "comm_get(1)", 0, "needs thread names");
		compile_fails(&bare, "ksymbol(1)", 0, "needs the kernel's symbols");
	}
	ksyms__delete(test_ksyms);
	test_ksyms = NULL;
	psc_tp_format__delete(fmt);
	psc_tp_format__delete(kfmt);
}

/* Errors say where (a byte offset) and what, naming the operand at fault. */
static void test_errors(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_wakeup, "sched");
	struct expr_opts opts = { .fmt = fmt };
	struct expr_opts want_int = { .fmt = fmt, .want_int = true };
	struct expr_error err;
	char deep[1200];

	compile_fails(&opts, "", 0, "empty");
	compile_fails(&opts, "   ", 0, "empty");
	compile_fails(&opts, "pid +", 5, "expected a number, a name");
	compile_fails(&opts, "pid 1", 4, "expected an operator or the end");
	compile_fails(&opts, "(pid", 4, "expected ')'");
	compile_fails(&opts, "pid)", 3, "expected an operator or the end");
	compile_fails(&opts, "comm == \"bash", 8, "no closing '\"'");
	compile_fails(&opts, "pid = 1", 4, "compare with '=='");
	compile_fails(&opts, "pid # 1", 4, "unexpected character '#'");
	compile_fails(&opts, "1 / 0", 4, "division by zero");
	compile_fails(&opts, "pid % (2 - 2)", 7, "division by zero");
	compile_fails(&opts, "pid ? 1", 7, "expected ':' of '?:'");
	compile_fails(&opts, "99999999999999999999", 0, "does not fit in 64 bits");
	compile_fails(&opts, "1.5", 0, "a fraction needs a time unit");
	compile_fails(&opts, "10xs", 2, "bad suffix 'xs'");
	compile_fails(&opts, "0x10ms", 4, "a time takes a decimal number");
	compile_fails(&opts, "1.0000000001s", 11, "more than 9 digits");
	compile_fails(&opts, "1.5ns", 0, "not a whole number of nanoseconds");
	compile_fails(&opts, "'ab'", 0, "holds one character");
	compile_fails(&opts, "\"\\q\"", 1, "unknown escape");
	compile_fails(&opts, "(unsigned short char)1", 16, "not a C integer type");
	compile_fails(&opts, "(void)1", 5, "a cast to void");

	/* unknown names: where, a suggestion, and the flag to list the fields */
	assert_null(expr__compile("pid > 0 && pidd < 10", &opts, &err));
	assert_int_equal(err.pos, 11);
	assert_true(err.unknown_name);
	assert_non_null(strstr(err.msg, "sched_wakeup has no field 'pidd'; did you mean 'pid'"));
	assert_null(expr__compile("_cpus", NULL, &err));
	assert_true(err.unknown_name);
	assert_non_null(strstr(err.msg, "did you mean '_cpu'?"));
	assert_non_null(strstr(err.msg, "not a tracepoint"));

	/* type errors name the operand */
	compile_fails(&opts, "comm + 1", 0, "the left operand of '+' is a string");
	compile_fails(&opts, "1 + comm", 4, "the right operand of '+' is a string");
	compile_fails(&opts, "comm == 1", 0, "the left operand is a string");
	compile_fails(&opts, "pid == comm", 7, "the right operand is a string");
	compile_fails(&opts, "comm < \"a\"", 0, "strings take ==, != and ~");
	compile_fails(&opts, "pid ~ \"a*\"", 0, "its left operand is a number");
	compile_fails(&opts, "comm ~ 1", 7, "its right operand is a number");
	compile_fails(&opts, "comm && pid", 0, "left operand of '&&' is a string");
	compile_fails(&opts, "pid || comm", 7, "right operand of '||' is a string");
	compile_fails(&opts, "-comm", 1, "the operand of '-' is a string");
	compile_fails(&opts, "!comm", 1, "the operand of '!' is a string");
	compile_fails(&opts, "comm ? 1 : 2", 0, "the condition of '?:' is a string");
	compile_fails(&opts, "pid ? comm : 2", 13, "the first is a string, the second a number");
	compile_fails(&opts, "(int)comm", 5, "cannot cast a string to int");
	compile_fails(&opts, "pid[comm]", 3, "not an array");
	compile_fails(&want_int, "comm", 0, "a number is needed here");
	compile_fails(&want_int, "pid > 1 ? comm : \"x\"", 0, "a number is needed here");

	/* nesting: refused, not a stack overflow */
	memset(deep, '(', 600);
	strcpy(deep + 600, "1");
	compile_fails(&opts, deep, 100, "nests too deeply");
	memset(deep, '-', 1000);
	strcpy(deep + 1000, "1");
	assert_null(expr__compile(deep, &opts, &err));
	psc_tp_format__delete(fmt);
}

/* Failures at run time: a record too short for a field, a division by zero. */
static void test_runtime_errors(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_switch, "sched");
	struct expr_opts opts = { .fmt = fmt };
	struct expr *e;
	struct expr_val v;
	uint8_t raw[64];
	int last;

	make_switch(raw);
	e = compile_ok("next_prio", &opts);
	assert_int_equal(expr__eval(e, raw, 62, NULL, &v), -ERANGE);
	assert_int_equal(expr__eval(e, raw, 64, NULL, &v), 0);
	assert_int_equal(v.i, 120);
	assert_int_equal(expr__nr_errors(e, &last), 1);
	assert_int_equal(last, -ERANGE);
	expr__delete(e);
	e = compile_ok("prev_pid / next_pid", &opts);
	assert_int_equal(expr__eval(e, raw, 64, NULL, &v), -EDOM);
	expr__delete(e);
	e = compile_ok("prev_pid % next_pid", &opts);
	assert_int_equal(expr__eval(e, raw, 64, NULL, &v), -EDOM);
	expr__delete(e);
	e = compile_ok("next_comm == \"x\"", &opts);
	assert_int_equal(expr__eval(e, raw, 50, NULL, &v), -ERANGE);
	expr__delete(e);
	e = compile_ok("next_comm", &opts);
	assert_int_equal(expr__eval(e, NULL, 0, NULL, &v), -ERANGE);
	assert_non_null(v.s);
	assert_int_equal(v.len, 0);
	expr__delete(e);
	psc_tp_format__delete(fmt);
}

/*
 * The VM and the constant folder compute alike: random expressions over three fields, run once
 * on the fields and once with their values written in (folded at compile time).
 */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static void gen_expr(char *out, size_t len, int depth, bool fields, const char *const vals[3])
{
	static const char *const ops[] = { "+",	 "-",  "*",  "/", "%",	"&", "|",  "^",	 "<<",
					   ">>", "==", "!=", "<", "<=", ">", ">=", "&&", "||" };
	static const char *const names[3] = { "prev_pid", "prev_state", "next_prio" };
	static const char *const lits[] = { "0",
					    "1",
					    "2",
					    "7",
					    "-1",
					    "63",
					    "0xffffffff",
					    "0x8000000000000000",
					    "-9223372036854775807",
					    "100u",
					    "3ul" };
	static const char *const casts[] = { "(char)", "(unsigned char)", "(short)", "(u16)",
					     "(int)",  "(unsigned)",	  "(long)",  "(u64)" };
	char a[4096], b[4096], c[4096];
	uint32_t k = depth > 3 ? 0 : rnd(6);

	switch (k) {
	case 0: {
		uint32_t i = rnd(3);

		if (rnd(2))
			snprintf(out, len, "%s", lits[rnd(sizeof(lits) / sizeof(lits[0]))]);
		else
			snprintf(out, len, "%s", fields ? names[i] : vals[i]);
		return;
	}
	case 1:
		gen_expr(a, sizeof(a), depth + 1, fields, vals);
		snprintf(out, len, "%s(%s)", rnd(2) ? "-" : rnd(2) ? "~" : "!", a);
		return;
	case 2:
		gen_expr(a, sizeof(a), depth + 1, fields, vals);
		snprintf(out, len, "%s(%s)", casts[rnd(sizeof(casts) / sizeof(casts[0]))], a);
		return;
	case 3:
		gen_expr(a, sizeof(a), depth + 1, fields, vals);
		gen_expr(b, sizeof(b), depth + 1, fields, vals);
		gen_expr(c, sizeof(c), depth + 1, fields, vals);
		snprintf(out, len, "(%s) ? (%s) : (%s)", a, b, c);
		return;
	default:
		gen_expr(a, sizeof(a), depth + 1, fields, vals);
		gen_expr(b, sizeof(b), depth + 1, fields, vals);
		snprintf(out, len, "(%s) %s (%s)", a, ops[rnd(sizeof(ops) / sizeof(ops[0]))], b);
		return;
	}
}

static void test_fold_matches_vm(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_switch, "sched");
	struct expr_opts opts = { .fmt = fmt };
	/* the fields' values as literals of their own types: int, long, int */
	static const char *const vals[3] = { "((int)-123)", "((long)-9000000000)", "((int)120)" };
	uint8_t raw[64];
	int same = 0;

	make_switch(raw);
	put32(raw + 24, (uint32_t)-123);
	put64(raw + 32, (uint64_t)-9000000000LL);
	for (int i = 0; i < 3000; i++) {
		char with_fields[16384], with_values[16384];
		uint64_t save = rng_state;
		struct expr_error err;
		struct expr *ef, *ev;
		struct expr_val vf, vv;
		int rf, rv;

		gen_expr(with_fields, sizeof(with_fields), 0, true, vals);
		rng_state = save;
		gen_expr(with_values, sizeof(with_values), 0, false, vals);
		ef = expr__compile(with_fields, &opts, &err);
		ev = expr__compile(with_values, &opts, &err);
		/*
		 * a constant division by zero is a compile error, even where && or ?: skips it;
		 * through fields it is a run error, when it runs
		 */
		if (!ev) {
			if (!strstr(err.msg, "division by zero"))
				fail_msg("'%s': %s", with_values, err.msg);
			expr__delete(ef);
			continue;
		}
		assert_non_null(ef);
		assert_true(expr__is_const(ev));
		rv = expr__eval(ev, NULL, 0, NULL, &vv);
		rf = expr__eval(ef, raw, 64, NULL, &vf);
		assert_int_equal(rv, 0);
		if (rf || vf.i != vv.i || expr__type(ef).is_signed != expr__type(ev).is_signed)
			fail_msg("'%s' = %llx (%s), but folded '%s' = %llx (%s)", with_fields,
				 (unsigned long long)vf.i, expr_type__name(expr__type(ef)),
				 with_values, (unsigned long long)vv.i,
				 expr_type__name(expr__type(ev)));
		same++;
		expr__delete(ef);
		expr__delete(ev);
	}
	print_message("# %d expressions agreed\n", same);
	assert_true(same > 1000);
	psc_tp_format__delete(fmt);
}

/* The bytecode is small: key=pid is a load and a return, a field compared with a constant one
 * instruction. */
static void test_bytecode(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_wakeup, "sched");
	struct expr_opts opts = { .fmt = fmt };
	struct expr *e = compile_ok("pid", &opts);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	expr__dump(e, f);
	expr__delete(e);
	e = compile_ok("pid > 100 && prio < 120", &opts);
	expr__dump(e, f);
	expr__delete(e);
	fclose(f);
	assert_string_equal(text, "   0  ld.s32   pid (offset 24)\n"
				  "   1  ret     \n"
				  "   0  f.gt.i   pid (offset 24, ld.s32), 100\n"
				  "   1  jz       -> 3\n"
				  "   2  f.lt.i   prio (offset 28, ld.s32), 120\n"
				  "   3  ret     \n");
	free(text);
	psc_tp_format__delete(fmt);
}

/* The names listed after an unknown one. */
static void test_print_names(void **state)
{
	struct psc_tp_format *fmt = parse(fmt_sched_wakeup, "sched");
	static const char *const vars[] = { "key", NULL };
	struct expr_opts opts = { .fmt = fmt, .vars = vars };
	struct expr_opts none = { 0 };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	expr_print_names(f, "  ", "sched:sched_wakeup", &opts);
	expr_print_names(f, "  ", "page-faults", &none);
	fclose(f);
	assert_string_equal(text,
			    "  sched:sched_wakeup has fields: common_type, common_flags, "
			    "common_preempt_count, common_pid, comm, pid, prio, target_cpu\n"
			    "  and names: _cpu, _pid, _tid, _time, _period, key\n"
			    "  page-faults is not a tracepoint (no fields); names: _cpu, _pid, "
			    "_tid, _time, _period\n");
	free(text);
	psc_tp_format__delete(fmt);
}

/* The syscall table agrees with the installed header, where there is one. */
static void test_syscall_table(void **state)
{
	FILE *f = fopen("/usr/include/x86_64-linux-gnu/asm/unistd_64.h", "r");
	char line[256], name[128];
	unsigned long nr;
	int n = 0;

	if (!syscall__arch() || !f) {
		if (f)
			fclose(f);
		skip();
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "#define __NR_%127s %lu", name, &nr) != 2)
			continue;
		if (!syscall__name(nr) || strcmp(syscall__name(nr), name))
			fail_msg("syscall %lu: table says %s, the header %s", nr,
				 syscall__name(nr) ? syscall__name(nr) : "nothing", name);
		n++;
	}
	fclose(f);
	assert_true(n > 300);
	assert_string_equal(syscall__name(462), "mseal");
	assert_null(syscall__name(100000));
}

/*
 * The running kernel's formats, where tracefs is mounted: every field of a few common events
 * compiles with its own type, a string field compares with a literal, an array's first element
 * reads, and an all-zero record of the event's size evaluates without error.
 */
static void test_live_formats(void **state)
{
	static const char *const events[][2] = {
		{ "sched", "sched_switch" },
		{ "sched", "sched_wakeup" },
		{ "sched", "sched_process_exec" },
		{ "raw_syscalls", "sys_enter" },
		{ "kmem", "kmalloc" },
		{ "irq", "softirq_entry" },
		{ "timer", "hrtimer_start" },
		{ "syscalls", "sys_enter_openat" },
	};
	int checked = 0;

	if (!psc_tracefs__dir()) {
		print_message("# tracefs is not mounted: skipped\n");
		skip();
	}
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		struct psc_tp_format *fmt = psc_tp_format__load(events[i][0], events[i][1]);
		struct expr_opts opts = { .fmt = fmt };
		uint8_t raw[4096] = { 0 };

		if (!fmt)
			continue;
		for (int k = 0; k < psc_tp_format__nr_fields(fmt); k++) {
			const struct psc_tp_field *f = psc_tp_format__field_at(fmt, k);
			char text[256];
			struct expr *e;
			struct expr_val v;

			if (f->kind == PSC_TP_KIND_STRING)
				snprintf(text, sizeof(text), "%s == \"x\" || %s ~ \"*y*\"", f->name,
					 f->name);
			else if (f->kind == PSC_TP_KIND_ARRAY)
				snprintf(text, sizeof(text), "%s[0]", f->name);
			else
				snprintf(text, sizeof(text), "%s", f->name);
			e = compile_ok(text, &opts);
			if (f->kind != PSC_TP_KIND_STRING && f->kind != PSC_TP_KIND_ARRAY) {
				assert_int_equal(expr__type(e).size, f->size);
				assert_int_equal(expr__type(e).is_signed, f->is_signed);
				assert_int_equal(expr__type(e).is_ptr,
						 f->kind == PSC_TP_KIND_POINTER);
			}
			/* a fixed array reads its element 0; a dynamic one of length 0 has none */
			if (!f->is_dynamic)
				assert_int_equal(expr__eval(e, raw, sizeof(raw), NULL, &v), 0);
			expr__delete(e);
			checked++;
		}
		psc_tp_format__delete(fmt);
	}
	print_message("# %d fields of this kernel's formats checked\n", checked);
	assert_true(checked > 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),
		cmocka_unit_test(test_fields),
		cmocka_unit_test(test_64bit),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_dynamic),
		cmocka_unit_test(test_char_signedness),
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_functions),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_runtime_errors),
		cmocka_unit_test(test_fold_matches_vm),
		cmocka_unit_test(test_bytecode),
		cmocka_unit_test(test_pointers),
		cmocka_unit_test(test_print_names),
		cmocka_unit_test(test_syscall_table),
		cmocka_unit_test(test_live_formats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
