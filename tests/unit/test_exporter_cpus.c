/* Unit tests of --collector.perf.cpus (exporter/cpus.c): node_exporter's syntax, strides, strict
 * checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <perfscope/cpumap.h>

#include "cpus.h"

/* Parses syntax only (any machine) and compares with the expected CPUs. */
static void expect_cpus(const char *flag, const int *want, int nr)
{
	char err[512];
	struct psc_cpumap *map = exporter_parse_cpus(flag, false, err, sizeof(err));

	if (!map)
		fail_msg("'%s' refused: %s", flag, err);
	assert_int_equal(psc_cpumap__nr(map), nr);
	for (int i = 0; i < nr; i++)
		assert_int_equal(psc_cpumap__cpu(map, i), want[i]);
	psc_cpumap__put(map);
}

static void expect_error(const char *flag, const char *needle)
{
	char err[512] = "";
	struct psc_cpumap *map = exporter_parse_cpus(flag, false, err, sizeof(err));

	if (map)
		fail_msg("'%s' accepted", flag);
	if (!strstr(err, needle))
		fail_msg("error for '%s' is '%s', expected it to mention '%s'", flag, err, needle);
	/* Every message names the flag so the user knows which option is wrong. */
	assert_non_null(strstr(err, "--collector.perf.cpus="));
}

static void test_lists(void **state)
{
	expect_cpus("2-6", (int[]){ 2, 3, 4, 5, 6 }, 5);
	expect_cpus("0", (int[]){ 0 }, 1);
	expect_cpus("3,1", (int[]){ 1, 3 }, 2);
	expect_cpus("0-1,4", (int[]){ 0, 1, 4 }, 3);
}

static void test_strides(void **state)
{
	/* A, A+S, A+2S ... <= B: what node_exporter's perfCPUFlagToCPUs computes. */
	expect_cpus("0-7:2", (int[]){ 0, 2, 4, 6 }, 4);
	expect_cpus("1-10:5", (int[]){ 1, 6 }, 2);
	expect_cpus("1-7:3", (int[]){ 1, 4, 7 }, 3);
	expect_cpus("0-3:1", (int[]){ 0, 1, 2, 3 }, 4);
	expect_cpus("5-5:4", (int[]){ 5 }, 1);
	expect_cpus("0-8:4,1", (int[]){ 0, 1, 4, 8 }, 4);
}

static void test_errors(void **state)
{
	/* node_exporter loops forever on a zero stride. */
	expect_error("0-7:0", "stride");
	expect_error("0-7:", "stride");
	expect_error("0-7:-1", "stride");
	/* node_exporter silently collects nothing for a range that goes down. */
	expect_error("7-0", "goes down");
	/* node_exporter reports these series twice, which fails the whole scrape. */
	expect_error("1,1", "twice");
	expect_error("0-3,2", "twice");
	expect_error("a", "expected a CPU number");
	expect_error("1-", "expected the last CPU");
	expect_error("-1", "expected a CPU number");
	expect_error("1,,2", "expected a CPU number");
	expect_error("1;2", "unexpected ';'");
	expect_error(" 1", "expected a CPU number");
	expect_error("99999", "expected a CPU number");
}

/* The caret points into the flag shown on a line of its own (it was under the wrong column). */
static void test_caret(void **state)
{
	char err[512], small[48];

	assert_null(exporter_parse_cpus("0-7:0", false, err, sizeof(err)));
	assert_string_equal(err, "--collector.perf.cpus=0-7:0: expected a stride of at least 1 "
				 "after ':'\n"
				 "  --collector.perf.cpus=0-7:0\n"
				 "                            ^");
	/* no room for the caret: the message alone */
	assert_null(exporter_parse_cpus("0-7:0", false, small, sizeof(small)));
	assert_null(strchr(small, '\n'));
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_true(!strncmp(small, "--collector.perf.cpus=0-7:0: expected a stride", 46));
}

static void test_online(void **state)
{
	struct psc_cpumap *online = psc_cpumap__new_online();
	char flag[32], err[512];
	struct psc_cpumap *map;
	int last;

	assert_non_null(online);
	/* Empty: every online CPU. */
	map = exporter_parse_cpus("", true, err, sizeof(err));
	assert_non_null(map);
	assert_int_equal(psc_cpumap__nr(map), psc_cpumap__nr(online));
	psc_cpumap__put(map);
	map = exporter_parse_cpus(NULL, true, err, sizeof(err));
	assert_non_null(map);
	psc_cpumap__put(map);

	/* The first online CPU is accepted; one past the last online one is refused. */
	snprintf(flag, sizeof(flag), "%d", psc_cpumap__cpu(online, 0));
	map = exporter_parse_cpus(flag, true, err, sizeof(err));
	assert_non_null(map);
	psc_cpumap__put(map);
	last = psc_cpumap__cpu(online, psc_cpumap__nr(online) - 1);
	snprintf(flag, sizeof(flag), "%d", last + 1);
	map = exporter_parse_cpus(flag, true, err, sizeof(err));
	assert_null(map);
	assert_non_null(strstr(err, "not online"));
	psc_cpumap__put(online);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists),
		cmocka_unit_test(test_strides),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_caret),
		cmocka_unit_test(test_online),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
