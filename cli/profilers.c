/* The one table of perfscope subcommands, in the order `perfscope help` lists them. */
#include <string.h>

#include "profiler.h"

extern const struct psc_profiler psc_profiler_list;
extern const struct psc_profiler psc_profiler_stat;
extern const struct psc_profiler psc_profiler_trace;
extern const struct psc_profiler psc_profiler_exporter;

const struct psc_profiler *const psc_profilers[] = {
	&psc_profiler_list, &psc_profiler_stat, &psc_profiler_trace, &psc_profiler_exporter, NULL,
};

const struct psc_profiler *psc_profiler_find(const char *name)
{
	for (int i = 0; psc_profilers[i]; i++)
		if (!strcmp(psc_profilers[i]->name, name))
			return psc_profilers[i];
	return NULL;
}
