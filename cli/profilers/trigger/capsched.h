/* capsched: when captures of each unit start and end: windows, cooldown, --max and an end timer. */
#ifndef PERFSCOPE_COMMON_CAPSCHED_H
#define PERFSCOPE_COMMON_CAPSCHED_H

#include <stdbool.h>
#include <stdint.h>

/* One unit's capture: samples stamped in [from_ns, end_ns) belong to it (CLOCK_MONOTONIC). */
struct capsched_win {
	bool active;
	uint64_t fire_ns, from_ns, end_ns;
};

/*
 * Captures of nr_units units (CPUs, the machine, a process), one at a time per unit, so that an
 * unattended run cannot make them without end: after each, cooldown_ns without a new one on that
 * unit; after max (0: no limit) no new one at all, nor after a stop was asked for. A capture is
 * finished grace_ns after its end, when its last samples are out of the rings: end_fd (a
 * timerfd, for the caller's loop) fires then. Not thread-safe.
 */
struct capsched {
	int nr_units;
	struct capsched_win *win;
	uint64_t *cooldown_until;
	uint64_t cooldown_ns, grace_ns;
	long max;
	int nr_started;
	bool stopping; /* no new capture: stop once the last one is finished */
	int end_fd;
};

/* 0 or -errno (no memory, no timerfd). cooldown_ns, grace_ns and max are set by the caller. */
int capsched__init(struct capsched *cs, int nr_units);
void capsched__exit(struct capsched *cs);
/* --max captures were started. */
bool capsched__max_reached(const struct capsched *cs);
/* A capture of unit may start at now. */
bool capsched__can_start(const struct capsched *cs, int unit, uint64_t now);
/*
 * Starts unit's capture at now: before_ns back (not before floor_ns: nothing was recorded then)
 * to len_ns ahead. Returns its number, from 1.
 */
int capsched__start(struct capsched *cs, int unit, uint64_t now, uint64_t before_ns,
		    uint64_t floor_ns, uint64_t len_ns);
/* Unit's capture is finished at now: its cooldown starts. */
void capsched__end(struct capsched *cs, int unit, uint64_t now);
/* A unit whose capture ended grace_ns ago or more by now, or -1. */
int capsched__due(const struct capsched *cs, uint64_t now);
/* Arms end_fd at the earliest end (+ grace_ns) of the captures going on. */
void capsched__arm(struct capsched *cs);
/* The latest end of the captures going on, 0 when none is. */
uint64_t capsched__last_end(const struct capsched *cs);
/* No capture going on, and no more to come (a stop asked for, or --max reached). */
bool capsched__done(const struct capsched *cs);

#endif
