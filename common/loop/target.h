/* What a profiler measures: system-wide CPUs, a process, a thread, a cgroup or a launched command.
 */
#ifndef PERFSCOPE_COMMON_TARGET_H
#define PERFSCOPE_COMMON_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "launch.h"
#include "say.h"

struct psc_evlist;
struct psc_cpumap;
struct psc_threadmap;
struct psc_parse_error;

/* What to measure, as a command line gives it (the CLI: -a/-C/-p/-t/-G/-- COMMAND). */
struct target_spec {
	const char *cpus; /* -C list; NULL: every online CPU */
	bool all_cpus; /* -a */
	const pid_t *pids, *tids; /* -p PID,... or -t TID,... */
	int nr_pids, nr_tids;
	const char *tasks_text; /* the -p or -t list as typed, for titles */
	const char *cgroup; /* -G: a path under the cgroup2 mount, or absolute */
	char **command; /* after --, NULL-terminated; NULL: none */
};

struct target {
	struct psc_cpumap *cpus;
	struct psc_threadmap *threads;
	int cgroup_fd; /* -G, else -1 */
	bool per_cpu; /* system-wide or cgroup: counts per CPU (with a command: while it runs) */
	bool follows_tasks; /* -p or -t: ends when its threads do */
	bool inherit_followed; /* -p/-t: count children they fork too (perf stat does); set by the
				  profiler before target_open */
	bool has_command; /* -- COMMAND */
	struct launch launch;
	bool launched; /* target_start released the command */
	int start_errno; /* why target_start failed at start_step, when not the exec */
	const char *start_step;
};

/*
 * Builds the maps from -a/-C/-p/-t/-G/-- COMMAND (system-wide on every online CPU when none is
 * given; -a/-C with a command: those CPUs while it runs) and forks a given command held before
 * exec. title receives "'CMD ARGS'", "process id '12'", "'system wide'", "'CPU(s) 0-3'"
 * for report headers. Says the problem (to) and returns 2 (usage) or 1 (runtime).
 * A -p/-t task that target_check_tasks saw and that is gone now has exited meanwhile (a slow
 * setup: probes, symbols): it is left out with a note, and TARGET_GONE is returned when every
 * one has, for the caller to end as -p does when its tasks exit (status 0).
 */
#define TARGET_GONE 3
/*
 * Whether every -p/-t task exists, checked first, before a profiler spends seconds on its setup:
 * "no process with pid N" (returns 1) at once for a mistyped id. 0 when all are there.
 */
int target_check_tasks(const struct target_spec *o, const struct say *to);
/*
 * Whether o names tasks (-p, -t, a COMMAND), not whole CPUs: where user space alone can be
 * measured (a CPU-wide event needs more privilege than the kernel's part).
 */
bool target_spec__tasks(const struct target_spec *o);
int target_setup(struct target *t, const struct target_spec *o, const struct say *to,
		 char *title, size_t title_len);

/*
 * Opens the evlist on the target (inherit + enable_on_exec for a command), skipping and
 * reporting events this machine does not support, raising RLIMIT_NOFILE when the fds needed
 * exceed it. Says what went wrong and returns 1 when nothing could be opened.
 */
int target_open(struct target *t, struct psc_evlist *evlist, const struct say *to);

/*
 * Enables the counters, or releases the command (the kernel enables them at its exec).
 * Returns 0, or the exit code to leave with: 127/126 when the command could not be run, 1 when
 * the counters could not be enabled; target_start_error says why.
 */
int target_start(struct target *t, struct psc_evlist *evlist);
const char *target_start_error(const struct target *t, char *buf, size_t len);

/* For the session: 1 + *status when the command has exited, 0 when not (or no command). */
int target_reap(struct target *t, int *status);
/* target_reap that leaves the command a zombie, its name still in /proc, until reaped. */
int target_exited(struct target *t, int *status);
/* Blocking wait for the command; 1 + *status, or 0 when there is none. */
int target_wait(struct target *t, int *status);
void target_forward_signal(struct target *t, int sig);
/*
 * A command still running when the profiler stops on its own (--duration, a closed output):
 * SIGTERM, as perf does, then SIGKILL if it is still there 2 s later, so it is never left
 * behind. 1 + *status once reaped (at once when it had already exited), 0 when there is none.
 * target_release does it too.
 */
int target_stop_command(struct target *t, int *status);
/*
 * -p/-t targets: false once every thread followed has exited (gone, or a zombie), so a profiler
 * can stop like perf stat does. Always true for the other targets.
 */
bool target_alive(const struct target *t);
void target_release(struct target *t);

#endif
