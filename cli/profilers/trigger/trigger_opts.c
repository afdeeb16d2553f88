/* perfscope trigger's options: the conditions and values given, checked, and their defaults. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <perfscope/perfscope.h>

#include "percent.h"
#include "profiler.h"
#include "trigger.h"

static int parse_pct(struct prof *p, struct trigger *t, enum cpustat_kind kind, const char *arg)
{
	if (t->nr_conds == TRIGGER_MAX_CONDS)
		return prof_usage(p, "at most %d conditions", TRIGGER_MAX_CONDS);
	if (cond__init_share(&t->conds[t->nr_conds], kind, arg))
		return prof_usage(p, "--%s takes " PERCENT_FORMS ", not '%s'",
				  cpustat__kind_name(kind), arg);
	t->nr_conds++;
	return 0;
}

int trigger_opt_sys(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_SYS, arg);
}

int trigger_opt_user(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_USER, arg);
}

int trigger_opt_cpu(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_BUSY, arg);
}

int trigger_opt_iowait(struct prof *p, void *priv, const char *arg)
{
	return parse_pct(p, priv, CPUSTAT_IOWAIT, arg);
}

/* --rate EVENT>N: events per second of EVENT at least N. */
int trigger_opt_rate(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs;
	char *ev;
	double v;
	int ret;

	if (t->nr_conds == TRIGGER_MAX_CONDS)
		return prof_usage(p, "at most %d conditions", TRIGGER_MAX_CONDS);
	ret = cond__split_rate(arg, &ev, &v);
	if (ret == -EINVAL)
		return prof_usage(p,
				  "--rate takes EVENT>N (events per second), e.g. "
				  "'sched:sched_switch>50000', not '%s'",
				  arg);
	if (ret == -ERANGE)
		return prof_usage(p, "--rate %s: N must be a number of events per second above 0",
				  arg);
	if (ret)
		return ret;
	if (strchr(ev, ':'))
		psc_tracefs__mount();
	ret = psc_parse_events(ev, NULL, &specs, &perr);
	if (ret) {
		cli_report_parse_error(p->name, ev, &perr, ret);
		free(ev);
		return ret == -ENOMEM ? -ENOMEM : 2;
	}
	if (specs->nr != 1) {
		free(ev);
		psc_event_list__delete(specs);
		return prof_usage(
			p, "--rate %s: one event per --rate (give --rate again for another)", arg);
	}
	cond__init_rate(&t->conds[t->nr_conds++], ev, specs, v);
	return 0;
}

/* --latency START,END>T: trigger_latency.c parses it and pairs the events. */
int trigger_opt_latency(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;
	struct tlat *l;
	int ret;

	if (t->nr_conds == TRIGGER_MAX_CONDS)
		return prof_usage(p, "at most %d conditions", TRIGGER_MAX_CONDS);
	if ((ret = tlat_set__add(&t->lat, p, arg, &l)))
		return ret;
	cond__init_latency(&t->conds[t->nr_conds++], l, tlat__name(l), tlat__tag(l),
			   tlat__threshold_ms(l));
	return 0;
}

int trigger_opt_max_disk(struct prof *p, void *priv, const char *arg)
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

int trigger_opt_before(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;

	return parse_secs(p, "before", arg, &t->before_s, &t->before_set);
}

int trigger_opt_cooldown(struct prof *p, void *priv, const char *arg)
{
	struct trigger *t = priv;

	return parse_secs(p, "cooldown", arg, &t->cooldown_s, &t->cooldown_set);
}

int trigger_check(struct prof *p, void *priv)
{
	struct trigger *t = priv;

	t->p = p;
	t->timer_fd = t->sched.end_fd = t->log.hup_fd = -1;
	t->log.prog = p->name;
	t->log.verbose = p->opts.verbose;
	if (!t->nr_conds)
		return prof_usage(p,
				  "which condition? give --sys, --user, --cpu, --iowait, --rate or "
				  "--latency, e.g. --sys 50");
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
	/* its conditions watch the whole process: captures on some CPUs only would miss the cause */
	if (p->opts.nr_pids && p->opts.cpus)
		return prof_usage(p, "-C with -p: the conditions watch the process on every CPU; "
				     "give one of them");
	if (t->process && t->machine)
		return prof_usage(p, "--machine is about CPUs: not with -p or a COMMAND");
	for (int i = 0; i < t->nr_conds; i++)
		if (t->process && t->conds[i].type == COND_SHARE &&
		    t->conds[i].kind == CPUSTAT_IOWAIT)
			return prof_usage(p, "--iowait is a CPU's state: not with -p or a COMMAND");
	{
		struct stat st;
		int err;

		/* a file named as the directory: refused now, not at every capture */
		if (!stat(t->dir, &st) && !S_ISDIR(st.st_mode))
			return prof_usage(p, "-o %s: not a directory (-o names the directory the "
					     "captures are written into)",
					  t->dir);
		err = capdir__prepare(t->dir);
		if (err) {
			fprintf(stderr, "perfscope trigger: cannot write captures into '%s': %s\n",
				t->dir, strerror(-err));
			return -EIO; /* a runtime failure: exit 1 (a check's 1 means done, exit 0) */
		}
	}
	{
		int err = tlat_set__check(&t->lat, p);

		if (err)
			return err;
	}
	svclog__open(&t->log);
	return 0;
}
