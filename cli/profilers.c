/* The one table of perfscope subcommands, in the order `perfscope help` lists them. */
#include <string.h>

#include "profiler.h"

extern const struct profiler profiler_list;
extern const struct profiler profiler_stat;
extern const struct profiler profiler_trace;
extern const struct profiler profiler_expr;
extern const struct profiler profiler_top;
extern const struct profiler profiler_num_dist;
extern const struct profiler profiler_profile;
extern const struct profiler profiler_offcpu;
extern const struct profiler profiler_multi_trace;
extern const struct profiler profiler_syscalls;
extern const struct profiler profiler_rundelay;
extern const struct profiler profiler_memleak;
extern const struct profiler profiler_kmemleak;
extern const struct profiler profiler_task_state;
extern const struct profiler profiler_blktrace;
extern const struct profiler profiler_exporter;
extern const struct profiler profiler_trigger;
extern const struct profiler profiler_flamegraph;

const struct profiler *const profilers[] = {
	&profiler_list, &profiler_stat, &profiler_trace, &profiler_expr, &profiler_top,
	&profiler_num_dist, &profiler_profile, &profiler_offcpu, &profiler_multi_trace, &profiler_syscalls,
	&profiler_rundelay, &profiler_task_state, &profiler_blktrace, &profiler_kmemleak,
	&profiler_memleak, &profiler_trigger, &profiler_exporter, &profiler_flamegraph, NULL,
};

const struct profiler *profiler_find(const char *name)
{
	for (int i = 0; profilers[i]; i++)
		if (!strcmp(profilers[i]->name, name))
			return profilers[i];
	return NULL;
}
