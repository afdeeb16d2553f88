/* The hrtimer family's engine (hrcount, hrtimer, irq-off): events counted per CPU between the
 * ticks of a per-CPU cpu-clock timer, a slot each. */
#ifndef PERFSCOPE_CLI_HRSLOT_H
#define PERFSCOPE_CLI_HRSLOT_H

#include <stdbool.h>
#include <stdint.h>

#include "profiler.h"

struct hrs {
	uint64_t period_ns;
	int nr_cpus;
	int nr_ev; /* the events counted: every -e one; the tick is the last event */
	uint64_t *cnt; /* [cpu * nr_ev + e]: the slot going on */
	uint64_t *last; /* [cpu]: the time of its last tick; 0 before the first */
	bool *lost; /* [cpu]: events lost in the slot going on */
	bool *ended; /* [cpu]: its counts are the last slot's: cleared at its next event */
	uint64_t slots_lost; /* slots not counted: events were lost in them */
	char timer[64];
};

/* A slot that ended: its CPU, its events' counts, its length, whether it is the first (it began
 * when the events were enabled, not at a tick). */
struct hrs_slot {
	int cpu;
	const uint64_t *counts; /* nr_ev */
	uint64_t ns;
	bool first;
};

/* From the check hook: the tick (cpu-clock every period_ns) added after the -e events. Whole CPUs
 * are counted: -p/-t/a COMMAND only bound the run (PROF_WATCH_TASKS). 0 or PROF_USAGE (said). */
int hrs__check(struct prof *p, struct hrs *h, uint64_t period_ns);
/* From the event hook: the counted events need no stack, the tick keeps -g's. */
void hrs__event(struct prof *p, struct hrs *h, struct prof_event *ev, struct perf_event_attr *attr);
/* From the start hook: the tables, once the events are known. 0 or -ENOMEM. */
int hrs__start(struct prof *p, struct hrs *h);
/* A sample: true when it is a tick that ended a slot (a slot with lost events is dropped). */
bool hrs__sample(struct prof *p, struct hrs *h, struct prof_event *ev, int cpu,
		 const struct psc_sample *s, struct hrs_slot *slot);
/* The slot going on when cpu lost events is not counted. */
void hrs__lost(struct hrs *h, int cpu);
/* Calls fn with the slot each CPU has going on at the end (now_ns), then forgets them. */
void hrs__flush(struct prof *p, struct hrs *h, uint64_t now_ns,
		void (*fn)(struct prof *p, void *priv, const struct hrs_slot *slot), void *priv);
/* A counted event's name as expressions and tables use it: its alias, else the event's name. */
const char *hrs__name(const struct prof_event *ev);
/* A tick's text line ("time comm pid/tid [cpu] NAME: cpu-clock N ns") or JSON members. */
void hrs__print_tick(struct prof *p, struct hrs *h, const char *what, struct prof_event *ev,
		     int cpu, const struct psc_sample *s, const struct hrs_slot *slot);
void hrs__exit(struct hrs *h);

#endif
