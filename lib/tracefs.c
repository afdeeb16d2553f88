/* Finds tracefs through /proc/mounts; mounts it at /sys/kernel/tracing only when asked to. */
#include <mntent.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "parse_internal.h"

#define TRACEFS_DEFAULT "/sys/kernel/tracing"

/*
 * The mount point never changes once found, so it is cached for the life of the process; only a
 * successful answer is kept, so a later call retries after someone mounts tracefs.
 */
static pthread_mutex_t tracefs_lock = PTHREAD_MUTEX_INITIALIZER;
static char tracefs_path[PATH_MAX];

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* tracefs from /proc/mounts (preferring the usual place), else debugfs's automounted tracing/. */
static bool find_mounted(char *out, size_t len)
{
	char line[4096], tracefs[PATH_MAX] = "", debugfs[PATH_MAX] = "";
	struct mntent ent;
	FILE *f;

	f = setmntent("/proc/mounts", "re");
	if (!f)
		return false;
	while (getmntent_r(f, &ent, line, sizeof(line))) {
		if (!strcmp(ent.mnt_type, "tracefs")) {
			if (!tracefs[0] || !strcmp(ent.mnt_dir, TRACEFS_DEFAULT))
				snprintf(tracefs, sizeof(tracefs), "%s", ent.mnt_dir);
		} else if (!strcmp(ent.mnt_type, "debugfs") && !debugfs[0]) {
			snprintf(debugfs, sizeof(debugfs), "%s", ent.mnt_dir);
		}
	}
	endmntent(f);
	if (tracefs[0]) {
		snprintf(out, len, "%s", tracefs);
		return true;
	}
	if (debugfs[0]) {
		char path[PATH_MAX + 16];

		snprintf(path, sizeof(path), "%s/tracing", debugfs);
		if (is_dir(path) && strlen(path) < len) {
			snprintf(out, len, "%s", path);
			return true;
		}
	}
	return false;
}

static const char *lookup(bool do_mount)
{
	const char *ret = NULL;
	int err = 0;

	pthread_mutex_lock(&tracefs_lock);
	if (tracefs_path[0]) {
		ret = tracefs_path;
		goto out;
	}
	if (find_mounted(tracefs_path, sizeof(tracefs_path))) {
		pr_debug("tracefs is mounted at %s\n", tracefs_path);
		ret = tracefs_path;
		goto out;
	}
	if (!do_mount) {
		err = ENODEV;
		goto out;
	}
	/*
	 * Only debug messages: a tool may call this before every parse whether or not tracepoints
	 * are wanted, and the parse that needs tracefs reports ENODEV itself.
	 */
	if (mount("nodev", TRACEFS_DEFAULT, "tracefs", 0, NULL)) {
		err = errno;
		pr_debug("tracefs is not mounted and mounting it at %s failed: %s\n",
			 TRACEFS_DEFAULT, strerror(err));
		goto out;
	}
	pr_info("mounted tracefs at %s\n", TRACEFS_DEFAULT);
	snprintf(tracefs_path, sizeof(tracefs_path), "%s", TRACEFS_DEFAULT);
	ret = tracefs_path;
out:
	pthread_mutex_unlock(&tracefs_lock);
	if (!ret)
		errno = err;
	return ret;
}

const char *psc_tracefs__dir(void)
{
	return lookup(false);
}

const char *psc_tracefs__mount(void)
{
	return lookup(true);
}
