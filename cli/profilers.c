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
extern const struct profiler profiler_nested_trace;
extern const struct profiler profiler_kmemprof;
extern const struct profiler profiler_event_care;
extern const struct profiler profiler_page_faults;
extern const struct profiler profiler_oncpu;
extern const struct profiler profiler_hrcount;
extern const struct profiler profiler_percpu_stat;
extern const struct profiler profiler_hrtimer;
extern const struct profiler profiler_irq_off;
extern const struct profiler profiler_watchdog;
extern const struct profiler profiler_lock;
extern const struct profiler profiler_kwork;
extern const struct profiler profiler_usdt;

const struct profiler *const profilers[] = {
	&profiler_list,
	&profiler_stat,
	&profiler_trace,
	&profiler_expr,
	&profiler_top,
	&profiler_num_dist,
	&profiler_profile,
	&profiler_offcpu,
	&profiler_multi_trace,
	&profiler_nested_trace,
	&profiler_syscalls,
	&profiler_rundelay,
	&profiler_task_state,
	&profiler_blktrace,
	&profiler_lock,
	&profiler_kwork,
	&profiler_kmemleak,
	&profiler_kmemprof,
	&profiler_memleak,
	&profiler_trigger,
	&profiler_event_care,
	&profiler_page_faults,
	&profiler_oncpu,
	&profiler_hrcount,
	&profiler_percpu_stat,
	&profiler_hrtimer,
	&profiler_irq_off,
	&profiler_watchdog,
	&profiler_usdt,
	&profiler_exporter,
	&profiler_flamegraph,
	NULL,
};

/* Other names users type for a profiler (perf's and bcc's words for the same thing). */
static const struct {
	const char *alias, *name;
} aliases[] = {
	{ "lock-contention", "lock" },
};

const struct profiler *profiler_find(const char *name)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (!strcmp(aliases[i].alias, name))
			name = aliases[i].name;
	for (int i = 0; profilers[i]; i++)
		if (!strcmp(profilers[i]->name, name))
			return profilers[i];
	return NULL;
}
