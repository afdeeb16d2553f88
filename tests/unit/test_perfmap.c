/* Unit tests of common/symbols/perfmap: a fake /proc with a process whose perf map is in its own
 * root under its namespace pid, lines appended later, a line being written, a new file. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "perfmap.h"

static char root[256];

static void put(const char *rel, const char *text, const char *mode)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, mode);
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	char cmd[600];

	snprintf(root, sizeof(root), "/tmp/perfmap_test.XXXXXX");
	assert_non_null(mkdtemp(root));
	snprintf(cmd, sizeof(cmd), "mkdir -p %s/4242/root/tmp %s/77/root/tmp", root, root);
	assert_int_equal(system(cmd), 0);
	/* pid 4242 is 7 in its container: its map is perf-7.map in its own /tmp */
	put("4242/status", "Name:\tnode\nNSpid:\t4242\t7\n", "w");
	put("4242/root/tmp/perf-7.map", "1000 100 LazyCompile:~main app.js:1\n2000 10 jit_two\n",
	    "w");
	put("77/status", "Name:\tx\nNSpid:\t77\n", "w");
	return 0;
}

static int teardown(void **state)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
	return system(cmd) ? -1 : 0;
}

static void test_container_map(void **state)
{
	struct perfmaps *pm = perfmaps__new(root);
	const char *name, *dso;
	uint64_t start, maps, syms;

	assert_non_null(pm);
	assert_int_equal(perfmaps__find(pm, 4242, 0x1050, &name, &start, &dso), 0);
	assert_string_equal(name, "LazyCompile:~main app.js:1");
	assert_int_equal(start, 0x1000);
	assert_string_equal(dso, "perf-7.map");
	assert_int_equal(perfmaps__find(pm, 4242, 0x200f, &name, &start, &dso), 0);
	assert_string_equal(name, "jit_two");
	/* past the end of a symbol (sizes are hex too), in a map that exists: not remembered as a
	 * miss */
	assert_int_equal(perfmaps__find(pm, 4242, 0x2010, &name, &start, &dso), -ENODATA);
	/* no map at all */
	assert_int_equal(perfmaps__find(pm, 77, 0x1000, &name, &start, &dso), -ENOENT);
	perfmaps__stats(pm, &maps, &syms);
	assert_int_equal(syms, 2);
	perfmaps__delete(pm);
}

static void test_grows(void **state)
{
	struct perfmaps *pm = perfmaps__new(root);
	const char *name, *dso, *first;
	uint64_t start;

	assert_int_equal(perfmaps__find(pm, 4242, 0x1000, &first, &start, &dso), 0);
	assert_int_equal(perfmaps__find(pm, 4242, 0x3000, &name, &start, &dso), -ENODATA);
	/* appended, the last line half written: read up to the whole lines */
	put("4242/root/tmp/perf-7.map", "3000 20 jit_three\n3100 2", "a");
	assert_int_equal(perfmaps__find(pm, 4242, 0x3010, &name, &start, &dso), 0);
	assert_string_equal(name, "jit_three");
	assert_int_equal(perfmaps__find(pm, 4242, 0x3100, &name, &start, &dso), -ENODATA);
	put("4242/root/tmp/perf-7.map", "0 jit_four\n1000 8 main_recompiled\n", "a");
	assert_int_equal(perfmaps__find(pm, 4242, 0x3101, &name, &start, &dso), 0);
	assert_string_equal(name, "jit_four");
	/* a later line for the same address wins; the name handed out before stays valid */
	assert_int_equal(perfmaps__find(pm, 4242, 0x1004, &name, &start, &dso), 0);
	assert_string_equal(name, "main_recompiled");
	/* past the new line's end, the older, longer one still holds the address */
	assert_int_equal(perfmaps__find(pm, 4242, 0x10ff, &name, &start, &dso), 0);
	assert_string_equal(name, "LazyCompile:~main app.js:1");
	assert_string_equal(first, "LazyCompile:~main app.js:1");
	perfmaps__delete(pm);
}

static void test_new_file(void **state)
{
	struct perfmaps *pm = perfmaps__new(root);
	const char *name, *dso;
	uint64_t start;
	char path[512], tmp[600];

	assert_int_equal(perfmaps__find(pm, 4242, 0x1000, &name, &start, &dso), 0);
	/* the pid's process is another one now: a new file, read from its start */
	snprintf(path, sizeof(path), "%s/4242/root/tmp/perf-7.map", root);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	put("4242/root/tmp/perf-7.map.new", "5000 10 other\n", "w");
	assert_int_equal(rename(tmp, path), 0);
	assert_int_equal(perfmaps__find(pm, 4242, 0x5004, &name, &start, &dso), 0);
	assert_string_equal(name, "other");
	perfmaps__forget(pm, 4242);
	assert_int_equal(perfmaps__find(pm, 4242, 0x5004, &name, &start, &dso), 0);
	perfmaps__delete(pm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_map),
		cmocka_unit_test(test_grows),
		cmocka_unit_test(test_new_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
