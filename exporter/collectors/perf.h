/* The perf collector: node_exporter's 30 perf metric families plus tracepoints, counted per CPU in
 * groups. */
#ifndef PERFSCOPE_EXPORTER_COLLECTORS_PERF_H
#define PERFSCOPE_EXPORTER_COLLECTORS_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct expo;
struct psc_cpumap;
struct psc_counts;

enum perf_kind {
	PERF_KIND_HARDWARE,
	PERF_KIND_SOFTWARE,
	PERF_KIND_CACHE,
	PERF_KIND_TRACEPOINT,
	PERF_KIND_NR,
};

/* One of the 30 fixed families, as node_exporter's collector/perf_linux.go defines it. */
struct perf_family_def {
	enum perf_kind kind;
	const char *flag_name; /* name in --collector.perf.<kind>-profilers */
	const char *metric; /* family name without _total */
	const char *help;
	const char *event; /* perf's name for the event */
	uint32_t type;
	uint64_t config;
};

/* The table, in node_exporter's order; *nr gets its length (30). */
const struct perf_family_def *perf_family_defs(int *nr);

struct perf_config {
	struct psc_cpumap *cpus; /* reference taken */
	bool disable[PERF_KIND_NR]; /* --collector.perf.disable-<kind>-profilers */
	/* --collector.perf.<kind>-profilers allow-lists (NULL/0 = all of that kind) */
	const char *const *allow[PERF_KIND_NR];
	int nr_allow[PERF_KIND_NR];
	const char *const *tracepoints; /* --collector.perf.tracepoint SYS:NAME */
	int nr_tracepoints;
	int max_group_size; /* hardware and cache events per group (PMU counters are few) */
};

struct perf_collector;

/*
 * Checks the configuration (unknown allow-list names, malformed or unknown tracepoints: err
 * filled, returns NULL with errno EINVAL = usage error) and opens every event on every CPU.
 * Events this machine cannot count are logged once each with the reason and reported by the
 * node_perf_event_supported gauge; the rest keep working. NULL with errno other than EINVAL
 * when nothing can be opened at all (err says why).
 */
struct perf_collector *perf_collector_new(const struct perf_config *cfg, char *err, size_t errlen);
void perf_collector_delete(struct perf_collector *pc);
/* Number of events open on at least one CPU. */
int perf_collector_nr_open(const struct perf_collector *pc);
/* Number of open groups, all CPUs together: the read(2) calls one scrape makes. */
int perf_collector_nr_groups(const struct perf_collector *pc);

/*
 * The value exported for a counter read as c when prev was exported last time: the count
 * scaled for multiplexing (value * enabled / running, 0 before it ever ran), rounded, and
 * never below prev.
 */
uint64_t perf_counter_value(uint64_t prev, const struct psc_counts *c);

/*
 * One scrape: one read(2) per group per CPU, then every family written into e. Thread-safe
 * (scrapes are serialised inside). *collect_ns gets the time spent reading counters.
 */
int perf_collector_scrape(struct perf_collector *pc, struct expo *e, uint64_t *collect_ns);

#endif
