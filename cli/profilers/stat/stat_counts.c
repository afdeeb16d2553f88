/* stat's counts: read, summed per unit, made the figures of a run, an interval or the runs. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <perfscope/perfscope.h>

#include "stat.h"

void stat_children_time(double *user, double *sys)
{
	struct rusage ru;

	*user = *sys = 0;
	if (getrusage(RUSAGE_CHILDREN, &ru))
		return;
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Every event's counts per unit now, summed over the unit's CPUs and the threads. */
static void gather(struct prof *p, struct stat_ctx *s)
{
	memset(s->now, 0, (size_t)s->nr_ev * (size_t)s->aggr.nr_units * sizeof(*s->now));
	for (int i = 0; i < s->nr_ev; i++)
		aggr__add_counts(&s->aggr, p->events_arr[i].evsel, &s->now[i * s->aggr.nr_units]);
}

/* s->figs from counts c (totals, or deltas of an interval) over wall_ns. */
static void make_figs(struct stat_ctx *s, const struct psc_counts *c, double wall_ns)
{
	for (int i = 0; i < s->nr_ev; i++)
		for (int u = 0; u < s->aggr.nr_units; u++) {
			int k = i * s->aggr.nr_units + u;
			struct stat_fig *f = &s->figs[k];

			if (s->ev[i].duration) {
				*f =
					(struct stat_fig){ wall_ns, wall_ns, wall_ns,
							   wall_ns, 0,	     true };
				continue;
			}
			*f = (struct stat_fig){
				.value = psc_counts__scaled(&c[k]),
				.raw = (double)c[k].val,
				.ena = (double)c[k].ena,
				.run = (double)c[k].run,
				.counted = c[k].run > 0,
			};
		}
}

/* The mean of the runs, with perf's spread. */
void stat_mean_figs(struct stat_ctx *s)
{
	for (int k = 0; k < s->nr_ev * s->aggr.nr_units; k++) {
		const struct stat_acc *a = &s->acc[k];

		s->figs[k] = (struct stat_fig){
			.value = a->value.mean,
			.raw = a->raw / s->runs,
			.ena = a->ena / s->runs,
			.run = a->run / s->runs,
			.noise_pct = stat_stats__rel_pct(&a->value),
			.counted = a->counted > 0,
		};
	}
}

static int read_counters(struct prof *p, const char *when)
{
	int err = psc_evlist__read(p->evlist);

	if (err) /* never a silently missing report */
		fprintf(stderr, "perfscope stat: reading the counters %s failed: %s\n", when,
			strerror(-err));
	return err;
}

/* Each run's counts into the sums of the runs, its wall-clock time, its command's CPU time. */
int stat_run_end(struct prof *p, void *priv)
{
	struct stat_ctx *s = priv;
	double wall = prof__elapsed(p) * 1e9, user, sys;

	if (read_counters(p, "at the end of the run"))
		return 0; /* the report says so again, from what it has */
	gather(p, s);
	make_figs(s, s->now, wall);
	for (int k = 0; k < s->nr_ev * s->aggr.nr_units; k++) {
		const struct stat_fig *f = &s->figs[k];
		struct stat_acc *a = &s->acc[k];

		stat_stats__add(&a->value, f->value);
		a->raw += f->raw;
		a->ena += f->ena;
		a->run += f->run;
		a->counted += f->counted;
	}
	stat_stats__add(&s->wall, wall);
	s->runs++;
	stat_children_time(&user, &sys);
	s->user_s += user - s->children_user;
	s->sys_s += sys - s->children_sys;
	s->children_user = user;
	s->children_sys = sys;
	return 0;
}

/* One interval's lines: what was counted since the last one. */
void stat_print_interval(struct prof *p, struct stat_ctx *s)
{
	double now = prof__elapsed(p);
	size_t n = (size_t)s->nr_ev * (size_t)s->aggr.nr_units;

	if (read_counters(p, "for an interval"))
		return;
	gather(p, s);
	for (size_t k = 0; k < n; k++) {
		struct psc_counts d = {
			s->now[k].val - s->prev[k].val,
			s->now[k].ena - s->prev[k].ena,
			s->now[k].run - s->prev[k].run,
			0,
			0,
		};

		s->prev[k] = s->now[k];
		s->now[k] = d;
	}
	make_figs(s, s->now, (now - s->last_interval) * 1e9);
	stat_print_rows(p, s, (now - s->last_interval) * 1e9, now);
	s->last_interval = now;
}

/* The totals of this run so far, as the final report shows them. */
void stat_print_totals(struct prof *p, struct stat_ctx *s)
{
	double elapsed = prof__elapsed(p);
	uint64_t hidden = s->hidden; /* -i: what the intervals left out, said at the end */

	if (read_counters(p, "for the report"))
		return;
	gather(p, s);
	make_figs(s, s->now, elapsed * 1e9);
	s->hidden = 0;
	stat_print_header(p, s, 0);
	stat_print_rows(p, s, elapsed * 1e9, -1);
	stat_print_footer(p, s, elapsed, 0, 0, false);
	s->hidden = p->opts.interval_ms ? hidden : s->hidden;
}
