/* A made-up sysfs CPU topology for unit tests: CPUs 0-7, socket cpu / 4, core (cpu / 2) % 2. */
#ifndef PERFSCOPE_TEST_FAKE_TOPOLOGY_H
#define PERFSCOPE_TEST_FAKE_TOPOLOGY_H

#include <stdio.h>
#include <stdlib.h>

/* The tree's root, given as sysfs_root to what reads it (/tmp/NAME.XXXXXX). */
static char root[64];

/* Writes v into cpuN/topology/file of the tree. */
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

/* A fresh tree under /tmp/NAME.XXXXXX; every CPU has a die_id but no_die (-1: none lacks it). */
static void fake_topology__make(const char *name, int no_die)
{
	char cmd[300];

	snprintf(root, sizeof(root), "/tmp/%s.XXXXXX", name);
	assert_non_null(mkdtemp(root));
	for (int cpu = 0; cpu < 8; cpu++) {
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s/devices/system/cpu/cpu%d/topology'", root,
			 cpu);
		assert_int_equal(system(cmd), 0);
		put(cpu, "physical_package_id", cpu / 4);
		put(cpu, "core_id", (cpu / 2) % 2);
		if (cpu != no_die)
			put(cpu, "die_id", 0);
	}
}

/* A cmocka teardown: the tree removed. */
static int fake_topology__remove(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

#endif
