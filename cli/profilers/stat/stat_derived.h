/* perf stat's derived figures (CPUs utilized, rates, IPC, miss ratios) and the spread of repeated
 * runs: pure arithmetic, tested without a PMU. */
#ifndef PERFSCOPE_CLI_STAT_DERIVED_H
#define PERFSCOPE_CLI_STAT_DERIVED_H

#include <stdbool.h>
#include <linux/perf_event.h>

/* What a counter is, for the figures that relate one counter to another (perf's shadow stats). */
enum stat_kind {
	STAT_OTHER,
	STAT_TASK_CLOCK,
	STAT_CPU_CLOCK,
	STAT_CYCLES,
	STAT_INSTRUCTIONS,
	STAT_BRANCHES,
	STAT_BRANCH_MISSES,
	STAT_CACHE_REFS,
	STAT_CACHE_MISSES,
	STAT_STALLED_FRONTEND,
	STAT_STALLED_BACKEND,
	STAT_L1D_LOADS,
	STAT_L1D_LOAD_MISSES,
	STAT_L1I_LOADS,
	STAT_L1I_LOAD_MISSES,
	STAT_LLC_LOADS,
	STAT_LLC_LOAD_MISSES,
	STAT_DTLB_LOADS,
	STAT_DTLB_LOAD_MISSES,
	STAT_ITLB_LOADS,
	STAT_ITLB_LOAD_MISSES,
	STAT_DURATION, /* duration_time: the wall clock of the run, no kernel counter */
};

/* The kind of a counter from its attr (duration_time is the caller's to say). */
enum stat_kind stat_kind_of(const struct perf_event_attr *a);
/*
 * The privilege levels and states a counter leaves out (exclude_user, _kernel, _hv, _host,
 * _idle as bits): as in perf, cycles:u pairs with instructions:u only, not with instructions.
 */
unsigned int stat_ctx_of(const struct perf_event_attr *a);

/* One counter of an aggregation unit (the whole target, a CPU, a core, a socket). */
struct stat_counter {
	enum stat_kind kind;
	unsigned int ctx;
	double value; /* the count, scaled for multiplexing (ns for clocks); the mean over runs */
	bool counted; /* opened here and ran: its value means something */
};

enum stat_metric_fmt {
	STAT_METRIC_NONE, /* no figure: nothing to relate it to */
	STAT_METRIC_RATIO, /* "%8.3f": CPUs utilized, GHz, rates */
	STAT_METRIC_IPC, /* "%7.2f ": insn per cycle */
	STAT_METRIC_PCT, /* "%7.2f%%": miss ratios, idle cycles */
};

struct stat_metric {
	enum stat_metric_fmt fmt;
	double value;
	char unit[32]; /* "CPUs utilized", "K/sec", "insn per cycle", "of all branches", "GHz" */
};

/*
 * The figure perf stat prints after counter i of the n counters of one aggregation unit, over
 * wall_ns of wall-clock time (the run, or the interval):
 *   task-clock, cpu-clock      clock / wall                    "CPUs utilized"
 *   instructions               / cycles                        "insn per cycle"
 *   branch-misses              / branches, in %                "of all branches"
 *   cache-misses               / cache-references              "of all cache refs"
 *   L1-dcache-load-misses      / L1-dcache-loads               "of all L1-dcache accesses"
 *   L1-icache-load-misses      / L1-icache-loads               "of all L1-icache accesses"
 *   LLC-load-misses            / LLC-loads                     "of all LL-cache accesses"
 *   dTLB-load-misses, iTLB-... / dTLB-loads, iTLB-loads        "of all dTLB cache accesses"
 *   stalled-cycles-frontend/backend / cycles                   "frontend/backend cycles idle"
 *   cycles                     / task-clock (ns)               "GHz"
 *   any other counter          / task-clock (or cpu-clock) s   "/sec", "K/sec", "M/sec", "G/sec"
 * The other side of a ratio must be counted in the same context (stat_ctx_of); a clock may be in
 * any, as in perf. duration_time has none.
 */
void stat_metric(const struct stat_counter *c, int n, int i, double wall_ns, struct stat_metric *m);

/* The figure as perf prints it ("   1.234", "   5.67%"); trim: without the leading spaces (CSV).
 * "" for STAT_METRIC_NONE. Returns buf. */
const char *stat_metric_str(const struct stat_metric *m, bool trim, char *buf, size_t len);

/* Mean and spread of a value over repeated runs (Welford's running sums). */
struct stat_stats {
	double n, mean, m2;
};
void stat_stats__add(struct stat_stats *s, double v);
/* perf's "+-": the standard error of the mean (stddev / sqrt(n)); 0 under two runs. */
double stat_stats__sem(const struct stat_stats *s);
/* 100 * sem / mean, perf's "( +- N% )"; 0 when the mean is 0. */
double stat_stats__rel_pct(const struct stat_stats *s);
/* Decimals that show an uncertainty sd (seconds) as perf does: 2 past its first digit. */
int stat_precision(double sd);

#endif
