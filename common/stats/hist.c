/* Log-linear histograms: lazily grown buckets, exact merges, percentiles, text and JSON. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hist.h"
#include "output.h"

void hist__exit(struct hist *h)
{
	free(h->counts);
	hist__init(h);
}

struct hist *hist__new(void)
{
	return calloc(1, sizeof(struct hist));
}

void hist__delete(struct hist *h)
{
	if (!h)
		return;
	hist__exit(h);
	free(h);
}

void hist__reset(struct hist *h)
{
	if (h->nr)
		memset(h->counts, 0, h->nr * sizeof(*h->counts));
	h->count = 0;
	h->not_min = 0;
	h->max = 0;
	h->sum = 0;
	h->dropped = 0;
}

/* Makes the buckets cover [lo, hi) as well as what they covered. */
static int grow(struct hist *h, uint32_t lo, uint32_t hi)
{
	uint32_t new_lo = lo, new_hi = hi;
	uint64_t *counts;

	if (h->nr) {
		if (h->lo < new_lo)
			new_lo = h->lo;
		if (h->lo + h->nr > new_hi)
			new_hi = h->lo + h->nr;
		if (new_lo == h->lo && new_hi == h->lo + h->nr)
			return 0;
	}
	counts = calloc(new_hi - new_lo, sizeof(*counts));
	if (!counts)
		return -ENOMEM;
	if (h->nr)
		memcpy(counts + (h->lo - new_lo), h->counts, h->nr * sizeof(*counts));
	free(h->counts);
	h->counts = counts;
	h->lo = new_lo;
	h->nr = new_hi - new_lo;
	return 0;
}

int hist__add_slow(struct hist *h, uint64_t v, uint64_t n)
{
	uint32_t idx = hist_index(v);

	/* whole powers of two: a distribution spreading slowly reallocates once per octave */
	if (grow(h, idx & ~(HIST_SUB - 1), (idx | (HIST_SUB - 1)) + 1)) {
		h->dropped += n;
		return -ENOMEM;
	}
	return hist__add_n(h, v, n);
}

int hist__merge(struct hist *dst, const struct hist *src)
{
	if (src->nr && src->count) {
		if (grow(dst, src->lo, src->lo + src->nr))
			return -ENOMEM;
		for (uint32_t i = 0; i < src->nr; i++)
			dst->counts[src->lo - dst->lo + i] += src->counts[i];
		if (src->not_min > dst->not_min)
			dst->not_min = src->not_min;
		if (src->max > dst->max)
			dst->max = src->max;
		dst->count += src->count;
		dst->sum += src->sum;
	}
	dst->dropped += src->dropped;
	return 0;
}

uint64_t hist__mean(const struct hist *h)
{
	if (!h->count)
		return 0;
	return (uint64_t)((h->sum + h->count / 2) / h->count);
}

double hist__mean_dbl(const struct hist *h)
{
	if (!h->count)
		return 0;
	return (double)h->sum / (double)h->count;
}

uint64_t hist__value_at_rank(const struct hist *h, uint64_t rank)
{
	uint64_t seen = 0, min = hist__min(h);

	if (!h->count)
		return 0;
	if (rank <= 1)
		return min;
	if (rank >= h->count)
		return h->max;
	for (uint32_t i = 0; i < h->nr; i++) {
		uint32_t idx = h->lo + i;
		uint64_t lower, mid;

		seen += h->counts[i];
		if (seen < rank)
			continue;
		lower = loglin_lower(idx, HIST_SUB_BITS);
		mid = lower + (loglin_upper(idx, HIST_SUB_BITS) - lower) / 2;
		/* min and max are exact: the bucket of either is known to end there */
		if (mid < min)
			return min;
		return mid > h->max ? h->max : mid;
	}
	return h->max;
}

/*
 * ceil(p/100 * count) computed in long double; p/100 is not exact in binary (99.9 is stored as
 * 99.900000000000006), so a product within rounding of an integer is taken as that integer: the
 * p99.9 of 1000 values is the 999th, not the 1000th.
 */
static uint64_t rank_of(uint64_t count, double p)
{
	long double x = (long double)p / 100 * (long double)count;
	uint64_t r = (uint64_t)x;

	if (x - (long double)r > x * 1e-14L)
		r++;
	if (r < 1)
		r = 1;
	return r > count ? count : r;
}

uint64_t hist__percentile(const struct hist *h, double p)
{
	if (!h->count)
		return 0;
	if (!(p > 0)) /* NaN too */
		return hist__min(h);
	if (p >= 100)
		return h->max;
	return hist__value_at_rank(h, rank_of(h->count, p));
}

size_t hist__memory(const struct hist *h)
{
	return sizeof(*h) + h->nr * sizeof(*h->counts);
}

int hist_fmt(char *buf, size_t size, uint64_t v, const char *unit)
{
	static const char *const times[] = { "ns", "us", "ms", "s" };
	static const char *const bytes[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	const char *const *names;
	unsigned int k = 0, nr;
	double x = (double)v, step;

	if (!unit || !*unit)
		return snprintf(buf, size, "%llu", (unsigned long long)v);
	if (!strcmp(unit, "ns")) {
		names = times;
		nr = 4;
		step = 1000;
	} else if (!strcmp(unit, "bytes")) {
		names = bytes;
		nr = 7;
		step = 1024;
	} else {
		return snprintf(buf, size, "%llu %s", (unsigned long long)v, unit);
	}
	/* the next unit once the number would round to the step ("1000 us" reads as "1.00 ms") */
	while (k + 1 < nr && x >= step - 0.5) {
		x /= step;
		k++;
	}
	if (!k)
		return snprintf(buf, size, "%llu %s", (unsigned long long)v, names[0]);
	if (x < 9.995)
		return snprintf(buf, size, "%.2f %s", x, names[k]);
	if (x < 99.95)
		return snprintf(buf, size, "%.1f %s", x, names[k]);
	return snprintf(buf, size, "%.0f %s", x, names[k]);
}

/* 2^e as bpftrace writes it: 512, 1K, 2K ... 16E (2^64, the end of the last power). */
static int pow2_label(char *buf, size_t size, unsigned int e)
{
	if (e < 10)
		return snprintf(buf, size, "%u", 1u << e);
	return snprintf(buf, size, "%u%c", 1u << (e % 10), "KMGTPE"[e / 10 - 1]);
}

#define LOG2_BAR 52

void hist__print_log2(const struct hist *h, struct out *o)
{
	/* slot 0: the value 0; slot s >= 1: [2^(s-1), 2^s) */
	uint64_t slots[65] = { 0 }, most = 0;
	int first = -1, last = -1;
	char bar[LOG2_BAR + 1];

	for (uint32_t i = 0; i < h->nr; i++) {
		uint64_t lower = loglin_lower(h->lo + i, HIST_SUB_BITS);

		/* a bucket never straddles a power of two */
		slots[lower ? 64 - __builtin_clzll(lower) : 0] += h->counts[i];
	}
	for (int s = 0; s < 65; s++) {
		if (!slots[s])
			continue;
		if (first < 0)
			first = s;
		last = s;
		if (slots[s] > most)
			most = slots[s];
	}
	for (int s = first; s >= 0 && s <= last; s++) {
		char label[32], lo[8], hi[8];
		unsigned int len;

		if (s < 2) {
			snprintf(label, sizeof(label), "[%d]", s);
		} else {
			pow2_label(lo, sizeof(lo), (unsigned int)s - 1);
			pow2_label(hi, sizeof(hi), (unsigned int)s);
			snprintf(label, sizeof(label), "[%s, %s)", lo, hi);
		}
		out__printf(o, "%-16s", label);
		out__u64_width(o, slots[s], 8);
		len = (unsigned int)((hist_u128)slots[s] * LOG2_BAR / most);
		memset(bar, '@', len);
		memset(bar + len, ' ', LOG2_BAR - len);
		bar[LOG2_BAR] = '|';
		out__write(o, " |", 2);
		out__write(o, bar, sizeof(bar));
		out__putc(o, '\n');
	}
}

void hist__json(const struct hist *h, struct json *j, const char *unit)
{
	static const char *const names[] = { "min", "max", "mean", "p50",
					     "p90", "p95", "p99",  "p999" };
	static const double pcts[] = { 50, 90, 95, 99, 99.9 };
	bool with_unit = unit && *unit;

	json__key(j, "count");
	json__u64(j, h->count);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char key[64];

		snprintf(key, sizeof(key), "%s%s%s", names[i], with_unit ? "_" : "",
			 with_unit ? unit : "");
		json__key(j, key);
		if (!h->count)
			json__null(j);
		else if (i == 0)
			json__u64(j, hist__min(h));
		else if (i == 1)
			json__u64(j, h->max);
		else if (i == 2)
			json__u64(j, hist__mean(h));
		else
			json__u64(j, hist__percentile(h, pcts[i - 3]));
	}
	if (h->dropped) {
		json__key(j, "dropped");
		json__u64(j, h->dropped);
	}
}
