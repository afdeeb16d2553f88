/* Unit tests of common/sample_keep: a kept sample owns every part it points to, the record it
 * came from overwritten (as the ring is once its round is consumed). */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "sample_keep.h"

/* The record: every part of the sample points into it. */
static uint64_t record[2048];

/* Whether p lies in [base, base + len) */
static bool within(const void *p, const void *base, size_t len)
{
	return (const char *)p >= (const char *)base && (const char *)p < (const char *)base + len;
}

static struct psc_sample full_sample(void)
{
	uint64_t *at = record;
	struct psc_sample s = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_RAW |
			       PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
			       PERF_SAMPLE_STACK_USER | PERF_SAMPLE_BRANCH_STACK |
			       PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_READ | PERF_SAMPLE_AUX,
		.pid = 42,
		.tid = 43,
		.time = 1000,
	};

	for (size_t i = 0; i < sizeof(record) / 8; i++)
		record[i] = 0x1000 + i;
	s.read.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	s.read.nr = 2;
	s.read.stride = 2;
	s.read.group = at;
	at += 4;
	s.callchain.nr = 5;
	s.callchain.ips = at;
	at += 5;
	s.raw.size = 44; /* not a multiple of 8: the parts after it stay aligned */
	s.raw.data = (const char *)at + 4; /* where the kernel puts it, after its u32 size */
	at += 6;
	s.branch_stack.nr = 2;
	s.branch_stack.entries = (const struct perf_branch_entry *)(void *)at;
	at += 2 * sizeof(struct perf_branch_entry) / 8;
	s.branch_stack.counters = at;
	at += 2;
	s.regs_user = (struct psc_sample_regs){
		.abi = PERF_SAMPLE_REGS_ABI_64, .mask = 0x7, .nr = 3, .regs = at
	};
	at += 3;
	s.stack_user.size = 4096;
	s.stack_user.dyn_size = 1000; /* the stack's top came first: only 1000 bytes valid */
	s.stack_user.data = at;
	at += 4096 / 8;
	s.regs_intr = (struct psc_sample_regs){
		.abi = PERF_SAMPLE_REGS_ABI_64, .mask = 0x3, .nr = 2, .regs = at
	};
	at += 2;
	s.aux.size = 24;
	s.aux.data = at;
	return s;
}

static void t_owns_every_part(void **state)
{
	struct psc_sample s = full_sample(), want = s, *c;
	size_t bytes = sample_keep__bytes(&s);
	uint64_t saved[2048];

	(void)state;
	/* 4 + 5 read/callchain words, 48 raw, 2 branches + counters, 3 + 2 regs, 1000 stack, aux */
	assert_int_equal(bytes, 32 + 40 + 48 + 2 * sizeof(struct perf_branch_entry) + 16 + 24 +
					1000 + 16 + 24);
	memcpy(saved, record, sizeof(record));
	c = sample_keep__dup(&s);
	assert_non_null(c);
	/* the record is gone: its memory reused */
	memset(record, 0xa5, sizeof(record));
	assert_int_equal(c->pid, 42);
	assert_int_equal(c->time, 1000);
	assert_int_equal(c->stack_user.size, 4096); /* what was asked: the unwinder needs it */
	assert_int_equal(c->stack_user.dyn_size, 1000);
#define SAME(member, len)                                                                       \
	do {                                                                                    \
		assert_true(within(c->member, c + 1, bytes));                                   \
		assert_memory_equal(c->member,                                                  \
				    (const char *)saved +                                       \
					    ((const char *)want.member - (const char *)record), \
				    len);                                                       \
	} while (0)
	SAME(read.group, 4 * 8);
	SAME(callchain.ips, 5 * 8);
	SAME(raw.data, 44);
	SAME(branch_stack.entries, 2 * sizeof(struct perf_branch_entry));
	SAME(branch_stack.counters, 2 * 8);
	SAME(regs_user.regs, 3 * 8);
	SAME(stack_user.data, 1000);
	SAME(regs_intr.regs, 2 * 8);
	SAME(aux.data, 24);
#undef SAME
	/* each part 8-byte aligned, as u64 arrays must be (the raw data too) */
	for (const void *const *p =
		     (const void *const[]){ c->read.group, c->callchain.ips, c->raw.data,
					    c->branch_stack.entries, c->branch_stack.counters,
					    c->regs_user.regs, c->stack_user.data,
					    c->regs_intr.regs, c->aux.data, NULL };
	     *p; p++)
		assert_int_equal((uintptr_t)*p % 8, 0);
	free(c);
}

static void t_absent_parts(void **state)
{
	struct psc_sample s = { .sample_type = PERF_SAMPLE_TID, .pid = 7 }, *c;
	struct psc_sample k;

	(void)state;
	/* a sample with no part costs no byte */
	assert_int_equal(sample_keep__bytes(&s), 0);
	c = sample_keep__dup(&s);
	assert_non_null(c);
	assert_int_equal(c->pid, 7);
	assert_null(c->raw.data);
	assert_null(c->callchain.ips);
	assert_null(c->regs_user.regs);
	assert_null(c->stack_user.data);
	free(c);
	/* a stack the kernel could copy nothing of (dyn_size 0) stays present, pointing nowhere
	 * into the record */
	s = full_sample();
	s.stack_user.dyn_size = 0;
	{
		char buf[8192] __attribute__((aligned(8)));

		assert_true(sample_keep__bytes(&s) <= sizeof(buf));
		sample_keep__into(&k, &s, buf);
		assert_non_null(k.stack_user.data);
		assert_false(within(k.stack_user.data, record, sizeof(record)));
		assert_true(within(k.stack_user.data, buf, sizeof(buf)));
		assert_int_equal(k.stack_user.dyn_size, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_owns_every_part),
		cmocka_unit_test(t_absent_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
