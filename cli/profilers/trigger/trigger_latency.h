/* trigger_latency: perfscope trigger's --latency conditions, two events paired by key (pair.h). */
#ifndef PERFSCOPE_COMMON_TRIGGER_LATENCY_H
#define PERFSCOPE_COMMON_TRIGGER_LATENCY_H

#include <stdbool.h>
#include <stdint.h>

#include "prof.h"

/*
 * --latency 'START,END>T': START and END are one event each in the -e syntax (ATTR key=EXPR
 * says what a start and its end share; default the thread). They join the profiler's session
 * as extra events after its own (cpu-clock): tlat_set__check adds them (prof__add_events).
 *
 * What a condition measures, per --period and per unit (a CPU: the CPU of the END event; all
 * of them with --machine or a process): the longest latency among the pairs whose end came in
 * that period, in ms. A period in which no pair ended there keeps the unit's last value for as
 * long as that latency itself plus one period (a latency of L leaves up to L with no end to
 * see); after that the value is unknown (-1), which breaks a run. A start that never ends is
 * never counted (its latency is unknown, not infinite). Every outcome is counted (pair.h) and
 * summed up at the end.
 */

#define TLAT_MAX 4

struct tlat;

struct tlat_set {
	struct tlat *v[TLAT_MAX];
	int nr;
};

/* The ATTRs the latency events take (key=EXPR), for the profiler's declaration. */
extern const struct prof_attr tlat_attrs[];

/*
 * --latency SPEC: parsed and checked; *out is the new condition. 0, 2 (usage error, said) or
 * -ENOMEM.
 */
int tlat_set__add(struct tlat_set *set, struct prof *p, const char *spec, struct tlat **out);
/* "latency sys_enter_nanosleep->sys_exit_nanosleep>20ms", "lat-sys_exit_nanosleep". */
const char *tlat__name(const struct tlat *l);
const char *tlat__tag(const struct tlat *l);
double tlat__threshold_ms(const struct tlat *l);

/*
 * Options parsed: the events of the session become the profiler's defaults followed by the
 * conditions' events, in time order (a start and its end may come from two CPUs). 0 or 2 (the
 * lists too long, said).
 */
int tlat_set__check(struct tlat_set *set, struct prof *p);
/*
 * The event hook: 0 when ev is not a latency event (the profiler's own), 1 when it is one (set
 * up: every occurrence sampled, no stack), 2 on a usage error, -errno.
 */
int tlat_set__event(struct tlat_set *set, struct prof *p, struct prof_event *ev,
		    struct perf_event_attr *attr);
/* Opened: the pair engines. 0 or -ENOMEM. */
int tlat_set__start(struct tlat_set *set, struct prof *p);
/* A sample: true when it was a latency event's (paired here, nothing more to do with it). */
bool tlat_set__sample(struct tlat_set *set, struct prof_event *ev, int cpu,
		      const struct psc_sample *s);
/* Events lost: no pair across the loss. */
void tlat_set__lost(struct tlat_set *set);
/*
 * The condition's value on cpu (-1: every CPU) since the last call for it, in ms; -1 when
 * unknown (see above). Called once per period (period_ns) and unit.
 */
double tlat__take(struct tlat *l, int cpu, uint64_t period_ns);
/* One line per condition for people: pairs, above the threshold, every other outcome. */
void tlat_set__report(struct tlat_set *set, void (*line)(void *ctx, const char *text), void *ctx);
void tlat_set__free(struct tlat_set *set);

#endif
