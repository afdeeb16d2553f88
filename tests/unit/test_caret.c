/* Unit tests of common/caret: the input and its caret line, labels, edges, tabs and UTF-8, the
 * buffer variant's truncation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "caret.h"

static char *printed(const char *indent, const char *label, const char *text, int pos)
{
	static char out[256];
	char *mem = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&mem, &size);

	assert_non_null(f);
	caret__print(f, indent, label, text, pos);
	fclose(f);
	snprintf(out, sizeof(out), "%s", mem);
	free(mem);
	return out;
}

static void t_print(void **state)
{
	(void)state;
	assert_string_equal(printed("  ", NULL, "cycles,bogus", 7), "  cycles,bogus\n         ^\n");
	assert_string_equal(printed("  ", NULL, "abc", 0), "  abc\n  ^\n");
	/* just past the end: something is missing there */
	assert_string_equal(printed("  ", NULL, "a &&", 4), "  a &&\n      ^\n");
	/* what was typed before the text shifts the caret */
	assert_string_equal(printed("  ", "-C ", "0-x", 2), "  -C 0-x\n       ^\n");
	assert_string_equal(printed("", "--flag=", "1:0", 2), "--flag=1:0\n         ^\n");
	/* nothing to point at */
	assert_string_equal(printed("  ", NULL, "abc", 4), "");
	assert_string_equal(printed("  ", NULL, "abc", -1), "");
	assert_string_equal(printed("  ", NULL, NULL, 0), "");
}

/* A tab stays a tab and a UTF-8 character takes one column, so the caret is under its byte. */
static void t_columns(void **state)
{
	(void)state;
	assert_string_equal(printed("  ", NULL, "a\tb==1", 2), "  a\tb==1\n   \t^\n");
	/* "é" is two bytes, one column */
	assert_string_equal(printed("  ", NULL, "comm==\"\xc3\xa9t\xc3\xa9\" x", 14),
			    "  comm==\"\xc3\xa9t\xc3\xa9\" x\n" /* 2 + 12 columns */
			    "              ^\n");
}

static void t_snprint(void **state)
{
	char buf[64];

	(void)state;
	assert_int_equal(caret__snprint(buf, sizeof(buf), "  ", "--x=", "0-1:0", 4),
			 (int)strlen("  --x=0-1:0\n          ^"));
	assert_string_equal(buf, "  --x=0-1:0\n          ^");
	/* cut to the buffer, the full length returned */
	assert_int_equal(caret__snprint(buf, 8, "  ", "--x=", "0-1:0", 4),
			 (int)strlen("  --x=0-1:0\n          ^"));
	assert_string_equal(buf, "  --x=0");
	strcpy(buf, "old");
	assert_int_equal(caret__snprint(buf, sizeof(buf), "  ", NULL, "abc", 9), 0);
	assert_string_equal(buf, "");
	assert_int_equal(caret__snprint(NULL, 0, "", NULL, "abc", 1), (int)strlen("abc\n ^"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_print),
		cmocka_unit_test(t_columns),
		cmocka_unit_test(t_snprint),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
