/* Unit tests of common/stats/heatmap.c: bounded columns that keep every value, the SVG as valid
 * XML. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heatmap.h"
#include "hist.h"
#include "output.h"

static uint64_t rng_state;

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

/* Columns past the bound are added in pairs: every value stays, in the column of its time. */
static void t_bounded_columns(void **state)
{
	struct heatmap_opts opts = { .col_ns = 1000, .max_cols = 8 };
	struct heatmap *hm = heatmap__new(&opts);
	uint64_t total = 0;

	(void)state;
	assert_non_null(hm);
	for (uint64_t t = 0; t <= 100000; t += 100)
		assert_int_equal(heatmap__add(hm, 5000000 + t, 777), 0);
	assert_int_equal(heatmap__count(hm), 1001);
	/* 1000 doubled until 100000 / width < 8 */
	assert_int_equal(heatmap__col_ns(hm), 16000);
	assert_int_equal(heatmap__nr_cols(hm), 7);
	for (unsigned int c = 0; c < 7; c++) {
		uint64_t n = heatmap__cell(hm, c, 777);

		/* column c holds [16000c, 16000(c+1)) from the first value's time */
		assert_int_equal(n, c < 6 ? 160 : 41);
		total += n;
	}
	assert_int_equal(total, 1001);
	assert_int_equal(heatmap__cell(hm, 0, 776), 160); /* the same row: 768..895 */
	assert_int_equal(heatmap__cell(hm, 0, 700), 0);
	assert_int_equal(heatmap__cell(hm, 7, 777), 0);
	assert_int_equal(heatmap__early(hm), 0);
	assert_int_equal(heatmap__dropped(hm), 0);
	heatmap__delete(hm);
	heatmap__delete(NULL);
}

/* Rows are 4 per power of two: values 19% apart are told apart, within one row not. */
static void t_rows(void **state)
{
	struct heatmap *hm = heatmap__new(NULL);

	(void)state;
	assert_non_null(hm);
	heatmap__add(hm, 1, 1024);
	heatmap__add(hm, 2, 1279);
	heatmap__add(hm, 3, 1280);
	heatmap__add(hm, 4, 0);
	heatmap__add(hm, 5, UINT64_MAX);
	assert_int_equal(heatmap__cell(hm, 0, 1024), 2);
	assert_int_equal(heatmap__cell(hm, 0, 1280), 1);
	assert_int_equal(heatmap__cell(hm, 0, 0), 1);
	assert_int_equal(heatmap__cell(hm, 0, UINT64_MAX), 1);
	assert_int_equal(heatmap__nr_cols(hm), 1);
	heatmap__delete(hm);
}

/* A start given in advance: earlier times go to the first column and are counted apart. */
static void t_early(void **state)
{
	struct heatmap_opts opts = { .start_ns = 1000000, .col_ns = 1000 };
	struct heatmap *hm = heatmap__new(&opts);

	(void)state;
	assert_non_null(hm);
	heatmap__add(hm, 500000, 10);
	heatmap__add(hm, 1002500, 10);
	assert_int_equal(heatmap__early(hm), 1);
	assert_int_equal(heatmap__cell(hm, 0, 10), 1);
	assert_int_equal(heatmap__cell(hm, 2, 10), 1);
	assert_int_equal(heatmap__nr_cols(hm), 3);
	heatmap__delete(hm);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/*
 * Minimal well-formedness, so that the check does not depend on python3: tags nest and match,
 * attribute values are quoted, '&' starts one of the entities written, '<' never appears in text,
 * one root element.
 */
static bool well_formed(const char *s, char *why, size_t whylen)
{
	const char *stack[64];
	size_t stack_len[64];
	int depth = 0, roots = 0;

	for (const char *p = s; *p;) {
		if (*p == '&') {
			if (strncmp(p, "&amp;", 5) && strncmp(p, "&lt;", 4) &&
			    strncmp(p, "&gt;", 4) && strncmp(p, "&quot;", 6)) {
				snprintf(why, whylen, "bad entity at %zu", (size_t)(p - s));
				return false;
			}
			p++;
			continue;
		}
		if (*p != '<') {
			if (*p == '>') {
				snprintf(why, whylen, "stray '>' at %zu", (size_t)(p - s));
				return false;
			}
			p++;
			continue;
		}
		if (p[1] == '?') {
			p = strstr(p, "?>");
			if (!p)
				return false;
			p += 2;
			continue;
		}
		if (p[1] == '/') {
			size_t n = strcspn(p + 2, ">");

			if (!depth || n != stack_len[depth - 1] ||
			    strncmp(p + 2, stack[depth - 1], n)) {
				snprintf(why, whylen, "unmatched close at %zu", (size_t)(p - s));
				return false;
			}
			depth--;
			p += 2 + n + 1;
			continue;
		}
		/* an opening tag: name, then attributes name="value" */
		const char *name = p + 1;
		size_t n = strcspn(name, " \t\n/>");
		const char *q = name + n;

		if (!n)
			return false;
		for (;;) {
			while (*q == ' ' || *q == '\n' || *q == '\t')
				q++;
			if (*q == '>' || (q[0] == '/' && q[1] == '>'))
				break;
			q += strcspn(q, "= >");
			if (*q != '=' || q[1] != '"') {
				snprintf(why, whylen, "unquoted attribute at %zu", (size_t)(q - s));
				return false;
			}
			q = strchr(q + 2, '"');
			if (!q)
				return false;
			if (memchr(name, '<', (size_t)(q - name))) {
				snprintf(why, whylen, "'<' in a tag at %zu", (size_t)(q - s));
				return false;
			}
			q++;
		}
		if (!depth)
			roots++;
		if (*q == '>') {
			if (depth == 64)
				return false;
			stack[depth] = name;
			stack_len[depth++] = n;
			p = q + 1;
		} else {
			p = q + 2;
		}
	}
	if (depth || roots != 1) {
		snprintf(why, whylen, "depth %d, %d roots at the end", depth, roots);
		return false;
	}
	return true;
}

/* python3's parser, when there is one: the tree, the cells' tooltips and their counts. */
static const char check_py[] =
	"import sys, xml.etree.ElementTree as ET\n"
	"ns = '{http://www.w3.org/2000/svg}'\n"
	"root = ET.parse(sys.argv[1]).getroot()\n"
	"assert root.tag == ns + 'svg', root.tag\n"
	"assert root.find(ns + 'title').text == sys.argv[4], root.find(ns + 'title').text\n"
	"g = [e for e in root.iter(ns + 'g') if e.get('class') == 'cells'][0]\n"
	"rects = g.findall(ns + 'rect')\n"
	"assert len(rects) == int(sys.argv[2]), len(rects)\n"
	"assert sum(int(r.find(ns + 'title').text.rsplit(': ', 1)[1]) for r in rects) == "
	"int(sys.argv[3])\n"
	"assert root.find('.//' + ns + 'script') is None\n";

static bool have_python(void)
{
	return system("python3 -c pass >/dev/null 2>&1") == 0;
}

static void write_svg(const struct heatmap *hm, const struct heatmap_svg *svg, char *path)
{
	int fd = mkstemp(path);
	struct out *o;

	assert_true(fd >= 0);
	o = out__new(fd, 0);
	assert_non_null(o);
	assert_int_equal(heatmap__write_svg(hm, o, svg), 0);
	out__delete(o);
	close(fd);
}

static void run_python(const char *path, unsigned int nr_cells, uint64_t count, const char *title)
{
	char py[] = "/tmp/psc_heatmap_py_XXXXXX";
	char cmd[512];
	int fd = mkstemp(py);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, check_py, sizeof(check_py) - 1), (ssize_t)sizeof(check_py) - 1);
	close(fd);
	snprintf(cmd, sizeof(cmd), "python3 %s %s %u %llu '%s'", py, path, nr_cells,
		 (unsigned long long)count, title);
	assert_int_equal(system(cmd), 0);
	unlink(py);
}

static void t_svg(void **state)
{
	struct heatmap_opts opts = { .col_ns = 10000000 };
	struct heatmap *hm = heatmap__new(&opts);
	/* markup, a control character and a byte that is not UTF-8: all must stay well-formed */
	struct heatmap_svg svg = { .title = "runtime <us> & \"more\"\x01\xff", .unit = "ns" };
	char path[] = "/tmp/psc_heatmap_XXXXXX", why[128] = "";
	unsigned int nr_cells = 0;
	size_t len;
	char *text;

	(void)state;
	assert_non_null(hm);
	rng_state = 11;
	/* 6 s of lognormal-ish latencies, a slow phase in the middle */
	for (uint64_t t = 0; t < 6000000000ull; t += 100000) {
		double mu = t > 2000000000ull && t < 3000000000ull ? log(2e6) : log(5e4);
		double z = sqrt(-2 * log(rnd_unit())) * cos(2 * M_PI * rnd_unit());

		assert_int_equal(heatmap__add(hm, 1000000000 + t, (uint64_t)exp(mu + 0.5 * z)), 0);
	}
	assert_int_equal(heatmap__count(hm), 60000);
	assert_int_equal(heatmap__nr_cols(hm), 300); /* 6 s / 20 ms: the bound of 500 halved once */
	for (unsigned int c = 0; c < heatmap__nr_cols(hm); c++) {
		for (unsigned int r = 0; r < HEATMAP_ROWS; r++)
			nr_cells += heatmap__cell(hm, c, loglin_lower(r, HEATMAP_ROW_BITS)) != 0;
	}
	write_svg(hm, &svg, path);
	text = slurp(path, &len);
	assert_true(len > 1000);
	if (!well_formed(text, why, sizeof(why)))
		fail_msg("not well-formed: %s", why);
	assert_non_null(strstr(text, "<title>runtime &lt;us&gt; &amp; &quot;more&quot; \xef\xbf\xbd"
				     "</title>"));
	assert_null(strstr(text, "<script"));
	assert_non_null(strstr(text, "latency (log scale)"));
	assert_non_null(strstr(text, "count (log scale)"));
	assert_non_null(strstr(text, "60000 values, 300 columns of 20.0 ms"));
	if (have_python())
		run_python(path, nr_cells, 60000, "runtime <us> & \"more\" \xef\xbf\xbd");
	else
		print_message("python3 not found: XML checked by the C parser only\n");
	free(text);
	unlink(path);
	heatmap__delete(hm);
}

/* No values, one value: still a valid document. */
static void t_svg_small(void **state)
{
	struct heatmap *hm = heatmap__new(NULL);
	char path[] = "/tmp/psc_heatmap_XXXXXX", why[128] = "";
	size_t len;
	char *text;

	(void)state;
	assert_non_null(hm);
	write_svg(hm, NULL, path);
	text = slurp(path, &len);
	if (!well_formed(text, why, sizeof(why)))
		fail_msg("not well-formed: %s", why);
	assert_non_null(strstr(text, "no values"));
	if (have_python())
		run_python(path, 0, 0, "heatmap");
	free(text);
	unlink(path);

	heatmap__add(hm, 12345, 4096);
	strcpy(path, "/tmp/psc_heatmap_XXXXXX");
	write_svg(hm, &(struct heatmap_svg){ .title = "t", .ylabel = "size", .unit = "bytes" },
		  path);
	text = slurp(path, &len);
	if (!well_formed(text, why, sizeof(why)))
		fail_msg("not well-formed: %s", why);
	assert_non_null(strstr(text, "size (log scale)"));
	assert_non_null(strstr(text, ", [4.00 KiB, 5.00 KiB): 1</title>"));
	if (have_python())
		run_python(path, 1, 1, "t");
	free(text);
	unlink(path);
	heatmap__delete(hm);
}

/* A time at the end of the clock still lands, and the picture of it is still a document. */
static void t_far_time(void **state)
{
	struct heatmap_opts opts = { .col_ns = 1000, .max_cols = 8 };
	struct heatmap *hm = heatmap__new(&opts);
	char path[] = "/tmp/psc_heatmap_XXXXXX", why[128] = "";
	size_t len;
	char *text;

	(void)state;
	assert_non_null(hm);
	assert_int_equal(heatmap__add(hm, 5000000, 1), 0);
	assert_int_equal(heatmap__add(hm, UINT64_MAX, 1), 0);
	assert_true(heatmap__nr_cols(hm) <= 8);
	assert_int_equal(heatmap__count(hm), 2);
	assert_int_equal(heatmap__cell(hm, 0, 1), 1);
	assert_int_equal(heatmap__cell(hm, heatmap__nr_cols(hm) - 1, 1), 1);
	write_svg(hm, NULL, path);
	text = slurp(path, &len);
	if (!well_formed(text, why, sizeof(why)))
		fail_msg("not well-formed: %s", why);
	free(text);
	unlink(path);
	heatmap__delete(hm);
}

/* The checker itself must be able to fail. */
static void t_checker(void **state)
{
	char why[128];

	(void)state;
	assert_true(well_formed("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; u</a>\n", why,
				sizeof(why)));
	assert_false(well_formed("<a><b></a></b>", why, sizeof(why)));
	assert_false(well_formed("<a>x & y</a>", why, sizeof(why)));
	assert_false(well_formed("<a x=1></a>", why, sizeof(why)));
	assert_false(well_formed("<a></a><b></b>", why, sizeof(why)));
	assert_false(well_formed("<a>1 > 0</a>", why, sizeof(why)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_bounded_columns), cmocka_unit_test(t_rows),
		cmocka_unit_test(t_early),	     cmocka_unit_test(t_svg),
		cmocka_unit_test(t_svg_small),	     cmocka_unit_test(t_far_time),
		cmocka_unit_test(t_checker),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
