/* Unit tests of common/stackfiles/flame_svg.c: what a write draws and leaves out, the kinds,
 * escaping, errors.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flame_svg.h"

/* The SVG of f (or the diff of b to f) as a string; *ret the write's return. */
static char *render(const struct flame *b, const struct flame *f, const struct flame_svg_opts *o,
		    struct flame_svg_stats *st, int *ret)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	*ret = b ? flame_svg__write_diff(b, f, o, out, st) : flame_svg__write(f, o, out, st);
	assert_int_equal(fclose(out), 0);
	return buf;
}

static struct flame *known(void)
{
	static const char text[] = "prog;main;work;hot_a 30\nprog;main;work;hot_b 10\n"
				   "prog;main;sys_read_[k];do_syscall_64_[k] 5\n"
				   "prog;main;[unknown];0x1234 2\n";
	struct flame *f = flame__new();

	assert_non_null(f);
	assert_int_equal(flame__parse(f, text, sizeof(text) - 1, NULL), 0);
	return f;
}

static void t_known(void **state)
{
	struct flame *f = known();
	struct flame_svg_stats st = { 0 };
	struct flame_svg_opts o = { .title = "T", .subtitle = "S" };
	char *svg;
	int ret;

	(void)state;
	svg = render(NULL, f, &o, &st, &ret);
	assert_int_equal(ret, 0);
	/* all, prog, main, work, hot_a, hot_b, sys_read, do_syscall_64, [unknown], 0x1234 */
	assert_int_equal(st.frames, 10);
	assert_int_equal(st.drawn, 10);
	assert_int_equal(st.elided, 0);
	assert_int_equal(st.depth, 4);
	assert_non_null(strstr(svg, "<title>hot_a (30 samples, 63.83%)</title>"));
	/* the kernel suffix is not shown, the kind is */
	assert_non_null(strstr(svg, "<title>do_syscall_64 (5 samples"));
	assert_null(strstr(svg, "_[k]"));
	assert_non_null(strstr(svg, ">T</text>"));
	assert_non_null(strstr(svg, ">S \xe2\x80\x94 47 samples, 4 stacks;"));
	assert_non_null(strstr(svg, "</svg>\n"));
	free(svg);
	flame__delete(f);
}

static void t_elided_and_budget(void **state)
{
	struct flame *f = flame__new();
	struct flame_svg_stats st = { 0 };
	struct flame_svg_opts o = { .max_frames = 50 };
	char s[64], s2[1024], *svg;
	int ret, n;

	(void)state;
	/* one big stack and 1000 tiny ones: at 1200 px, a count of 1 in 1,001,000 is 0.001 px */
	assert_int_equal(flame__add(f, "a;b", 3, 1000000), 0);
	for (int i = 0; i < 1000; i++) {
		n = snprintf(s, sizeof(s), "a;tiny%d", i);
		assert_int_equal(flame__add(f, s, (size_t)n, 1), 0);
	}
	svg = render(NULL, f, NULL, &st, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(st.frames, 1003);
	assert_int_equal(st.drawn, 3);
	assert_int_equal(st.elided, 1000);
	assert_non_null(strstr(svg, "3 frames drawn, 1000 narrower than 0.1 px elided"));
	free(svg);
	/* a budget below what is wide enough: the threshold rises */
	o.min_width = 0.0000001;
	svg = render(NULL, f, &o, &st, &ret);
	assert_int_equal(ret, 0);
	assert_true(st.drawn <= 50);
	assert_true(st.min_width > o.min_width);
	free(svg);
	flame__delete(f);
	/* every frame of a 100-deep stack has all 2^64 - 1 samples: the cap still holds (fuzz) */
	f = flame__new();
	n = 0;
	for (int i = 0; i < 100; i++)
		n += snprintf(s2 + n, sizeof(s2) - (size_t)n, "%sf%d", i ? ";" : "", i);
	assert_int_equal(flame__add(f, s2, (size_t)n, UINT64_MAX), 0);
	svg = render(NULL, f, &o, &st, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(st.drawn, 50);
	assert_int_equal(st.elided, 51);
	free(svg);
	flame__delete(f);
}

static void t_reverse_and_diff(void **state)
{
	struct flame *f = known(), *b = flame__new();
	struct flame_svg_stats st = { 0 };
	struct flame_svg_opts o = { .reverse = true };
	char *svg;
	int ret;

	(void)state;
	svg = render(NULL, f, &o, &st, &ret);
	assert_int_equal(ret, 0);
	/* leaf-first: hot_a, hot_b, do_syscall_64, 0x1234 under all; then their callers */
	assert_int_equal(st.frames, 1 + 4 * 4);
	assert_non_null(strstr(svg, "Icicle Graph (callers)"));
	free(svg);
	assert_int_equal(flame__add(b, "prog;main;work;hot_a", 20, 10), 0);
	assert_int_equal(flame__add(b, "prog;main;gone", 14, 10), 0);
	svg = render(b, f, NULL, &st, &ret);
	assert_int_equal(ret, 0);
	/* hot_a: 30 of 47 after, 10 of 20 before */
	assert_non_null(
		strstr(svg, "hot_a (30 samples, 63.83%; before 10, 50.00%; +13.83 points)"));
	assert_non_null(strstr(svg, "1 only before (no width to draw)"));
	assert_null(strstr(svg, "<title>gone"));
	free(svg);
	flame__delete(b);
	flame__delete(f);
}

static void t_escaping(void **state)
{
	struct flame *f = flame__new();
	struct flame_svg_stats st = { 0 };
	char *svg;
	int ret;

	(void)state;
	/* markup, a control character, a lone continuation byte, an overlong '/', a surrogate */
	assert_int_equal(flame__add(f, "a&<b>\"\x01;\x80x;\xc0\xaf;\xed\xa0\x80", 17, 1), 0);
	svg = render(NULL, f, NULL, &st, &ret);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(svg, "<title>a&amp;&lt;b&gt;&quot;\xef\xbf\xbd (1 samples"));
	assert_non_null(strstr(svg, "<title>\xef\xbf\xbdx (1"));
	assert_non_null(strstr(svg, "<title>\xef\xbf\xbd\xef\xbf\xbd (1"));
	assert_non_null(strstr(svg, "<title>\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd (1"));
	free(svg);
	flame__delete(f);
}

static void t_empty_and_errors(void **state)
{
	struct flame *f = flame__new();
	struct flame_svg_stats st = { 0 };
	char *svg;
	FILE *ro;
	int ret;

	(void)state;
	svg = render(NULL, f, NULL, &st, &ret);
	assert_int_equal(ret, 0);
	assert_int_equal(st.drawn, 0);
	assert_non_null(strstr(svg, "</svg>"));
	free(svg);
	/* a stream that cannot be written */
	ro = fopen("/dev/null", "r");
	assert_non_null(ro);
	assert_int_equal(flame__add(f, "x", 1, 1), 0);
	assert_int_equal(flame_svg__write(f, NULL, ro, NULL), -EIO);
	fclose(ro);
	flame__delete(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_known),
		cmocka_unit_test(t_elided_and_budget),
		cmocka_unit_test(t_reverse_and_diff),
		cmocka_unit_test(t_escaping),
		cmocka_unit_test(t_empty_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
