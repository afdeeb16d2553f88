/* Latency heatmaps (time x log-scaled value) counted in memory and written as a standalone SVG. */
#ifndef PERFSCOPE_COMMON_HEATMAP_H
#define PERFSCOPE_COMMON_HEATMAP_H

#include <stdint.h>

struct out;

/*
 * Columns are spans of time of equal width from the start; rows are value buckets of the
 * histogram layout with 4 per power of two (each 19% above the last; values below 8 have a row
 * each), so nanoseconds to minutes fit one picture. Memory is bounded: at most max_cols columns
 * of HEATMAP_ROWS counters (2 KiB each, 1 MiB at the default 500); when time runs past the last
 * column, neighbouring columns are added together and the width doubles, so a run of any length
 * keeps all its values at a coarser time resolution. Not thread-safe.
 */
#define HEATMAP_ROW_BITS 2
#define HEATMAP_ROWS ((64 - HEATMAP_ROW_BITS + 1) << HEATMAP_ROW_BITS)

struct heatmap_opts {
	uint64_t start_ns; /* time of the first column's left edge; 0: the first value's time */
	uint64_t col_ns; /* first column width; 0: 10 ms */
	unsigned int max_cols; /* 0: 500; at least 2 */
};

struct heatmap;

/* opts NULL: defaults. NULL and errno on failure. */
struct heatmap *heatmap__new(const struct heatmap_opts *opts);
void heatmap__delete(struct heatmap *hm);

/*
 * Counts value at time_ns (the clock of the events: perf's sample time). A time before the start
 * (events of another CPU delivered out of order) is counted in the first column and in
 * heatmap__early. 0 or -ENOMEM (the value is then counted in heatmap__dropped only).
 */
int heatmap__add(struct heatmap *hm, uint64_t time_ns, uint64_t value);

uint64_t heatmap__count(const struct heatmap *hm);
uint64_t heatmap__early(const struct heatmap *hm);
uint64_t heatmap__dropped(const struct heatmap *hm);
/* Columns used so far and their current width. */
unsigned int heatmap__nr_cols(const struct heatmap *hm);
uint64_t heatmap__col_ns(const struct heatmap *hm);
/* The count of one cell: column col, the row of value. */
uint64_t heatmap__cell(const struct heatmap *hm, unsigned int col, uint64_t value);

struct heatmap_svg {
	const char *title; /* the heading, e.g. "sched:sched_switch runtime"; NULL: "heatmap" */
	const char *ylabel; /* the value's name on its axis; NULL: "latency" */
	const char *unit; /* "ns" (axis in ns..s), "bytes" (B..GiB), other, or NULL: numbers */
};

/*
 * A self-contained SVG document (no script, no external resource, valid XML): the title, time
 * on x from the start, value on y (log scale, from the lowest to the highest row seen), one
 * rectangle per non-empty cell colored by its count (log scale, the legend on the right) with a
 * <title> tooltip saying its time span, value range and count. Written into o, then flushed:
 * 0 or the out's -errno.
 */
int heatmap__write_svg(const struct heatmap *hm, struct out *o, const struct heatmap_svg *svg);

#endif
