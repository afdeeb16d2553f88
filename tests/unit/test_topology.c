/* Unit tests of psc_cpu__topology (libperfscope) on a made-up sysfs tree and on this machine's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <perfscope/perfscope.h>

#include "fake_topology.h"

/* The tree of fake_topology.h, cpu7 without die_id. */
static int make_tree(void **state)
{
	fake_topology__make("psc_topo", 7);
	return 0;
}

static void t_places(void **state)
{
	PSC_OPTS(psc_cpu_topology, t);

	assert_int_equal(psc_cpu__topology(5, root, &t), 0);
	assert_int_equal(t.socket, 1);
	assert_int_equal(t.die, 0);
	assert_int_equal(t.core, 0);
	assert_int_equal(psc_cpu__topology(3, root, &t), 0);
	assert_true(t.socket == 0 && t.core == 1);
	/* before Linux 5.2 there is no die_id: die 0 */
	assert_int_equal(psc_cpu__topology(7, root, &t), 0);
	assert_true(t.socket == 1 && t.core == 1 && t.die == 0);
	/* a socket the firmware cannot tell (-1) is socket 0, as perf shows it */
	put(6, "physical_package_id", -1);
	assert_int_equal(psc_cpu__topology(6, root, &t), 0);
	assert_int_equal(t.socket, 0);
}

static void t_errors(void **state)
{
	PSC_OPTS(psc_cpu_topology, t);
	struct psc_cpu_topology unset = { 0 };

	/* a CPU that is not there, and the struct left as it was */
	t.socket = 42;
	assert_int_equal(psc_cpu__topology(8, root, &t), -ENOENT);
	assert_int_equal(t.socket, 42);
	assert_int_equal(psc_cpu__topology(-1, root, &t), -EINVAL);
	assert_int_equal(psc_cpu__topology(0, root, NULL), -EINVAL);
	/* not declared with PSC_OPTS: sz 0 */
	assert_int_equal(psc_cpu__topology(0, root, &unset), -EINVAL);
	/* a file that holds no number */
	{
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu2/topology/core_id", root);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("x\n", f);
		fclose(f);
	}
	assert_int_equal(psc_cpu__topology(2, root, &t), -EINVAL);
}

/* An older program's struct (sz up to socket) gets socket only: nothing past its end is written. */
static void t_older_caller(void **state)
{
	struct {
		struct psc_cpu_topology t;
	} buf;

	memset(&buf, 0x5a, sizeof(buf));
	buf.t.sz = offsetof(struct psc_cpu_topology, socket) + sizeof(int);
	assert_int_equal(psc_cpu__topology(5, root, &buf.t), 0);
	assert_int_equal(buf.t.socket, 1);
	assert_int_equal(buf.t.die, 0x5a5a5a5a);
	assert_int_equal(buf.t.core, 0x5a5a5a5a);
}

/* This machine's own sysfs answers for CPU 0. */
static void t_this_machine(void **state)
{
	PSC_OPTS(psc_cpu_topology, t);

	assert_int_equal(psc_cpu__topology(0, NULL, &t), 0);
	assert_true(t.socket >= 0 && t.die >= 0 && t.core >= 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(t_places, make_tree, fake_topology__remove),
		cmocka_unit_test_setup_teardown(t_errors, make_tree, fake_topology__remove),
		cmocka_unit_test_setup_teardown(t_older_caller, make_tree, fake_topology__remove),
		cmocka_unit_test(t_this_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
