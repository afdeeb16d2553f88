/* Log-linear histograms of u64 values: exact counts and merges, percentiles within 1/64. */
#ifndef PERFSCOPE_COMMON_HIST_H
#define PERFSCOPE_COMMON_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct out;
struct json;

/*
 * Buckets as in HdrHistogram: values below 2 * HIST_SUB each have their own bucket; above, every
 * power of two [2^e, 2^(e+1)) is cut into HIST_SUB equal buckets of width 2^(e - HIST_SUB_BITS).
 * A bucket is thus never wider than 1/HIST_SUB of its lower bound, and a percentile reported as
 * its bucket's midpoint is within half that of the true value:
 *
 *	|reported - exact| / exact < 1 / (2 * HIST_SUB) = 1/64 = 1.5625%
 *
 * 32 sub-buckets are the fewest that keep that bound under the 1.6% asked of num-dist and the
 * latency profilers; 64 would halve the error and double the memory (512 bytes per power of two
 * instead of 256). The index of a value is two shifts and a count of leading zeros (no division,
 * no table), so the same layout can be filled inside a BPF program and merged here exactly.
 *
 * HIST_NR_BUCKETS buckets cover every u64, 0 and UINT64_MAX included, but only the range between
 * the smallest and the largest value seen is allocated, whole powers of two at a time: latencies
 * from 1 us to 16 ms take 14 * 256 bytes = 3.5 KiB; 1 ns to 68 s about 8 KiB.
 */
#define HIST_SUB_BITS 5
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_NR_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

/* Relative error bound of hist__percentile, for tests and documentation. */
#define HIST_MAX_REL_ERROR (1.0 / (2 * HIST_SUB))

/* Layouts with another resolution (the heatmap's rows) share the arithmetic. */
static inline unsigned int loglin_index(uint64_t v, unsigned int bits)
{
	/* v | 2^bits: values below 2^(bits+1) get shift 0, i.e. a bucket of their own */
	unsigned int shift = 63 - (unsigned int)__builtin_clzll(v | (1ull << bits)) - bits;

	return (shift << bits) + (unsigned int)(v >> shift);
}

/* log2 of the width of bucket idx. */
static inline unsigned int loglin_shift(unsigned int idx, unsigned int bits)
{
	return idx < (2u << bits) ? 0 : (idx >> bits) - 1;
}

/* The smallest value of bucket idx. */
static inline uint64_t loglin_lower(unsigned int idx, unsigned int bits)
{
	unsigned int shift = loglin_shift(idx, bits);

	return (uint64_t)(idx - (shift << bits)) << shift;
}

/* The largest value of bucket idx (inclusive: the last bucket ends at UINT64_MAX). */
static inline uint64_t loglin_upper(unsigned int idx, unsigned int bits)
{
	return loglin_lower(idx, bits) + ((1ull << loglin_shift(idx, bits)) - 1);
}

static inline unsigned int hist_index(uint64_t v)
{
	return loglin_index(v, HIST_SUB_BITS);
}

__extension__ typedef unsigned __int128 hist_u128;

/*
 * A zero-filled struct hist is an empty histogram, and one may be moved with memcpy (the
 * buckets are the only memory it points to). count, sum, min and max are exact whatever the
 * buckets. Its 128-bit sum wants 16-byte alignment, which keymap values (8) do not give: keep a
 * pointer in a keymap, not the struct (num-dist crashed with key= until it did). Not
 * thread-safe.
 */
struct hist {
	uint64_t *counts; /* buckets [lo, lo + nr) */
	uint32_t lo, nr; /* both multiples of HIST_SUB */
	hist_u128 sum; /* never overflows: at most 2^64 values of at most 2^64 - 1 */
	uint64_t count;
	uint64_t not_min; /* ~min: 0 in an empty histogram means "no minimum yet" */
	uint64_t max;
	uint64_t dropped; /* values not counted at all: no memory for their bucket */
};

static inline void hist__init(struct hist *h)
{
	*h = (struct hist){ 0 };
}
/* Frees the buckets; h is then empty and may be used again. */
void hist__exit(struct hist *h);
/* Heap-allocated ones, for callers that keep pointers. NULL and errno on failure. */
struct hist *hist__new(void);
void hist__delete(struct hist *h);
/* Empties h, keeping its buckets' memory (per-interval histograms do not reallocate). */
void hist__reset(struct hist *h);

int hist__add_slow(struct hist *h, uint64_t v, uint64_t n);
/*
 * Counts n (> 0) values v. 0, or -ENOMEM when v's power of two needed memory that malloc did not
 * give: those values are then counted in h->dropped and nowhere else.
 */
static inline int hist__add_n(struct hist *h, uint64_t v, uint64_t n)
{
	uint32_t i = hist_index(v) - h->lo;

	if (__builtin_expect(i >= h->nr, 0))
		return hist__add_slow(h, v, n);
	h->counts[i] += n;
	h->count += n;
	h->sum += (hist_u128)v * n;
	if (~v > h->not_min)
		h->not_min = ~v;
	if (v > h->max)
		h->max = v;
	return 0;
}

static inline int hist__add(struct hist *h, uint64_t v)
{
	return hist__add_n(h, v, 1);
}

/* dst += src, exactly: the same as adding every value of src to dst. 0 or -ENOMEM (dst kept). */
int hist__merge(struct hist *dst, const struct hist *src);

static inline uint64_t hist__count(const struct hist *h)
{
	return h->count;
}
/* 0 when empty. */
static inline uint64_t hist__min(const struct hist *h)
{
	return h->count ? ~h->not_min : 0;
}
static inline uint64_t hist__max(const struct hist *h)
{
	return h->max;
}
static inline hist_u128 hist__sum(const struct hist *h)
{
	return h->sum;
}
/* sum / count rounded to the nearest integer; 0 when empty. */
uint64_t hist__mean(const struct hist *h);
/* The same as a double (for means below 1 or text with decimals). */
double hist__mean_dbl(const struct hist *h);

/*
 * The p-th percentile (0 <= p <= 100) by nearest rank: the value of rank ceil(p/100 * count) in
 * sorted order (at least rank 1), reported as the midpoint of its bucket, within
 * HIST_MAX_REL_ERROR of the exact value; p <= 0 gives the exact min, p >= 100 the exact max.
 * 0 when empty.
 */
uint64_t hist__percentile(const struct hist *h, double p);
/* The value of rank r (1..count) in sorted order, as hist__percentile reports it. */
uint64_t hist__value_at_rank(const struct hist *h, uint64_t rank);

/* Bytes of memory h uses, itself included. */
size_t hist__memory(const struct hist *h);

/*
 * A value with its unit, for people: unit "ns" scales to us, ms and s ("1.23 ms"), "bytes" to
 * KiB, MiB... ("4.0 KiB"), anything else is printed after the number ("17 pages"), NULL or ""
 * gives the number alone. Three significant digits past the first step. Returns the length, as
 * snprintf does.
 */
int hist_fmt(char *buf, size_t size, uint64_t v, const char *unit);

/*
 * The log2 text histogram of bpftrace's hist(): one line per power of two from the lowest
 * non-empty one to the highest,
 *
 *	[512, 1K)            123 |@@@@@@@@@@@@@@@@@@                                  |
 *
 * the label left-aligned in 16 columns, the count right-aligned in 8, a bar of 52 columns scaled
 * to the largest count; K, M, G, T, P, E are powers of 1024. Values are printed in h's own unit
 * (the caller's heading says which). Nothing is printed for an empty histogram.
 */
void hist__print_log2(const struct hist *h, struct out *o);

/*
 * The stable JSON members of a distribution into the object j has open: "count", then "min_U",
 * "max_U", "mean_U", "p50_U", "p90_U", "p95_U", "p99_U", "p999_U" for unit U ("ns": "min_ns"
 * ... as DESIGN.md names them; NULL or "": "min", "max"...), integers; null when empty.
 * "dropped" is added when values were lost for memory.
 */
void hist__json(const struct hist *h, struct json *j, const char *unit);

#endif
