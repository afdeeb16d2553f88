/* cgroup targets: find the cgroup2 (or v1 perf_event) mount and open a cgroup directory. */
#include <fcntl.h>
#include <linux/magic.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/vfs.h>
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

/* A cgroup v1 directory is usable only in the hierarchy of the perf_event controller. */
static bool in_perf_event_v1(int fd)
{
	struct stat st, mst;
	struct mntent *m;
	bool found = false;
	FILE *f;

	if (fstat(fd, &st))
		return false;
	f = setmntent("/proc/mounts", "r");
	if (!f)
		return true; /* cannot tell: the kernel judges */
	while (!found && (m = getmntent(f)))
		found = !strcmp(m->mnt_type, "cgroup") && hasmntopt(m, "perf_event") &&
			!stat(m->mnt_dir, &mst) && mst.st_dev == st.st_dev;
	endmntent(f);
	return found;
}

int psc_cgroup__open(const char *name)
{
	char root[512], path[1024];
	struct statfs sfs;
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
	/*
	 * Any directory opens; perf_event_open would then refuse every event with a bare EBADF
	 * (ENOENT in a v1 hierarchy of another controller, which reads as "not supported") that
	 * names neither the cgroup nor the reason.
	 */
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type != CGROUP2_SUPER_MAGIC &&
	    (sfs.f_type != CGROUP_SUPER_MAGIC || !in_perf_event_v1(fd))) {
		pr_warn("%s is not a cgroup perf can count: %s\n", path,
			sfs.f_type == CGROUP_SUPER_MAGIC
				? "its v1 hierarchy has no perf_event controller"
				: "it is not on a cgroup file system");
		close(fd);
		return -ENOTDIR;
	}
	return fd;
}
