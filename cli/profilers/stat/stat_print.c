/* stat's rows as perf stat prints them (text, -x CSV) and as JSON lines. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <perfscope/perfscope.h>

#include "stat.h"

#define NAME_WIDTH 32 /* perf's event column */
#define METRIC_LEN 35 /* perf's " # figure unit" column, padded when something follows */

/* A text line built in place: trailing padding is cut when nothing follows it. */
struct line {
	char buf[1024];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len >= sizeof(l->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->len, sizeof(l->buf) - l->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		l->len += (size_t)n < sizeof(l->buf) - l->len ? (size_t)n
							      : sizeof(l->buf) - 1 - l->len;
}

static void end_line(struct out *out, struct line *l)
{
	while (l->len && l->buf[l->len - 1] == ' ')
		l->len--;
	l->buf[l->len++] = '\n';
	out__write(out, l->buf, l->len);
}

/* The figure as a person reads it: clocks in msec, duration_time in ns, PMU events in their
 * sysfs unit with its scale. */
static double display(const struct stat_event *ev, const struct psc_evsel *evsel, double v,
		      const char **unit)
{
	if (ev->kind == STAT_TASK_CLOCK || ev->kind == STAT_CPU_CLOCK) {
		*unit = "msec";
		return v / 1e6;
	}
	if (ev->duration) {
		*unit = "ns";
		return v;
	}
	*unit = psc_evsel__unit(evsel) ? psc_evsel__unit(evsel) : "";
	return v * psc_evsel__scale(evsel);
}

/*
 * Counted in whole units: as perf, which keeps counts (and their mean over -r runs, and their
 * multiplexing estimate) as integers, the figure is rounded; msec, Joules... get 2 decimals.
 */
static bool whole(const struct stat_event *ev, const char *unit, double v)
{
	return ev->duration || !*unit || v == floor(v);
}

static double running_pct(const struct stat_fig *f)
{
	return f->ena > 0 ? 100.0 * f->run / f->ena : 100.0;
}

/* Why an event is not counted, for JSON. */
static const char *open_error(const struct psc_evsel *evsel, char *buf, size_t len)
{
	const struct psc_evsel *leader = psc_evsel__leader(evsel);
	char why[512];

	if (leader != evsel) { /* the event may be fine: its group cannot be */
		snprintf(buf, len, "%s: its group cannot be counted: %s", psc_evsel__name(evsel),
			 psc_strerror_open(psc_evsel__open_errno(evsel), psc_evsel__name(leader),
					   why, sizeof(why)));
		return buf;
	}
	return psc_strerror_open(psc_evsel__open_errno(evsel), psc_evsel__name(evsel), buf, len);
}

/* What a row stands for, as a text or CSV prefix (perf's columns); unit NULL: blank. */
static void aggr_prefix(struct line *l, const struct stat_ctx *s, const struct aggr_unit *u)
{
	bool csv = s->out == STAT_OUT_CSV;
	const char *sep = csv ? s->sep : " ";

	switch (s->aggr.mode) {
	case AGGR_GLOBAL:
		return;
	case AGGR_CPU:
		if (!u)
			add(l, csv ? "%s" : "%11s", csv ? sep : "");
		else
			add(l, csv ? "CPU%d%s" : "CPU%-7d%s", u->cpu, sep);
		return;
	case AGGR_CORE:
		if (!u)
			add(l, csv ? "%s%s" : "%21s", csv ? sep : "", csv ? sep : "");
		else if (csv)
			add(l, "S%d-D%d-C%d%s%d%s", u->socket, u->die, u->core, sep, u->nr_cpus,
			    sep);
		else
			add(l, "S%d-D%d-C%-8d%s%4d%s", u->socket, u->die, u->core, sep, u->nr_cpus,
			    sep);
		return;
	case AGGR_SOCKET:
		if (!u)
			add(l, csv ? "%s%s" : "%12s", csv ? sep : "", csv ? sep : "");
		else if (csv)
			add(l, "S%d%s%d%s", u->socket, sep, u->nr_cpus, sep);
		else
			add(l, "S%-5d%s%4d%s", u->socket, sep, u->nr_cpus, sep);
		return;
	}
}

static void text_row(struct prof *p, struct stat_ctx *s, const struct stat_event *ev,
		     const struct psc_evsel *evsel, const struct aggr_unit *u,
		     const struct stat_fig *f, const struct stat_metric *m, double interval_s)
{
	bool supported = psc_evsel__is_open(evsel);
	const char *unit = "";
	double v = display(ev, evsel, f->value, &unit);
	bool multiplexed = supported && f->counted && f->run < f->ena;
	struct line l = { .len = 0 };
	char fig[64];

	if (interval_s >= 0)
		add(&l, "%16.9f ", interval_s);
	aggr_prefix(&l, s, u);
	if (!supported)
		add(&l, "%18s ", "<not supported>");
	else if (!f->counted)
		add(&l, "%18s ", "<not counted>");
	else
		add(&l, whole(ev, unit, v) ? "%18.0f " : "%18.2f ", v);
	add(&l, "%-*s %-*s", s->unit_width, supported && f->counted ? unit : "", NAME_WIDTH,
	    ev->name);
	if (m->fmt != STAT_METRIC_NONE) {
		int n = (int)l.len;

		add(&l, " # %s %s", stat_metric_str(m, false, fig, sizeof(fig)), m->unit);
		add(&l, "%*s", METRIC_LEN - (int)(l.len - (size_t)n), "");
	} else {
		add(&l, "%*s", METRIC_LEN, "");
	}
	if (f->noise_pct)
		add(&l, "  ( +-%6.2f%% )", f->noise_pct);
	if (multiplexed)
		add(&l, "  (%.2f%%)", running_pct(f));
	end_line(p->out, &l);
}

static void csv_row(struct prof *p, struct stat_ctx *s, const struct stat_event *ev,
		    const struct psc_evsel *evsel, const struct aggr_unit *u,
		    const struct stat_fig *f, const struct stat_metric *m, double interval_s)
{
	bool supported = psc_evsel__is_open(evsel);
	const char *unit = "", *sep = s->sep;
	double v = display(ev, evsel, f->value, &unit);
	struct line l = { .len = 0 };
	char fig[64];

	if (interval_s >= 0)
		add(&l, "%16.9f%s", interval_s, sep);
	aggr_prefix(&l, s, u);
	if (!supported)
		add(&l, "<not supported>");
	else if (!f->counted)
		add(&l, "<not counted>");
	else
		add(&l, whole(ev, unit, v) ? "%.0f" : "%.2f", v);
	add(&l, "%s%s%s%s", sep, supported && f->counted ? unit : "", sep, ev->name);
	if (s->repeat > 1)
		add(&l, "%s%.2f%%", sep, f->noise_pct);
	add(&l, "%s%.0f%s%.2f", sep, f->run, sep, running_pct(f));
	if (m->fmt != STAT_METRIC_NONE)
		add(&l, "%s%s%s%s", sep, stat_metric_str(m, true, fig, sizeof(fig)), sep, m->unit);
	else
		add(&l, "%s%s", sep, sep);
	/* the separator may be a space: the columns keep their places */
	l.buf[l.len++] = '\n';
	out__write(p->out, l.buf, l.len);
}

static void json_row(struct prof *p, struct stat_ctx *s, const struct stat_event *ev,
		     const struct psc_evsel *evsel, const struct aggr_unit *u,
		     const struct stat_fig *f, const struct stat_metric *m, double interval_s)
{
	bool supported = psc_evsel__is_open(evsel);
	const char *unit = "";
	double v = display(ev, evsel, f->value, &unit);
	struct json j;

	json__begin(&j, p->out);
	if (interval_s >= 0) {
		json__key(&j, "interval");
		json__dbl(&j, interval_s);
	}
	if (u && s->aggr.mode == AGGR_CPU) {
		json__key(&j, "cpu");
		json__i64(&j, u->cpu);
	} else if (u && s->aggr.mode != AGGR_GLOBAL) {
		json__key(&j, "socket");
		json__i64(&j, u->socket);
		if (s->aggr.mode == AGGR_CORE) {
			json__key(&j, "die");
			json__i64(&j, u->die);
			json__key(&j, "core");
			json__i64(&j, u->core);
		}
		json__key(&j, "cpus");
		json__i64(&j, u->nr_cpus);
	}
	json__key(&j, "event");
	json__str(&j, ev->name);
	json__key(&j, "canonical");
	json__str(&j, ev->canonical);
	json__key(&j, "supported");
	json__bool(&j, supported);
	if (!supported) {
		char msg[1024];

		json__key(&j, "error");
		json__str(&j, open_error(evsel, msg, sizeof(msg)));
		json__end_line(&j);
		return;
	}
	json__key(&j, "value");
	if (!f->counted)
		json__null(&j);
	else if (v == floor(v) && v >= 0 && v < 9007199254740992.0 && !*unit)
		json__u64(&j, (uint64_t)v);
	else
		json__dbl(&j, v);
	json__key(&j, "unit");
	json__str(&j, unit);
	json__key(&j, "raw");
	json__u64(&j, (uint64_t)llround(f->raw));
	json__key(&j, "enabled_ns");
	json__u64(&j, (uint64_t)llround(f->ena));
	json__key(&j, "running_ns");
	json__u64(&j, (uint64_t)llround(f->run));
	json__key(&j, "running_pct");
	json__dbl(&j, running_pct(f));
	if (s->repeat > 1) {
		json__key(&j, "runs");
		json__i64(&j, s->runs);
		json__key(&j, "stddev_pct");
		json__dbl(&j, f->noise_pct);
	}
	if (m->fmt != STAT_METRIC_NONE) {
		json__key(&j, "metric_value");
		json__dbl(&j, m->value);
		json__key(&j, "metric_unit");
		json__str(&j, m->unit);
	}
	json__end_line(&j);
}

/* perf's column heads, every 25 interval lines (text only) */
static void interval_header(struct prof *p, struct stat_ctx *s)
{
	static const char *const aggr[] = {
		[AGGR_GLOBAL] = "",
		[AGGR_CPU] = " CPU       ",
		[AGGR_CORE] = " core            cpus",
		[AGGR_SOCKET] = " socket cpus",
	};

	if (s->out != STAT_OUT_TEXT || s->intervals++ % 25)
		return;
	out__printf(p->out, "#%15s%s%19s %-*s events\n", "time", aggr[s->aggr.mode], "counts",
		    s->unit_width, "unit");
}

/* Event i's line for unit u (-1: no unit, an event that is not counted anywhere). */
static void row(struct prof *p, struct stat_ctx *s, int i, int u, double wall_ns, double interval_s)
{
	const struct stat_event *ev = &s->ev[i];
	struct psc_evsel *evsel = p->events_arr[i].evsel;
	const struct aggr_unit *unit =
		s->aggr.mode == AGGR_GLOBAL || u < 0 ? NULL : &s->aggr.units[u];
	struct stat_fig zero = { 0 };
	const struct stat_fig *f = &zero;
	struct stat_metric m = { .fmt = STAT_METRIC_NONE };

	if (psc_evsel__is_open(evsel)) {
		f = &s->figs[i * s->aggr.nr_units + u];
		if (ev->wildcard && !s->all && (!f->counted || !f->value)) {
			s->hidden++;
			return;
		}
		/* the figures of this unit, for what relates them */
		for (int k = 0; k < s->nr_ev; k++) {
			const struct stat_fig *g = &s->figs[k * s->aggr.nr_units + u];

			s->cs[k] = (struct stat_counter){
				.kind = s->ev[k].kind,
				.ctx = s->ev[k].ctx,
				.value = g->value,
				.counted = g->counted && psc_evsel__is_open(p->events_arr[k].evsel),
			};
		}
		stat_metric(s->cs, s->nr_ev, i, wall_ns, &m);
	}
	if (s->out == STAT_OUT_JSON)
		json_row(p, s, ev, evsel, unit, f, &m, interval_s);
	else if (s->out == STAT_OUT_CSV)
		csv_row(p, s, ev, evsel, unit, f, &m, interval_s);
	else
		text_row(p, s, ev, evsel, unit, f, &m, interval_s);
}

/*
 * Whether event i counts on a CPU of unit u: a RAPL or uncore event opens only on its PMU's CPUs
 * (one per package), so the other CPUs have no line for it rather than "<not counted>".
 */
static bool counts_in_unit(struct prof *p, struct stat_ctx *s, int i, int u)
{
	return aggr__covers(&s->aggr, psc_evsel__cpus(p->events_arr[i].evsel), u);
}

void stat_print_rows(struct prof *p, struct stat_ctx *s, double wall_ns, double interval_s)
{
	if (interval_s >= 0)
		interval_header(p, s);
	/* perf's orders: a core's or socket's events together; each event's CPUs together */
	if (s->aggr.mode == AGGR_CORE || s->aggr.mode == AGGR_SOCKET) {
		for (int u = 0; u < s->aggr.nr_units; u++)
			for (int i = 0; i < s->nr_ev; i++)
				if (!psc_evsel__is_open(p->events_arr[i].evsel) ||
				    counts_in_unit(p, s, i, u))
					row(p, s, i, u, wall_ns, interval_s);
		return;
	}
	for (int i = 0; i < s->nr_ev; i++) {
		/* an event not counted here has no CPUs, no figures: one line */
		if (!psc_evsel__is_open(p->events_arr[i].evsel)) {
			row(p, s, i, -1, wall_ns, interval_s);
			continue;
		}
		for (int u = 0; u < s->aggr.nr_units; u++)
			if (counts_in_unit(p, s, i, u))
				row(p, s, i, u, wall_ns, interval_s);
	}
}

void stat_print_header(struct prof *p, struct stat_ctx *s, int runs)
{
	if (s->out != STAT_OUT_TEXT)
		return;
	out__printf(p->out, "\n Performance counter stats for %s", p->title);
	if (runs > 1)
		out__printf(p->out, " (%d runs)", runs);
	out__puts(p->out, ":\n\n");
}

void stat_print_footer(struct prof *p, struct stat_ctx *s, double elapsed, double sd, int runs,
		       bool user_sys)
{
	if (s->out != STAT_OUT_TEXT)
		return;
	if (s->hidden)
		out__printf(p->out,
			    "\n %llu zero counts of events matched by a wildcard are not shown "
			    "(--all shows them)\n",
			    (unsigned long long)s->hidden);
	if (runs > 1) {
		int prec = stat_precision(sd);

		out__printf(p->out, "\n %17.*f +- %.*f seconds time elapsed", prec, elapsed, prec,
			    sd);
		if (elapsed > 0)
			out__printf(p->out, "  ( +-%6.2f%% )", 100.0 * sd / elapsed);
		out__puts(p->out, "\n\n");
		return;
	}
	out__printf(p->out, "\n %17.9f seconds time elapsed\n\n", elapsed);
	if (user_sys)
		out__printf(p->out, " %17.9f seconds user\n %17.9f seconds sys\n\n\n", s->user_s,
			    s->sys_s);
}
