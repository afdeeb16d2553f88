/* Thread maps: every thread of a pid from /proc/PID/task, one tid, or "any" (-1). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "internal.h"

static struct psc_threadmap *threadmap_alloc(int nr)
{
	struct psc_threadmap *map = calloc(1, sizeof(*map) + (size_t)nr * sizeof(pid_t));

	if (!map)
		return NULL;
	map->refcnt = 1;
	map->nr = nr;
	return map;
}

struct psc_threadmap *psc_threadmap__new_any(void)
{
	struct psc_threadmap *map = threadmap_alloc(1);

	if (map)
		map->tids[0] = -1;
	return map;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

struct psc_threadmap *psc_threadmap__new_pid(pid_t pid)
{
	char path[64];
	struct psc_threadmap *map;
	struct dirent *de;
	int nr = 0, alloc = 16;
	pid_t *tids;
	DIR *dir;

	if (pid <= 0)
		return psc_errno_null(EINVAL);
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return psc_errno_null(ESRCH);
	tids = malloc(alloc * sizeof(*tids));
	if (!tids) {
		closedir(dir);
		return NULL;
	}
	while ((de = readdir(dir))) {
		char *end;
		long tid = strtol(de->d_name, &end, 10);

		if (*end || tid <= 0)
			continue;
		if (nr == alloc) {
			pid_t *grown = realloc(tids, (alloc *= 2) * sizeof(*tids));

			if (!grown) {
				free(tids);
				closedir(dir);
				return NULL;
			}
			tids = grown;
		}
		tids[nr++] = (pid_t)tid;
	}
	closedir(dir);
	if (!nr) {
		free(tids);
		return psc_errno_null(ESRCH);
	}
	qsort(tids, nr, sizeof(*tids), cmp_pid);
	map = threadmap_alloc(nr);
	if (map)
		memcpy(map->tids, tids, nr * sizeof(*tids));
	free(tids);
	return map;
}

struct psc_threadmap *psc_threadmap__new_tid(pid_t tid)
{
	char path[64];
	struct stat st;
	struct psc_threadmap *map;

	if (tid <= 0)
		return psc_errno_null(EINVAL);
	/* /proc/TID exists for every thread id, even though readdir(/proc) lists only processes. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (stat(path, &st))
		return psc_errno_null(ESRCH);
	map = threadmap_alloc(1);
	if (map)
		map->tids[0] = tid;
	return map;
}

struct psc_threadmap *psc_threadmap__get(struct psc_threadmap *map)
{
	if (map)
		map->refcnt++;
	return map;
}

void psc_threadmap__put(struct psc_threadmap *map)
{
	if (map && --map->refcnt == 0)
		free(map);
}

int psc_threadmap__nr(const struct psc_threadmap *map)
{
	return map ? map->nr : 0;
}

pid_t psc_threadmap__tid(const struct psc_threadmap *map, int idx)
{
	if (!map || idx < 0 || idx >= map->nr)
		return -1;
	return map->tids[idx];
}

struct psc_threadmap *psc_threadmap__merge(const struct psc_threadmap *a,
					   const struct psc_threadmap *b)
{
	struct psc_threadmap *map;
	int i = 0, j = 0, n = 0;

	if (!a || !b || (a->nr && a->tids[0] < 0) || (b->nr && b->tids[0] < 0))
		return psc_errno_null(EINVAL);
	map = threadmap_alloc(a->nr + b->nr);
	if (!map)
		return NULL;
	/* both sorted: a merge that keeps one of each tid */
	while (i < a->nr || j < b->nr) {
		pid_t t = j >= b->nr || (i < a->nr && a->tids[i] <= b->tids[j]) ? a->tids[i++]
										: b->tids[j++];

		if (!n || map->tids[n - 1] != t)
			map->tids[n++] = t;
	}
	map->nr = n;
	return map;
}
