/* perfscope trigger's captures: started at a fire, fed samples, written and announced at the end.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "capwrite.h"
#include "session.h"
#include "timer.h"
#include "trigger.h"

void trigger_fmt_time(uint64_t real_ns, char *buf, size_t len, bool iso)
{
	time_t sec = (time_t)(real_ns / NS);
	struct tm tm;
	char s[32];

	if (iso) {
		gmtime_r(&sec, &tm);
		strftime(s, sizeof(s), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(buf, len, "%s.%03uZ", s, (unsigned int)(real_ns / 1000000 % 1000));
	} else {
		localtime_r(&sec, &tm);
		strftime(s, sizeof(s), "%H:%M:%S", &tm);
		snprintf(buf, len, "%s.%03u", s, (unsigned int)(real_ns / 1000000 % 1000));
	}
}

void trigger_unit_name(const struct trigger *t, int unit, char *buf, size_t len)
{
	if (t->process)
		snprintf(buf, len, "pid%d", (int)t->task.pid);
	else if (aggr__unit_cpu(&t->units, unit) < 0)
		snprintf(buf, len, "all");
	else
		snprintf(buf, len, "cpu%d", aggr__unit_cpu(&t->units, unit));
}

/* The sampling rate of unit's CPUs: the flight recorder's while waiting, -F while capturing. */
static int set_freq(struct trigger *t, int unit, long hz)
{
	struct psc_evsel *evsel = t->p->events_arr[0].evsel;
	struct psc_cpumap *cpus = psc_evsel__cpus(evsel);
	struct psc_threadmap *threads = psc_evsel__threads(evsel);
	/*
	 * cpu-clock is a timer: the kernel turns a frequency into a fixed period when the event is
	 * created, so a new rate is given as a period (ns), never as a frequency.
	 */
	uint64_t v = NS / (uint64_t)hz;
	int err = 0;

	for (int ci = 0; ci < psc_cpumap__nr(cpus); ci++) {
		int cpu = psc_cpumap__cpu(cpus, ci);

		if (!t->process && aggr__unit_cpu(&t->units, unit) >= 0 &&
		    cpu != aggr__unit_cpu(&t->units, unit))
			continue;
		for (int ti = 0; ti < psc_threadmap__nr(threads); ti++) {
			int fd = psc_evsel__fd(evsel, ci, ti);

			if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_PERIOD, &v) && !err)
				err = -errno;
		}
	}
	return err;
}

/* A sample's stack into a capture, weighed as the number of -F samples it stands for. */
static void cap_add(struct trigger *t, struct capture *c, const struct psc_sample *s, bool before)
{
	const uint64_t *ips;
	uint64_t n = 1, nr;

	if (!t->cc || !c->on)
		return;
	/*
	 * Not from the sample's period: a timer event's reported period stays the one it was
	 * created with (hw.last_period) whatever PERF_EVENT_IOC_PERIOD set since. The rate is
	 * known instead: the recorder's before the fire, -F's after.
	 */
	if (before)
		n = ((uint64_t)t->freq + (uint64_t)t->standby_hz / 2) / (uint64_t)t->standby_hz;
	if (!n)
		n = 1;
	/* its maps read now, while it runs: the stack is symbolized when the capture is written */
	callchain__see(t->cc, (pid_t)s->pid);
	nr = callchain__sample_ips(t->cc, s, &ips);
	if (nr > CALLCHAIN_MAX_FRAMES)
		nr = CALLCHAIN_MAX_FRAMES;
	if (!stack_table__count(&c->stacks, s->pid, s->tid, prof__comm(t->p, s->pid, s->tid), ips,
				(uint32_t)nr, n, 0)) {
		c->dropped++;
		return;
	}
	c->samples++;
	if (before)
		c->before_samples++;
}

void trigger_add(struct trigger *t, int unit, const struct psc_sample *s)
{
	const struct capsched_win *w = &t->sched.win[unit];

	if (w->active && s->time >= w->from_ns && s->time < w->end_ns)
		cap_add(t, &t->caps[unit], s, s->time < w->fire_ns);
}

static void history_cb(void *ctx, int cpu, const struct psc_sample *s)
{
	struct trigger *t = ctx;
	int unit = aggr__find(&t->units, cpu);

	if (unit >= 0)
		cap_add(t, &t->caps[unit], s, true);
}

void trigger_fire(struct trigger *t, int unit, const struct cond *cond, double value, uint64_t now)
{
	struct capture *c = &t->caps[unit];
	const struct capsched_win *w = &t->sched.win[unit];
	char un[32];
	int err;

	memset(c, 0, sizeof(*c));
	c->on = !stack_table__init(&c->stacks, false);
	if (!c->on) {
		svclog__note(&t->log, "no memory for a capture of %s", cond->name);
		t->nr_failed++;
		return;
	}
	/* processes that exit during the capture keep their maps until it is written */
	if (t->cc)
		callchain__hold_exits(t->cc, true);
	c->cond = cond;
	c->value = value;
	c->fire_real_ns = trigger_now(CLOCK_REALTIME);
	/* the flight recorder holds nothing from before the run started */
	c->seq = capsched__start(&t->sched, unit, now, (uint64_t)(t->before_s * 1e9),
				 t->p->start_ns, (uint64_t)(t->capture_s * 1e9));
	err = set_freq(t, unit, t->freq);
	trigger_unit_name(t, unit, un, sizeof(un));
	if (err)
		svclog__note(
			&t->log,
			"capture %d (%s): the sampling rate could not be raised to %ld Hz: %s; "
			"profiling at %ld Hz",
			c->seq, un, t->freq, strerror(-err), t->standby_hz);
	/* what the flight recorder holds of the seconds before: the onset */
	if (t->fr && t->before_s > 0)
		flightrec__each(t->fr, aggr__unit_cpu(&t->units, unit), w->from_ns, now, history_cb,
				t);
	if (t->p->opts.verbose)
		svclog__note(&t->log, "capture %d: %s on %s (%.1f), profiling %.1f s", c->seq,
			     cond->name, un, value, t->capture_s);
}

static void write_json(struct trigger *t, struct out *out, struct json *j, int unit,
		       const struct capture *c, const struct capwrite_result *res, bool cut)
{
	const struct capsched_win *w = &t->sched.win[unit];
	char when[40];

	trigger_fmt_time(c->fire_real_ns, when, sizeof(when), true);
	json__begin(j, out);
	json__key(j, "capture");
	json__i64(j, c->seq);
	json__key(j, "cpu");
	json__i64(j, t->process ? -1 : aggr__unit_cpu(&t->units, unit));
	if (t->process) {
		json__key(j, "pid");
		json__i64(j, t->task.pid);
	}
	json__key(j, "start");
	json__str(j, when);
	json__key(j, "condition");
	json__str(j, c->cond->name);
	json__key(j, "value");
	json__dbl(j, round(c->value * 10) / 10); /* /proc/stat's ticks: 0.1 is already noise */
	json__key(j, "threshold");
	json__dbl(j, c->cond->threshold);
	json__key(j, "for_s");
	json__dbl(j, t->for_s);
	json__key(j, "before_s");
	json__dbl(j, (double)(w->fire_ns - w->from_ns) / 1e9);
	json__key(j, "capture_s");
	json__dbl(j, t->capture_s);
	json__key(j, "freq");
	json__i64(j, t->freq);
	json__key(j, "samples");
	json__u64(j, c->samples);
	json__key(j, "before_samples");
	json__u64(j, c->before_samples);
	json__key(j, "stacks");
	json__u64(j, res->stacks);
	json__key(j, "lost");
	json__u64(j, c->lost);
	json__key(j, "dropped");
	json__u64(j, c->dropped);
	json__key(j, "cut");
	json__bool(j, cut);
	json__key(j, "files");
	json__arr(j);
	for (int i = 0; i < res->nr; i++)
		json__str(j, res->files[i]);
	json__end(j);
	if (res->err) {
		json__key(j, "error");
		json__str(j, strerror(-res->err));
	}
	json__key(j, "removed");
	json__u64(j, t->ds.removed);
	json__end_line(j);
}

/* The line announcing a capture, on standard output and in the log. */
static void write_record(struct trigger *t, struct out *out, struct json *j, int unit,
			 const struct capture *c, const struct capwrite_result *res, bool cut)
{
	const struct capsched_win *w = &t->sched.win[unit];
	char when[40], un[32];

	if (t->p->json_fmt) {
		write_json(t, out, j, unit, c, res, cut);
		return;
	}
	trigger_unit_name(t, unit, un, sizeof(un));
	trigger_fmt_time(c->fire_real_ns, when, sizeof(when), false);
	out__printf(out,
		    "%s capture %d: %s %s (%.1f) for %g s; %.1f s before + %g s at %ld Hz: "
		    "%llu samples (%llu before), %zu stacks",
		    when, c->seq, un, c->cond->name, c->value, t->for_s,
		    (double)(w->fire_ns - w->from_ns) / 1e9, t->capture_s, t->freq,
		    (unsigned long long)c->samples, (unsigned long long)c->before_samples,
		    res->stacks);
	if (c->lost)
		out__printf(out, ", %llu lost", (unsigned long long)c->lost);
	if (c->dropped)
		out__printf(out, ", %llu left out (no memory)", (unsigned long long)c->dropped);
	if (cut)
		out__puts(out, ", cut short");
	if (res->err)
		out__printf(out, "; %s not written: %s", res->failed ? res->failed : "",
			    strerror(-res->err));
	out__puts(out, res->nr ? ":" : "");
	for (int i = 0; i < res->nr; i++)
		out__printf(out, " %s", res->files[i]);
	out__putc(out, '\n');
}

/* No capture left going on: the maps of processes that exited go again a round later. */
static void release_exits(struct trigger *t)
{
	for (int u = 0; u < t->units.nr_units; u++)
		if (t->sched.win[u].active)
			return;
	if (t->cc)
		callchain__hold_exits(t->cc, false);
}

void trigger_finish(struct trigger *t, int unit, bool cut)
{
	struct capture *c = &t->caps[unit];
	const struct capsched_win *w = &t->sched.win[unit];
	char stem[4096], tag[96], un[32], title[256], sub[256], when[40];
	uint64_t removed = t->ds.removed, now = trigger_now(CLOCK_MONOTONIC);
	uint64_t end = now < w->end_ns ? now : w->end_ns;
	struct capwrite_opts wo = { .title = title, .subtitle = sub, .freq = t->freq };
	struct capwrite_result res;

	if (!w->active)
		return;
	if (!t->sched.stopping || !cut)
		set_freq(t, unit, t->standby_hz);
	trigger_unit_name(t, unit, un, sizeof(un));
	snprintf(tag, sizeof(tag), "%s-%s", c->cond->tag, un);
	capdir__stem(stem, sizeof(stem), t->dir, TRIGGER_CAP_PREFIX, c->fire_real_ns, tag);
	trigger_fmt_time(c->fire_real_ns, when, sizeof(when), true);
	snprintf(title, sizeof(title), "perfscope trigger: %s on %s (%.1f) at %s", c->cond->name,
		 un, c->value, when);
	snprintf(sub, sizeof(sub), "%.1f s before the fire (flight recorder) + %.1f s at %ld Hz%s",
		 (double)(w->fire_ns - w->from_ns) / 1e9, (double)(end - w->fire_ns) / 1e9, t->freq,
		 cut ? ", cut short" : "");
	wo.start_real_ns = c->fire_real_ns - (w->fire_ns - w->from_ns);
	wo.duration_ns = end - w->from_ns;
	if (capwrite__all(t->cc, &c->stacks, stem, &wo, &res))
		t->nr_failed++;
	else
		t->nr_written++;
	capdir__enforce(t->dir, TRIGGER_CAP_PREFIX, t->max_disk, res.nr ? stem : NULL, &t->ds);
	write_record(t, t->p->out, &t->p->json, unit, c, &res, cut);
	out__flush(t->p->out);
	if (t->log.out) {
		write_record(t, t->log.out, &t->log.json, unit, c, &res, cut);
		out__flush(t->log.out);
	}
	if (res.err)
		svclog__note(&t->log, "capture %d: cannot write %s%s: %s", c->seq, stem,
			     res.failed ? res.failed : "", strerror(-res.err));
	if (t->ds.removed > removed)
		svclog__note(&t->log,
			     "removed the %llu oldest capture(s) to stay under --max-disk %s",
			     (unsigned long long)(t->ds.removed - removed),
			     t->max_disk_text ? t->max_disk_text : "100M");
	stack_table__exit(&c->stacks);
	c->on = false;
	capsched__end(&t->sched, unit, now);
	release_exits(t);
}

/* Writes the captures that ended, arms the timer at the next end, stops when all is done. */
void trigger_check_ends(struct trigger *t, uint64_t now)
{
	int u;

	while ((u = capsched__due(&t->sched, now)) >= 0)
		trigger_finish(t, u, false);
	capsched__arm(&t->sched);
	if (capsched__done(&t->sched)) {
		if (!t->sched.stopping)
			svclog__note(&t->log, "%d captures made (--max %ld); stopping",
				     t->sched.nr_started, t->max);
		t->sched.stopping =
			true; /* said once: the loop may still call here before it ends */
		prof__stop(t->p);
	}
}

int trigger_on_end_timer(void *ctx, int fd, uint32_t revents)
{
	struct trigger *t = ctx;

	if (revents == SESSION_FD_END || !timer__ticks(fd))
		return 0;
	trigger_check_ends(t, trigger_now(CLOCK_MONOTONIC));
	return 0;
}
