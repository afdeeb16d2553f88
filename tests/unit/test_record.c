/* Unit tests of record decoding: each sample_type field and combination, each side-band record. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "internal.h"
#include "ring_fake.h"

#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1ULL << 19)
#endif

static struct perf_event_attr attr_of(uint64_t sample_type)
{
	struct perf_event_attr a = { .size = sizeof(a), .sample_type = sample_type };

	return a;
}

/*
 * Truncating a valid record anywhere, or (for records without a string, whose padding may grow)
 * growing it, must give -EINVAL and never read past it.
 */
static void check_size(const struct perf_event_header *h, const struct perf_event_attr *a,
		       bool grow)
{
	struct psc_record prev, again;
	bool valid = psc_record__parse(h, a, &prev) == 0;

	/* the inline decoder, after the record itself: the same, or it leaves it to the full one */
	if (valid && h->type == PERF_RECORD_SAMPLE &&
	    !(a->sample_type & ~(uint64_t)PSC_SAMPLE_AGAIN_TYPES)) {
		again = prev;
		assert_true(psc_record__parse_again(h, a, &again));
		assert_memory_equal(&again, &prev, sizeof(prev));
	}
	/* copies sized exactly, so ASan sees any read beyond header.size */
	for (unsigned int size = 8; size <= h->size + (grow ? 8u : 0u); size += 8) {
		struct perf_event_header *copy;
		struct psc_record r;

		if (size == h->size)
			continue;
		copy = aligned_alloc(8, size);
		memcpy(copy, h, size < h->size ? size : h->size);
		if (size > h->size)
			memset((char *)copy + h->size, 0, size - h->size);
		copy->size = (uint16_t)size;
		assert_int_equal(psc_record__parse(copy, a, &r), -EINVAL);
		if (valid) {
			again = prev;
			assert_false(psc_record__parse_again(copy, a, &again));
		}
		free(copy);
	}
}

static void expect_strict_size(const struct perf_event_header *h, const struct perf_event_attr *a)
{
	check_size(h, a, true);
}

static void expect_truncation_fails(const struct perf_event_header *h,
				    const struct perf_event_attr *a)
{
	check_size(h, a, false);
}

static void test_fixed_fields_each(void **state)
{
	static const uint64_t bits[] = {
		PERF_SAMPLE_IDENTIFIER,	    PERF_SAMPLE_IP,	  PERF_SAMPLE_TID,
		PERF_SAMPLE_TIME,	    PERF_SAMPLE_ADDR,	  PERF_SAMPLE_ID,
		PERF_SAMPLE_STREAM_ID,	    PERF_SAMPLE_CPU,	  PERF_SAMPLE_PERIOD,
		PERF_SAMPLE_WEIGHT,	    PERF_SAMPLE_DATA_SRC, PERF_SAMPLE_TRANSACTION,
		PERF_SAMPLE_PHYS_ADDR,	    PERF_SAMPLE_CGROUP,	  PERF_SAMPLE_DATA_PAGE_SIZE,
		PERF_SAMPLE_CODE_PAGE_SIZE,
	};

	for (size_t i = 0; i < sizeof(bits) / sizeof(bits[0]); i++) {
		struct perf_event_attr a = attr_of(bits[i]);
		struct rec_builder b;
		struct psc_sample s;
		uint64_t v = 0x1122334455667788ULL + i;

		rb_start(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		rb_u64(&b, v);
		assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
		assert_int_equal(s.sample_type, bits[i]);
		assert_int_equal(s.misc, PERF_RECORD_MISC_USER);
		switch (bits[i]) {
		case PERF_SAMPLE_IDENTIFIER:
		case PERF_SAMPLE_ID:
			assert_int_equal(s.id, v);
			break;
		case PERF_SAMPLE_IP:
			assert_int_equal(s.ip, v);
			break;
		case PERF_SAMPLE_TID:
			assert_int_equal(s.pid, (uint32_t)v);
			assert_int_equal(s.tid, (uint32_t)(v >> 32));
			break;
		case PERF_SAMPLE_TIME:
			assert_int_equal(s.time, v);
			break;
		case PERF_SAMPLE_ADDR:
			assert_int_equal(s.addr, v);
			break;
		case PERF_SAMPLE_STREAM_ID:
			assert_int_equal(s.stream_id, v);
			break;
		case PERF_SAMPLE_CPU:
			assert_int_equal(s.cpu, (uint32_t)v);
			break;
		case PERF_SAMPLE_PERIOD:
			assert_int_equal(s.period, v);
			break;
		case PERF_SAMPLE_WEIGHT:
			assert_int_equal(s.weight, v);
			break;
		case PERF_SAMPLE_DATA_SRC:
			assert_int_equal(s.data_src, v);
			break;
		case PERF_SAMPLE_TRANSACTION:
			assert_int_equal(s.transaction, v);
			break;
		case PERF_SAMPLE_PHYS_ADDR:
			assert_int_equal(s.phys_addr, v);
			break;
		case PERF_SAMPLE_CGROUP:
			assert_int_equal(s.cgroup, v);
			break;
		case PERF_SAMPLE_DATA_PAGE_SIZE:
			assert_int_equal(s.data_page_size, v);
			break;
		case PERF_SAMPLE_CODE_PAGE_SIZE:
			assert_int_equal(s.code_page_size, v);
			break;
		}
		expect_strict_size(rb_finish(&b), &a);
	}
}

/* The kernel's order: IDENTIFIER first, ID after ADDR; both fill id. */
static void test_fixed_fields_order(void **state)
{
	struct perf_event_attr a = attr_of(
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_ADDR | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD);
	struct rec_builder b;
	struct psc_sample s;

	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 101); /* identifier */
	rb_u64(&b, 0xffffffff81000000ULL); /* ip */
	rb_u32x2(&b, 4242, 4243);
	rb_u64(&b, 123456789);
	rb_u64(&b, 0xdead0000);
	rb_u64(&b, 555); /* stream id */
	rb_u32x2(&b, 1, 0xffffffff); /* cpu, res */
	rb_u64(&b, 1);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.id, 101);
	assert_int_equal(s.ip, 0xffffffff81000000ULL);
	assert_int_equal(s.pid, 4242);
	assert_int_equal(s.tid, 4243);
	assert_int_equal(s.time, 123456789);
	assert_int_equal(s.addr, 0xdead0000);
	assert_int_equal(s.stream_id, 555);
	assert_int_equal(s.cpu, 1);
	assert_int_equal(s.period, 1);
	assert_null(s.callchain.ips);
	assert_null(s.raw.data);
	expect_strict_size(rb_finish(&b), &a);

	a.sample_type |= PERF_SAMPLE_ID;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 7);
	rb_u64(&b, 1);
	rb_u32x2(&b, 1, 1);
	rb_u64(&b, 1);
	rb_u64(&b, 1);
	rb_u64(&b, 7); /* id after addr */
	rb_u64(&b, 1);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 1);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.id, 7);
	assert_int_equal(s.stream_id, 1);
}

/* A tracepoint sample as perfscope trace asks for it. */
static void test_tracepoint_raw(void **state)
{
	struct perf_event_attr a =
		attr_of(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW);
	unsigned char payload[12];
	struct rec_builder b;
	struct psc_sample s;
	uint32_t rsz = sizeof(payload);

	for (size_t i = 0; i < sizeof(payload); i++)
		payload[i] = (unsigned char)(0xa0 + i);
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 9);
	rb_u32x2(&b, 10, 11);
	rb_u64(&b, 1000);
	rb_u32x2(&b, 1, 0);
	rb_u64(&b, 1);
	/* u32 size + 12 bytes = 16: aligned */
	memcpy(&b.buf[b.n], &rsz, 4);
	memcpy((char *)&b.buf[b.n] + 4, payload, sizeof(payload));
	b.n += 2;
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.raw.size, 12);
	assert_memory_equal(s.raw.data, payload, 12);
	assert_int_equal(s.tid, 11);
	expect_strict_size(rb_finish(&b), &a);

	/* a raw size that breaks the u64 alignment of what follows */
	rsz = 10;
	memcpy(&b.buf[6], &rsz, 4);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
	/* a raw size beyond the record */
	rsz = 1020;
	memcpy(&b.buf[6], &rsz, 4);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
	rsz = 0xfffffffc;
	memcpy(&b.buf[6], &rsz, 4);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
}

/*
 * psc_record__parse_again after another sample of the same sample_type gives what the full
 * decoder gives; another sample_type, a record type or a bit it does not take are left to it.
 */
static void test_parse_again(void **state)
{
	struct perf_event_attr a = attr_of(
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
		PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW);
	struct perf_event_attr other = attr_of(a.sample_type & ~PERF_SAMPLE_IP);
	struct perf_event_attr with_read = attr_of(a.sample_type | PERF_SAMPLE_READ);
	struct rec_builder b1, b2;
	struct psc_record r, full;
	uint32_t rsz = 4;

	for (int k = 0; k < 2; k++) {
		struct rec_builder *b = k ? &b2 : &b1;

		rb_start(b, PERF_RECORD_SAMPLE,
			 k ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
		rb_u64(b, 100 + k);
		rb_u64(b, 0xffff0000 + k);
		rb_u32x2(b, 10 + k, 20 + k);
		rb_u64(b, 1000 + k);
		rb_u32x2(b, (uint32_t)k, 0);
		rb_u64(b, 1);
		rb_u64(b, 1 + k); /* callchain */
		for (int i = 0; i <= k; i++)
			rb_u64(b, 0x400000 + i);
		memcpy(&b->buf[b->n], &rsz, 4);
		memcpy((char *)&b->buf[b->n] + 4, &k, 4);
		b->n++;
	}
	assert_int_equal(psc_record__parse(rb_finish(&b1), &a, &r), 0);
	full = r;
	assert_true(psc_record__parse_again(rb_finish(&b2), &a, &r));
	assert_int_equal(psc_record__parse(rb_finish(&b2), &a, &full), 0);
	assert_memory_equal(&r, &full, sizeof(r));
	assert_int_equal(r.sample.callchain.nr, 2);
	assert_int_equal(r.misc, PERF_RECORD_MISC_KERNEL);
	assert_ptr_equal(r.hdr, rb_finish(&b2));

	assert_false(psc_record__parse_again(rb_finish(&b2), &other, &r));
	assert_false(psc_record__parse_again(rb_finish(&b2), &with_read, &r));
	r.type = PERF_RECORD_COMM;
	assert_false(psc_record__parse_again(rb_finish(&b2), &a, &r));
}

/* A sample struct reused from an earlier record (here: garbage) has every absent field 0/NULL. */
static void test_absent_fields_zeroed(void **state)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_IP);
	struct rec_builder b;
	struct psc_sample s;

	memset(&s, 0xa5, sizeof(s));
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 0x1234);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.ip, 0x1234);
	assert_int_equal(s.id, 0);
	assert_int_equal(s.pid, 0);
	assert_int_equal(s.tid, 0);
	assert_int_equal(s.time, 0);
	assert_int_equal(s.addr, 0);
	assert_int_equal(s.stream_id, 0);
	assert_int_equal(s.cpu, 0);
	assert_int_equal(s.period, 0);
	assert_int_equal(s.read.nr, 0);
	assert_int_equal(s.read.time_enabled, 0);
	assert_int_equal(s.read.one.value, 0);
	assert_null(s.read.group);
	assert_int_equal(s.read.stride, 0);
	assert_int_equal(s.callchain.nr, 0);
	assert_null(s.callchain.ips);
	assert_int_equal(s.raw.size, 0);
	assert_null(s.raw.data);
	assert_int_equal(s.branch_stack.nr, 0);
	assert_int_equal(s.branch_stack.hw_idx, 0);
	assert_null(s.branch_stack.entries);
	assert_null(s.branch_stack.counters);
	assert_int_equal(s.regs_user.abi, 0);
	assert_int_equal(s.regs_user.nr, 0);
	assert_null(s.regs_user.regs);
	assert_int_equal(s.stack_user.size, 0);
	assert_null(s.stack_user.data);
	assert_int_equal(s.stack_user.dyn_size, 0);
	assert_int_equal(s.weight, 0);
	assert_int_equal(s.weight_var1, 0);
	assert_int_equal(s.weight_var2, 0);
	assert_int_equal(s.weight_var3, 0);
	assert_int_equal(s.data_src, 0);
	assert_int_equal(s.transaction, 0);
	assert_int_equal(s.regs_intr.abi, 0);
	assert_null(s.regs_intr.regs);
	assert_int_equal(s.phys_addr, 0);
	assert_int_equal(s.cgroup, 0);
	assert_int_equal(s.data_page_size, 0);
	assert_int_equal(s.code_page_size, 0);
	assert_int_equal(s.aux.size, 0);
	assert_null(s.aux.data);
}

static void test_read_single(void **state)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_READ);
	struct psc_sample_read_value v;
	struct rec_builder b;
	struct psc_sample s;

	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING |
			PERF_FORMAT_ID | PERF_FORMAT_LOST;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 500); /* value */
	rb_u64(&b, 2000);
	rb_u64(&b, 1000);
	rb_u64(&b, 77); /* id */
	rb_u64(&b, 3); /* lost */
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.read.nr, 1);
	assert_int_equal(s.read.time_enabled, 2000);
	assert_int_equal(s.read.time_running, 1000);
	assert_int_equal(psc_sample_read__at(&s.read, 0, &v), 0);
	assert_int_equal(v.value, 500);
	assert_int_equal(v.id, 77);
	assert_int_equal(v.lost, 3);
	assert_int_equal(psc_sample_read__at(&s.read, 1, &v), -EINVAL);
	expect_strict_size(rb_finish(&b), &a);

	a.read_format = PERF_FORMAT_ID;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 500);
	rb_u64(&b, 78);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(psc_sample_read__at(&s.read, 0, &v), 0);
	assert_int_equal(v.id, 78);
	assert_int_equal(v.lost, 0);
	assert_int_equal(s.read.time_enabled, 0);
}

static void test_read_group(void **state)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_READ | PERF_SAMPLE_PERIOD);
	struct psc_sample_read_value v;
	struct rec_builder b;
	struct psc_sample s;

	for (int fmt = 0; fmt < 16; fmt++) {
		a.read_format = PERF_FORMAT_GROUP | (uint64_t)fmt;
		rb_start(&b, PERF_RECORD_SAMPLE, 0);
		rb_u64(&b, 1); /* period */
		rb_u64(&b, 3); /* nr */
		if (fmt & PERF_FORMAT_TOTAL_TIME_ENABLED)
			rb_u64(&b, 900);
		if (fmt & PERF_FORMAT_TOTAL_TIME_RUNNING)
			rb_u64(&b, 800);
		for (uint64_t i = 0; i < 3; i++) {
			rb_u64(&b, 100 + i);
			if (fmt & PERF_FORMAT_ID)
				rb_u64(&b, 200 + i);
			if (fmt & PERF_FORMAT_LOST)
				rb_u64(&b, 300 + i);
		}
		assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
		assert_int_equal(s.read.nr, 3);
		assert_int_equal(s.read.time_enabled,
				 fmt & PERF_FORMAT_TOTAL_TIME_ENABLED ? 900 : 0);
		assert_int_equal(s.read.time_running,
				 fmt & PERF_FORMAT_TOTAL_TIME_RUNNING ? 800 : 0);
		for (uint64_t i = 0; i < 3; i++) {
			assert_int_equal(psc_sample_read__at(&s.read, i, &v), 0);
			assert_int_equal(v.value, 100 + i);
			assert_int_equal(v.id, fmt & PERF_FORMAT_ID ? 200 + i : 0);
			assert_int_equal(v.lost, fmt & PERF_FORMAT_LOST ? 300 + i : 0);
		}
		assert_int_equal(psc_sample_read__at(&s.read, 3, &v), -EINVAL);
		expect_strict_size(rb_finish(&b), &a);
	}
	/* nr that would overflow nr * stride */
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 0x8000000000000001ULL);
	rb_u64(&b, 1);
	rb_u64(&b, 1);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
}

static void test_callchain(void **state)
{
	struct perf_event_attr a =
		attr_of(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD);
	struct rec_builder b;
	struct psc_sample s;

	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 1);
	rb_u64(&b, 4);
	rb_u64(&b, PERF_CONTEXT_KERNEL);
	rb_u64(&b, 0xffffffff81000010ULL);
	rb_u64(&b, PERF_CONTEXT_USER);
	rb_u64(&b, 0x400010);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.callchain.nr, 4);
	assert_int_equal(s.callchain.ips[0], PERF_CONTEXT_KERNEL);
	assert_int_equal(s.callchain.ips[3], 0x400010);
	assert_int_equal(s.period, 1);
	expect_strict_size(rb_finish(&b), &a);

	/* nr beyond the record, and nr * 8 overflowing */
	b.buf[3] = 5;
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
	b.buf[3] = 0x2000000000000001ULL;
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
	b.buf[3] = 0;
	/* nr 0 then 4 leftover words: trailing garbage */
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
}

/* Branch stacks are skipped right (hw_idx, counters) so the fields after them decode. */
static void test_branch_stack(void **state)
{
	for (int variant = 0; variant < 4; variant++) {
		struct perf_event_attr a =
			attr_of(PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_REGS_USER);
		struct rec_builder b;
		struct psc_sample s;

		a.sample_regs_user = 0x7;
		if (variant & 1)
			a.branch_sample_type |= PERF_SAMPLE_BRANCH_HW_INDEX;
		if (variant & 2)
			a.branch_sample_type |= PERF_SAMPLE_BRANCH_COUNTERS;
		rb_start(&b, PERF_RECORD_SAMPLE, 0);
		rb_u64(&b, 2);
		if (variant & 1)
			rb_u64(&b, 9);
		for (int i = 0; i < 2; i++) {
			rb_u64(&b, 0x1000 + i);
			rb_u64(&b, 0x2000 + i);
			rb_u64(&b, 0);
		}
		if (variant & 2) {
			rb_u64(&b, 11);
			rb_u64(&b, 12);
		}
		rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
		rb_u64(&b, 0xa);
		rb_u64(&b, 0xb);
		rb_u64(&b, 0xc);
		assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
		assert_int_equal(s.branch_stack.nr, 2);
		assert_int_equal(s.branch_stack.hw_idx, variant & 1 ? 9 : 0);
		assert_int_equal(s.branch_stack.entries[1].from, 0x1001);
		assert_int_equal(s.branch_stack.entries[1].to, 0x2001);
		if (variant & 2)
			assert_int_equal(s.branch_stack.counters[1], 12);
		else
			assert_null(s.branch_stack.counters);
		assert_int_equal(s.regs_user.abi, PERF_SAMPLE_REGS_ABI_64);
		assert_int_equal(s.regs_user.nr, 3);
		assert_int_equal(s.regs_user.regs[2], 0xc);
		expect_strict_size(rb_finish(&b), &a);
	}
}

static void test_regs_and_stack(void **state)
{
	struct perf_event_attr a =
		attr_of(PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_REGS_INTR);
	struct rec_builder b;
	struct psc_sample s;

	a.sample_regs_user = (1ULL << 0) | (1ULL << 8) | (1ULL << 63);
	a.sample_regs_intr = 1ULL << 5;
	/* user regs absent (kernel thread): abi 0, no regs; no user stack: size 0, no dyn_size */
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_NONE);
	rb_u64(&b, 0);
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	rb_u64(&b, 0x55);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.regs_user.nr, 0);
	assert_null(s.regs_user.regs);
	assert_int_equal(s.stack_user.size, 0);
	assert_int_equal(s.regs_intr.nr, 1);
	assert_int_equal(s.regs_intr.regs[0], 0x55);
	assert_int_equal(s.regs_intr.mask, 1ULL << 5);
	expect_strict_size(rb_finish(&b), &a);

	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_u64(&b, 3);
	rb_u64(&b, 16); /* stack size */
	rb_u64(&b, 0x1111);
	rb_u64(&b, 0x2222);
	rb_u64(&b, 12); /* dyn_size */
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_NONE);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.regs_user.nr, 3);
	assert_int_equal(s.regs_user.regs[1], 2);
	assert_int_equal(s.stack_user.size, 16);
	assert_int_equal(s.stack_user.dyn_size, 12);
	assert_int_equal(((const uint64_t *)s.stack_user.data)[1], 0x2222);
	assert_int_equal(s.regs_intr.nr, 0);
	expect_strict_size(rb_finish(&b), &a);
	/* dyn_size larger than what was copied */
	b.buf[8] = 17;
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
	/* stack size not a multiple of 8 */
	b.buf[8] = 12;
	b.buf[5] = 12;
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
}

/*
 * A --call-graph dwarf sample as the kernel writes it: kernel-only callchain, the 17 registers
 * unwinding takes (x86-64 ax..ip and r8..r15: mask 0xff01ff) and a stack copy of which only
 * dyn_size bytes are valid (the stack ended sooner).
 */
static void test_dwarf_sample(void **state)
{
	struct perf_event_attr a =
		attr_of(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN |
			PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER);
	struct rec_builder b;
	struct psc_sample s;
	int i;

	(void)state;
	a.sample_regs_user = 0xff01ffULL;
	a.sample_stack_user = 64;
	a.exclude_callchain_user = 1;
	rb_start(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(&b, 0x401000); /* ip */
	rb_u64(&b, (7ULL << 32) | 7); /* pid, tid */
	rb_u64(&b, 123456789); /* time */
	rb_u64(&b, 1000000); /* period */
	rb_u64(&b, 2); /* callchain: the kernel's part only */
	rb_u64(&b, PERF_CONTEXT_KERNEL);
	rb_u64(&b, 0xffffffff81000010ULL);
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	for (i = 0; i < 17; i++)
		rb_u64(&b, 0x100 + (uint64_t)i); /* ax bx cx dx si di bp sp ip r8 .. r15 */
	rb_u64(&b, 64); /* stack size */
	for (i = 0; i < 8; i++)
		rb_u64(&b, 0x7000 + (uint64_t)i);
	rb_u64(&b, 40); /* dyn_size */
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.callchain.nr, 2);
	assert_int_equal(s.period, 1000000);
	assert_int_equal(s.regs_user.abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s.regs_user.mask, 0xff01ffULL);
	assert_int_equal(s.regs_user.nr, 17);
	assert_int_equal(s.regs_user.regs[7], 0x107); /* sp: bit 7 */
	assert_int_equal(s.regs_user.regs[8], 0x108); /* ip: bit 8 */
	assert_int_equal(s.regs_user.regs[9], 0x109); /* r8: bit 16, the 10th set */
	assert_int_equal(s.regs_user.regs[16], 0x110); /* r15 */
	assert_int_equal(s.stack_user.size, 64);
	assert_int_equal(s.stack_user.dyn_size, 40);
	assert_int_equal(((const uint64_t *)s.stack_user.data)[0], 0x7000);
	assert_int_equal(((const uint64_t *)s.stack_user.data)[7], 0x7007);
	expect_strict_size(rb_finish(&b), &a);
	/* a stack copy longer than the record */
	b.buf[b.n - 10] = 72;
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
}

static void test_weight_struct(void **state)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_WEIGHT_STRUCT | PERF_SAMPLE_DATA_SRC);
	union perf_sample_weight w = { .var1_dw = 300, .var2_w = 20, .var3_w = 7 };
	struct rec_builder b;
	struct psc_sample s;

	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, w.full);
	rb_u64(&b, 0x42);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.weight_var1, 300);
	assert_int_equal(s.weight_var2, 20);
	assert_int_equal(s.weight_var3, 7);
	assert_int_equal(s.weight, w.full);
	assert_int_equal(s.data_src, 0x42);
}

/* Every field at once, in the kernel's order. */
static void test_everything(void **state)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_MAX - 1);
	struct rec_builder b;
	struct psc_sample s;
	struct psc_record r;
	uint32_t rsz = 4;

	a.sample_type &= ~PERF_SAMPLE_WEIGHT; /* WEIGHT_STRUCT instead */
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	a.sample_regs_user = 0x3;
	a.sample_regs_intr = 0x1;
	a.branch_sample_type = PERF_SAMPLE_BRANCH_HW_INDEX;
	rb_start(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	rb_u64(&b, 1); /* identifier */
	rb_u64(&b, 2); /* ip */
	rb_u32x2(&b, 3, 4); /* pid tid */
	rb_u64(&b, 5); /* time */
	rb_u64(&b, 6); /* addr */
	rb_u64(&b, 1); /* id */
	rb_u64(&b, 7); /* stream id */
	rb_u32x2(&b, 1, 0); /* cpu */
	rb_u64(&b, 8); /* period */
	rb_u64(&b, 1); /* read: nr */
	rb_u64(&b, 9); /* value */
	rb_u64(&b, 1); /* id */
	rb_u64(&b, 1); /* callchain nr */
	rb_u64(&b, 10);
	memcpy(&b.buf[b.n++], &rsz, 4); /* raw: size 4 + 4 bytes */
	rb_u64(&b, 1); /* branch nr */
	rb_u64(&b, 11); /* hw_idx */
	rb_u64(&b, 12);
	rb_u64(&b, 13);
	rb_u64(&b, 0);
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	rb_u64(&b, 14);
	rb_u64(&b, 15);
	rb_u64(&b, 8); /* stack size */
	rb_u64(&b, 16);
	rb_u64(&b, 8); /* dyn */
	rb_u64(&b, 17); /* weight */
	rb_u64(&b, 18); /* data_src */
	rb_u64(&b, 19); /* transaction */
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	rb_u64(&b, 20);
	rb_u64(&b, 21); /* phys */
	rb_u64(&b, 22); /* cgroup */
	rb_u64(&b, 23); /* data page */
	rb_u64(&b, 24); /* code page */
	rb_u64(&b, 8); /* aux size */
	rb_u64(&b, 25);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), 0);
	assert_int_equal(s.ip, 2);
	assert_int_equal(s.read.nr, 1);
	assert_int_equal(s.callchain.ips[0], 10);
	assert_int_equal(s.raw.size, 4);
	assert_int_equal(s.branch_stack.hw_idx, 11);
	assert_int_equal(s.regs_user.regs[1], 15);
	assert_int_equal(s.stack_user.dyn_size, 8);
	assert_int_equal(s.weight_var1, 17);
	assert_int_equal(s.data_src, 18);
	assert_int_equal(s.transaction, 19);
	assert_int_equal(s.regs_intr.regs[0], 20);
	assert_int_equal(s.phys_addr, 21);
	assert_int_equal(s.cgroup, 22);
	assert_int_equal(s.data_page_size, 23);
	assert_int_equal(s.code_page_size, 24);
	assert_int_equal(s.aux.size, 8);
	assert_int_equal(*(const uint64_t *)s.aux.data, 25);
	assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
	assert_int_equal(r.type, PERF_RECORD_SAMPLE);
	assert_int_equal(r.sample.code_page_size, 24);
	expect_strict_size(rb_finish(&b), &a);
}

static void test_sample_rejects(void **state)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_IP);
	struct rec_builder b;
	struct psc_sample s;
	uint64_t *misaligned;

	rb_start(&b, PERF_RECORD_COMM, 0);
	rb_u64(&b, 1);
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EINVAL);
	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 1);
	a.sample_type |= PERF_SAMPLE_MAX;
	assert_int_equal(psc_record__parse_sample(rb_finish(&b), &a, &s), -EOPNOTSUPP);
	a.sample_type = PERF_SAMPLE_IP;
	misaligned = (uint64_t *)((char *)&b.buf[100] + 4);
	memcpy(misaligned, b.buf, 16);
	assert_int_equal(psc_record__parse_sample((void *)misaligned, &a, &s), -EINVAL);
}

/* Side-band records, with and without the sample_id_all trailer. */
static struct perf_event_attr sid_attr(bool all)
{
	struct perf_event_attr a = attr_of(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
					   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_IP);

	a.sample_id_all = all;
	return a;
}

static void add_trailer(struct rec_builder *b, bool all)
{
	if (!all)
		return;
	rb_u32x2(b, 100, 101); /* tid */
	rb_u64(b, 999); /* time */
	rb_u32x2(b, 1, 0); /* cpu */
	rb_u64(b, 4321); /* identifier */
}

static void check_trailer(const struct psc_record *r, bool all)
{
	if (!all) {
		assert_int_equal(r->sid.present, 0);
		assert_int_equal(r->sid.id, 0);
		return;
	}
	assert_int_equal(r->sid.present, PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
						 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU);
	assert_int_equal(r->sid.pid, 100);
	assert_int_equal(r->sid.tid, 101);
	assert_int_equal(r->sid.time, 999);
	assert_int_equal(r->sid.cpu, 1);
	assert_int_equal(r->sid.id, 4321);
}

static void test_lost_throttle(void **state)
{
	for (int all = 0; all < 2; all++) {
		struct perf_event_attr a = sid_attr(all);
		struct rec_builder b;
		struct psc_record r;
		uint64_t id;

		rb_start(&b, PERF_RECORD_LOST, 0);
		rb_u64(&b, 55);
		rb_u64(&b, 1000);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_int_equal(r.lost.id, 55);
		assert_int_equal(r.lost.lost, 1000);
		check_trailer(&r, all);
		expect_strict_size(rb_finish(&b), &a);
		assert_true(psc_record__identifier(rb_finish(&b), &id));
		assert_int_equal(id, all ? 4321 : 1000);

		rb_start(&b, PERF_RECORD_LOST_SAMPLES, 0);
		rb_u64(&b, 33);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_int_equal(r.lost_samples.lost, 33);
		check_trailer(&r, all);
		expect_strict_size(rb_finish(&b), &a);

		for (uint32_t t = PERF_RECORD_THROTTLE; t <= PERF_RECORD_UNTHROTTLE; t++) {
			rb_start(&b, t, 0);
			rb_u64(&b, 777);
			rb_u64(&b, 8);
			rb_u64(&b, 9);
			add_trailer(&b, all);
			assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
			assert_int_equal(r.type, t);
			assert_int_equal(r.throttle.time, 777);
			assert_int_equal(r.throttle.id, 8);
			assert_int_equal(r.throttle.stream_id, 9);
			check_trailer(&r, all);
			expect_strict_size(rb_finish(&b), &a);
		}
	}
}

static void test_comm_fork_exit(void **state)
{
	for (int all = 0; all < 2; all++) {
		struct perf_event_attr a = sid_attr(all);
		struct rec_builder b;
		struct psc_record r;

		rb_start(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
		rb_u32x2(&b, 10, 11);
		rb_bytes(&b, "bash-worker", 12);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_int_equal(r.comm.pid, 10);
		assert_int_equal(r.comm.tid, 11);
		assert_string_equal(r.comm.comm, "bash-worker");
		assert_true(r.comm.exec);
		check_trailer(&r, all);
		expect_truncation_fails(rb_finish(&b), &a);

		/* a name that is not NUL-terminated inside the record */
		rb_start(&b, PERF_RECORD_COMM, 0);
		rb_u32x2(&b, 10, 11);
		rb_bytes(&b, "abcdefgh", 8);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), -EINVAL);

		for (uint32_t t = PERF_RECORD_EXIT; t <= PERF_RECORD_FORK; t += 3) {
			rb_start(&b, t, 0);
			rb_u32x2(&b, 20, 1);
			rb_u32x2(&b, 21, 2);
			rb_u64(&b, 31337);
			add_trailer(&b, all);
			assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
			assert_int_equal(r.fork.pid, 20);
			assert_int_equal(r.fork.ppid, 1);
			assert_int_equal(r.fork.tid, 21);
			assert_int_equal(r.fork.ptid, 2);
			assert_int_equal(r.fork.time, 31337);
			check_trailer(&r, all);
			expect_strict_size(rb_finish(&b), &a);
		}
	}
}

static void test_mmap_records(void **state)
{
	for (int all = 0; all < 2; all++) {
		struct perf_event_attr a = sid_attr(all);
		unsigned char bid[24] = { 20, 0, 0, 0 };
		struct rec_builder b;
		struct psc_record r;

		rb_start(&b, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
		rb_u32x2(&b, 5, 6);
		rb_u64(&b, 0x400000);
		rb_u64(&b, 0x1000);
		rb_u64(&b, 0);
		rb_bytes(&b, "/usr/bin/true", 14);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_int_equal(r.mmap.start, 0x400000);
		assert_int_equal(r.mmap.len, 0x1000);
		assert_string_equal(r.mmap.filename, "/usr/bin/true");
		check_trailer(&r, all);
		expect_truncation_fails(rb_finish(&b), &a);

		rb_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
		rb_u32x2(&b, 5, 6);
		rb_u64(&b, 0x7f0000);
		rb_u64(&b, 0x2000);
		rb_u64(&b, 0x1000);
		rb_u32x2(&b, 8, 1); /* maj, min */
		rb_u64(&b, 123456); /* ino */
		rb_u64(&b, 2); /* generation */
		rb_u32x2(&b, PROT_READ | PROT_EXEC, MAP_PRIVATE);
		rb_bytes(&b, "/lib/libc.so.6", 15);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_false(r.mmap2.has_build_id);
		assert_int_equal(r.mmap2.maj, 8);
		assert_int_equal(r.mmap2.min, 1);
		assert_int_equal(r.mmap2.ino, 123456);
		assert_int_equal(r.mmap2.ino_generation, 2);
		assert_int_equal(r.mmap2.prot, PROT_READ | PROT_EXEC);
		assert_int_equal(r.mmap2.flags, MAP_PRIVATE);
		assert_int_equal(r.mmap2.pgoff, 0x1000);
		assert_string_equal(r.mmap2.filename, "/lib/libc.so.6");
		check_trailer(&r, all);
		expect_truncation_fails(rb_finish(&b), &a);

		for (int i = 0; i < 20; i++)
			bid[4 + i] = (unsigned char)(0xb0 + i);
		rb_start(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
		rb_u32x2(&b, 5, 6);
		rb_u64(&b, 0x7f0000);
		rb_u64(&b, 0x2000);
		rb_u64(&b, 0);
		rb_bytes(&b, bid, sizeof(bid));
		rb_u32x2(&b, PROT_READ, MAP_SHARED);
		rb_bytes(&b, "/x", 3);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_true(r.mmap2.has_build_id);
		assert_int_equal(r.mmap2.build_id_size, 20);
		assert_int_equal(r.mmap2.build_id[19], 0xb0 + 19);
		assert_string_equal(r.mmap2.filename, "/x");
		check_trailer(&r, all);
		expect_truncation_fails(rb_finish(&b), &a);
	}
}

static void test_switch(void **state)
{
	for (int all = 0; all < 2; all++) {
		struct perf_event_attr a = sid_attr(all);
		struct rec_builder b;
		struct psc_record r;

		rb_start(&b, PERF_RECORD_SWITCH,
			 PERF_RECORD_MISC_SWITCH_OUT | PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_true(r.sw.out);
		assert_true(r.sw.preempt);
		check_trailer(&r, all);
		expect_strict_size(rb_finish(&b), &a);

		rb_start(&b, PERF_RECORD_SWITCH_CPU_WIDE, 0);
		rb_u32x2(&b, 300, 301);
		add_trailer(&b, all);
		assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
		assert_false(r.sw.out);
		assert_int_equal(r.sw.next_prev_pid, 300);
		assert_int_equal(r.sw.next_prev_tid, 301);
		check_trailer(&r, all);
		expect_strict_size(rb_finish(&b), &a);
	}
}

static void test_other_records(void **state)
{
	struct perf_event_attr a = sid_attr(true);
	struct psc_sample_id sid;
	struct rec_builder b;
	struct psc_record r;

	/* a kind not decoded here still gets its trailer */
	rb_start(&b, PERF_RECORD_CGROUP, 0);
	rb_u64(&b, 12);
	rb_bytes(&b, "/sys/fs/cgroup/x", 17);
	add_trailer(&b, true);
	assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
	assert_int_equal(r.type, PERF_RECORD_CGROUP);
	check_trailer(&r, true);
	assert_int_equal(psc_record__parse_sample_id(rb_finish(&b), &a, &sid), 0);
	assert_int_equal(sid.id, 4321);
	/* types beyond the kernel's are passed through */
	rb_start(&b, 200, 0);
	assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), 0);
	assert_int_equal(r.type, 200);
	assert_int_equal(r.sid.present, 0);
	/* too short for the trailer */
	rb_start(&b, PERF_RECORD_CGROUP, 0);
	rb_u64(&b, 1);
	assert_int_equal(psc_record__parse(rb_finish(&b), &a, &r), -EINVAL);
	assert_int_equal(psc_record__parse_sample_id(rb_finish(&b), &a, &sid), -EINVAL);

	assert_string_equal(psc_record__type_name(PERF_RECORD_SAMPLE), "SAMPLE");
	assert_string_equal(psc_record__type_name(PERF_RECORD_LOST_SAMPLES), "LOST_SAMPLES");
	assert_string_equal(psc_record__type_name(PERF_RECORD_SWITCH_CPU_WIDE), "SWITCH_CPU_WIDE");
	assert_string_equal(psc_record__type_name(12345), "UNKNOWN");
}

static void test_identifier(void **state)
{
	struct rec_builder b;
	uint64_t id = 0;

	rb_start(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 42);
	rb_u64(&b, 43);
	assert_true(psc_record__identifier(rb_finish(&b), &id));
	assert_int_equal(id, 42);
	rb_start(&b, PERF_RECORD_SWITCH, 0);
	assert_false(psc_record__identifier(rb_finish(&b), &id));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_fields_each),
		cmocka_unit_test(test_fixed_fields_order),
		cmocka_unit_test(test_tracepoint_raw),
		cmocka_unit_test(test_absent_fields_zeroed),
		cmocka_unit_test(test_parse_again),
		cmocka_unit_test(test_read_single),
		cmocka_unit_test(test_read_group),
		cmocka_unit_test(test_callchain),
		cmocka_unit_test(test_branch_stack),
		cmocka_unit_test(test_regs_and_stack),
		cmocka_unit_test(test_dwarf_sample),
		cmocka_unit_test(test_weight_struct),
		cmocka_unit_test(test_everything),
		cmocka_unit_test(test_sample_rejects),
		cmocka_unit_test(test_lost_throttle),
		cmocka_unit_test(test_comm_fork_exit),
		cmocka_unit_test(test_mmap_records),
		cmocka_unit_test(test_switch),
		cmocka_unit_test(test_other_records),
		cmocka_unit_test(test_identifier),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
