/* condition: a threshold on a CPU share, event rate or latency that must hold a time, per unit. */
#ifndef PERFSCOPE_COMMON_CONDITION_H
#define PERFSCOPE_COMMON_CONDITION_H

#include <stdbool.h>
#include <stdint.h>

#include <perfscope/perfscope.h>

#include "cpustat.h"

enum cond_type { COND_SHARE, COND_RATE, COND_LATENCY };

struct tlat;

/*
 * One condition ("sys>=50%", "sched:sched_switch>=50000/s") and its state on each unit it is
 * measured on (a CPU, the machine or a process: the caller's numbering). Readings come from
 * cpustat (shares), a ratecount counter (rates) or trigger_latency (latencies); a condition
 * holds once every reading of a run of them was at or over the threshold for long enough.
 * Not thread-safe.
 */
struct cond {
	enum cond_type type;
	enum cpustat_kind kind; /* COND_SHARE */
	double threshold;
	char name[96]; /* "sys>=50%", "sched:sched_switch>=50000/s" */
	char tag[48]; /* in file names: "sys", "rate-sched_switch" */
	char *event; /* COND_RATE: the event text (owned) */
	struct psc_event_list *specs; /* COND_RATE: its one event (owned) */
	struct psc_evsel *evsel; /* COND_RATE: the counter, once opened (owned) */
	struct tlat *lat; /* COND_LATENCY (trigger_latency.h): values in ms (its set owns it) */
	int nr_units;
	uint64_t *last; /* per unit: the count at the previous reading */
	uint64_t *since; /* per unit: start of the run of readings over the threshold, 0: none */
	double *sum; /* per unit: their values, for the mean reported */
	uint32_t *n;
	double *value; /* per unit: the last reading (-1: none) */
};

/* "PCT" or "PCT%", above 0 and at most 100: c becomes KIND>=PCT%. 0 or -EINVAL. */
int cond__init_share(struct cond *c, enum cpustat_kind kind, const char *arg);
/*
 * Splits "EVENT>N" (or "EVENT>=N"), N events per second: 0, -EINVAL when there is no EVENT>,
 * -ERANGE when N is not a number above 0, -ENOMEM. *event is malloc'd.
 */
int cond__split_rate(const char *arg, char **event, double *per_s);
/* c becomes EVENT>=N/s, taking event (from cond__split_rate) and specs (one event) over. */
void cond__init_rate(struct cond *c, char *event, struct psc_event_list *specs, double per_s);
/* c becomes a latency condition: lat measures it (name, tag and threshold in ms are its). */
void cond__init_latency(struct cond *c, struct tlat *lat, const char *name, const char *tag,
			double threshold_ms);
/* Per-unit state for nr units. 0 or -ENOMEM. */
int cond__alloc_units(struct cond *c, int nr);
/* Frees what c owns (the counter closed); c can be zeroed and reused. */
void cond__free(struct cond *c);

/*
 * The rate of c's counter on cpu (-1: all) over dt_s seconds since its previous reading, or -1
 * when unknown (first: the base reading, the counter went backwards).
 */
double cond__rate(struct cond *c, int unit, int cpu, double dt_s, bool first);
/*
 * Takes reading v (< 0: unknown) of unit at now (ns); prev_ns is the previous reading's time (0:
 * none), where a run that starts now is taken to have begun. True when the run has lasted for_ns
 * (slack_ns of lateness forgiven): cond__mean() then says its mean, cond__reset() starts anew.
 */
bool cond__holds(struct cond *c, int unit, double v, uint64_t now, uint64_t prev_ns,
		 uint64_t for_ns, uint64_t slack_ns);
double cond__mean(const struct cond *c, int unit);
void cond__reset(struct cond *c, int unit);

#endif
