/* Unit tests of common/leak's report: a leak whose free may be an event the kernel dropped says so
 * on its own line (text) and object (JSON). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "leak.h"

/* Everything written to a memfd, as a string. */
static char *contents(int fd)
{
	static char buf[1 << 16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

/* One live allocation of 100 bytes, reported with `dropped` events the kernel dropped. */
static char *report(bool json, uint64_t dropped)
{
	struct leak *lk = leak__new(16);
	int fd = memfd_create("leak", 0);
	struct out *o = out__new(fd, 0);
	struct json j;
	struct leak_report r = { .now = 10, .final = true, .json = json, .dropped = dropped };
	char *s;

	assert_non_null(lk);
	assert_non_null(o);
	assert_int_equal(leak__alloc(lk, 0x1000, 100, 0, 1, 0, 7, 7), 0);
	assert_int_equal(leak__report(lk, o, &j, &r, NULL, NULL), 0);
	assert_int_equal(out__flush(o), 0);
	s = strdup(contents(fd));
	out__delete(o);
	close(fd);
	leak__delete(lk);
	return s;
}

static void test_text_marks(void **state)
{
	char *s = report(false, 0);

	(void)state;
	assert_non_null(strstr(s, "1 allocation, 100 bytes not freed"));
	assert_null(strstr(s, "may be freed"));
	free(s);
	s = report(false, 5);
	assert_non_null(strstr(s,
			       "100 bytes not freed, by [no stack], from (may be freed: 5 events "
			       "dropped by the kernel):\n"));
	free(s);
}

static void test_json_marks(void **state)
{
	char *s = report(true, 0);

	(void)state;
	assert_null(strstr(s, "free_maybe_lost"));
	free(s);
	s = report(true, 5);
	assert_non_null(strstr(s, "\"free_maybe_lost\":5"));
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_marks),
		cmocka_unit_test(test_json_marks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
