/* Unit tests of common/stats/hist.c: the layout, the percentile error bound, merges, text and
 * JSON. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "hist.h"
#include "output.h"

/* splitmix64: a fixed seed per test, so a failure can be replayed. */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* (0, 1]: never 0, so log() stays finite. */
static double rnd_unit(void)
{
	return ((double)(rnd() >> 11) + 1) / 9007199254740992.0;
}

static double rnd_normal(void)
{
	return sqrt(-2 * log(rnd_unit())) * cos(2 * M_PI * rnd_unit());
}

static uint64_t clamp_dbl(double x)
{
	if (x < 0)
		return 0;
	if (x >= 18446744073709551615.0)
		return UINT64_MAX;
	return (uint64_t)x;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Everything written to a memfd, as a string. */
static char *contents(int fd)
{
	static char buf[1 << 16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

/* Every bucket's bounds map back to it, buckets tile the u64 range, widths keep to 1/HIST_SUB. */
static void t_layout(void **state)
{
	(void)state;
	assert_int_equal(HIST_NR_BUCKETS, 1920);
	assert_int_equal(hist_index(0), 0);
	assert_int_equal(hist_index(UINT64_MAX), HIST_NR_BUCKETS - 1);
	assert_true(loglin_lower(0, HIST_SUB_BITS) == 0);
	assert_true(loglin_upper(HIST_NR_BUCKETS - 1, HIST_SUB_BITS) == UINT64_MAX);
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		uint64_t lo = loglin_lower(i, HIST_SUB_BITS), hi = loglin_upper(i, HIST_SUB_BITS);

		assert_int_equal(hist_index(lo), i);
		assert_int_equal(hist_index(hi), i);
		if (i + 1 < HIST_NR_BUCKETS)
			assert_true(hi + 1 == loglin_lower(i + 1, HIST_SUB_BITS));
		if (i < 2 * HIST_SUB)
			assert_true(lo == hi); /* small values are exact */
		else
			assert_true((hi - lo + 1) * HIST_SUB <= lo);
	}
	for (unsigned int e = 1; e < 64; e++) {
		uint64_t p = 1ull << e;

		assert_int_equal(hist_index(p - 1) + 1, hist_index(p));
	}
	/* the heatmap's coarser layout: 4 rows per power of two */
	for (unsigned int i = 0; i < (64 - 2 + 1) * 4; i++) {
		assert_int_equal(loglin_index(loglin_lower(i, 2), 2), i);
		assert_int_equal(loglin_index(loglin_upper(i, 2), 2), i);
	}
	assert_int_equal(loglin_index(UINT64_MAX, 2), (64 - 2 + 1) * 4 - 1);
}

static void t_empty(void **state)
{
	struct hist h = { 0 };
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);

	(void)state;
	assert_int_equal(hist__count(&h), 0);
	assert_int_equal(hist__min(&h), 0);
	assert_int_equal(hist__max(&h), 0);
	assert_int_equal(hist__mean(&h), 0);
	assert_int_equal(hist__percentile(&h, 50), 0);
	assert_int_equal(hist__memory(&h), sizeof(h));
	hist__print_log2(&h, o);
	assert_int_equal(out__flush(o), 0);
	assert_string_equal(contents(fd), "");
	hist__exit(&h);
	out__delete(o);
	close(fd);
}

/* p in thousandths of a percent, rank by integers: independent of hist.c's floating rank. */
static const unsigned int pcts_milli[] = { 1,	  100,	 1000,	5000,  10000, 25000,
					   33333, 50000, 66667, 75000, 90000, 95000,
					   99000, 99500, 99900, 99990, 99999, 100000 };

static double max_error;

/* Inserts vals, checks the exact figures and every percentile against the sorted array. */
static void check_bound(uint64_t *vals, size_t n, const char *what)
{
	struct hist h = { 0 };
	hist_u128 sum = 0;
	double worst = 0;

	for (size_t i = 0; i < n; i++) {
		assert_int_equal(hist__add(&h, vals[i]), 0);
		sum += vals[i];
	}
	qsort(vals, n, sizeof(*vals), cmp_u64);
	assert_int_equal(hist__count(&h), n);
	assert_true(hist__min(&h) == vals[0]);
	assert_true(hist__max(&h) == vals[n - 1]);
	assert_true(hist__sum(&h) == sum);
	assert_true(hist__mean(&h) == (uint64_t)((sum + n / 2) / n));
	for (unsigned int k = 0; k < sizeof(pcts_milli) / sizeof(pcts_milli[0]) + 99; k++) {
		/* the list above, then every whole percent */
		uint64_t pm =
			k < sizeof(pcts_milli) / sizeof(pcts_milli[0])
				? pcts_milli[k]
				: (k - sizeof(pcts_milli) / sizeof(pcts_milli[0]) + 1) * 1000ull;
		uint64_t rank = (uint64_t)(((hist_u128)pm * n + 99999) / 100000);
		uint64_t exact = vals[(rank ? rank : 1) - 1];
		uint64_t got = hist__percentile(&h, (double)pm / 1000);
		uint64_t err = got > exact ? got - exact : exact - got;

		assert_true(hist__value_at_rank(&h, rank) == got);
		/* err / exact < 1 / (2 * HIST_SUB), and exact for values with a bucket each */
		if (err && (hist_u128)err * 2 * HIST_SUB >= exact) {
			fail_msg("%s: p%.3f = %llu, exact %llu: error %.4f%% over %.4f%%", what,
				 (double)pm / 1000, (unsigned long long)got,
				 (unsigned long long)exact, 100.0 * (double)err / (double)exact,
				 100 * HIST_MAX_REL_ERROR);
		}
		if (exact && (double)err / (double)exact > worst)
			worst = (double)err / (double)exact;
	}
	print_message("%-12s %zu values: worst percentile error %.3f%%, %zu bytes\n", what, n,
		      100 * worst, hist__memory(&h));
	if (worst > max_error)
		max_error = worst;
	hist__exit(&h);
}

#define N 200000

static void t_error_bound(void **state)
{
	uint64_t *v = malloc(N * sizeof(*v));
	size_t n;

	(void)state;
	assert_non_null(v);
	rng_state = 1;
	for (size_t i = 0; i < N; i++)
		v[i] = rnd() % 1000000;
	check_bound(v, N, "uniform");
	for (size_t i = 0; i < N; i++)
		v[i] = rnd();
	check_bound(v, N, "uniform u64");
	for (size_t i = 0; i < N; i++)
		v[i] = clamp_dbl(-50000 * log(rnd_unit()));
	check_bound(v, N, "exponential");
	for (size_t i = 0; i < N; i++)
		v[i] = clamp_dbl(exp(log(100000) + 1.5 * rnd_normal()));
	check_bound(v, N, "lognormal");
	for (size_t i = 0; i < N; i++) {
		double mu = rnd() & 1 ? log(10000) : log(5000000);

		v[i] = clamp_dbl(exp(mu + 0.3 * rnd_normal()));
	}
	check_bound(v, N, "bimodal");
	for (size_t i = 0; i < N; i++)
		v[i] = 12345;
	check_bound(v, N, "constant");
	/* both ends of buckets and their neighbours, where a layout off by one would show */
	for (size_t i = 0; i < N; i++) {
		unsigned int b = (unsigned int)(rnd() % HIST_NR_BUCKETS);
		uint64_t lo = loglin_lower(b, HIST_SUB_BITS), hi = loglin_upper(b, HIST_SUB_BITS);

		switch (rnd() % 4) {
		case 0:
			v[i] = lo;
			break;
		case 1:
			v[i] = hi;
			break;
		case 2:
			v[i] = lo ? lo - 1 : 0;
			break;
		default:
			v[i] = hi == UINT64_MAX ? hi : hi + 1;
		}
	}
	check_bound(v, N, "bucket edges");
	for (size_t i = 0; i < N; i++)
		v[i] = rnd() & 1 ? 0 : UINT64_MAX;
	check_bound(v, N, "0 and max");
	n = 0;
	for (unsigned int e = 0; e < 64; e++) {
		v[n++] = (1ull << e) - 1;
		v[n++] = 1ull << e;
		v[n++] = (1ull << e) + 1;
	}
	v[n++] = UINT64_MAX;
	v[n++] = UINT64_MAX - 1;
	check_bound(v, n, "powers of 2");
	for (n = 1; n <= 5; n++) {
		for (size_t i = 0; i < n; i++)
			v[i] = rnd() % 100000;
		check_bound(v, n, "tiny");
	}
	print_message("worst error over all: %.3f%% (bound %.4f%%)\n", 100 * max_error,
		      100 * HIST_MAX_REL_ERROR);
	free(v);
}

/* Nearest rank: p99.9 of 1000 values is the 999th, p50 of 3 the 2nd; the ends are exact. */
static void t_ranks(void **state)
{
	struct hist h = { 0 };

	(void)state;
	for (uint64_t i = 1; i <= 3; i++)
		hist__add(&h, i);
	assert_int_equal(hist__percentile(&h, 50), 2);
	assert_int_equal(hist__percentile(&h, 33.3), 1);
	assert_int_equal(hist__percentile(&h, 34), 2);
	hist__reset(&h);
	for (uint64_t i = 1; i <= 1000; i++)
		hist__add(&h, i * 1000);
	assert_true(hist__percentile(&h, 99.9) == hist__value_at_rank(&h, 999));
	assert_true(hist__percentile(&h, 99.9) != hist__value_at_rank(&h, 1000));
	assert_true(hist__percentile(&h, 0) == 1000);
	assert_true(hist__percentile(&h, -1) == 1000);
	assert_true(hist__percentile(&h, NAN) == 1000);
	assert_true(hist__percentile(&h, 100) == 1000000);
	assert_true(hist__percentile(&h, 250) == 1000000);
	assert_true(hist__value_at_rank(&h, 0) == 1000);
	assert_true(hist__value_at_rank(&h, 5000) == 1000000);
	hist__exit(&h);
}

/* Sums beyond 64 bits stay exact. */
static void t_sum(void **state)
{
	struct hist h = { 0 };

	(void)state;
	assert_int_equal(hist__add_n(&h, UINT64_MAX, 1000), 0);
	assert_int_equal(hist__add_n(&h, 0, 1000), 0);
	assert_true(hist__sum(&h) == (hist_u128)UINT64_MAX * 1000);
	assert_true(hist__mean(&h) == (UINT64_MAX >> 1) + 1); /* (2^64 - 1) / 2 rounded up */
	assert_int_equal(hist__count(&h), 2000);
	assert_int_equal(hist__min(&h), 0);
	assert_true(hist__max(&h) == UINT64_MAX);
	assert_int_equal(hist__percentile(&h, 50), 0);
	/* the last bucket's midpoint, within the bound of the exact UINT64_MAX */
	assert_true(hist__percentile(&h, 50.1) >= UINT64_MAX - (UINT64_MAX >> 6));
	assert_true(hist__percentile(&h, 100) == UINT64_MAX);
	hist__exit(&h);
}

/* Buckets of both, compared over the union of their ranges. */
static void assert_same(const struct hist *a, const struct hist *b)
{
	assert_int_equal(a->count, b->count);
	assert_true(hist__min(a) == hist__min(b));
	assert_true(a->max == b->max);
	assert_true(a->sum == b->sum);
	for (unsigned int i = 0; i < HIST_NR_BUCKETS; i++) {
		uint64_t x = i - a->lo < a->nr ? a->counts[i - a->lo] : 0;
		uint64_t y = i - b->lo < b->nr ? b->counts[i - b->lo] : 0;

		assert_true(x == y);
	}
	for (double p = 0; p <= 100; p += 0.5)
		assert_true(hist__percentile(a, p) == hist__percentile(b, p));
}

static void t_merge(void **state)
{
	struct hist all = { 0 }, part[4] = { 0 }, sum = { 0 }, empty = { 0 };

	(void)state;
	rng_state = 7;
	for (int i = 0; i < 100000; i++) {
		/* parts over different ranges: the merge grows its target downwards and upwards */
		int k = i % 4;
		uint64_t v = k == 0   ? rnd() % 1000
			     : k == 1 ? clamp_dbl(exp(log(1e6) + rnd_normal()))
			     : k == 2 ? rnd()
				      : 1000000 + rnd() % 1000;

		hist__add(&all, v);
		hist__add(&part[k], v);
	}
	assert_int_equal(hist__merge(&sum, &part[3]), 0);
	assert_int_equal(hist__merge(&sum, &part[0]), 0);
	assert_int_equal(hist__merge(&sum, &empty), 0);
	assert_int_equal(hist__merge(&sum, &part[2]), 0);
	assert_int_equal(hist__merge(&sum, &part[1]), 0);
	assert_same(&sum, &all);
	/* merging into an empty histogram copies; merging an empty one changes nothing */
	hist__reset(&sum);
	assert_int_equal(hist__merge(&sum, &all), 0);
	assert_same(&sum, &all);
	assert_int_equal(hist__merge(&empty, &all), 0);
	assert_same(&empty, &all);
	for (int k = 0; k < 4; k++)
		hist__exit(&part[k]);
	hist__exit(&all);
	hist__exit(&sum);
	hist__exit(&empty);
}

/* Reset keeps the memory and forgets the values. */
static void t_reset(void **state)
{
	struct hist *h = hist__new();
	size_t mem;

	(void)state;
	assert_non_null(h);
	hist__add(h, 5);
	hist__add(h, 5000000);
	mem = hist__memory(h);
	hist__reset(h);
	assert_int_equal(hist__count(h), 0);
	assert_int_equal(hist__min(h), 0);
	assert_int_equal(hist__max(h), 0);
	assert_int_equal(hist__memory(h), mem);
	hist__add(h, 700);
	assert_int_equal(hist__min(h), 700);
	assert_int_equal(hist__max(h), 700);
	assert_int_equal(hist__percentile(h, 50), 700);
	assert_int_equal(hist__memory(h), mem);
	hist__delete(h);
	hist__delete(NULL);
}

/* A few KiB for a latency histogram; the whole u64 range is the worst case. */
static void t_memory(void **state)
{
	struct hist h = { 0 };

	(void)state;
	rng_state = 3;
	for (int i = 0; i < 100000; i++)
		hist__add(&h, 1000 + rnd() % 16000000); /* 1 us .. 16 ms */
	assert_true(hist__memory(&h) <= sizeof(h) + 14 * HIST_SUB * 8 + HIST_SUB * 8);
	print_message("1 us..16 ms: %zu bytes\n", hist__memory(&h));
	hist__add(&h, 0);
	hist__add(&h, UINT64_MAX);
	assert_int_equal(hist__memory(&h), sizeof(h) + HIST_NR_BUCKETS * 8);
	hist__exit(&h);
}

/* bpftrace's layout: label in 16 columns, count in 8, a 52-column bar; empty powers shown. */
static void t_print_log2(void **state)
{
	struct hist h = { 0 };
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);

	(void)state;
	hist__add_n(&h, 0, 1);
	hist__add_n(&h, 1, 2);
	hist__add_n(&h, 3, 4);
	hist__add_n(&h, 600, 8);
	hist__add_n(&h, 1023, 8);
	hist__add_n(&h, 1024, 15);
	hist__add_n(&h, 2047, 1);
	hist__print_log2(&h, o);
	assert_int_equal(out__flush(o), 0);
	assert_string_equal(
		contents(fd),
		"[0]                    1 |@@@                                                 |\n"
		"[1]                    2 |@@@@@@                                              |\n"
		"[2, 4)                 4 |@@@@@@@@@@@@@                                       |\n"
		"[4, 8)                 0 |                                                    |\n"
		"[8, 16)                0 |                                                    |\n"
		"[16, 32)               0 |                                                    |\n"
		"[32, 64)               0 |                                                    |\n"
		"[64, 128)              0 |                                                    |\n"
		"[128, 256)             0 |                                                    |\n"
		"[256, 512)             0 |                                                    |\n"
		"[512, 1K)             16 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n"
		"[1K, 2K)              16 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n");
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	hist__reset(&h);
	hist__add_n(&h, UINT64_MAX, 123456789);
	hist__add_n(&h, 1ull << 62, 3);
	hist__add_n(&h, 3ull << 40, 1);
	hist__print_log2(&h, o);
	assert_int_equal(out__flush(o), 0);
	assert_non_null(strstr(contents(fd), "[2T, 4T)               1 |    "));
	assert_non_null(strstr(contents(fd), "[4E, 8E)               3 |    "));
	assert_non_null(strstr(contents(fd), "\n[8E, 16E)       123456789 |@@@@@@@@@"));
	hist__exit(&h);
	out__delete(o);
	close(fd);
}

static void t_json(void **state)
{
	struct hist h = { 0 };
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct json j;

	(void)state;
	for (uint64_t i = 1; i <= 100; i++)
		hist__add(&h, i);
	json__begin(&j, o);
	hist__json(&h, &j, "ns");
	json__end_line(&j);
	hist__reset(&h);
	json__begin(&j, o);
	hist__json(&h, &j, NULL);
	json__end_line(&j);
	assert_int_equal(out__flush(o), 0);
	/* 95 and 99 share buckets of width 2 with 94 and 98: the midpoint is the lower one */
	assert_string_equal(
		contents(fd),
		"{\"count\":100,\"min_ns\":1,\"max_ns\":100,\"mean_ns\":51,\"p50_ns\":50,"
		"\"p90_ns\":90,\"p95_ns\":94,\"p99_ns\":98,\"p999_ns\":100}\n"
		"{\"count\":0,\"min\":null,\"max\":null,\"mean\":null,\"p50\":null,"
		"\"p90\":null,\"p95\":null,\"p99\":null,\"p999\":null}\n");
	hist__exit(&h);
	out__delete(o);
	close(fd);
}

static void t_fmt(void **state)
{
	static const struct {
		uint64_t v;
		const char *unit, *want;
	} cases[] = {
		{ 512, "ns", "512 ns" },
		{ 999, "ns", "999 ns" },
		{ 1234, "ns", "1.23 us" },
		{ 99949, "ns", "99.9 us" },
		{ 999999, "ns", "1.00 ms" },
		{ 1500000000, "ns", "1.50 s" },
		{ 7200000000000ull, "ns", "7200 s" },
		{ 1023, "bytes", "1023 B" },
		{ 1024, "bytes", "1.00 KiB" },
		{ 3ull << 30, "bytes", "3.00 GiB" },
		{ UINT64_MAX, "bytes", "16.0 EiB" },
		{ 17, "pages", "17 pages" },
		{ 17, NULL, "17" },
		{ 17, "", "17" },
	};
	char buf[32];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		hist_fmt(buf, sizeof(buf), cases[i].v, cases[i].unit);
		assert_string_equal(buf, cases[i].want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_layout),	 cmocka_unit_test(t_empty),
		cmocka_unit_test(t_error_bound), cmocka_unit_test(t_ranks),
		cmocka_unit_test(t_sum),	 cmocka_unit_test(t_merge),
		cmocka_unit_test(t_reset),	 cmocka_unit_test(t_memory),
		cmocka_unit_test(t_print_log2),	 cmocka_unit_test(t_json),
		cmocka_unit_test(t_fmt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
