/* A CPU's place in the machine (socket, die, core) from sysfs: psc_cpu__topology (cpumap.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

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

int psc_cpu__topology(int cpu, const char *sysfs_root, struct psc_cpu_topology *topo)
{
	int socket, die, core, err;

	if (cpu < 0 || !topo || topo->sz < sizeof(size_t))
		return -EINVAL;
	if (!sysfs_root)
		sysfs_root = "/sys";
	if ((err = read_id(sysfs_root, cpu, "physical_package_id", &socket)) ||
	    (err = read_id(sysfs_root, cpu, "core_id", &core)))
		return err;
	err = read_id(sysfs_root, cpu, "die_id", &die);
	if (err == -ENOENT)
		die = 0;
	else if (err)
		return err;
	/* some machines say -1 for a socket they cannot tell: one socket, as perf shows it */
	if (socket < 0)
		socket = 0;
	if (die < 0)
		die = 0;
	/* an older caller's struct ends sooner: only the fields it has are written */
	if (OPTS_HAS(topo, socket))
		topo->socket = socket;
	if (OPTS_HAS(topo, die))
		topo->die = die;
	if (OPTS_HAS(topo, core))
		topo->core = core;
	return 0;
}
