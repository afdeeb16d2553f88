/* stage_watch: -p/-t tasks bounding a run of system-wide events; it stops once they are gone. */
#ifndef PERFSCOPE_CLI_STAGE_WATCH_H
#define PERFSCOPE_CLI_STAGE_WATCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "profiler.h"

/*
 * -p/-t/-- COMMAND for profilers whose events stay system wide (a wakeup comes from another
 * task, a completion from an interrupt): stage_watch__take moves the ids out of the options
 * (they would make the events per task) and makes a COMMAND run system wide; the profiler
 * filters on them itself. stage_watch__start stops the run, cleanly, once every -p/-t task has
 * exited (a 100 ms timer on /proc), as a followed target does.
 */
struct stage_watch {
	pid_t ids[CLI_MAX_TASKS];
	bool is_pid[CLI_MAX_TASKS]; /* -p (a process: its threads), else -t */
	int nr;
	int fd;
};

void stage_watch__take(struct prof *p, struct stage_watch *w);
int stage_watch__start(struct prof *p, struct stage_watch *w);
void stage_watch__close(struct stage_watch *w);

#endif
