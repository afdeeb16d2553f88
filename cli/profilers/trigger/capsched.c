/* capsched: when captures of each unit start and end: windows, cooldown, --max and an end timer. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "capsched.h"
#include "timer.h"

int capsched__init(struct capsched *cs, int nr_units)
{
	cs->nr_units = nr_units;
	cs->end_fd = -1;
	cs->win = calloc((size_t)nr_units, sizeof(*cs->win));
	cs->cooldown_until = calloc((size_t)nr_units, sizeof(*cs->cooldown_until));
	if (!cs->win || !cs->cooldown_until)
		return -ENOMEM;
	/* a timer at the next capture's end, whatever the caller's own period is */
	cs->end_fd = timer__open(0, 0);
	return cs->end_fd < 0 ? cs->end_fd : 0;
}

void capsched__exit(struct capsched *cs)
{
	free(cs->win);
	free(cs->cooldown_until);
	cs->win = NULL;
	cs->cooldown_until = NULL;
	if (cs->end_fd >= 0)
		close(cs->end_fd);
	cs->end_fd = -1;
}

bool capsched__max_reached(const struct capsched *cs)
{
	return cs->max && cs->nr_started >= cs->max;
}

bool capsched__can_start(const struct capsched *cs, int unit, uint64_t now)
{
	return !cs->win[unit].active && !cs->stopping && now >= cs->cooldown_until[unit] &&
	       !capsched__max_reached(cs);
}

int capsched__start(struct capsched *cs, int unit, uint64_t now, uint64_t before_ns,
		    uint64_t floor_ns, uint64_t len_ns)
{
	struct capsched_win *w = &cs->win[unit];

	w->active = true;
	w->fire_ns = now;
	w->from_ns = now - (before_ns < now ? before_ns : 0);
	if (w->from_ns < floor_ns)
		w->from_ns = floor_ns;
	w->end_ns = now + len_ns;
	return ++cs->nr_started;
}

void capsched__end(struct capsched *cs, int unit, uint64_t now)
{
	cs->win[unit].active = false;
	cs->cooldown_until[unit] = now + cs->cooldown_ns;
}

int capsched__due(const struct capsched *cs, uint64_t now)
{
	for (int u = 0; u < cs->nr_units; u++)
		if (cs->win[u].active && now >= cs->win[u].end_ns + cs->grace_ns)
			return u;
	return -1;
}

void capsched__arm(struct capsched *cs)
{
	uint64_t next = 0;

	for (int u = 0; u < cs->nr_units; u++) {
		const struct capsched_win *w = &cs->win[u];

		if (w->active && (!next || w->end_ns + cs->grace_ns < next))
			next = w->end_ns + cs->grace_ns;
	}
	if (next && cs->end_fd >= 0)
		timer__arm_at(cs->end_fd, next);
}

uint64_t capsched__last_end(const struct capsched *cs)
{
	uint64_t end = 0;

	for (int u = 0; u < cs->nr_units; u++)
		if (cs->win[u].active && cs->win[u].end_ns > end)
			end = cs->win[u].end_ns;
	return end;
}

bool capsched__done(const struct capsched *cs)
{
	for (int u = 0; u < cs->nr_units; u++)
		if (cs->win[u].active)
			return false;
	return cs->stopping || capsched__max_reached(cs);
}
