/* cgroup targets: find the cgroup2 (or v1 perf_event) mount and open a cgroup directory. */
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

/* The mount point perf can count cgroups under: cgroup2, else the v1 perf_event controller. */
static int find_cgroup_root(char *out, size_t len)
{
	FILE *f = setmntent("/proc/mounts", "r");
	struct mntent *m;
	bool found_v1 = false;

	if (!f)
		return -errno;
	while ((m = getmntent(f))) {
		if (!strcmp(m->mnt_type, "cgroup2")) {
			snprintf(out, len, "%s", m->mnt_dir);
			endmntent(f);
			return 0;
		}
		if (!found_v1 && !strcmp(m->mnt_type, "cgroup") && hasmntopt(m, "perf_event")) {
			snprintf(out, len, "%s", m->mnt_dir);
			found_v1 = true;
		}
	}
	endmntent(f);
	return found_v1 ? 0 : -ENODEV;
}

int psc_cgroup__open(const char *name)
{
	char root[512], path[1024];
	int fd, err;

	if (!name || !*name)
		return -EINVAL;
	if (name[0] == '/' && !access(name, F_OK)) {
		snprintf(path, sizeof(path), "%s", name);
	} else {
		err = find_cgroup_root(root, sizeof(root));
		if (err) {
			pr_warn("no cgroup2 or perf_event cgroup hierarchy is mounted\n");
			return err;
		}
		while (*name == '/')
			name++;
		snprintf(path, sizeof(path), "%s/%s", root, name);
	}
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("cannot open cgroup %s: %s\n", path, strerror(errno));
		return err;
	}
	return fd;
}
