/* blktrace -d: a block device's name or MAJ:MIN to its disk and partitions, through sysfs. */
#include "blktrace.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t kdev(unsigned int major, unsigned int minor)
{
	return (uint64_t)major << 20 | minor;
}

static int read_majmin(const char *path, unsigned int *major, unsigned int *minor)
{
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%u:%u", major, minor);
	fclose(f);
	return n == 2 ? 0 : -EINVAL;
}

/* The name in /sys/class/block of MAJ:MIN, "" when none. */
static void name_of(unsigned int major, unsigned int minor, char *buf, size_t len)
{
	char path[PATH_MAX], target[PATH_MAX];
	ssize_t n;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u", major, minor);
	n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = 0;
	snprintf(buf, len, "%.63s", strrchr(target, '/') ? strrchr(target, '/') + 1 : target);
}

int bt_resolve_device(struct prof *p, struct bt *bt)
{
	const char *d = bt->device;
	char path[PATH_MAX], name[64];
	unsigned int major, minor;
	struct stat st;
	char c;

	if (!strncmp(d, "/dev/", 5))
		d += 5;
	if (sscanf(d, "%u:%u%c", &major, &minor, &c) == 2) {
		name_of(major, minor, name, sizeof(name));
		if (!name[0])
			return prof_usage(p, "-d %s: no block device %u:%u in /sys/dev/block", bt->device,
					  major, minor);
	} else {
		snprintf(name, sizeof(name), "%s", d);
	}
	if (strchr(name, '/') || !name[0])
		return prof_usage(p, "-d takes a block device name (sda, nvme0n1) or MAJ:MIN, not '%s'",
				  bt->device);
	snprintf(path, sizeof(path), "/sys/class/block/%s/partition", name);
	if (!stat(path, &st)) {
		/* a partition: the disk is the directory above it */
		char link[PATH_MAX], target[PATH_MAX], *slash;
		ssize_t n;

		snprintf(link, sizeof(link), "/sys/class/block/%s", name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			if ((slash = strrchr(target, '/'))) {
				*slash = 0;
				if ((slash = strrchr(target, '/')))
					snprintf(name, sizeof(name), "%s", slash + 1);
			}
		}
	}
	snprintf(path, sizeof(path), "/sys/block/%s/dev", name);
	if (read_majmin(path, &bt->major, &bt->minor))
		return prof_usage(p, "-d %s: no such block device (see /sys/block or lsblk)",
				  bt->device);
	snprintf(bt->disk, sizeof(bt->disk), "%s", name);
	bt->devs[bt->nr_devs++] = kdev(bt->major, bt->minor);
	/* its partitions, for getrq */
	for (int i = 1; i < 64 && bt->nr_devs < 64; i++) {
		char part[PATH_MAX];

		snprintf(part, sizeof(part), "/sys/block/%s/%s%s%d/dev", name, name,
			 name[strlen(name) - 1] >= '0' && name[strlen(name) - 1] <= '9' ? "p" : "",
			 i);
		if (read_majmin(part, &major, &minor))
			continue;
		bt->devs[bt->nr_devs++] = kdev(major, minor);
	}
	return 0;
}
