/* Where a CPU sits, from sysfs (cpu_topo.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cpu_topo.h"

/* One number from a topology file; -ENOENT when the file is absent. */
static int read_id(const char *root, int cpu, const char *file, int *out)
{
	char path[512];
	FILE *f;
	int v, ok;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/%s", root, cpu, file);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ok = fscanf(f, "%d", &v) == 1;
	fclose(f);
	if (!ok)
		return -EINVAL;
	*out = v;
	return 0;
}

int cpu_topo__read(const char *root, int cpu, struct cpu_topo *t)
{
	int err;

	if (!root)
		root = "/sys";
	if ((err = read_id(root, cpu, "physical_package_id", &t->socket)) ||
	    (err = read_id(root, cpu, "core_id", &t->core)))
		return err;
	err = read_id(root, cpu, "die_id", &t->die);
	if (err == -ENOENT)
		t->die = 0;
	else if (err)
		return err;
	/* some machines say -1 for a socket they cannot tell: one socket, as perf shows it */
	if (t->socket < 0)
		t->socket = 0;
	if (t->die < 0)
		t->die = 0;
	return 0;
}
