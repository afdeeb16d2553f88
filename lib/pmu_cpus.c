/* The CPUs a PMU counts on: its sysfs cpumask (uncore, RAPL) or cpus (hybrid cores). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

#define PMU_DEVICES "/sys/bus/event_source/devices"

struct psc_cpumap *psc_cpumap__new_pmu(const char *pmu)
{
	/*
	 * cpumask: the one CPU per package or die that reads a shared counter (power, uncore);
	 * cpus: the CPUs of one core type on a hybrid machine (cpu_core, cpu_atom).
	 */
	static const char *const files[] = { "cpumask", "cpus" };

	if (!pmu || !*pmu || strchr(pmu, '/')) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[512];
		struct psc_cpumap *map;

		snprintf(path, sizeof(path), PMU_DEVICES "/%s/%s", pmu, files[i]);
		map = psc_cpumap__read_sysfs(path);
		if (map && map->nr > 0)
			return map;
		psc_cpumap__put(map);
	}
	errno = ENOENT;
	return NULL;
}

/* Only dynamic PMUs have masks; the fixed types (software, tracepoint...) count on every CPU. */
struct psc_cpumap *psc_pmu__cpus_of_type(uint32_t type)
{
	struct psc_cpumap *map = NULL;
	struct dirent *de;
	DIR *dir;

	if (type < PERF_TYPE_MAX)
		return NULL;
	dir = opendir(PMU_DEVICES);
	if (!dir)
		return NULL;
	while (!map && (de = readdir(dir))) {
		char path[512];
		unsigned int t;
		FILE *f;
		int n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), PMU_DEVICES "/%s/type", de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		n = fscanf(f, "%u", &t);
		fclose(f);
		if (n == 1 && t == type)
			map = psc_cpumap__new_pmu(de->d_name);
	}
	closedir(dir);
	return map;
}
