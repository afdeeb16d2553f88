/* Unit tests of the exporter's exposition writer (exporter/expo.c): golden files, escaping,
 * negotiation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "expo.h"

/*
 * Golden files live beside this source. __FILE__ is relative to the build root when meson
 * compiles, and the build root is three levels above this executable (tests/unit/unit_expo).
 */
static char *read_golden(const char *name)
{
	char exe[PATH_MAX], src[PATH_MAX * 2], path[PATH_MAX * 3];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *root, *data = NULL;
	FILE *f;
	long len;

	assert_true(n > 0);
	exe[n] = '\0';
	if (__FILE__[0] == '/') {
		snprintf(src, sizeof(src), "%s", __FILE__);
	} else {
		root = dirname(dirname(dirname(exe)));
		snprintf(src, sizeof(src), "%s/%s", root, __FILE__);
	}
	snprintf(path, sizeof(path), "%s/golden/%s", dirname(src), name);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot open golden file %s", path);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	rewind(f);
	data = calloc(1, (size_t)len + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	return data;
}

/* The same sequence of calls, written in either format. */
static char *write_sample(enum expo_format fmt, size_t *len)
{
	struct expo e;
	struct expo_label cpu0 = { "cpu", "0" }, cpu1 = { "cpu", "1" };
	struct expo_label esc[] = {
		{ "path", "C:\\dir" },
		{ "msg", "say \"hi\"\nbye" },
		{ "empty", "" },
	};
	struct expo_label v;

	/* A tiny hint so the buffer has to grow several times. */
	expo_init(&e, fmt, 16);
	expo_family(&e, "node_perf_context_switches", EXPO_COUNTER, "Number of context switches");
	expo_u64(&e, &cpu0, 1, 0);
	expo_u64(&e, &cpu1, 1, UINT64_MAX);
	expo_family(&e, "test_help_escapes", EXPO_GAUGE, "back\\slash \"quote\" new\nline");
	expo_double(&e, esc, 3, 0.1);
	v = (struct expo_label){ "v", "small" };
	expo_double(&e, &v, 1, 1e-9);
	v.value = "nan";
	expo_double(&e, &v, 1, NAN);
	v.value = "pinf";
	expo_double(&e, &v, 1, INFINITY);
	v.value = "ninf";
	expo_double(&e, &v, 1, -INFINITY);
	v.value = "big";
	expo_double(&e, &v, 1, 123456789012345678.0);
	expo_family(&e, "test_time_seconds", EXPO_COUNTER, "Time in seconds");
	expo_ns_as_seconds(&e, &cpu0, 1, 1);
	expo_ns_as_seconds(&e, &cpu1, 1, 12345678901ULL);
	expo_family(&e, "test_plain", EXPO_UNTYPED, "untyped family");
	expo_u64(&e, NULL, 0, 42);
	return expo_finish(&e, len);
}

static void test_golden_text(void **state)
{
	size_t len;
	char *got = write_sample(EXPO_TEXT, &len);
	char *want = read_golden("expo_text.prom");

	assert_non_null(got);
	assert_int_equal(len, strlen(got));
	assert_string_equal(got, want);
	assert_null(strstr(got, "# EOF"));
	free(got);
	free(want);
}

static void test_golden_openmetrics(void **state)
{
	size_t len;
	char *got = write_sample(EXPO_OPENMETRICS, &len);
	char *want = read_golden("expo_openmetrics.prom");

	assert_non_null(got);
	assert_string_equal(got, want);
	/* Exactly one # EOF, and it is the last line. */
	assert_ptr_equal(strstr(got, "# EOF"), got + len - 6);
	free(got);
	free(want);
}

static void test_counter_names(void **state)
{
	struct expo e;
	size_t len;
	char *out;

	/* Text: HELP/TYPE carry _total; OpenMetrics: family without it, samples with it. */
	expo_init(&e, EXPO_TEXT, 0);
	expo_family(&e, "a", EXPO_COUNTER, "h");
	expo_u64(&e, NULL, 0, 1);
	out = expo_finish(&e, &len);
	assert_string_equal(out, "# HELP a_total h\n# TYPE a_total counter\na_total 1\n");
	free(out);

	expo_init(&e, EXPO_OPENMETRICS, 0);
	expo_family(&e, "a", EXPO_COUNTER, "h");
	expo_u64(&e, NULL, 0, 1);
	out = expo_finish(&e, &len);
	assert_string_equal(out, "# HELP a h\n# TYPE a counter\na_total 1\n# EOF\n");
	free(out);

	/* An empty OpenMetrics exposition is still terminated. */
	expo_init(&e, EXPO_OPENMETRICS, 0);
	out = expo_finish(&e, &len);
	assert_string_equal(out, "# EOF\n");
	assert_int_equal(len, 6);
	free(out);
}

static void test_large_output(void **state)
{
	struct expo e;
	char cpu[16];
	struct expo_label l = { "cpu", cpu };
	size_t len;
	char *out;
	int i;

	expo_init(&e, EXPO_TEXT, 0);
	expo_family(&e, "many", EXPO_GAUGE, "many samples");
	for (i = 0; i < 20000; i++) {
		snprintf(cpu, sizeof(cpu), "%d", i);
		expo_u64(&e, &l, 1, (uint64_t)i * 1000);
	}
	out = expo_finish(&e, &len);
	assert_non_null(out);
	assert_int_equal(len, strlen(out));
	assert_non_null(strstr(out, "\nmany{cpu=\"19999\"} 19999000\n"));
	free(out);
}

static void test_names(void **state)
{
	char buf[64];

	assert_true(expo_name_valid("node_perf_sched_sched_switch_total"));
	assert_true(expo_name_valid(":colon:ok"));
	assert_false(expo_name_valid("9starts_with_digit"));
	assert_false(expo_name_valid("has-dash"));
	assert_false(expo_name_valid(""));
	assert_true(expo_label_name_valid("cpu"));
	assert_false(expo_label_name_valid("__reserved"));
	assert_false(expo_label_name_valid("a:b"));

	assert_int_equal(expo_sanitize_name(buf, sizeof(buf), "sched-x.y"), 9);
	assert_string_equal(buf, "sched_x_y");
	assert_int_equal(expo_sanitize_name(buf, sizeof(buf), "9p"), 3);
	assert_string_equal(buf, "_9p");
	/* Truncation reports the length needed, like snprintf. */
	assert_int_equal(expo_sanitize_name(buf, 4, "abcdef"), 6);
	assert_string_equal(buf, "abc");
}

static void test_negotiate(void **state)
{
	const char *ver = NULL;

	/* What Prometheus 2.x sends. */
	assert_int_equal(expo_negotiate("application/openmetrics-text;version=1.0.0,application/"
					"openmetrics-text;version=0.0.1;q=0.75,text/plain;"
					"version=0.0.4;q=0.5,*/*;q=0.1",
					&ver),
			 EXPO_OPENMETRICS);
	assert_string_equal(ver, "1.0.0");
	assert_int_equal(expo_negotiate("application/openmetrics-text; version=0.0.1", &ver),
			 EXPO_OPENMETRICS);
	assert_string_equal(ver, "0.0.1");
	assert_int_equal(expo_negotiate("application/openmetrics-text", &ver), EXPO_OPENMETRICS);
	assert_string_equal(ver, "1.0.0");
	assert_int_equal(expo_negotiate(NULL, &ver), EXPO_TEXT);
	assert_int_equal(expo_negotiate("", &ver), EXPO_TEXT);
	assert_int_equal(expo_negotiate("*/*", &ver), EXPO_TEXT);
	assert_int_equal(expo_negotiate("text/plain", &ver), EXPO_TEXT);
	assert_int_equal(
		expo_negotiate("application/openmetrics-text;q=0.3, text/plain;q=0.5", &ver),
		EXPO_TEXT);
	assert_int_equal(expo_negotiate("application/openmetrics-text;q=0", &ver), EXPO_TEXT);
	/* A malformed or out-of-range q never wins; unknown versions are not OpenMetrics we speak.
	 */
	assert_int_equal(expo_negotiate("application/openmetrics-text;q=abc", &ver), EXPO_TEXT);
	assert_int_equal(expo_negotiate("application/openmetrics-text;q=7", &ver), EXPO_TEXT);
	assert_int_equal(expo_negotiate("application/openmetrics-text;version=2.0.0", &ver),
			 EXPO_TEXT);
	assert_int_equal(expo_negotiate(",,;;==,", &ver), EXPO_TEXT);
	assert_string_equal(expo_content_type(EXPO_TEXT, NULL),
			    "text/plain; version=0.0.4; charset=utf-8");
	assert_string_equal(expo_content_type(EXPO_OPENMETRICS, "0.0.1"),
			    "application/openmetrics-text; version=0.0.1; charset=utf-8");
}

static void test_gzip(void **state)
{
	assert_true(expo_accepts_gzip("gzip"));
	assert_true(expo_accepts_gzip("deflate, gzip;q=0.5"));
	assert_true(expo_accepts_gzip(" GZIP "));
	assert_true(expo_accepts_gzip("*"));
	assert_false(expo_accepts_gzip(NULL));
	assert_false(expo_accepts_gzip(""));
	assert_false(expo_accepts_gzip("identity"));
	assert_false(expo_accepts_gzip("gzip;q=0"));
	assert_false(expo_accepts_gzip("gzip;q=0, *"));
	assert_false(expo_accepts_gzip("*;q=0"));
	assert_false(expo_accepts_gzip("gzipx"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_text),   cmocka_unit_test(test_golden_openmetrics),
		cmocka_unit_test(test_counter_names), cmocka_unit_test(test_large_output),
		cmocka_unit_test(test_names),	      cmocka_unit_test(test_negotiate),
		cmocka_unit_test(test_gzip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
