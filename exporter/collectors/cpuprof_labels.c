/* cpuprof_labels: a process's name, cgroup path and container id for its profile labels. */
#include <ctype.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpuprof.h"

/* One small file (/proc/PID/...) into buf, its last newline cut. Returns its length or -1. */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	if (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

/*
 * The cgroup v2 path ("0::/system.slice/docker-<id>.scope"); when that is "/" (a hybrid machine
 * whose runtime uses the v1 hierarchies), the first v1 path that is not "/".
 */
static char *cgroup_path(uint32_t pid)
{
	char path[64], buf[4096];
	const char *v2 = NULL, *v1 = NULL;

	snprintf(path, sizeof(path), "/proc/%u/cgroup", pid);
	if (read_small(path, buf, sizeof(buf)) < 0)
		return strdup("");
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *p = strchr(line, ':');

		p = p ? strchr(p + 1, ':') : NULL;
		if (!p)
			continue;
		if (!strncmp(line, "0::", 3))
			v2 = p + 1;
		else if (!v1 && strcmp(p + 1, "/"))
			v1 = p + 1;
	}
	if (v2 && strcmp(v2, "/"))
		return strdup(v2);
	return strdup(v1 ? v1 : v2 ? v2 : "");
}

void cpuprof_container_id(const char *path, char out[65])
{
	int run = 0;

	out[0] = '\0';
	/* the last run of exactly 64 hex digits in the path: runtimes name the leaf after it */
	for (const char *p = path;; p++) {
		if (*p && isxdigit((unsigned char)*p) && !isupper((unsigned char)*p)) {
			run++;
			continue;
		}
		if (run == 64) {
			memcpy(out, p - 64, 64);
			out[64] = '\0';
		}
		run = 0;
		if (!*p)
			break;
	}
}

static void cg_free(struct cpuprof_cg *cg)
{
	if (cg)
		free(cg->cgroup);
	free(cg);
}

const struct cpuprof_cg *cpuprof_cgroup(struct cpuprof *cp, uint32_t pid)
{
	struct cpuprof_cg **slot = keymap__find(&cp->cgroups, pid), *cg;
	char path[64];

	if (slot) {
		(*slot)->seen = cp->cur;
		return *slot;
	}
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return NULL;
	cg->seen = cp->cur;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (read_small(path, cg->comm, sizeof(cg->comm)) < 0)
		snprintf(cg->comm, sizeof(cg->comm), "[unknown]");
	cg->cgroup = cgroup_path(pid);
	if (!cg->cgroup) {
		free(cg);
		return NULL;
	}
	cpuprof_container_id(cg->cgroup, cg->container);
	slot = keymap__insert(&cp->cgroups, pid, NULL);
	if (!slot) {
		cg_free(cg);
		return NULL;
	}
	*slot = cg;
	return cg;
}

void cpuprof_cgroup_forget(struct cpuprof *cp, uint32_t pid)
{
	struct cpuprof_cg **slot = keymap__find(&cp->cgroups, pid);

	if (!slot)
		return;
	cg_free(*slot);
	keymap__remove(&cp->cgroups, pid);
}

void cpuprof_cgroup_sweep(struct cpuprof *cp)
{
	struct keymap_iter it;
	struct cpuprof_cg **cg;
	uint64_t key, *old = NULL;
	size_t nr = 0;

	if (!cp->cgroups.nr)
		return;
	old = malloc(cp->cgroups.nr * sizeof(*old));
	if (!old)
		return;
	keymap__for_each(&cp->cgroups, &it, key, cg)
	{
		if (cp->cur - (*cg)->seen > cp->nr_buckets)
			old[nr++] = key;
	}
	for (size_t i = 0; i < nr; i++)
		cpuprof_cgroup_forget(cp, (uint32_t)old[i]);
	free(old);
}

void cpuprof_cgroup_exit(struct cpuprof *cp)
{
	struct keymap_iter it;
	struct cpuprof_cg **cg;
	uint64_t key;

	if (!cp->cgroups.slots)
		return;
	keymap__for_each(&cp->cgroups, &it, key, cg) cg_free(*cg);
	keymap__exit(&cp->cgroups);
}
