/* Histogram costs: ns per insert, percentile error and memory of common/stats/hist.c beside log2
 * buckets
 * and a t-digest. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "heatmap.h"
#include "hist.h"

/*
 * The same pre-generated values (so the random generator is not timed) go into three
 * structures:
 *  - common/stats/hist.c, log-linear, 32 sub-buckets per power of two;
 *  - log2 buckets as bcc and bpftrace keep them, a percentile read as its bucket's midpoint;
 *  - a merging t-digest (Dunning's, compression 100, the k2 size bound, a buffer of 500 values
 *    sorted into the centroids when full), the structure perf-prof's num-dist uses.
 * Each is filled `rounds` times from empty; the figure is the fastest round. Errors are against
 * the exact nearest-rank percentiles of the sorted values.
 */

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t rng_state = 42;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rnd_unit(void)
{
	return ((double)(rnd() >> 11) + 1) / 9007199254740992.0;
}

static double rnd_normal(void)
{
	return sqrt(-2 * log(rnd_unit())) * cos(2 * M_PI * rnd_unit());
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* log2 buckets: slot 0 for 0, slot s for [2^(s-1), 2^s). */
struct log2h {
	uint64_t slots[65];
	uint64_t count;
};

static inline void log2h_add(struct log2h *h, uint64_t v)
{
	h->slots[v ? 64 - __builtin_clzll(v) : 0]++;
	h->count++;
}

/* Nearest rank, as the exact figures are taken (99.9% of 1000 is 999, not 999.0000000000001). */
static uint64_t rank_at(size_t n, double p)
{
	uint64_t rank = (uint64_t)ceil(p / 100 * (double)n - 1e-9);

	return rank ? rank : 1;
}

static uint64_t log2h_percentile(const struct log2h *h, double p)
{
	uint64_t rank = rank_at(h->count, p), seen = 0;

	for (int s = 0; s < 65; s++) {
		seen += h->slots[s];
		if (seen >= rank) {
			uint64_t lo = s ? 1ull << (s - 1) : 0;

			return s < 2 ? lo : lo + (lo >> 1); /* the midpoint of [lo, 2lo) */
		}
	}
	return 0;
}

/* A merging t-digest. */
#define TD_COMPRESSION 100.0
#define TD_BUFFER 500
#define TD_MAX_CENTROIDS 512

struct centroid {
	double mean, weight;
};

struct tdigest {
	struct centroid c[TD_MAX_CENTROIDS + TD_BUFFER];
	int nr; /* merged centroids */
	double buf[TD_BUFFER];
	int nbuf;
	double total, min, max;
};

static int cmp_centroid(const void *a, const void *b)
{
	double x = ((const struct centroid *)a)->mean, y = ((const struct centroid *)b)->mean;

	return (x > y) - (x < y);
}

/*
 * Dunning's k2 bound: a centroid spanning q0..q2 may weigh at most
 * total * Z / compression * min(q0 (1 - q0), q2 (1 - q2)), Z = 4 ln(total / compression) + 24,
 * so centroids near either end stay small.
 */
static void td_merge(struct tdigest *t)
{
	struct centroid *c = t->c;
	int n = t->nr, out = 0;
	double seen = 0, z;

	for (int i = 0; i < t->nbuf; i++)
		c[n++] = (struct centroid){ t->buf[i], 1 };
	t->total += t->nbuf;
	t->nbuf = 0;
	qsort(c, (size_t)n, sizeof(*c), cmp_centroid);
	z = t->total * (4 * log(t->total / TD_COMPRESSION) + 24) / TD_COMPRESSION;
	for (int i = 1; i < n; i++) {
		double w = c[out].weight + c[i].weight;
		double q0 = seen / t->total, q2 = (seen + w) / t->total;

		if (w <= z * fmin(q0 * (1 - q0), q2 * (1 - q2))) {
			c[out].mean += (c[i].mean - c[out].mean) * c[i].weight / w;
			c[out].weight = w;
		} else {
			seen += c[out].weight;
			c[++out] = c[i];
		}
	}
	t->nr = n ? out + 1 : 0;
}

static inline void td_add(struct tdigest *t, double v)
{
	if (t->nr == 0 && t->nbuf == 0 && t->total == 0)
		t->min = t->max = v;
	if (v < t->min)
		t->min = v;
	if (v > t->max)
		t->max = v;
	t->buf[t->nbuf++] = v;
	if (t->nbuf == TD_BUFFER)
		td_merge(t);
}

/* Interpolated between the centroids' centers, the ends pinned to min and max. */
static double td_percentile(struct tdigest *t, double p)
{
	double target, seen = 0;

	if (t->nbuf)
		td_merge(t);
	target = p / 100 * t->total;
	if (target <= t->c[0].weight / 2)
		return t->min + (t->c[0].mean - t->min) * (target / (t->c[0].weight / 2));
	for (int i = 0; i + 1 < t->nr; i++) {
		double mid = seen + t->c[i].weight / 2;
		double next = seen + t->c[i].weight + t->c[i + 1].weight / 2;

		if (target < next)
			return t->c[i].mean +
			       (t->c[i + 1].mean - t->c[i].mean) * (target - mid) / (next - mid);
		seen += t->c[i].weight;
	}
	return t->max;
}

static const double pcts[] = { 50, 90, 95, 99, 99.9 };
#define NR_PCTS (sizeof(pcts) / sizeof(pcts[0]))

struct result {
	double ns;
	double err_named, err_all; /* worst relative error: p50..p99.9, and every p1..p99 too */
	size_t bytes;
};

static double rel_err(double got, uint64_t exact)
{
	if (!exact)
		return got == 0 ? 0 : 1;
	return fabs(got - (double)exact) / (double)exact;
}

static uint64_t exact_at(const uint64_t *sorted, size_t n, double p)
{
	return sorted[rank_at(n, p) - 1];
}

/* Worst errors of a structure's percentile function over the named and the whole percents. */
#define ERRORS(res, sorted, n, pct_expr)                                                 \
	do {                                                                             \
		for (unsigned int k_ = 0; k_ < NR_PCTS + 99; k_++) {                     \
			double p = k_ < NR_PCTS ? pcts[k_] : (double)(k_ - NR_PCTS + 1); \
			double e_ = rel_err((double)(pct_expr), exact_at(sorted, n, p)); \
                                                                                         \
			if (k_ < NR_PCTS && e_ > (res).err_named)                        \
				(res).err_named = e_;                                    \
			if (e_ > (res).err_all)                                          \
				(res).err_all = e_;                                      \
		}                                                                        \
	} while (0)

static void run(const char *name, const uint64_t *vals, size_t n, int rounds)
{
	uint64_t *sorted = malloc(n * sizeof(*sorted));
	struct result rh = { 1e30, 0, 0, 0 }, rl = rh, rt = rh;
	double merge_ns = 1e30, query_ns = 1e30, heatmap_ns = 1e30;
	struct tdigest *td = malloc(sizeof(*td));
	struct log2h l2 = { 0 };
	struct hist h;
	volatile uint64_t sink = 0;

	if (!sorted || !td) {
		perror("malloc");
		exit(1);
	}
	memcpy(sorted, vals, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_u64);
	for (int r = 0; r < rounds; r++) {
		double t0;

		hist__init(&h);
		t0 = now_ns();
		for (size_t i = 0; i < n; i++)
			hist__add(&h, vals[i]);
		t0 = (now_ns() - t0) / (double)n;
		if (t0 < rh.ns)
			rh.ns = t0;
		sink += hist__count(&h);
		if (r + 1 < rounds)
			hist__exit(&h);

		memset(&l2, 0, sizeof(l2));
		t0 = now_ns();
		for (size_t i = 0; i < n; i++)
			log2h_add(&l2, vals[i]);
		t0 = (now_ns() - t0) / (double)n;
		if (t0 < rl.ns)
			rl.ns = t0;
		sink += l2.count;

		memset(td, 0, sizeof(*td));
		t0 = now_ns();
		for (size_t i = 0; i < n; i++)
			td_add(td, (double)vals[i]);
		t0 = (now_ns() - t0) / (double)n;
		if (t0 < rt.ns)
			rt.ns = t0;
		sink += (uint64_t)td->total;
	}
	ERRORS(rh, sorted, n, hist__percentile(&h, p));
	ERRORS(rl, sorted, n, log2h_percentile(&l2, p));
	ERRORS(rt, sorted, n, td_percentile(td, p));
	rh.bytes = hist__memory(&h);
	rl.bytes = sizeof(l2);
	rt.bytes = (size_t)td->nr * sizeof(struct centroid) + sizeof(td->buf);
	/* a merge of two full histograms, and the five percentiles of a report */
	for (int r = 0; r < rounds; r++) {
		struct hist m = { 0 };
		double t0;

		hist__merge(&m, &h);
		t0 = now_ns();
		hist__merge(&m, &h);
		t0 = now_ns() - t0;
		if (t0 < merge_ns)
			merge_ns = t0;
		t0 = now_ns();
		for (unsigned int k = 0; k < NR_PCTS; k++)
			sink += hist__percentile(&m, pcts[k]);
		t0 = now_ns() - t0;
		if (t0 < query_ns)
			query_ns = t0;
		hist__exit(&m);
	}
	printf("| %s | log-linear 32 (hist.c) | %.1f | %.3f%% | %.3f%% | %zu |\n", name, rh.ns,
	       100 * rh.err_named, 100 * rh.err_all, rh.bytes);
	printf("| %s | log2 buckets | %.1f | %.1f%% | %.1f%% | %zu |\n", name, rl.ns,
	       100 * rl.err_named, 100 * rl.err_all, rl.bytes);
	printf("| %s | t-digest, compression 100 | %.1f | %.2f%% | %.2f%% | %zu (%d centroids) |\n",
	       name, rt.ns, 100 * rt.err_named, 100 * rt.err_all, rt.bytes, td->nr);
	/* the heatmap on the same values, one every microsecond (2 s for 2 M values: 200 columns)
	 */
	for (int r = 0; r < rounds; r++) {
		struct heatmap *hm = heatmap__new(NULL);
		double t0;

		if (!hm) {
			perror("heatmap__new");
			exit(1);
		}
		t0 = now_ns();
		for (size_t i = 0; i < n; i++)
			heatmap__add(hm, 1000000000 + i * 1000, vals[i]);
		t0 = (now_ns() - t0) / (double)n;
		if (t0 < heatmap_ns)
			heatmap_ns = t0;
		sink += heatmap__count(hm);
		heatmap__delete(hm);
	}
	fprintf(stderr,
		"%s: hist merge %.0f ns, 5 percentiles %.0f ns (%u buckets); heatmap %.1f ns/add\n",
		name, merge_ns, query_ns, h.nr, heatmap_ns);
	hist__exit(&h);
	free(td);
	free(sorted);
	(void)sink;
}

static uint64_t clamp(double x)
{
	return x < 0 ? 0 : x >= 1.8e19 ? UINT64_MAX : (uint64_t)x;
}

int main(int argc, char **argv)
{
	size_t n = 2000000;
	int rounds = 5, c;
	uint64_t *v;

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n = strtoull(optarg, NULL, 0);
		else if (c == 'r')
			rounds = atoi(optarg);
		else {
			fprintf(stderr, "usage: bench_hist [-n SAMPLES] [-r ROUNDS]\n");
			return 2;
		}
	}
	if (n < 1 || rounds < 1) {
		fprintf(stderr, "bench_hist: -n and -r must be at least 1\n");
		return 2;
	}
	v = malloc(n * sizeof(*v));
	if (!v) {
		perror("malloc");
		return 1;
	}
	printf("%zu samples, fastest of %d rounds; errors at p50/p90/p95/p99/p99.9 (named) and at "
	       "every percent p1..p99 too (all)\n\n",
	       n, rounds);
	printf("| values | structure | ns/insert | worst error, named | worst error, all | bytes |\n"
	       "|---|---|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < n; i++) /* latencies: median 50 us */
		v[i] = clamp(exp(log(50000) + rnd_normal()));
	run("lognormal 50 us, sigma 1", v, n, rounds);
	for (size_t i = 0; i < n; i++)
		v[i] = clamp(-100000 * log(rnd_unit()));
	run("exponential, mean 100 us", v, n, rounds);
	for (size_t i = 0; i < n; i++)
		v[i] = rnd() % 10000000;
	run("uniform 0..10 ms", v, n, rounds);
	for (size_t i = 0; i < n; i++)
		v[i] = clamp(exp((rnd() & 7 ? log(10000) : log(5000000)) + 0.3 * rnd_normal()));
	run("bimodal 10 us / 5 ms", v, n, rounds);
	for (size_t i = 0; i < n; i++) /* 1 ns .. minutes */
		v[i] = clamp(exp(log(100000) + 3 * rnd_normal()));
	run("lognormal, sigma 3", v, n, rounds);
	free(v);
	return 0;
}
