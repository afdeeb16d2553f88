/* Unit tests of the aggregation engine (common/stats/aggr) on a made-up sysfs tree. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include <perfscope/perfscope.h>

#include "aggr.h"

#include "fake_topology.h"

/* The tree of fake_topology.h, CPUs listed out of order in the tests; CPU 9 has no topology. */
static int make_tree(void **state)
{
	fake_topology__make("psc_aggr", -1);
	return 0;
}

static struct psc_cpumap *cpus(const char *list)
{
	struct psc_parse_error err = { .pos = -1 };
	struct psc_cpumap *m = psc_cpumap__parse_syntax(list, &err);

	assert_non_null(m);
	return m;
}

static void t_global_cpu(void **state)
{
	struct psc_cpumap *m = cpus("1,3,6");
	struct aggr a;
	int bad = -1;

	assert_int_equal(aggr__init(&a, AGGR_GLOBAL, m, root, &bad), 0);
	assert_int_equal(a.nr_units, 1);
	assert_int_equal(a.units[0].nr_cpus, 3);
	assert_int_equal(aggr__unit(&a, 6), 0);
	assert_true(aggr__covers(&a, m, 0));
	/* trigger's machine: every CPU in its one unit, which has no CPU of its own */
	assert_int_equal(aggr__find(&a, 4), 0);
	assert_int_equal(aggr__unit_cpu(&a, 0), -1);
	aggr__exit(&a);

	assert_int_equal(aggr__init(&a, AGGR_CPU, m, root, &bad), 0);
	assert_int_equal(a.nr_units, 3);
	assert_int_equal(a.units[2].cpu, 6);
	assert_int_equal(aggr__unit(&a, 3), 1);
	assert_int_equal(aggr__unit(&a, 99), 0); /* outside the map: the first unit */
	/* trigger's per-CPU units: a CPU outside the map is in none */
	assert_int_equal(aggr__find(&a, 3), 1);
	assert_int_equal(aggr__find(&a, 4), -1);
	assert_int_equal(aggr__find(&a, 99), -1);
	assert_int_equal(aggr__unit_cpu(&a, 2), 6);
	assert_true(aggr__covers(&a, m, 0));
	aggr__exit(&a);
	psc_cpumap__put(m);
}

static void t_core_socket(void **state)
{
	struct psc_cpumap *m = cpus("7,0,5,2,1"), *pmu = cpus("0,5");
	struct aggr a;
	int bad = -1;

	/* cores in perf's order: S0-C0 {0,1}, S0-C1 {2}, S1-C0 {5}, S1-C1 {7} */
	assert_int_equal(aggr__init(&a, AGGR_CORE, m, root, &bad), 0);
	assert_int_equal(a.nr_units, 4);
	assert_true(a.units[0].socket == 0 && a.units[0].core == 0 && a.units[0].nr_cpus == 2);
	assert_true(a.units[1].socket == 0 && a.units[1].core == 1 && a.units[1].nr_cpus == 1);
	assert_true(a.units[3].socket == 1 && a.units[3].core == 1 && a.units[3].cpu == -1);
	assert_int_equal(aggr__unit(&a, 1), 0);
	assert_int_equal(aggr__unit(&a, 5), 2);
	/* a PMU counting on CPUs 0 and 5 only has no line for the cores without them */
	assert_true(aggr__covers(&a, pmu, 0));
	assert_false(aggr__covers(&a, pmu, 1));
	assert_true(aggr__covers(&a, pmu, 2));
	assert_false(aggr__covers(&a, pmu, 3));
	aggr__exit(&a);

	assert_int_equal(aggr__init(&a, AGGR_SOCKET, m, root, &bad), 0);
	assert_int_equal(a.nr_units, 2);
	assert_int_equal(a.units[0].nr_cpus, 3);
	assert_int_equal(a.units[1].nr_cpus, 2);
	assert_int_equal(aggr__unit(&a, 7), 1);
	aggr__exit(&a);
	psc_cpumap__put(pmu);
	psc_cpumap__put(m);
}

static void t_no_topology(void **state)
{
	struct psc_cpumap *m = cpus("0,9");
	struct aggr a;
	int bad = -1;

	/* the engine says which CPU; the caller says it */
	assert_int_equal(aggr__init(&a, AGGR_SOCKET, m, root, &bad), -ENOENT);
	assert_int_equal(bad, 9);
	aggr__exit(&a);
	psc_cpumap__put(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_global_cpu, make_tree, fake_topology__remove),
		cmocka_unit_test_setup_teardown(t_core_socket, make_tree, fake_topology__remove),
		cmocka_unit_test_setup_teardown(t_no_topology, make_tree, fake_topology__remove),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
