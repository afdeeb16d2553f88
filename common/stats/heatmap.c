/* Latency heatmaps: columns of log-scaled value buckets in memory, written as a standalone SVG. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"
#include "hist.h"
#include "output.h"

#define DEFAULT_COL_NS 10000000ull /* 10 ms */
#define DEFAULT_MAX_COLS 500

struct heatmap {
	uint64_t start; /* left edge of column 0 */
	bool started;
	uint64_t col_ns;
	unsigned int max_cols, nr_cols, cap_cols;
	uint64_t *cells; /* cap_cols columns of HEATMAP_ROWS counts */
	unsigned int row_lo, row_hi; /* rows seen, when count */
	uint64_t count, early, dropped;
};

struct heatmap *heatmap__new(const struct heatmap_opts *opts)
{
	struct heatmap *hm = calloc(1, sizeof(*hm));

	if (!hm)
		return NULL;
	hm->col_ns = opts && opts->col_ns ? opts->col_ns : DEFAULT_COL_NS;
	hm->max_cols = opts && opts->max_cols ? opts->max_cols : DEFAULT_MAX_COLS;
	if (hm->max_cols < 2) /* halving must make room */
		hm->max_cols = 2;
	if (opts && opts->start_ns) {
		hm->start = opts->start_ns;
		hm->started = true;
	}
	return hm;
}

void heatmap__delete(struct heatmap *hm)
{
	if (!hm)
		return;
	free(hm->cells);
	free(hm);
}

/* Column i becomes columns 2i and 2i+1 together, at twice the width. */
static void halve(struct heatmap *hm)
{
	unsigned int n = (hm->nr_cols + 1) / 2;

	for (unsigned int i = 0; i < n; i++) {
		uint64_t *dst = hm->cells + (size_t)i * HEATMAP_ROWS;
		const uint64_t *a = hm->cells + (size_t)2 * i * HEATMAP_ROWS;

		if (i)
			memcpy(dst, a, HEATMAP_ROWS * sizeof(*dst));
		if (2 * i + 1 < hm->nr_cols) {
			for (unsigned int r = 0; r < HEATMAP_ROWS; r++)
				dst[r] += a[HEATMAP_ROWS + r];
		}
	}
	memset(hm->cells + (size_t)n * HEATMAP_ROWS, 0,
	       (size_t)(hm->nr_cols - n) * HEATMAP_ROWS * sizeof(*hm->cells));
	hm->nr_cols = n;
	hm->col_ns *= 2;
}

static int reserve(struct heatmap *hm, unsigned int col)
{
	unsigned int cap = hm->cap_cols ? hm->cap_cols : 16;
	uint64_t *cells;

	if (col < hm->cap_cols)
		return 0;
	while (cap <= col)
		cap *= 2;
	if (cap > hm->max_cols)
		cap = hm->max_cols;
	cells = realloc(hm->cells, (size_t)cap * HEATMAP_ROWS * sizeof(*cells));
	if (!cells)
		return -ENOMEM;
	memset(cells + (size_t)hm->cap_cols * HEATMAP_ROWS, 0,
	       (size_t)(cap - hm->cap_cols) * HEATMAP_ROWS * sizeof(*cells));
	hm->cells = cells;
	hm->cap_cols = cap;
	return 0;
}

int heatmap__add(struct heatmap *hm, uint64_t time_ns, uint64_t value)
{
	unsigned int row = loglin_index(value, HEATMAP_ROW_BITS);
	uint64_t dt, col;

	if (!hm->started) {
		hm->start = time_ns;
		hm->started = true;
	}
	if (time_ns < hm->start) {
		hm->early++;
		dt = 0;
	} else {
		dt = time_ns - hm->start;
	}
	/* max_cols >= 2: once col_ns > dt / 2 the value lands in column 0 or 1 */
	while ((col = dt / hm->col_ns) >= hm->max_cols)
		halve(hm);
	if (reserve(hm, (unsigned int)col)) {
		hm->dropped++;
		return -ENOMEM;
	}
	hm->cells[col * HEATMAP_ROWS + row]++;
	if (col >= hm->nr_cols)
		hm->nr_cols = (unsigned int)col + 1;
	if (!hm->count || row < hm->row_lo)
		hm->row_lo = row;
	if (!hm->count || row > hm->row_hi)
		hm->row_hi = row;
	hm->count++;
	return 0;
}

uint64_t heatmap__count(const struct heatmap *hm)
{
	return hm->count;
}

uint64_t heatmap__early(const struct heatmap *hm)
{
	return hm->early;
}

uint64_t heatmap__dropped(const struct heatmap *hm)
{
	return hm->dropped;
}

unsigned int heatmap__nr_cols(const struct heatmap *hm)
{
	return hm->nr_cols;
}

uint64_t heatmap__col_ns(const struct heatmap *hm)
{
	return hm->col_ns;
}

uint64_t heatmap__cell(const struct heatmap *hm, unsigned int col, uint64_t value)
{
	if (col >= hm->nr_cols)
		return 0;
	return hm->cells[(size_t)col * HEATMAP_ROWS + loglin_index(value, HEATMAP_ROW_BITS)];
}

/*
 * Text as XML character data or attribute value: markup characters escaped, control characters
 * XML 1.0 forbids as spaces, bytes that are not UTF-8 as U+FFFD (the document must stay
 * well-formed whatever a title holds).
 */
static void xml_text(struct out *o, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);

	while (*p) {
		unsigned char c = *p;
		unsigned int len = 0;

		if (c < 0x80) {
			if (c == '&')
				out__puts(o, "&amp;");
			else if (c == '<')
				out__puts(o, "&lt;");
			else if (c == '>')
				out__puts(o, "&gt;");
			else if (c == '"')
				out__puts(o, "&quot;");
			else if (c < 0x20 && c != '\t' && c != '\n')
				out__putc(o, ' ');
			else
				out__putc(o, (char)c);
			p++;
			continue;
		}
		len = (unsigned int)utf8_len(p, (size_t)(end - p));
		if (!len) {
			out__puts(o, "\xef\xbf\xbd");
			p++;
			continue;
		}
		out__write(o, p, len);
		p += len;
	}
}

/* YlOrRd: light yellow for a count of 1 to dark red for the most, by log(count). */
static void color(char buf[8], double t)
{
	static const unsigned char stops[][3] = {
		{ 255, 255, 178 }, { 254, 204, 92 }, { 253, 141, 60 },
		{ 240, 59, 32 },   { 189, 0, 38 },
	};
	double x = t * 4;
	int i = x >= 4 ? 3 : (int)x;
	double f = x - i;
	int rgb[3];

	for (int k = 0; k < 3; k++)
		rgb[k] = (int)lround(stops[i][k] + f * (stops[i + 1][k] - stops[i][k]));
	snprintf(buf, 8, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
}

static double shade(uint64_t c, uint64_t most)
{
	return most > 1 ? log((double)c) / log((double)most) : 1;
}

/* Geometry, in pixels. */
#define SVG_W 1100
#define SVG_H 560
#define LEFT 100
#define RIGHT 140
#define TOP 60
#define BOTTOM 60
#define PLOT_W (SVG_W - LEFT - RIGHT)
#define PLOT_H (SVG_H - TOP - BOTTOM)
#define LEGEND_STEPS 10

/* A time axis label for a multiple of step: in the unit of the step ("0.2 s", "250 ms"). */
static void tick_label(char *buf, size_t size, uint64_t t, uint64_t step)
{
	if (step >= 1000000000)
		snprintf(buf, size, "%g s", (double)t / 1e9);
	else if (step >= 1000000)
		snprintf(buf, size, "%g ms", (double)t / 1e6);
	else if (step >= 1000)
		snprintf(buf, size, "%g us", (double)t / 1e3);
	else
		snprintf(buf, size, "%llu ns", (unsigned long long)t);
}

/* 1, 2 or 5 times a power of ten, at least raw. */
static uint64_t nice_step(uint64_t raw)
{
	uint64_t p = 1;

	while (p <= UINT64_MAX / 10 && p * 10 <= raw)
		p *= 10;
	if (p >= raw)
		return p;
	if (2 * p >= raw)
		return 2 * p;
	if (5 * p >= raw)
		return 5 * p;
	return 10 * p;
}

static void x_axis(struct out *o, const struct heatmap *hm)
{
	/* times near UINT64_MAX could wrap the span: it ends at the end of the clock then */
	uint64_t span =
		hm->col_ns > UINT64_MAX / hm->nr_cols ? UINT64_MAX : hm->col_ns * hm->nr_cols;
	uint64_t step = nice_step(span / 8 ? span / 8 : 1);
	char buf[48];

	out__printf(o,
		    "<g class=\"x axis\" stroke=\"#444\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
		    "y2=\"%d\"/>\n",
		    LEFT, TOP + PLOT_H, LEFT + PLOT_W, TOP + PLOT_H);
	for (uint64_t t = 0; t <= span; t += step) {
		double x = LEFT + (double)PLOT_W * ((double)t / (double)span);

		tick_label(buf, sizeof(buf), t, step);
		out__printf(o,
			    "<line x1=\"%.2f\" y1=\"%d\" x2=\"%.2f\" y2=\"%d\"/><text x=\"%.2f\" "
			    "y=\"%d\" text-anchor=\"middle\" stroke=\"none\">%s</text>\n",
			    x, TOP + PLOT_H, x, TOP + PLOT_H + 5, x, TOP + PLOT_H + 18, buf);
		if (t > UINT64_MAX - step)
			break;
	}
	hist_fmt(buf, sizeof(buf), hm->col_ns, "ns");
	out__printf(o,
		    "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" stroke=\"none\">time from the "
		    "start (columns of %s)</text>\n</g>\n",
		    LEFT + PLOT_W / 2, TOP + PLOT_H + 42, buf);
}

static void y_axis(struct out *o, const struct heatmap *hm, const struct heatmap_svg *svg,
		   double cell_h)
{
	unsigned int rows_per_pow = 1u << HEATMAP_ROW_BITS;
	unsigned int every = 1;
	char buf[48];

	/* labels at powers of two, at least 16 px apart */
	while (every * rows_per_pow * cell_h < 16)
		every *= 2;
	out__printf(o,
		    "<g class=\"y axis\" stroke=\"#444\">\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
		    "y2=\"%d\"/>\n",
		    LEFT, TOP, LEFT, TOP + PLOT_H);
	for (unsigned int r = hm->row_lo; r <= hm->row_hi; r++) {
		uint64_t lower = loglin_lower(r, HEATMAP_ROW_BITS);
		double y = TOP + (hm->row_hi - r + 1) * cell_h;
		unsigned int e = lower ? 63 - (unsigned int)__builtin_clzll(lower) : 0;

		/* the bottom edge of a row is its lower bound: mark powers of two there */
		if (lower && (lower & (lower - 1)))
			continue;
		if (lower && e % every)
			continue;
		hist_fmt(buf, sizeof(buf), lower, svg->unit);
		out__printf(o,
			    "<line x1=\"%d\" y1=\"%.2f\" x2=\"%d\" y2=\"%.2f\"/><text x=\"%d\" "
			    "y=\"%.2f\" text-anchor=\"end\" stroke=\"none\">",
			    LEFT - 5, y, LEFT, y, LEFT - 8, y + 4);
		xml_text(o, buf);
		out__puts(o, "</text>\n");
	}
	out__printf(o,
		    "<text transform=\"translate(%d,%d) rotate(-90)\" text-anchor=\"middle\" "
		    "stroke=\"none\">",
		    20, TOP + PLOT_H / 2);
	xml_text(o, svg->ylabel ? svg->ylabel : "latency");
	/* times and sizes carry their unit on every label; anything else says it here */
	if (svg->unit && *svg->unit && strcmp(svg->unit, "ns") && strcmp(svg->unit, "bytes")) {
		out__puts(o, " (");
		xml_text(o, svg->unit);
		out__puts(o, ", log scale)");
	} else {
		out__puts(o, " (log scale)");
	}
	out__puts(o, "</text>\n</g>\n");
}

static void legend(struct out *o, uint64_t most)
{
	int x = LEFT + PLOT_W + 30, h = PLOT_H / LEGEND_STEPS;
	char c[8];

	out__printf(o, "<g class=\"legend\">\n<text x=\"%d\" y=\"%d\">count (log scale)</text>\n",
		    x, TOP - 8);
	for (int i = 0; i < LEGEND_STEPS; i++) {
		/* step i shows counts from most^(i/N) to most^((i+1)/N) */
		double t0 = (double)i / LEGEND_STEPS, t1 = (double)(i + 1) / LEGEND_STEPS;
		uint64_t lo = (uint64_t)ceil(pow((double)most, t0));
		uint64_t hi = (uint64_t)floor(pow((double)most, t1));

		color(c, (t0 + t1) / 2);
		out__printf(o,
			    "<rect x=\"%d\" y=\"%d\" width=\"20\" height=\"%d\" fill=\"%s\"><title>"
			    "%llu to %llu</title></rect>\n",
			    x, TOP + PLOT_H - (i + 1) * h, h, c, (unsigned long long)lo,
			    (unsigned long long)(hi < lo ? lo : hi));
	}
	out__printf(o,
		    "<text x=\"%d\" y=\"%d\">1</text>\n<text x=\"%d\" y=\"%d\">%llu</text>\n</g>\n",
		    x + 26, TOP + PLOT_H, x + 26, TOP + PLOT_H - LEGEND_STEPS * h + 10,
		    (unsigned long long)most);
}

/* "[1.02 us, 1.28 us)" as the log2 labels write ranges, or the one value of an exact row. */
static void value_range(struct out *o, unsigned int r, const char *unit)
{
	uint64_t lo = loglin_lower(r, HEATMAP_ROW_BITS), hi = loglin_upper(r, HEATMAP_ROW_BITS);
	char a[48], b[48];

	hist_fmt(a, sizeof(a), lo, unit);
	if (lo == hi) {
		xml_text(o, a);
		return;
	}
	/* the last row ends at UINT64_MAX, included */
	hist_fmt(b, sizeof(b), hi == UINT64_MAX ? hi : hi + 1, unit);
	out__putc(o, '[');
	xml_text(o, a);
	out__puts(o, ", ");
	xml_text(o, b);
	out__putc(o, hi == UINT64_MAX ? ']' : ')');
}

static void cells(struct out *o, const struct heatmap *hm, const char *unit, uint64_t most,
		  double cell_w, double cell_h)
{
	char c[8], t0[48], t1[48];

	out__puts(o, "<g class=\"cells\" shape-rendering=\"crispEdges\">\n");
	for (unsigned int col = 0; col < hm->nr_cols; col++) {
		const uint64_t *column = hm->cells + (size_t)col * HEATMAP_ROWS;
		double x = LEFT + col * cell_w;

		hist_fmt(t0, sizeof(t0), col * hm->col_ns, "ns");
		hist_fmt(t1, sizeof(t1), (col + 1) * hm->col_ns, "ns");
		for (unsigned int r = hm->row_lo; r <= hm->row_hi; r++) {
			if (!column[r])
				continue;
			color(c, shade(column[r], most));
			out__printf(o,
				    "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
				    "fill=\"%s\"><title>%s to %s, ",
				    x, TOP + (hm->row_hi - r) * cell_h, cell_w, cell_h, c, t0, t1);
			value_range(o, r, unit);
			out__printf(o, ": %llu</title></rect>\n", (unsigned long long)column[r]);
		}
	}
	out__puts(o, "</g>\n");
}

int heatmap__write_svg(const struct heatmap *hm, struct out *o, const struct heatmap_svg *svg)
{
	static const struct heatmap_svg none;
	uint64_t most = 0;
	char buf[48];

	if (!svg)
		svg = &none;
	for (size_t i = 0; i < (size_t)hm->nr_cols * HEATMAP_ROWS; i++) {
		if (hm->cells[i] > most)
			most = hm->cells[i];
	}
	out__printf(o,
		    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
		    "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" "
		    "height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" "
		    "font-size=\"12\">\n<title>",
		    SVG_W, SVG_H, SVG_W, SVG_H);
	xml_text(o, svg->title ? svg->title : "heatmap");
	out__printf(o,
		    "</title>\n<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n"
		    "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#f4f4f4\"/>\n"
		    "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">",
		    SVG_W, SVG_H, LEFT, TOP, PLOT_W, PLOT_H, SVG_W / 2);
	xml_text(o, svg->title ? svg->title : "heatmap");
	hist_fmt(buf, sizeof(buf), hm->col_ns, "ns");
	out__printf(o,
		    "</text>\n<text x=\"%d\" y=\"42\" text-anchor=\"middle\" fill=\"#555\">%llu "
		    "values, %u columns of %s, 4 rows per power of two",
		    SVG_W / 2, (unsigned long long)hm->count, hm->nr_cols, buf);
	if (hm->early)
		out__printf(o, ", %llu before the start (in the first column)",
			    (unsigned long long)hm->early);
	if (hm->dropped)
		out__printf(o, ", %llu lost (out of memory)", (unsigned long long)hm->dropped);
	out__puts(o, "</text>\n");
	if (!hm->count) {
		/* the group of cells is there, empty: readers of the document find it always */
		out__printf(o,
			    "<g class=\"cells\"/>\n<text x=\"%d\" y=\"%d\" "
			    "text-anchor=\"middle\">no values</text>\n",
			    LEFT + PLOT_W / 2, TOP + PLOT_H / 2);
	} else {
		double cell_w = (double)PLOT_W / hm->nr_cols;
		double cell_h = (double)PLOT_H / (hm->row_hi - hm->row_lo + 1);

		cells(o, hm, svg->unit, most, cell_w, cell_h);
		x_axis(o, hm);
		y_axis(o, hm, svg, cell_h);
		legend(o, most);
	}
	out__puts(o, "</svg>\n");
	return out__flush(o);
}
