/* Unit tests of task-state's and blktrace's reading of formats: prev_state letters (tstate) and
 * the key/state expressions, against the formats of 3.10, 4.19, 5.10 and 6.18 kernels
 * (tests/fixtures/formats/VERSION/EVENT), on synthetic records laid out as each kernel does. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "expr.h"
#include "tstate.h"

#ifndef FIXTURES_DIR
#error FIXTURES_DIR must name tests/fixtures
#endif

static struct psc_tp_format *load(const char *version, const char *event, const char *sys)
{
	char path[512], *text;
	struct psc_tp_format *fmt;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/formats/%s/%s", FIXTURES_DIR, version, event);
	f = fopen(path, "r");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	text = calloc(1, (size_t)n + 1);
	assert_non_null(text);
	assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	fmt = psc_tp_format__parse(text, sys);
	free(text);
	assert_non_null(fmt);
	return fmt;
}

static uint64_t run(struct psc_tp_format *fmt, const char *text, const void *raw, uint32_t size)
{
	struct expr_opts o = { .fmt = fmt, .want_int = true };
	struct expr_error err;
	struct expr *e = expr__compile(text, &o, &err);
	struct expr_val v;

	if (!e)
		fail_msg("'%s' on %s: %s", text, psc_tp_format__name(fmt), err.msg);
	assert_int_equal(expr__eval(e, raw, size, NULL, &v), 0);
	expr__delete(e);
	return v.i;
}

static uint64_t field(struct psc_tp_format *fmt, const char *name, const void *raw, uint32_t size)
{
	const struct psc_tp_field *f = psc_tp_format__field(fmt, name);
	uint64_t v = 0;

	assert_non_null(f);
	assert_int_equal(psc_tp_field__u64(f, raw, size, &v), 0);
	return v;
}

/* A sched_switch record as the kernel writes it (the layout has not moved since 3.x). */
static void switch_record(unsigned char *raw, int32_t prev, int64_t state, int32_t next)
{
	memset(raw, 0, 64);
	memcpy(raw + 8, "prev", 5);
	memcpy(raw + 24, &prev, 4);
	memcpy(raw + 32, &state, 8);
	memcpy(raw + 40, "next", 5);
	memcpy(raw + 56, &next, 4);
}

struct expect {
	const char *version;
	uint64_t preempt;
	const char *letters[12]; /* by bit, NULL: none */
};

static const struct expect kernels[] = {
	{ "3.10", 2048, { "S", "D", "T", "t", "Z", "X", "x", "K", "W", "P", "N", NULL } },
	{ "4.19", 0x100, { "S", "D", "T", "t", "X", "Z", "P", "I", NULL } },
	{ "5.10", 0x100, { "S", "D", "T", "t", "X", "Z", "P", "I", NULL } },
	{ "6.18", 0x100, { "S", "D", "T", "t", "X", "Z", "P", "I", NULL } },
};

static void test_letters(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
		const struct expect *x = &kernels[k];
		struct psc_tp_format *fmt = load(x->version, "sched_switch", "sched");
		struct tstate_map m;
		int bit;

		assert_int_equal(tstate_map__init(&m, fmt), 0);
		assert_int_equal(m.preempt, x->preempt);
		for (bit = 0; x->letters[bit]; bit++) {
			int cls = tstate_map__class(&m, 1ull << bit);

			assert_int_equal(cls, bit + 1);
			assert_string_equal(tstate_map__letter(&m, cls), x->letters[bit]);
		}
		/* no letter past the last one the format names */
		assert_int_equal(tstate_map__class(&m, 1ull << (bit + 1)), -1);
		/* 0 and the preemption bit (alone or with a stale state bit) are runnable */
		assert_int_equal(tstate_map__class(&m, 0), TSTATE_RUNNABLE);
		assert_int_equal(tstate_map__class(&m, x->preempt), TSTATE_RUNNABLE);
		assert_int_equal(tstate_map__class(&m, x->preempt | 1), TSTATE_RUNNABLE);
		assert_string_equal(tstate_map__letter(&m, TSTATE_RUNNABLE), "R");
		assert_int_equal(tstate_map__find(&m, "S"), 1);
		assert_int_equal(tstate_map__find(&m, "D"), 2);
		psc_tp_format__delete(fmt);
	}
}

/* The same value means another state on another kernel: 0x10 is Z on 3.10 and X after. */
static void test_moved_bits(void **state)
{
	struct psc_tp_format *old = load("3.10", "sched_switch", "sched");
	struct psc_tp_format *now = load("6.18", "sched_switch", "sched");
	struct tstate_map mo, mn;

	(void)state;
	assert_int_equal(tstate_map__init(&mo, old), 0);
	assert_int_equal(tstate_map__init(&mn, now), 0);
	assert_string_equal(tstate_map__letter(&mo, tstate_map__class(&mo, 0x10)), "Z");
	assert_string_equal(tstate_map__letter(&mn, tstate_map__class(&mn, 0x10)), "X");
	/* 0x100 is the preemption on 4.14+, W (waking) on 3.10 */
	assert_int_equal(tstate_map__class(&mn, 0x100), TSTATE_RUNNABLE);
	assert_string_equal(tstate_map__letter(&mo, tstate_map__class(&mo, 0x100)), "W");
	assert_int_equal(tstate_map__find(&mo, "I"), -1);
	assert_int_equal(tstate_map__find(&mn, "I"), 8);
	psc_tp_format__delete(old);
	psc_tp_format__delete(now);
}

/* A format whose prev_state is not printed the kernel's way is refused, not guessed. */
static void test_refused(void **state)
{
	struct psc_tp_format *w = load("6.18", "sched_wakeup", "sched");
	struct tstate_map m;

	(void)state;
	assert_int_equal(tstate_map__init(&m, w), -EINVAL);
	psc_tp_format__delete(w);
}

/* task-state's expressions on each kernel's sched_switch and sched_wakeup. */
static void test_sched_exprs(void **state)
{
	static const char *const versions[] = { "3.10", "4.19", "5.10", "6.18" };

	(void)state;
	for (size_t k = 0; k < 4; k++) {
		struct psc_tp_format *sw = load(versions[k], "sched_switch", "sched");
		struct psc_tp_format *wk = load(versions[k], "sched_wakeup", "sched");
		unsigned char raw[64], wraw[40] = { 0 };
		int32_t pid = 4242, cpu = 3;
		/* target_cpu moved: 36 with the success field (until 5.x), 32 after */
		uint32_t tcpu_off = psc_tp_format__field(wk, "success") ? 36 : 32;

		switch_record(raw, 77, 2, 88);
		/* task-state reads these three through the format's field accessors */
		assert_int_equal(field(sw, "prev_pid", raw, 64), 77);
		assert_int_equal(field(sw, "next_pid", raw, 64), 88);
		assert_int_equal(field(sw, "prev_state", raw, 64), 2);
		assert_int_equal(run(sw, "prev_pid", raw, 64), 77);
		assert_int_equal(run(sw, "next_pid", raw, 64), 88);
		assert_int_equal(run(sw, "prev_state", raw, 64), 2);
		assert_int_equal(run(sw, "prev_comm~\"pr*\"", raw, 64), 1);
		assert_int_equal(run(sw, "next_comm~\"pr*\"", raw, 64), 0);
		memcpy(wraw + 24, &pid, 4);
		memcpy(wraw + tcpu_off, &cpu, 4);
		assert_int_equal(run(wk, "pid", wraw, 40), 4242);
		assert_int_equal(field(wk, "pid", wraw, 40), 4242);
		assert_int_equal(run(wk, "target_cpu", wraw, 40), 3);
		psc_tp_format__delete(sw);
		psc_tp_format__delete(wk);
	}
}

/* blktrace's key and device on each kernel's block events: the layouts differ after sector. */
static void test_block_exprs(void **state)
{
	static const char *const versions[] = { "4.19", "5.10", "6.18" };
	static const char *const events[] = { "block_getrq", "block_rq_insert", "block_rq_issue",
					      "block_rq_complete" };

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		for (size_t e = 0; e < 4; e++) {
			struct psc_tp_format *fmt = load(versions[k], events[e], "block");
			unsigned char raw[96] = { 0 };
			uint32_t dev = 7u << 20 | 3;
			uint64_t sector = 123456789012ull;
			int32_t error = -5;

			memcpy(raw + 8, &dev, 4);
			memcpy(raw + 16, &sector, 8);
			/* complete's error: 28 on every kernel here; ioprio only on 6.x */
			if (e == 3)
				memcpy(raw + 28, &error, 4);
			assert_int_equal(run(fmt, "sector", raw, sizeof(raw)), sector);
			assert_int_equal(run(fmt, "dev", raw, sizeof(raw)), dev);
			assert_int_equal(run(fmt, "dev >> 20", raw, sizeof(raw)), 7);
			if (e == 3)
				assert_int_equal((int64_t)run(fmt, "error", raw, sizeof(raw)), -5);
			assert_int_equal(psc_tp_format__field(fmt, "ioprio") != NULL,
					 !strcmp(versions[k], "6.18") && e);
			psc_tp_format__delete(fmt);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_letters),	   cmocka_unit_test(test_moved_bits),
		cmocka_unit_test(test_refused),	   cmocka_unit_test(test_sched_exprs),
		cmocka_unit_test(test_block_exprs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
