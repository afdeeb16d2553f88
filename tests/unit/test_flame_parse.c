/* Unit tests of common/stackfiles/flame_parse.c: folded files of any tool, blank and bad lines
 * counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "flame.h"

struct found {
	const char *text;
	uint64_t count;
};

static int find_cb(void *ctx, const char *text, size_t len, uint64_t count)
{
	struct found *f = ctx;

	if (strlen(text) != len)
		return -1;
	if (!strcmp(text, f->text)) {
		f->count = count;
		return 1;
	}
	return 0;
}

static uint64_t count_of(struct flame *f, const char *text)
{
	struct found fd = { text, 0 };

	flame__for_each(f, find_cb, &fd);
	return fd.count;
}

static void t_lines(void **state)
{
	static const char text[] = "perf;main;work 10\n"
				   "\n"
				   "perf;main;work 5\r\n"
				   "   \t\n"
				   "bash;[unknown];0x1234 2\n"
				   "no count here\n"
				   "nocount\n"
				   "x;y 1.5\n"
				   " 7\n"
				   "x;y 0\n"
				   "java;a b;c  3\n"
				   "last;line 4";
	struct flame_parse_stats st = { 0 };
	struct flame *f = flame__new();

	(void)state;
	assert_int_equal(flame__parse(f, text, sizeof(text) - 1, &st), 0);
	assert_int_equal(st.lines, 12);
	assert_int_equal(st.blank, 2);
	assert_int_equal(st.bad, 4); /* "no count here", "nocount", "1.5", " 7" */
	assert_int_equal(st.first_bad_line, 6);
	assert_non_null(st.first_bad_why);
	assert_int_equal(st.zero, 1);
	assert_int_equal(flame__nr_stacks(f), 4);
	assert_int_equal(flame__nr_samples(f), 15 + 2 + 3 + 4);
	assert_int_equal(count_of(f, "perf;main;work"), 15);
	assert_int_equal(count_of(f, "java;a b;c"), 3); /* spaces inside frames stay */
	assert_int_equal(count_of(f, "last;line"), 4);
	flame__delete(f);
}

static void t_overflow(void **state)
{
	static const char text[] = "a 18446744073709551615\nb 18446744073709551616\nc 1\n";
	struct flame_parse_stats st = { 0 };
	struct flame *f = flame__new();

	(void)state;
	assert_int_equal(flame__parse(f, text, sizeof(text) - 1, &st), 0);
	assert_int_equal(st.bad, 2); /* b: too large; c: the sum would wrap */
	assert_int_equal(flame__nr_samples(f), UINT64_MAX);
	flame__delete(f);
}

/* A stream read in blocks: lines across block ends, one longer than the first buffer. */
static void t_read_file(void **state)
{
	struct flame_parse_stats st = { 0 };
	struct flame *f = flame__new();
	FILE *tmp = tmpfile();
	char *longname = malloc(200000);

	(void)state;
	memset(longname, 'x', 199999);
	longname[199999] = '\0';
	for (int i = 0; i < 10000; i++)
		fprintf(tmp, "comm;main;f%d %d\n\n", i % 1000, 1);
	fprintf(tmp, "comm;%s 7\nbad line\nend 1", longname);
	rewind(tmp);
	assert_int_equal(flame__read_file(f, tmp, &st), 0);
	assert_int_equal(st.lines, 20003);
	assert_int_equal(st.blank, 10000);
	assert_int_equal(st.bad, 1);
	assert_int_equal(st.first_bad_line, 20002);
	assert_int_equal(flame__nr_stacks(f), 1002);
	assert_int_equal(flame__nr_samples(f), 10008);
	assert_int_equal(count_of(f, "comm;main;f7"), 10);
	fclose(tmp);
	free(longname);
	flame__delete(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_lines),
		cmocka_unit_test(t_overflow),
		cmocka_unit_test(t_read_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
