/* perfscope trigger: watch CPU shares and event rates cheaply, capture stacks when one holds. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "callchain.h"
#include "capdir.h"
#include "capwrite.h"
#include "cpustat.h"
#include "flame.h"
#include "flightrec.h"
#include "profiler.h"
#include "session.h"

#define MAX_CONDS 8
#define CAP_PREFIX "trigger-"
#define NS 1000000000ull
/* a capture is written this long after its end: its last samples out of the rings by then */
#define END_GRACE_NS 200000000ull

enum cond_type { COND_SHARE, COND_RATE };

/* One --sys/--user/--cpu/--iowait/--rate, with its state per unit (CPU, machine or process). */
struct cond {
	enum cond_type type;
	enum cpustat_kind kind; /* COND_SHARE */
	double threshold;
	char name[96]; /* "sys>=50%", "sched:sched_switch>=50000/s" */
	char tag[48]; /* in file names: "sys", "rate-sched_switch" */
	const char *event; /* COND_RATE: the event text */
	struct psc_event_list *specs;
	struct psc_evsel *evsel;
	uint64_t *last; /* per unit: the count at the previous reading */
	uint64_t *since; /* per unit: start of the run of readings over the threshold, 0: none */
	double *sum; /* per unit: their values, for the mean reported */
	uint32_t *n;
	double *value; /* per unit: the last reading (-1: none) */
};

/* A capture going on for a unit. */
struct capture {
	bool active;
	const struct cond *cond;
	double value; /* the mean over the --for window */
	uint64_t fire_ns, from_ns, end_ns; /* CLOCK_MONOTONIC */
	uint64_t fire_real_ns; /* wall clock at the fire, for its name and "start" */
	struct flame *fl;
	uint64_t samples, before_samples, lost, dropped;
	int seq;
};

struct trigger {
	/* options */
	double for_s, capture_s, before_s, cooldown_s;
	long freq, standby_hz, period_ms, max;
	const char *dir, *log_path, *max_disk_text;
	bool machine, before_set, cooldown_set;
	uint64_t max_disk;
	struct cond conds[MAX_CONDS];
	int nr_conds;

	/* what is watched: per CPU (units = the target's CPUs), the machine, or a process */
	int nr_units;
	int *unit_cpu; /* per unit: CPU number, -1 for all of them */
	int *cpu_unit; /* per CPU number: unit, -1 when not watched */
	int nr_cpus; /* possible CPUs */
	bool process;
	pid_t pid; /* process mode: /proc/PID/stat */
	uint64_t task_user, task_sys; /* process mode: the previous reading */
	struct cpustat cs;
	bool cs_ready, need_cs;
	struct flightrec *fr;
	/*
	 * Stacks symbolized only when a capture is written: processes' maps are read from /proc
	 * then (lazily), not followed through every fork and mmap of the machine while waiting,
	 * which cost most of the standby CPU on a busy machine (2-3 ms/s at a build's churn).
	 */
	struct callchain *cc;
	struct capture *caps; /* per unit */
	uint64_t *cooldown_until; /* per unit */

	int timer_fd, hup_fd;
	int end_fd; /* a timer at the next capture's end (+ END_GRACE_NS), whatever --period is */
	uint64_t last_tick, ticks;
	int nr_captures, nr_written, nr_failed;
	bool stopping; /* a stop signal came: no new capture, stop when the last one is written */
	uint64_t lost; /* all samples the kernel dropped */
	struct capdir_stats ds;
	long clk_tck;
	char fold[8192];

	/* --log FILE: every line also appended there, reopened at SIGHUP */
	struct out *log;
	struct json log_json;
	uint64_t reopened;
	struct prof *p;
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* ---- options ---- */

static int parse_pct(struct prof *p, struct trigger *t, enum cpustat_kind kind, const char *arg)
{
	struct cond *c;
	char *end;
	double v;

	if (t->nr_conds == MAX_CONDS)
		return prof_usage(p, "at most %d conditions", MAX_CONDS);
	errno = 0;
	v = strtod(arg, &end);
	if (*end == '%')
		end++;
	if (errno || end == arg || *end || !(v > 0) || v > 100)
		return prof_usage(p, "--%s takes a percentage above 0 and at most 100, not '%s'",
				  cpustat__kind_name(kind), arg);
	c = &t->conds[t->nr_conds++];
	c->type = COND_SHARE;
	c->kind = kind;
	c->threshold = v;
	snprintf(c->name, sizeof(c->name), "%s>=%g%%", cpustat__kind_name(kind), v);
	snprintf(c->tag, sizeof(c->tag), "%s", cpustat__kind_name(kind));
	return 0;
}

static int opt_sys(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_SYS, arg);
}

static int opt_user(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_USER, arg);
}

static int opt_cpu(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_BUSY, arg);
}

static int opt_iowait(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_IOWAIT, arg);
}

/* --rate EVENT>N: events per second of EVENT at least N. */
static int opt_rate(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;
	struct psc_parse_error perr = { .pos = -1 };
	const char *gt = strrchr(arg, '>');
	struct cond *c;
	char *end, *ev;
	double v;
	int ret;

	if (t->nr_conds == MAX_CONDS)
		return prof_usage(p, "at most %d conditions", MAX_CONDS);
	if (!gt || gt == arg)
		return prof_usage(p,
				  "--rate takes EVENT>N (events per second), e.g. "
				  "'sched:sched_switch>50000', not '%s'",
				  arg);
	errno = 0;
	v = strtod(gt + 1 + (gt[1] == '='), &end);
	if (errno || end == gt + 1 || *end || !(v > 0))
		return prof_usage(p, "--rate %s: N must be a number of events per second above 0",
				  arg);
	c = &t->conds[t->nr_conds];
	ev = strndup(arg, (size_t)(gt - arg));
	if (!ev)
		return -ENOMEM;
	if (strchr(ev, ':'))
		psc_tracefs__mount();
	ret = psc_parse_events(ev, NULL, &c->specs, &perr);
	if (ret) {
		cli_report_parse_error(p->name, ev, &perr, ret);
		free(ev);
		return ret == -ENOMEM ? -ENOMEM : 2;
	}
	if (c->specs->nr != 1) {
		free(ev);
		psc_event_list__delete(c->specs);
		c->specs = NULL;
		return prof_usage(
			p, "--rate %s: one event per --rate (give --rate again for another)", arg);
	}
	t->nr_conds++;
	c->type = COND_RATE;
	c->event = ev;
	c->threshold = v;
	snprintf(c->name, sizeof(c->name), "%s>=%g/s", ev, v);
	{
		const char *n = c->specs->specs[0].event ? c->specs->specs[0].event
							 : c->specs->specs[0].name;

		snprintf(c->tag, sizeof(c->tag), "rate-%s", n);
	}
	return 0;
}

static int opt_latency(struct prof *p, void *priv, const char *arg)
{
	(void)priv;
	(void)arg;
	return prof_usage(p, "--latency is not available yet: it needs the two-event engine; "
			     "use --rate or the CPU shares");
}

static int opt_max_disk(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;

	if (capdir__parse_size(arg, &t->max_disk))
		return prof_usage(p, "--max-disk takes a size (500M, 2G, 0 for no limit), not '%s'",
				  arg);
	t->max_disk_text = arg;
	return 0;
}

static int parse_secs(struct prof *p, const char *opt, const char *arg, double *v, bool *set)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	if (errno || end == arg || *end || *v < 0 || *v > 86400.0 * 365)
		return prof_usage(p, "--%s takes seconds (0 or more), not '%s'", opt, arg);
	*set = true;
	return 0;
}

static int opt_before(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;

	return parse_secs(p, "before", arg, &t->before_s, &t->before_set);
}

static int opt_cooldown(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;

	return parse_secs(p, "cooldown", arg, &t->cooldown_s, &t->cooldown_set);
}

#define OFF(f) offsetof(struct trigger, f)

static const struct prof_opt trigger_opts[] = {
	{ "sys", 0, "PCT", PROF_OPT_FN, 0, 0, 0, opt_sys,
	  "capture when a CPU spends PCT% or more of its time in the kernel\n(system time, as top's "
	  "%sy)" },
	{ "user", 0, "PCT", PROF_OPT_FN, 0, 0, 0, opt_user, "... in user space (user + nice)" },
	{ "cpu", 0, "PCT", PROF_OPT_FN, 0, 0, 0, opt_cpu, "... busy (not idle, not iowait)" },
	{ "iowait", 0, "PCT", PROF_OPT_FN, 0, 0, 0, opt_iowait, "... idle waiting for I/O" },
	{ "rate", 0, "EVENT>N", PROF_OPT_FN, 0, 0, 0, opt_rate,
	  "... when EVENT happens N times a second or more (counted,\nnot sampled), e.g. "
	  "'sched:sched_switch>50000'; repeatable" },
	{ "latency", 0, "SPEC", PROF_OPT_FN, 0, 0, 0, opt_latency,
	  "not available yet (needs the two-event engine)" },
	{ "for", 0, "S", PROF_OPT_DOUBLE, OFF(for_s), 0, 0, NULL,
	  "a condition must hold S seconds in a row (default 1)" },
	{ "machine", 0, NULL, PROF_OPT_FLAG, OFF(machine), 0, 0, NULL,
	  "conditions over the whole machine (the CPUs of -C together),\nnot per CPU; captures "
	  "take every CPU" },
	{ "capture", 0, "S", PROF_OPT_DOUBLE, OFF(capture_s), 0, 0, NULL,
	  "seconds profiled once a condition fires (default 3)" },
	{ "before", 0, "S", PROF_OPT_FN, 0, 0, 0, opt_before,
	  "seconds before the fire put into the capture from the flight\nrecorder (default: "
	  "--for + 2, so the onset is in it; 0: none)" },
	{ "freq", 'F', "HZ", PROF_OPT_LONG, OFF(freq), 1, 100000, NULL,
	  "stack samples per second during a capture (default 99)" },
	{ "standby-hz", 0, "HZ", PROF_OPT_LONG, OFF(standby_hz), 1, 1000, NULL,
	  "flight recorder's samples per second and CPU while waiting\n(default 10)" },
	{ "period", 0, "MS", PROF_OPT_LONG, OFF(period_ms), 10, 10000, NULL,
	  "how often the conditions are measured (default 200)" },
	{ "output-dir", 'o', "DIR", PROF_OPT_STRING, OFF(dir), 0, 0, NULL,
	  "where captures are written (default: the current directory),\ncreated if missing" },
	{ "cooldown", 0, "S", PROF_OPT_FN, 0, 0, 0, opt_cooldown,
	  "no new capture of a CPU (or the machine) for S seconds after\none ends (default 10)" },
	{ "max", 0, "N", PROF_OPT_LONG, OFF(max), 0, 1000000000, NULL,
	  "stop after N captures (default 0: no limit)" },
	{ "max-disk", 0, "SIZE", PROF_OPT_FN, 0, 0, 0, opt_max_disk,
	  "keep the captures in DIR under SIZE (k, M, G), removing the\noldest first (default "
	  "100M; 0: no limit)" },
	{ "log", 0, "FILE", PROF_OPT_STRING, OFF(log_path), 0, 0, NULL,
	  "also append every line (captures, notes) to FILE, reopened on\nSIGHUP (logrotate)" },
	{ NULL },
};

/* ---- lines: stdout (the results) and --log ---- */

static void log_open(struct trigger *t)
{
	int fd;

	if (!t->log_path)
		return;
	fd = open(t->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "perfscope trigger: cannot open the log '%s': %s\n", t->log_path,
			strerror(errno));
		return;
	}
	t->log = out__new(fd, 64 * 1024);
	if (!t->log)
		close(fd);
}

static void log_close(struct trigger *t)
{
	if (!t->log)
		return;
	out__flush(t->log);
	close(t->log->fd);
	out__delete(t->log);
	t->log = NULL;
}

/* A note for people: stderr (the journal under systemd), and the log. */
static void note(struct trigger *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct trigger *t, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "perfscope trigger: %s\n", line);
	if (t->log) {
		out__printf(t->log, "perfscope trigger: %s\n", line);
		out__flush(t->log);
	}
}

static void fmt_time(uint64_t real_ns, char *buf, size_t len, bool iso)
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

static void unit_name(const struct trigger *t, int unit, char *buf, size_t len)
{
	if (t->process)
		snprintf(buf, len, "pid%d", (int)t->pid);
	else if (t->unit_cpu[unit] < 0)
		snprintf(buf, len, "all");
	else
		snprintf(buf, len, "cpu%d", t->unit_cpu[unit]);
}

/* ---- sampling rate: the flight recorder's while waiting, -F while capturing ---- */

static int set_freq(struct trigger *t, int unit, long hz)
{
	struct prof *p = t->p;
	struct psc_evsel *evsel = p->events_arr[0].evsel;
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

		if (!t->process && t->unit_cpu[unit] >= 0 && cpu != t->unit_cpu[unit])
			continue;
		for (int ti = 0; ti < psc_threadmap__nr(threads); ti++) {
			int fd = psc_evsel__fd(evsel, ci, ti);

			if (fd >= 0 && ioctl(fd, PERF_EVENT_IOC_PERIOD, &v) && !err)
				err = -errno;
		}
	}
	return err;
}

/* ---- captures ---- */

/* A sample's stack into a capture, weighed as the number of -F samples it stands for. */
static void cap_add(struct trigger *t, struct capture *c, const struct psc_sample *s, bool before)
{
	struct prof *p = t->p;
	struct callchain *cc = t->cc;
	uint64_t n = 1;
	int len;

	if (!cc || !c->fl)
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
	len = callchain__fold(cc, s, prof__comm(p, s->pid, s->tid), t->fold, sizeof(t->fold));
	if (len >= (int)sizeof(t->fold))
		len = (int)sizeof(t->fold) - 1;
	if (len <= 0 || flame__add(c->fl, t->fold, (size_t)len, n)) {
		c->dropped++;
		return;
	}
	c->samples++;
	if (before)
		c->before_samples++;
}

static void history_cb(void *ctx, int cpu, const struct psc_sample *s)
{
	struct trigger *t = ctx;
	int unit = t->process || t->machine ? 0 : t->cpu_unit[cpu];

	(void)cpu;
	if (unit >= 0)
		cap_add(t, &t->caps[unit], s, true);
}

static void fire(struct trigger *t, int unit, const struct cond *cond, double value, uint64_t now)
{
	struct capture *c = &t->caps[unit];
	char un[32];
	int err;

	memset(c, 0, sizeof(*c));
	c->fl = flame__new();
	if (!c->fl) {
		note(t, "no memory for a capture of %s", cond->name);
		t->nr_failed++;
		return;
	}
	c->active = true;
	c->cond = cond;
	c->value = value;
	c->seq = ++t->nr_captures;
	c->fire_ns = now;
	c->fire_real_ns = now_ns(CLOCK_REALTIME);
	/* the flight recorder holds nothing from before the run started */
	c->from_ns = now - (uint64_t)(t->before_s * 1e9 < (double)now ? t->before_s * 1e9 : 0);
	if (c->from_ns < t->p->start_ns)
		c->from_ns = t->p->start_ns;
	c->end_ns = now + (uint64_t)(t->capture_s * 1e9);
	err = set_freq(t, unit, t->freq);
	unit_name(t, unit, un, sizeof(un));
	if (err)
		note(t,
		     "capture %d (%s): the sampling rate could not be raised to %ld Hz: %s; "
		     "profiling at %ld Hz",
		     c->seq, un, t->freq, strerror(-err), t->standby_hz);
	/* what the flight recorder holds of the seconds before: the onset */
	if (t->fr && t->before_s > 0)
		flightrec__each(t->fr, t->unit_cpu[unit], c->from_ns, now, history_cb, t);
	if (t->p->opts.verbose)
		note(t, "capture %d: %s on %s (%.1f), profiling %.1f s", c->seq, cond->name, un,
		     value, t->capture_s);
}

static void write_record(struct trigger *t, struct out *out, struct json *j, int unit,
			 const struct capture *c, const struct capwrite_result *res, bool cut)
{
	char when[40], un[32];
	int cpu = t->process ? -1 : t->unit_cpu[unit];

	unit_name(t, unit, un, sizeof(un));
	if (t->p->json_fmt) {
		fmt_time(c->fire_real_ns, when, sizeof(when), true);
		json__begin(j, out);
		json__key(j, "capture");
		json__i64(j, c->seq);
		json__key(j, "cpu");
		json__i64(j, cpu);
		if (t->process) {
			json__key(j, "pid");
			json__i64(j, t->pid);
		}
		json__key(j, "start");
		json__str(j, when);
		json__key(j, "condition");
		json__str(j, c->cond->name);
		json__key(j, "value");
		json__dbl(j,
			  round(c->value * 10) / 10); /* /proc/stat's ticks: 0.1 is already noise */
		json__key(j, "threshold");
		json__dbl(j, c->cond->threshold);
		json__key(j, "for_s");
		json__dbl(j, t->for_s);
		json__key(j, "before_s");
		json__dbl(j, (double)(c->fire_ns - c->from_ns) / 1e9);
		json__key(j, "capture_s");
		json__dbl(j, t->capture_s);
		json__key(j, "freq");
		json__i64(j, t->freq);
		json__key(j, "samples");
		json__u64(j, c->samples);
		json__key(j, "before_samples");
		json__u64(j, c->before_samples);
		json__key(j, "stacks");
		json__u64(j, c->fl ? flame__nr_stacks(c->fl) : 0);
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
	} else {
		fmt_time(c->fire_real_ns, when, sizeof(when), false);
		out__printf(out,
			    "%s capture %d: %s %s (%.1f) for %g s; %.1f s before + %g s at %ld Hz: "
			    "%llu samples (%llu before), %zu stacks",
			    when, c->seq, un, c->cond->name, c->value, t->for_s,
			    (double)(c->fire_ns - c->from_ns) / 1e9, t->capture_s, t->freq,
			    (unsigned long long)c->samples, (unsigned long long)c->before_samples,
			    c->fl ? flame__nr_stacks(c->fl) : 0);
		if (c->lost)
			out__printf(out, ", %llu lost", (unsigned long long)c->lost);
		if (c->dropped)
			out__printf(out, ", %llu left out (no memory)",
				    (unsigned long long)c->dropped);
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
}

static void finish(struct trigger *t, int unit, bool cut)
{
	struct capture *c = &t->caps[unit];
	char stem[4096], tag[96], un[32], title[256], sub[256], when[40];
	uint64_t removed = t->ds.removed, now = now_ns(CLOCK_MONOTONIC);
	struct capwrite_opts wo = {
		.title = title, .subtitle = sub, .freq = t->freq, .root_is_comm = true
	};
	struct capwrite_result res;

	if (!c->active)
		return;
	c->active = false;
	if (!t->stopping || !cut)
		set_freq(t, unit, t->standby_hz);
	unit_name(t, unit, un, sizeof(un));
	snprintf(tag, sizeof(tag), "%s-%s", c->cond->tag, un);
	capdir__stem(stem, sizeof(stem), t->dir, CAP_PREFIX, c->fire_real_ns, tag);
	fmt_time(c->fire_real_ns, when, sizeof(when), true);
	snprintf(title, sizeof(title), "perfscope trigger: %s on %s (%.1f) at %s", c->cond->name,
		 un, c->value, when);
	snprintf(sub, sizeof(sub), "%.1f s before the fire (flight recorder) + %.1f s at %ld Hz%s",
		 (double)(c->fire_ns - c->from_ns) / 1e9,
		 (double)((now < c->end_ns ? now : c->end_ns) - c->fire_ns) / 1e9, t->freq,
		 cut ? ", cut short" : "");
	wo.start_real_ns = c->fire_real_ns - (c->fire_ns - c->from_ns);
	wo.duration_ns = (now < c->end_ns ? now : c->end_ns) - c->from_ns;
	if (capwrite__all(c->fl, stem, &wo, &res))
		t->nr_failed++;
	else
		t->nr_written++;
	capdir__enforce(t->dir, CAP_PREFIX, t->max_disk, res.nr ? stem : NULL, &t->ds);
	write_record(t, t->p->out, &t->p->json, unit, c, &res, cut);
	out__flush(t->p->out);
	if (t->log) {
		write_record(t, t->log, &t->log_json, unit, c, &res, cut);
		out__flush(t->log);
	}
	if (res.err)
		note(t, "capture %d: cannot write %s%s: %s", c->seq, stem,
		     res.failed ? res.failed : "", strerror(-res.err));
	if (t->ds.removed > removed)
		note(t, "removed the %llu oldest capture(s) to stay under --max-disk %s",
		     (unsigned long long)(t->ds.removed - removed),
		     t->max_disk_text ? t->max_disk_text : "100M");
	flame__delete(c->fl);
	c->fl = NULL;
	t->cooldown_until[unit] = now + (uint64_t)(t->cooldown_s * 1e9);
}

static bool any_active(const struct trigger *t)
{
	for (int u = 0; u < t->nr_units; u++)
		if (t->caps[u].active)
			return true;
	return false;
}

/* Writes the captures that ended, arms the timer at the next end, stops when all is done. */
static void check_ends(struct trigger *t, uint64_t now)
{
	uint64_t next = 0;

	for (int u = 0; u < t->nr_units; u++) {
		struct capture *c = &t->caps[u];

		if (c->active && now >= c->end_ns + END_GRACE_NS)
			finish(t, u, false);
		if (c->active && (!next || c->end_ns + END_GRACE_NS < next))
			next = c->end_ns + END_GRACE_NS;
	}
	if (next && t->end_fd >= 0) {
		struct itimerspec its = { .it_value = { (time_t)(next / NS), (long)(next % NS) } };

		timerfd_settime(t->end_fd, TFD_TIMER_ABSTIME, &its, NULL);
	}
	if (!any_active(t) && (t->stopping || (t->max && t->nr_captures >= t->max))) {
		if (!t->stopping)
			note(t, "%d captures made (--max %ld); stopping", t->nr_captures, t->max);
		t->stopping = true; /* said once: the loop may still call here before it ends */
		prof__stop(t->p);
	}
}

static int on_end_timer(void *ctx, int fd, uint32_t revents)
{
	struct trigger *t = ctx;
	uint64_t expirations;

	if (revents == SESSION_FD_END)
		return 0;
	if (read(fd, &expirations, sizeof(expirations)) < 0)
		return 0;
	check_ends(t, now_ns(CLOCK_MONOTONIC));
	return 0;
}

/* ---- the conditions, every --period ---- */

/* The condition's value on unit over the last period, or < 0 when unknown. */
static double measure(struct trigger *t, struct cond *c, int unit, double dt_s,
		      const double *task_share)
{
	if (c->type == COND_SHARE) {
		if (t->process)
			return task_share[c->kind];
		return cpustat__share(&t->cs, t->unit_cpu[unit], c->kind);
	}
	/* a rate: the counter's growth (per CPU, or summed) over the time elapsed */
	{
		struct psc_cpumap *cpus = psc_evsel__cpus(c->evsel);
		uint64_t total = 0, prev = c->last[unit];

		for (int ci = 0; ci < psc_cpumap__nr(cpus); ci++) {
			struct psc_counts cnt;
			int cpu = psc_cpumap__cpu(cpus, ci);

			if (!t->process && t->unit_cpu[unit] >= 0 && cpu != t->unit_cpu[unit])
				continue;
			for (int ti = 0; ti < psc_threadmap__nr(psc_evsel__threads(c->evsel)); ti++)
				if (!psc_evsel__read(c->evsel, ci, ti, &cnt))
					total += cnt.val;
		}
		c->last[unit] = total;
		if (!t->ticks || dt_s <= 0 || total < prev)
			return -1;
		return (double)(total - prev) / dt_s;
	}
}

static void task_shares(struct trigger *t, double dt_s, double *share)
{
	uint64_t user, sys;
	double tick = (double)t->clk_tck;

	for (int k = 0; k < CPUSTAT_NR; k++)
		share[k] = -1;
	if (cpustat__task(t->pid, &user, &sys))
		return;
	if (t->ticks && dt_s > 0) {
		/* of one CPU: a process with threads on several may go over 100 */
		share[CPUSTAT_USER] = 100.0 * (double)(user - t->task_user) / tick / dt_s;
		share[CPUSTAT_SYS] = 100.0 * (double)(sys - t->task_sys) / tick / dt_s;
		share[CPUSTAT_BUSY] = share[CPUSTAT_USER] + share[CPUSTAT_SYS];
	}
	t->task_user = user;
	t->task_sys = sys;
}

static int on_tick(void *ctx, int fd, uint32_t revents)
{
	struct trigger *t = ctx;
	uint64_t expirations, now = now_ns(CLOCK_MONOTONIC);
	uint64_t for_ns = (uint64_t)(t->for_s * 1e9), period_ns = (uint64_t)t->period_ms * 1000000;
	double dt_s = t->last_tick ? (double)(now - t->last_tick) / 1e9 : 0;
	double task_share[CPUSTAT_NR];
	bool fired = false;

	if (revents == SESSION_FD_END)
		return 0;
	if (read(fd, &expirations, sizeof(expirations)) < 0)
		return 0;
	if (t->need_cs && !t->process)
		cpustat__read(&t->cs);
	if (t->process)
		task_shares(t, dt_s, task_share);
	for (int ci = 0; ci < t->nr_conds; ci++) {
		struct cond *c = &t->conds[ci];

		for (int u = 0; u < t->nr_units; u++) {
			double v = measure(t, c, u, dt_s, task_share);

			c->value[u] = v;
			if (v < c->threshold) {
				c->since[u] = 0;
				c->sum[u] = 0;
				c->n[u] = 0;
				continue;
			}
			if (!c->since[u])
				c->since[u] = t->last_tick ? t->last_tick : now;
			c->sum[u] += v;
			c->n[u]++;
			/* a quarter period of slack: the timer's own lateness is no reason to wait
			 * one more period */
			if (now - c->since[u] + period_ns / 4 < for_ns || t->caps[u].active ||
			    t->stopping || now < t->cooldown_until[u] ||
			    (t->max && t->nr_captures >= t->max))
				continue;
			fire(t, u, c, c->sum[u] / c->n[u], now);
			fired = true;
			c->since[u] = 0;
			c->sum[u] = 0;
			c->n[u] = 0;
		}
	}
	t->last_tick = now;
	t->ticks++;
	callchain__round_end(t->cc);
	/* a capture started: the end timer armed (check_ends), or written at once if --capture 0 */
	if (fired || t->stopping || t->max)
		check_ends(t, now);
	return 0;
}

static int on_hup(void *ctx, int fd, uint32_t revents)
{
	struct trigger *t = ctx;
	struct signalfd_siginfo si;

	if (revents == SESSION_FD_END)
		return 0;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		log_close(t);
		log_open(t);
		t->reopened++;
		if (t->p->opts.verbose || !t->log)
			note(t, "SIGHUP: %s", t->log_path ? "log reopened" : "no --log to reopen");
	}
	return 0;
}

/* ---- hooks ---- */

static int trigger_check(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	t->p = p;
	t->timer_fd = t->hup_fd = t->end_fd = -1;
	if (!t->nr_conds)
		return prof_usage(p,
				  "which condition? give --sys, --user, --cpu, --iowait or --rate, "
				  "e.g. --sys 50");
	if (!t->for_s)
		t->for_s = 1;
	if (!t->capture_s)
		t->capture_s = 3;
	if (!t->before_set)
		t->before_s = t->for_s + 2;
	if (!t->cooldown_set)
		t->cooldown_s = 10;
	if (!t->freq)
		t->freq = 99;
	if (!t->standby_hz)
		t->standby_hz = 10;
	if (!t->period_ms)
		t->period_ms = 200;
	if (!t->max_disk_text)
		t->max_disk = 100ull << 20;
	if (!t->dir)
		t->dir = ".";
	t->process = p->opts.nr_pids || p->opts.nr_tids || p->opts.command;
	if (p->opts.nr_tids)
		return prof_usage(p, "-t is not supported: give the process (-p PID)");
	if (t->process && t->machine)
		return prof_usage(p, "--machine is about CPUs: not with -p or a COMMAND");
	for (int i = 0; i < t->nr_conds; i++)
		if (t->process && t->conds[i].type == COND_SHARE &&
		    t->conds[i].kind == CPUSTAT_IOWAIT)
			return prof_usage(p, "--iowait is a CPU's state: not with -p or a COMMAND");
	{
		int err = capdir__prepare(t->dir);

		if (err) {
			fprintf(stderr, "perfscope trigger: cannot write captures into '%s': %s\n",
				t->dir, strerror(-err));
			return 1;
		}
	}
	t->clk_tck = sysconf(_SC_CLK_TCK);
	if (t->clk_tck <= 0)
		t->clk_tck = 100;
	log_open(t);
	return 0;
}

static int trigger_event(struct prof *p, void *priv, struct prof_event *ev,
			 struct perf_event_attr *attr)
{
	struct trigger *t = priv;

	(void)p;
	(void)ev;
	attr->freq = 0;
	attr->sample_period = NS / (uint64_t)t->standby_hz;
	/* stacks in every sample: the flight recorder and the captures are made of them */
	attr->sample_type |= PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	return 0;
}

static int open_rates(struct prof *p, struct trigger *t)
{
	for (int i = 0; i < t->nr_conds; i++) {
		struct cond *c = &t->conds[i];
		struct psc_cpumap *any = NULL;
		struct psc_threadmap *none = NULL;
		struct perf_event_attr *a;
		int err;

		if (c->type != COND_RATE)
			continue;
		c->evsel = psc_evsel__new_spec(&c->specs->specs[0]);
		if (!c->evsel)
			return -errno;
		a = psc_evsel__attr_mut(c->evsel);
		a->sample_period = 0;
		a->sample_freq = 0;
		a->freq = 0;
		a->disabled = 0;
		if (t->process) {
			any = psc_cpumap__new_any();
			PSC_OPTS(psc_evsel_open_opts, oo, .inherit = true);
			err = psc_evsel__open(c->evsel, any, p->target.threads, &oo);
			psc_cpumap__put(any);
		} else {
			none = psc_threadmap__new_any();
			err = psc_evsel__open(c->evsel, p->target.cpus, none, NULL);
			psc_threadmap__put(none);
		}
		if (err) {
			char why[256];

			fprintf(stderr, "perfscope trigger: --rate %s: cannot count it: %s\n",
				c->event, psc_strerror_open(err, c->event, why, sizeof(why)));
			return 1;
		}
	}
	return 0;
}

static void status_line(struct prof *p, struct trigger *t)
{
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

static int trigger_start(struct prof *p, void *priv)
{
	struct trigger *t = priv;
	struct psc_cpumap *cpus = p->target.cpus;
	uint64_t ns = (uint64_t)t->period_ms * 1000000;
	struct itimerspec its = {
		.it_value = { (time_t)(ns / NS), (long)(ns % NS) },
		.it_interval = { (time_t)(ns / NS), (long)(ns % NS) },
	};
	sigset_t hup;
	int err;

	t->nr_cpus = psc_cpu__nr_possible();
	t->cpu_unit = malloc((size_t)t->nr_cpus * sizeof(int));
	if (!t->cpu_unit)
		return -ENOMEM;
	for (int i = 0; i < t->nr_cpus; i++)
		t->cpu_unit[i] = -1;
	if (t->process || t->machine) {
		t->nr_units = 1;
		t->unit_cpu = malloc(sizeof(int));
		if (!t->unit_cpu)
			return -ENOMEM;
		t->unit_cpu[0] = -1;
		for (int i = 0; i < psc_cpumap__nr(cpus); i++) {
			int cpu = psc_cpumap__cpu(cpus, i);

			if (cpu >= 0 && cpu < t->nr_cpus)
				t->cpu_unit[cpu] = 0;
		}
	} else {
		t->nr_units = psc_cpumap__nr(cpus);
		t->unit_cpu = malloc((size_t)t->nr_units * sizeof(int));
		if (!t->unit_cpu)
			return -ENOMEM;
		for (int i = 0; i < t->nr_units; i++) {
			t->unit_cpu[i] = psc_cpumap__cpu(cpus, i);
			if (t->unit_cpu[i] >= 0 && t->unit_cpu[i] < t->nr_cpus)
				t->cpu_unit[t->unit_cpu[i]] = i;
		}
	}
	if (t->process)
		t->pid = p->opts.nr_pids ? p->opts.pids[0] : p->target.launch.pid;
	t->cc = callchain__new(p->name);
	if (!t->cc)
		return -ENOMEM;
	callchain__prepare(t->cc); /* kallsyms now, not in the loop at the first capture */
	t->caps = calloc((size_t)t->nr_units, sizeof(*t->caps));
	t->cooldown_until = calloc((size_t)t->nr_units, sizeof(uint64_t));
	if (!t->caps || !t->cooldown_until)
		return -ENOMEM;
	for (int i = 0; i < t->nr_conds; i++) {
		struct cond *c = &t->conds[i];
		size_t n = (size_t)t->nr_units;

		c->last = calloc(n, sizeof(*c->last));
		c->since = calloc(n, sizeof(*c->since));
		c->sum = calloc(n, sizeof(*c->sum));
		c->n = calloc(n, sizeof(*c->n));
		c->value = calloc(n, sizeof(*c->value));
		if (!c->last || !c->since || !c->sum || !c->n || !c->value)
			return -ENOMEM;
		for (size_t u = 0; u < n; u++)
			c->value[u] = -1;
		if (c->type == COND_SHARE)
			t->need_cs = true;
	}
	if (t->need_cs && !t->process) {
		if ((err = cpustat__init(&t->cs, t->nr_cpus)))
			return err;
		t->cs_ready = true;
		cpustat__read(&t->cs);
	}
	if ((err = open_rates(p, t)))
		return err;
	/* history: what --before needs at --standby-hz, with room for a faster kernel */
	if (t->before_s > 0) {
		size_t slots = (size_t)(t->before_s * (double)t->standby_hz * 1.5) + 8;

		t->fr = flightrec__new(t->nr_cpus, slots);
		if (!t->fr)
			return -ENOMEM;
	}
	t->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->timer_fd < 0 || timerfd_settime(t->timer_fd, 0, &its, NULL))
		return -errno;
	if ((err = prof__add_fd(p, t->timer_fd, EPOLLIN, on_tick, t)))
		return err;
	t->end_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (t->end_fd < 0)
		return -errno;
	if ((err = prof__add_fd(p, t->end_fd, EPOLLIN, on_end_timer, t)))
		return err;
	/* SIGHUP reopens the log instead of ending the run */
	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	sigprocmask(SIG_BLOCK, &hup, NULL);
	t->hup_fd = signalfd(-1, &hup, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t->hup_fd >= 0 && (err = prof__add_fd(p, t->hup_fd, EPOLLIN, on_hup, t)))
		return err;
	/* the first readings: the base of the first period's shares and rates */
	{
		double ts[CPUSTAT_NR];

		if (t->process)
			task_shares(t, 0, ts);
		for (int i = 0; i < t->nr_conds; i++)
			for (int u = 0; u < t->nr_units && t->conds[i].type == COND_RATE; u++)
				measure(t, &t->conds[i], u, 0, ts);
		t->last_tick = now_ns(CLOCK_MONOTONIC);
		t->ticks = 1;
	}
	status_line(p, t);
	return 0;
}

static int trigger_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
			  const struct psc_sample *s)
{
	struct trigger *t = priv;
	int unit;
	struct capture *c;

	(void)p;
	(void)ev;
	if (cpu < 0 || cpu >= t->nr_cpus)
		return 0;
	if (t->fr)
		flightrec__add(t->fr, cpu, s);
	unit = t->process || t->machine ? 0 : t->cpu_unit[cpu];
	if (unit < 0)
		return 0;
	c = &t->caps[unit];
	if (c->active && s->time >= c->from_ns && s->time < c->end_ns)
		cap_add(t, c, s, s->time < c->fire_ns);
	return 0;
}

/*
 * Exits and execs only: a pid's maps are dropped when it is gone or replaced, and read again
 * from /proc at its next lookup. An exec is passed on as an exit of the old image: the
 * callchain's own exec handling waits for MMAP2 records, which trigger does not ask for (it
 * would leave the new image without maps).
 */
static int trigger_record(struct prof *p, void *priv, const struct psc_record *rec)
{
	struct trigger *t = priv;

	(void)p;
	if (!t->cc)
		return 0;
	if (rec->type == PERF_RECORD_EXIT) {
		callchain__record(t->cc, rec);
	} else if (rec->type == PERF_RECORD_COMM && rec->comm.exec) {
		struct psc_record gone = { .type = PERF_RECORD_EXIT };

		gone.fork.pid = gone.fork.tid = rec->comm.pid;
		callchain__record(t->cc, &gone);
	}
	return 0;
}

static void trigger_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct trigger *t = priv;

	(void)p;
	(void)ev;
	t->lost += n;
	for (int u = 0; u < t->nr_units; u++)
		if (t->caps[u].active && (t->unit_cpu[u] < 0 || t->unit_cpu[u] == cpu))
			t->caps[u].lost += n;
}

static int trigger_stop_signal(struct prof *p, void *priv, int signo)
{
	struct trigger *t = priv;
	uint64_t now = now_ns(CLOCK_MONOTONIC), end = 0;

	(void)p;
	t->stopping = true;
	for (int u = 0; u < t->nr_units; u++)
		if (t->caps[u].active && t->caps[u].end_ns > end)
			end = t->caps[u].end_ns;
	if (!end)
		return 0;
	note(t, "%s: finishing the capture in progress (%.1f s left); another signal stops at once",
	     strsignal(signo), end > now ? (double)(end - now) / 1e9 : 0);
	return 1;
}

static int trigger_interval(struct prof *p, void *priv, uint64_t now)
{
	struct trigger *t = priv;
	char when[40], un[32];

	(void)now;
	fmt_time(now_ns(CLOCK_REALTIME), when, sizeof(when), p->json_fmt);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		json__key(&p->json, "time");
		json__str(&p->json, when);
		json__key(&p->json, "values");
		json__obj(&p->json);
		for (int i = 0; i < t->nr_conds; i++) {
			json__key(&p->json, t->conds[i].name);
			json__obj(&p->json);
			for (int u = 0; u < t->nr_units; u++) {
				unit_name(t, u, un, sizeof(un));
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
		json__i64(&p->json, t->nr_captures);
		json__end_line(&p->json);
		return 0;
	}
	out__printf(p->out, "%s", when);
	for (int i = 0; i < t->nr_conds; i++) {
		out__printf(p->out, "  %s:", t->conds[i].name);
		for (int u = 0; u < t->nr_units; u++) {
			unit_name(t, u, un, sizeof(un));
			if (t->conds[i].value[u] < 0)
				out__printf(p->out, " %s -", un);
			else
				out__printf(p->out, " %s %.1f", un, t->conds[i].value[u]);
		}
	}
	out__printf(p->out, "  captures: %d\n", t->nr_captures);
	return 0;
}

static void summary(struct trigger *t, const char *when)
{
	note(t,
	     "%s%d captures (%d written, %d failed), %llu removed for --max-disk, %d in %s (%llu "
	     "KiB), %llu samples lost, log reopened %llu times",
	     when, t->nr_captures, t->nr_written, t->nr_failed, (unsigned long long)t->ds.removed,
	     t->ds.captures, t->dir, (unsigned long long)(t->ds.bytes / 1024),
	     (unsigned long long)t->lost, (unsigned long long)t->reopened);
}

static int trigger_sigusr1(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	(void)p;
	summary(t, "so far: ");
	return 0;
}

static int trigger_report(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	(void)p;
	for (int u = 0; u < t->nr_units; u++)
		if (t->caps && t->caps[u].active)
			finish(t, u, true);
	capdir__enforce(t->dir, CAP_PREFIX, t->max_disk, NULL, &t->ds);
	if (t->fr && flightrec__cut(t->fr))
		note(t, "%llu stacks deeper than %d frames were cut (outermost frames left out)",
		     (unsigned long long)flightrec__cut(t->fr), FLIGHTREC_MAX_FRAMES);
	summary(t, "");
	return 0;
}

static void trigger_teardown(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	(void)p;
	for (int i = 0; i < t->nr_conds; i++) {
		struct cond *c = &t->conds[i];

		psc_evsel__delete(c->evsel);
		psc_event_list__delete(c->specs);
		free((char *)c->event);
		free(c->last);
		free(c->since);
		free(c->sum);
		free(c->n);
		free(c->value);
	}
	for (int u = 0; t->caps && u < t->nr_units; u++)
		flame__delete(t->caps[u].fl);
	free(t->caps);
	free(t->cooldown_until);
	free(t->unit_cpu);
	free(t->cpu_unit);
	flightrec__delete(t->fr);
	callchain__delete(t->cc);
	if (t->cs_ready)
		cpustat__exit(&t->cs);
	if (t->timer_fd >= 0)
		close(t->timer_fd);
	if (t->hup_fd >= 0)
		close(t->hup_fd);
	if (t->end_fd >= 0)
		close(t->end_fd);
	log_close(t);
}

const struct profiler profiler_trigger = {
	.name = "trigger",
	.summary = "wait for a CPU or event-rate condition, then capture stacks (with the onset)",
	.usage =
		"(--sys|--user|--cpu|--iowait PCT | --rate EVENT>N)... [--for S] [--machine]\n"
		"                       [-C CPUS | -p PID | -- COMMAND] [--capture S] [--before S] "
		"[-F HZ]\n"
		"                       [-o DIR] [--cooldown S] [--max N] [--max-disk SIZE] "
		"[--format json]",
	.description =
		"Watches conditions continuously at a low cost and profiles what runs when one holds:\n"
		"a CPU's (or, with --machine, the machine's) share of system, user, busy or iowait time\n"
		"read from /proc/stat every --period, or the rate of any event counted by the kernel\n"
		"(--rate sched:sched_switch>50000). A condition that holds --for seconds in a row fires\n"
		"a capture of that CPU (or of every CPU, or of the process with -p/COMMAND): stacks\n"
		"sampled at -F HZ for --capture seconds, plus the seconds --before the fire taken from a\n"
		"flight recorder (stacks sampled at --standby-hz all along, kept in memory), so that the\n"
		"onset of the condition is in the capture.\n"
		"\n"
		"Each capture is written into DIR as trigger-DATE-TIME.MS-CONDITION-cpuN.folded (folded\n"
		"stacks, root first, counts in samples at -F HZ: flamegraph.pl, inferno, speedscope),\n"
		"named by its UTC time, its condition and its CPU (cpuN, all, pidN), and announced by\n"
		"one line on standard output (one JSON object with --format json: capture, cpu, start,\n"
		"condition, value, threshold, samples, before_samples, lost, files ...).",
	.notes =
		"Standby cost: one read of /proc/stat per --period and --standby-hz stack samples per\n"
		"CPU (about 0.1% of one CPU with the defaults on a small machine: bench/README.md).\n"
		"\n"
		"An unattended run cannot fill a disk: --cooldown, --max and --max-disk (the oldest\n"
		"captures of DIR, earlier runs' too, are removed first; each removal is said). Samples\n"
		"the kernel dropped are counted per capture (\"lost\"); the end report sums everything.\n"
		"\n"
		"As a service (examples/perfscope-trigger.service): SIGHUP reopens --log FILE; SIGINT or\n"
		"SIGTERM finish the capture in progress, write it and exit 0 (a second signal stops at\n"
		"once, the capture written as it is, marked cut); SIGUSR1 prints the counts so far.\n"
		"-i MS prints the values measured every MS ms. Exit status: 0 after a clean stop (or the\n"
		"COMMAND's status), 1 on a runtime failure, 2 on a usage error.",
	.examples = "trigger --sys 50 --for 1 -o /var/tmp/captures\n"
		    "trigger --cpu 90 --for 5 --capture 10 --max 3 -C 0-3 --format json\n"
		    "trigger --rate 'sched:sched_switch>50000' --machine --cooldown 60 -o /tmp/cs\n"
		    "trigger --iowait 30 --for 2 --max-disk 500M -o /var/lib/perfscope\n"
		    "trigger --sys 20 --for 0.5 -- ./my-server\n"
		    "trigger --sys 99 --for 60 -i 1000",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL | CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_QUIET | CLI_OPT_USAGE_SELF,
	.opts = trigger_opts,
	.needs = PROF_RINGS | PROF_COMM,
	.default_events = "cpu-clock",
	.conformance_args = "--sys 99 --for 3600 -i 300 -o /tmp/perfscope-trigger-conformance",
	.priv_size = sizeof(struct trigger),
	.check = trigger_check,
	.event = trigger_event,
	.start = trigger_start,
	.sample = trigger_sample,
	.record = trigger_record,
	.lost = trigger_lost,
	.interval = trigger_interval,
	.sigusr1 = trigger_sigusr1,
	.stop_signal = trigger_stop_signal,
	.report = trigger_report,
	.teardown = trigger_teardown,
};
