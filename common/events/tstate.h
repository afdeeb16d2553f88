/* tstate: what sched_switch's prev_state means on this kernel, read from its print fmt. */
#ifndef PERFSCOPE_COMMON_TSTATE_H
#define PERFSCOPE_COMMON_TSTATE_H

#include <stdint.h>

#include <perfscope/tp.h>

/*
 * The bits of prev_state and their letters moved between kernels: 3.x-4.13 printed
 * TASK_STATE_MAX (2048) as "R+" and had S D T t Z X x K W P N; 4.14+ report TASK_REPORT bits
 * S D T t X Z P I and TASK_REPORT_MAX (256) as "+", and the expansion of those macros in the
 * format changed again in 6.x. So nothing here is a fixed value: each bit is printed through
 * the event's own print fmt (libtraceevent, psc_tp_format__print) on a synthetic record and the
 * letter it prints is taken ("prev_state=S"); the bit printed with a '+' is the preemption
 * marker. A state is then classified by its lowest known bit.
 */

#define TSTATE_MAX_BITS 32

/* Class 0 is runnable (prev_state 0, or preempted "R+"); class b+1 is bit b. */
#define TSTATE_RUNNABLE 0
#define TSTATE_NR_CLASSES (TSTATE_MAX_BITS + 1)

struct tstate_map {
	char letter[TSTATE_MAX_BITS][8]; /* "" for a bit the format does not name */
	uint64_t preempt; /* the bit printed as "+" (R+), 0 when none */
	uint64_t known; /* the bits that have a letter */
};

/*
 * Reads the map from a sched_switch format (a prev_state field of at most 8 bytes and a print
 * fmt that prints "prev_state=..."). 0, or -EINVAL when the format has neither (the caller says
 * which event it was), -ENOENT when no bit printed a letter.
 */
int tstate_map__init(struct tstate_map *m, struct psc_tp_format *fmt);

/* The class of a prev_state value: TSTATE_RUNNABLE, or 1 + its lowest named bit, or -1. */
int tstate_map__class(const struct tstate_map *m, uint64_t state);

/* The letter of a class ("R" for runnable, "?" when unknown). */
const char *tstate_map__letter(const struct tstate_map *m, int cls);

/* The class whose letter is s ("S", "D"), -1 when this kernel has none. */
int tstate_map__find(const struct tstate_map *m, const char *s);

#endif
