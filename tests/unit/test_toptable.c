/* Unit tests of top's table engine (common/stats/toptable*.c), driven without a profiler. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "toptable.h"

static char *contents(int fd)
{
	static char buf[1 << 14];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

static double at_two(void *ctx)
{
	return 2.0;
}

static void hex(void *ctx, uint64_t key, char *buf, size_t len)
{
	snprintf(buf, len, "%#llx", (unsigned long long)key);
}

static void add(struct toptable *t, uint64_t key, const char *name, uint64_t a, uint64_t b)
{
	bool created;
	struct toptable_row *r = toptable__row(t, key, &created);

	assert_non_null(r);
	if (created)
		toptable_row__set_name(r, name, strlen(name));
	r->events++;
	r->vals[0] += a;
	r->vals[1] += b;
}

static void t_sorted(void **state)
{
	struct toptable t = { 0 };
	struct keymap_entry *rows;
	size_t n;

	/* sorted by the second column (top-by), then the first, then events, then key */
	assert_int_equal(toptable__add_col(&t, "bytes", false), 0);
	assert_int_equal(toptable__add_col(&t, "calls", true), 1);
	assert_int_equal(toptable__start(&t), 0);
	assert_int_equal(t.order[0], 1);
	assert_int_equal(t.cols[0].width, 12);
	add(&t, 7, "seven", 10, 1);
	add(&t, 3, "three", 50, 2);
	add(&t, 0, "zero", 10, 1);
	add(&t, 5, "five", 20, 1);
	add(&t, 0, "zero", 0, 0); /* key 0 is a key: two events, 10 and 1 */
	rows = toptable__sorted(&t, &n);
	assert_non_null(rows);
	assert_int_equal(n, 4);
	assert_int_equal(rows[0].key, 3);
	assert_int_equal(rows[1].key, 5);
	assert_int_equal(rows[2].key, 0); /* ties with 7 on the columns; more events */
	assert_int_equal(rows[3].key, 7);
	free(rows);
	toptable__clear(&t);
	assert_int_equal(toptable__nr(&t), 0);
	toptable__exit(&t);
}

static void t_print(void **state)
{
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	struct toptable t = { 0 };
	struct keymap_entry *rows;
	struct toptable_show sh = {
		.key_title = "PID",
		.have_name = true,
		.heading = "totals",
		.elapsed = at_two,
		.final = true,
	};
	struct json j;
	char *text;
	size_t n;

	assert_non_null(o);
	assert_int_equal(toptable__add_col(&t, "a-rather-long-title", true), 0);
	assert_int_equal(toptable__add_col(&t, "b", false), 1);
	assert_int_equal(toptable__start(&t), 0);
	add(&t, 42, "dd", 5, 6);
	add(&t, 43, "cat", 1, 2);
	rows = toptable__sorted(&t, &n);
	assert_non_null(rows);
	toptable__print_text(&t, o, rows, 1, n, &sh);
	assert_int_equal(out__flush(o), 0);
	text = strchr(contents(fd), ' '); /* after the time of day */
	assert_non_null(text);
	assert_string_equal(
		text, " totals: 2 rows, top 1 shown, 2.0 s\n"
		      "     PID COMM             a-rather-long-title            b     EVENTS\n"
		      "      42 dd                                 5            6          1\n"
		      "\n");
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
	sh.key_text = hex;
	toptable__print_json(&t, &j, o, rows, n, &sh);
	assert_int_equal(out__flush(o), 0);
	assert_string_equal(
		contents(fd),
		"{\"time\":2,\"final\":true,\"key\":\"0x2a\",\"name\":\"dd\",\"columns\":"
		"{\"a-rather-long-title\":5,\"b\":6},\"events\":1}\n"
		"{\"time\":2,\"final\":true,\"key\":\"0x2b\",\"name\":\"cat\",\"columns\":"
		"{\"a-rather-long-title\":1,\"b\":2},\"events\":1}\n");
	free(rows);
	toptable__exit(&t);
	out__delete(o);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_sorted),
		cmocka_unit_test(t_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
