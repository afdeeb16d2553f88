/* Unit tests of common/rawq: records come back whole, in order, with their tag and CPU; the bound
 * refuses what does not fit; chunks are crossed and reused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "rawq.h"

/* A record of size bytes (a multiple of 8 or not), its payload bytes derived from seq. */
static const struct perf_event_header *record(unsigned int seq, uint16_t size)
{
	static union {
		struct perf_event_header h;
		unsigned char b[65536];
	} r;
	unsigned int i;

	r.h.type = PERF_RECORD_SAMPLE;
	r.h.misc = 0;
	r.h.size = size;
	for (i = sizeof(r.h); i < size; i++)
		r.b[i] = (unsigned char)(seq * 31 + i);
	return &r.h;
}

static uint16_t size_of(unsigned int seq)
{
	return (uint16_t)(8 + (seq * 37) % 3000);
}

static void check_record(const struct perf_event_header *h, unsigned int seq)
{
	const unsigned char *b = (const void *)h;
	unsigned int i;

	assert_int_equal(h->size, size_of(seq));
	for (i = sizeof(*h); i < h->size; i++)
		assert_int_equal(b[i], (unsigned char)(seq * 31 + i));
}

/* Many chunks' worth in, then out in order; then interleaved, as a reader catching up. */
static void test_fifo(void **state)
{
	struct rawq *q = rawq__new(64ull << 20);
	const struct perf_event_header *h;
	unsigned int in = 0, out = 0, i;
	uint16_t tag;
	int cpu;

	(void)state;
	assert_non_null(q);
	assert_null(rawq__peek(q, &tag, &cpu));
	for (; in < 5000; in++)
		assert_true(
			rawq__push(q, (uint16_t)(in + 1), (int)(in % 7), record(in, size_of(in))));
	assert_int_equal(rawq__count(q), 5000);
	for (i = 0; i < 12000; i++) {
		if (i % 3 != 2) {
			assert_true(rawq__push(q, (uint16_t)(in + 1), (int)(in % 7),
					       record(in, size_of(in))));
			in++;
		}
		h = rawq__peek(q, &tag, &cpu);
		assert_non_null(h);
		assert_int_equal(tag, (uint16_t)(out + 1));
		assert_int_equal(cpu, (int)(out % 7));
		check_record(h, out);
		rawq__pop(q);
		out++;
	}
	while ((h = rawq__peek(q, &tag, &cpu))) {
		check_record(h, out++);
		rawq__pop(q);
	}
	assert_int_equal(out, in);
	assert_int_equal(rawq__count(q), 0);
	assert_int_equal(rawq__bytes(q), 0);
	assert_true(rawq__peak(q) > (1u << 20));
	rawq__delete(q);
}

/* At the bound a push is refused and nothing changes; after a pop it fits again. */
static void test_bound(void **state)
{
	struct rawq *q = rawq__new(10000);
	uint16_t tag;
	int cpu, n = 0;

	(void)state;
	while (rawq__push(q, 0, 0, record(0, 100)))
		n++;
	/* 100 bytes padded to 104, and the entry's own 8 */
	assert_int_equal(n, 10000 / 112);
	assert_true(rawq__bytes(q) <= rawq__max(q));
	assert_int_equal(rawq__count(q), n);
	assert_non_null(rawq__peek(q, &tag, &cpu));
	rawq__pop(q);
	assert_true(rawq__push(q, 0, 0, record(0, 100)));
	assert_false(rawq__push(q, 0, 0, record(0, 100)));
	rawq__delete(q);
	rawq__delete(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fifo),
		cmocka_unit_test(test_bound),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
