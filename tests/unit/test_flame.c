/* Unit tests of common/stackfiles/flame.c: folded stacks counted once each, collisions, the
 * written file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "flame.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	static char buf[1 << 16];
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void t_counts_and_order(void **state)
{
	struct flame *f = flame__new();
	char path[] = "/tmp/psc_flame_XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_non_null(f);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(flame__add(f, "b;main;work", 11, 1), 0);
	assert_int_equal(flame__add(f, "a;main", 6, 2), 0);
	assert_int_equal(flame__add(f, "b;main;work", 11, 3), 0);
	/* only len bytes count: the rest of the buffer is not part of the stack */
	assert_int_equal(flame__add(f, "a;mainXXX", 6, 1), 0);
	assert_int_equal(flame__nr_stacks(f), 2);
	assert_int_equal(flame__nr_samples(f), 7);
	assert_int_equal(flame__write(f, path), 0);
	assert_string_equal(slurp(path), "a;main 3\nb;main;work 4\n");
	unlink(path);
	flame__delete(f);
}

/* Many distinct stacks: every one kept apart, whatever their hashes do. */
static void t_many(void **state)
{
	struct flame *f = flame__new();
	char s[64];
	uint64_t total = 0;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		int n = snprintf(s, sizeof(s), "comm;f%d;g%d", i % 977, i);

		assert_int_equal(flame__add(f, s, (size_t)n, (uint64_t)i % 3 + 1), 0);
		total += (uint64_t)i % 3 + 1;
	}
	for (int i = 0; i < 20000; i += 7) {
		int n = snprintf(s, sizeof(s), "comm;f%d;g%d", i % 977, i);

		assert_int_equal(flame__add(f, s, (size_t)n, 1), 0);
		total++;
	}
	assert_int_equal(flame__nr_stacks(f), 20000);
	assert_int_equal(flame__nr_samples(f), total);
	flame__delete(f);
}

static void t_unwritable(void **state)
{
	struct flame *f = flame__new();

	(void)state;
	assert_int_equal(flame__add(f, "x", 1, 1), 0);
	assert_true(flame__write(f, "/nonexistent-dir/x.folded") < 0);
	flame__delete(f);
	flame__delete(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_counts_and_order),
		cmocka_unit_test(t_many),
		cmocka_unit_test(t_unwritable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
