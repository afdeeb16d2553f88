/* perfscope trigger's watch: the conditions measured every --period, and what it prints of them. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "ratecount.h"
#include "session.h"
#include "timer.h"
#include "trigger.h"

/* The --rate counters: per CPU of the target, or the process's threads and their children. */
static int open_rates(struct trigger *t)
{
	struct prof *p = t->p;

	for (int i = 0; i < t->nr_conds; i++) {
		struct cond *c = &t->conds[i];

		if (c->type != COND_RATE)
			continue;
		c->evsel = t->process
				   ? ratecount__open(&c->specs->specs[0], NULL, p->target.threads)
				   : ratecount__open(&c->specs->specs[0], p->target.cpus, NULL);
		if (!c->evsel) {
			char why[256];
			int err = -errno;

			if (err == -ENOMEM)
				return err;
			fprintf(stderr, "perfscope trigger: --rate %s: cannot count it: %s\n",
				c->event, psc_strerror_open(err, c->event, why, sizeof(why)));
			return err ? err : -EINVAL; /* said: the start hook's failure, exit 1 */
		}
	}
	return 0;
}

/* The condition's value on unit over the last period, or < 0 when unknown. */
static double measure(struct trigger *t, struct cond *c, int unit, double dt_s,
		      const double *task_share)
{
	if (c->type == COND_LATENCY)
		return tlat__take(c->lat, aggr__unit_cpu(&t->units, unit),
				  (uint64_t)t->period_ms * 1000000);
	if (c->type == COND_SHARE) {
		if (t->process)
			return task_share[c->kind];
		return cpustat__share(&t->cs, aggr__unit_cpu(&t->units, unit), c->kind);
	}
	/* a rate: the counter's growth (per CPU, or summed) over the time elapsed */
	return cond__rate(c, unit, t->process ? -1 : aggr__unit_cpu(&t->units, unit), dt_s,
			  !t->ticks);
}

static int on_tick(void *ctx, int fd, uint32_t revents)
{
	struct trigger *t = ctx;
	uint64_t now = trigger_now(CLOCK_MONOTONIC);
	uint64_t for_ns = (uint64_t)(t->for_s * 1e9), period_ns = (uint64_t)t->period_ms * 1000000;
	double dt_s = t->last_tick ? (double)(now - t->last_tick) / 1e9 : 0;
	double task_share[CPUSTAT_NR];
	bool fired = false;

	if (revents == SESSION_FD_END)
		return 0;
	if (!timer__ticks(fd))
		return 0;
	if (t->need_cs && !t->process)
		cpustat__read(&t->cs);
	if (t->process)
		cpustat__task_shares(&t->task, !t->ticks, dt_s, task_share);
	for (int ci = 0; ci < t->nr_conds; ci++) {
		struct cond *c = &t->conds[ci];

		for (int u = 0; u < t->units.nr_units; u++) {
			double v = measure(t, c, u, dt_s, task_share);

			/* a quarter period of slack: the timer's own lateness is no reason to wait
			 * one more period */
			if (!cond__holds(c, u, v, now, t->last_tick, for_ns, period_ns / 4) ||
			    !capsched__can_start(&t->sched, u, now))
				continue;
			trigger_fire(t, u, c, cond__mean(c, u), now);
			fired = true;
			cond__reset(c, u);
		}
	}
	t->last_tick = now;
	t->ticks++;
	callchain__round_end(t->cc);
	/* a capture started: the end timer armed (check_ends), or written at once if --capture 0 */
	if (fired || t->sched.stopping || t->max)
		trigger_check_ends(t, now);
	return 0;
}

int trigger_watch_start(struct trigger *t)
{
	uint64_t ns = (uint64_t)t->period_ms * 1000000;
	double ts[CPUSTAT_NR];
	int err;

	for (int i = 0; i < t->nr_conds; i++) {
		if ((err = cond__alloc_units(&t->conds[i], t->units.nr_units)))
			return err;
		if (t->conds[i].type == COND_SHARE)
			t->need_cs = true;
	}
	if (t->need_cs && !t->process) {
		if ((err = cpustat__init(&t->cs, t->nr_cpus)))
			return err;
		t->cs_ready = true;
		cpustat__read(&t->cs);
	}
	if ((err = open_rates(t)) || (err = tlat_set__start(&t->lat, t->p)))
		return err;
	t->timer_fd = timer__open(ns, ns);
	if (t->timer_fd < 0)
		return t->timer_fd;
	if ((err = prof__add_fd(t->p, t->timer_fd, EPOLLIN, on_tick, t)))
		return err;
	/* the first readings: the base of the first period's shares and rates */
	if (t->process)
		cpustat__task_shares(&t->task, true, 0, ts);
	for (int i = 0; i < t->nr_conds; i++)
		for (int u = 0; u < t->units.nr_units && t->conds[i].type == COND_RATE; u++)
			measure(t, &t->conds[i], u, 0, ts);
	t->last_tick = trigger_now(CLOCK_MONOTONIC);
	t->ticks = 1;
	return 0;
}

/* The first line: what is watched, how, and where captures go. */
void trigger_status_line(struct trigger *t)
{
	struct prof *p = t->p;
	char conds[512] = "";
	size_t n = 0;

	for (int i = 0; i < t->nr_conds && n < sizeof(conds); i++)
		n += (size_t)snprintf(conds + n, sizeof(conds) - n, "%s%s", i ? " or " : "",
				      t->conds[i].name);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		json__key(&p->json, "status");
		json__str(&p->json, "watching");
		json__key(&p->json, "target");
		json__str(&p->json, t->process ? p->title : t->machine ? "machine" : "per-cpu");
		json__key(&p->json, "conditions");
		json__arr(&p->json);
		for (int i = 0; i < t->nr_conds; i++)
			json__str(&p->json, t->conds[i].name);
		json__end(&p->json);
		json__key(&p->json, "for_s");
		json__dbl(&p->json, t->for_s);
		json__key(&p->json, "period_ms");
		json__i64(&p->json, t->period_ms);
		json__key(&p->json, "dir");
		json__str(&p->json, t->dir);
		json__end_line(&p->json);
	} else {
		out__printf(
			p->out,
			"perfscope trigger: watching %s%s every %ld ms: %s for %g s; captures of "
			"%g s at %ld Hz (+%g s before) into %s\n",
			t->process   ? ""
			: t->machine ? "the machine, "
				     : "each CPU of ",
			p->title, t->period_ms, conds, t->for_s, t->capture_s, t->freq, t->before_s,
			t->dir);
	}
	out__flush(p->out);
}

/* -i MS: the values last measured, per condition and unit. */
int trigger_interval(struct prof *p, void *priv, uint64_t now)
{
	struct trigger *t = priv;
	char when[40], un[32];

	trigger_fmt_time(trigger_now(CLOCK_REALTIME), when, sizeof(when), p->json_fmt);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		json__key(&p->json, "time");
		json__str(&p->json, when);
		json__key(&p->json, "values");
		json__obj(&p->json);
		for (int i = 0; i < t->nr_conds; i++) {
			json__key(&p->json, t->conds[i].name);
			json__obj(&p->json);
			for (int u = 0; u < t->units.nr_units; u++) {
				trigger_unit_name(t, u, un, sizeof(un));
				json__key(&p->json, un);
				if (t->conds[i].value[u] < 0)
					json__null(&p->json);
				else
					json__dbl(&p->json, round(t->conds[i].value[u] * 10) / 10);
			}
			json__end(&p->json);
		}
		json__end(&p->json);
		json__key(&p->json, "captures");
		json__i64(&p->json, t->sched.nr_started);
		json__end_line(&p->json);
		return 0;
	}
	out__printf(p->out, "%s", when);
	for (int i = 0; i < t->nr_conds; i++) {
		out__printf(p->out, "  %s:", t->conds[i].name);
		for (int u = 0; u < t->units.nr_units; u++) {
			trigger_unit_name(t, u, un, sizeof(un));
			if (t->conds[i].value[u] < 0)
				out__printf(p->out, " %s -", un);
			else
				out__printf(p->out, " %s %.1f", un, t->conds[i].value[u]);
		}
	}
	out__printf(p->out, "  captures: %d\n", t->sched.nr_started);
	return 0;
}
