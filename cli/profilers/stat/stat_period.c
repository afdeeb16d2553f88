/* stat --period: the counters read every period (perf-prof's stat), each line the slots of -i. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include <perfscope/perfscope.h>

#include "json.h"
#include "session.h"
#include "stat.h"
#include "timer.h"

int stat_period_check(struct prof *p, struct stat_ctx *s)
{
	struct cli_opts *o = &p->opts;

	if (!s->period_ns)
		return 0;
	if (s->repeat > 1)
		return prof_usage(p, "--period reads counters during one run; -r repeats runs: "
				     "give one");
	if (s->sep)
		return prof_usage(p, "--period prints slots, not perf stat's CSV: drop -x, or use "
				     "--format json");
	if (s->per_core || s->per_socket)
		return prof_usage(p, "--period rows are for the whole target or each CPU "
				     "(--per-cpu); drop --per-core/--per-socket");
	if (s->period_ns < 1000000)
		return prof_usage(p, "--period is read by a user-space timer, every CPU's counters "
				     "one by one: give 1ms or more (hrcount's kernel timer goes finer)");
	if (o->interval_ms <= 0)
		o->interval_ms = 1000; /* perf-prof's stat prints every second */
	if (s->period_ns > (uint64_t)o->interval_ms * 1000000ull)
		return prof_usage(p, "--period %.3f ms is longer than -i %ld ms: a line holds the "
				     "slots of one interval; give a shorter period or a longer -i",
				  (double)s->period_ns / 1e6, o->interval_ms);
	/* a line every slots_per_line ticks of our own timer, so each line has that many slots;
	 * the skeleton's interval timer would race with it */
	s->slots_per_line =
		(int)(((uint64_t)o->interval_ms * 1000000ull + s->period_ns / 2) / s->period_ns);
	o->interval_ms = 0;
	return 0;
}

/* One row: the unit's slots of event i, then their total (perf-prof's layout). */
static void print_row(struct prof *p, struct stat_ctx *s, int i, int u, double at)
{
	size_t k = (size_t)i * (size_t)s->aggr.nr_units + (size_t)u;
	const uint64_t *v = &s->slots[k * (size_t)s->slots_per_line];
	int cpu = aggr__unit_cpu(&s->aggr, u);
	uint64_t total = 0;

	for (int n = 0; n < s->nr_slots; n++)
		total += v[n];
	if (s->out == STAT_OUT_JSON) {
		struct json j;

		json__begin(&j, p->out);
		JSON_KEY(&j, "interval");
		json__dbl(&j, at);
		if (cpu >= 0) {
			JSON_KEY(&j, "cpu");
			json__i64(&j, cpu);
		}
		JSON_KEY(&j, "event");
		json__str(&j, s->ev[i].name);
		JSON_KEY(&j, "period_ns");
		json__u64(&j, s->period_ns);
		JSON_KEY(&j, "slots");
		json__arr(&j);
		for (int n = 0; n < s->nr_slots; n++)
			json__u64(&j, v[n]);
		json__end(&j);
		JSON_KEY(&j, "total");
		json__u64(&j, total);
		json__end_line(&j);
		return;
	}
	if (cpu >= 0)
		out__printf(p->out, "[%03d] ", cpu);
	out__printf(p->out, "%20s ", s->ev[i].name);
	for (int n = 0; n < s->nr_slots; n++)
		out__printf(p->out, "%s%llu", n ? "| " : " ", (unsigned long long)v[n]);
	out__printf(p->out, " | total %llu\n", (unsigned long long)total);
}

static void print_line(struct prof *p, struct stat_ctx *s)
{
	double at = prof__elapsed(p);

	if (!s->nr_slots)
		return;
	if (s->out == STAT_OUT_TEXT)
		out__printf(p->out, "#%14.6f  %d slot%s of %.3f ms\n", at, s->nr_slots,
			    s->nr_slots == 1 ? "" : "s", (double)s->period_ns / 1e6);
	for (int i = 0; i < s->nr_ev; i++)
		for (int u = 0; u < s->aggr.nr_units && !s->ev[i].duration; u++)
			print_row(p, s, i, u, at);
	s->nr_slots = 0;
}

/* One slot: what each counter counted since the last read. */
static void take_slot(struct prof *p, struct stat_ctx *s)
{
	size_t n = (size_t)s->nr_ev * (size_t)s->aggr.nr_units;

	if (psc_evlist__read(p->evlist)) {
		s->failed_reads++;
		return;
	}
	for (size_t k = 0; k < n; k++)
		s->now[k] = (struct psc_counts){ 0 };
	for (int i = 0; i < s->nr_ev; i++)
		aggr__add_counts(&s->aggr, p->events_arr[i].evsel, &s->now[i * s->aggr.nr_units]);
	for (size_t k = 0; k < n; k++) {
		s->slots[k * (size_t)s->slots_per_line + (size_t)s->nr_slots] =
			s->now[k].val - s->prev[k].val;
		s->prev[k] = s->now[k];
	}
	if (++s->nr_slots == s->slots_per_line)
		print_line(p, s);
}

static int on_tick(void *ctx, int fd, uint32_t revents)
{
	struct stat_ctx *s = ctx;
	struct prof *p = s->p;

	if (revents == SESSION_FD_END) {
		close(fd);
		return 0;
	}
	if (timer__ticks(fd))
		take_slot(p, s);
	return 0;
}

int stat_period_start(struct prof *p, struct stat_ctx *s)
{
	size_t n = (size_t)s->nr_ev * (size_t)s->aggr.nr_units;
	int fd, err;

	if (!s->period_ns)
		return 0;
	s->p = p;
	s->slots = calloc(n ? n * (size_t)s->slots_per_line : 1, sizeof(*s->slots));
	if (!s->slots)
		return -ENOMEM;
	fd = timer__open(s->period_ns, s->period_ns);
	if (fd < 0)
		return fd;
	err = prof__add_fd(p, fd, EPOLLIN, on_tick, s);
	if (err)
		close(fd);
	return err;
}

/* The end: the last, shorter slot and line, so that the lines add up to the whole run. */
int stat_period_report(struct prof *p, struct stat_ctx *s)
{
	take_slot(p, s);
	print_line(p, s);
	if (s->failed_reads)
		fprintf(stderr, "perfscope stat: %llu slots were lost: reading the counters failed\n",
			(unsigned long long)s->failed_reads);
	return 0;
}
