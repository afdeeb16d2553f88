/* perfscope trigger's parts: its state, shared by the watch (conditions) and the captures. */
#ifndef PERFSCOPE_CLI_TRIGGER_H
#define PERFSCOPE_CLI_TRIGGER_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "aggr.h"
#include "callchain.h"
#include "capdir.h"
#include "capsched.h"
#include "condition.h"
#include "cpustat.h"
#include "stack_table.h"
#include "flightrec.h"
#include "prof.h"
#include "svclog.h"
#include "trigger_latency.h"

#define TRIGGER_MAX_CONDS 8
#define TRIGGER_CAP_PREFIX "trigger-"
#define NS 1000000000ull
/* a capture is written this long after its end: its last samples out of the rings by then */
#define TRIGGER_END_GRACE_NS 200000000ull

/* A capture going on for a unit; its window (times) is the scheduler's. */
struct capture {
	const struct cond *cond;
	double value; /* the mean over the --for window */
	uint64_t fire_real_ns; /* wall clock at the fire, for its name and "start" */
	struct stack_table stacks; /* by address: symbolized once, when the capture is written */
	bool on; /* stacks set up */
	uint64_t samples, before_samples, lost, dropped;
	int seq;
};

struct trigger {
	/* options */
	double for_s, capture_s, before_s, cooldown_s;
	long freq, standby_hz, period_ms, max;
	const char *dir, *max_disk_text;
	bool machine, before_set, cooldown_set;
	uint64_t max_disk;
	struct cond conds[TRIGGER_MAX_CONDS];
	int nr_conds;
	struct tlat_set lat; /* the --latency conditions' events and pairs */

	/*
	 * What is watched, as stat aggregates: per CPU (AGGR_CPU, a unit per CPU of the target),
	 * or the machine or a process (AGGR_GLOBAL, one unit); aggr__unit_cpu() is -1 for it.
	 */
	struct aggr units;
	int nr_cpus; /* possible CPUs */
	bool process;
	struct cpustat_task task; /* process mode: /proc/PID/stat */
	struct cpustat cs;
	bool cs_ready, need_cs;
	struct flightrec *fr;
	/*
	 * Stacks symbolized only when a capture is written: processes' maps are read from /proc
	 * when a capture first meets them, not followed through every fork and mmap of the
	 * machine while waiting, which cost most of the standby CPU on a busy machine (2-3 ms/s at
	 * a build's churn).
	 */
	struct callchain *cc;
	struct capture *caps; /* per unit */
	struct capsched sched; /* their windows, cooldown, --max, the end timer */

	int timer_fd;
	uint64_t last_tick, ticks;
	int nr_written, nr_failed;
	uint64_t lost; /* all samples the kernel dropped */
	struct capdir_stats ds;

	struct svclog log; /* --log FILE: every line also appended there, reopened at SIGHUP */
	struct prof *p;
};

static inline uint64_t trigger_now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* trigger_opts.c: the options the table (trigger.c) points at, and the check hook */
struct prof;
int trigger_opt_sys(struct prof *p, void *priv, const char *arg);
int trigger_opt_user(struct prof *p, void *priv, const char *arg);
int trigger_opt_cpu(struct prof *p, void *priv, const char *arg);
int trigger_opt_iowait(struct prof *p, void *priv, const char *arg);
int trigger_opt_rate(struct prof *p, void *priv, const char *arg);
int trigger_opt_latency(struct prof *p, void *priv, const char *arg);
int trigger_opt_max_disk(struct prof *p, void *priv, const char *arg);
int trigger_opt_before(struct prof *p, void *priv, const char *arg);
int trigger_opt_cooldown(struct prof *p, void *priv, const char *arg);
int trigger_check(struct prof *p, void *priv);

/* trigger_capture.c */
void trigger_unit_name(const struct trigger *t, int unit, char *buf, size_t len);
void trigger_fmt_time(uint64_t real_ns, char *buf, size_t len, bool iso);
void trigger_fire(struct trigger *t, int unit, const struct cond *cond, double value, uint64_t now);
void trigger_add(struct trigger *t, int unit, const struct psc_sample *s);
void trigger_finish(struct trigger *t, int unit, bool cut);
void trigger_check_ends(struct trigger *t, uint64_t now);
int trigger_on_end_timer(void *ctx, int fd, uint32_t revents);

/* trigger_watch.c */
int trigger_watch_start(struct trigger *t);
void trigger_status_line(struct trigger *t);
int trigger_interval(struct prof *p, void *priv, uint64_t now);

#endif
