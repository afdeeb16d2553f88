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

/* A made-up sysfs: 2 sockets, 2 cores each, 2 threads per core; cpu7 without die_id. */
static char root[64];

static void put(int cpu, const char *file, int v)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/%s", root, cpu, file);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%d\n", v);
	fclose(f);
}

static int make_tree(void **state)
{
	char cmd[300];

	snprintf(root, sizeof(root), "/tmp/psc_topo.XXXXXX");
	assert_non_null(mkdtemp(root));
	for (int cpu = 0; cpu < 8; cpu++) {
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s/devices/system/cpu/cpu%d/topology'", root,
			 cpu);
		assert_int_equal(system(cmd), 0);
		put(cpu, "physical_package_id", cpu / 4);
		put(cpu, "core_id", (cpu / 2) % 2);
		if (cpu != 7)
			put(cpu, "die_id", 0);
	}
	return 0;
}

static int rm_tree(void **state)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
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
		cmocka_unit_test_setup_teardown(t_places, make_tree, rm_tree),
		cmocka_unit_test_setup_teardown(t_errors, make_tree, rm_tree),
		cmocka_unit_test_setup_teardown(t_older_caller, make_tree, rm_tree),
		cmocka_unit_test(t_this_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
