/* perfscope task-state: time per task state (on CPU, sleeping S/D/..., waiting to run), a preset. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/evsel.h>

#include "duration.h"
#include "expr.h"
#include "multi_trace.h"
#include "stages.h"
#include "tstate.h"

/*
 * One pair engine keyed by the thread id follows each task through its states:
 *
 *   switch-in (next_pid)          starts "R"  (on CPU)
 *   switch-out (prev_pid)         ends R; starts the class of prev_state: S, D, T, I ... (a
 *                                 sleep), or "RD" when it stays runnable (prev_state R or R+)
 *   wakeup (pid)                  ends a sleep, starts RD (waiting for a CPU)
 *   switch-in                     ends RD (or a sleep whose wakeup was not seen)
 *
 * So a pair's latency is the time spent in the state its start entered, and the stack of a
 * sleep's start (the switch-out) says where the task slept. A switch-out whose pending state is
 * not R (its switch-in was missed) replaces it, counted as replaced; a wakeup of a task that is
 * running or runnable changes nothing. The letters come from this kernel's format (tstate.h).
 */

#define TS_EVENTS "sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new"

/* Row ids: the sleep classes are tstate classes 1..32; these go around them. */
enum { ROW_RUN = 0, ROW_UNKNOWN = 40, ROW_RD = 41 };

enum { TS_OTHER, TS_SWITCH, TS_WAKEUP };

struct ts_ev {
	struct stage_ev se; /* first: stages.h */
	int kind;
	/* switch: prev_pid, next_pid, prev_state; wakeup: pid (read through the format) */
	const struct psc_tp_field *a, *b, *state;
	struct expr *pass_a, *pass_b; /* --filter/-t on each side, NULL: all */
};

struct ts {
	struct stage_core c; /* first: stages.h; its watch: -p/-t, and a COMMAND's process */
	/* options */
	const char *filter;
	bool only_s, only_d, no_s, no_d, perins;
	/* state */
	struct tstate_map map;
	bool map_ok;
	int cls_s, cls_d;
	uint64_t shown; /* rows shown and eligible for outliers: bit per row id < 64 */
	/* c.rows: by row id; with --perins (tid << 8 | row) too */
	pid_t pids[CLI_MAX_TASKS + 1], tids[CLI_MAX_TASKS];
	int nr_pids, nr_tids;
	struct keymap member; /* -p: tid -> 1 of the processes, 2 not */
	char events_buf[256];
};

/* What a start carries: its row and, for --than, a copy of the event. */
struct ts_data {
	struct mt_copy *copy; /* first: stage_release_copy */
	int row;
};

struct ts_ctx {
	struct prof *p;
	int row;
};

static const struct prof_opt ts_opts[] = {
	{ "interruptible", 'S', NULL, PROF_OPT_FLAG, offsetof(struct ts, only_s), 0, 0, NULL,
	  "only the S state (TASK_INTERRUPTIBLE); with -D both" },
	{ "uninterruptible", 'D', NULL, PROF_OPT_FLAG, offsetof(struct ts, only_d), 0, 0, NULL,
	  "only the D state (TASK_UNINTERRUPTIBLE); with -S both" },
	{ "no-interruptible", 0, NULL, PROF_OPT_FLAG, offsetof(struct ts, no_s), 0, 0, NULL,
	  "every state but S" },
	{ "no-uninterruptible", 0, NULL, PROF_OPT_FLAG, offsetof(struct ts, no_d), 0, 0, NULL,
	  "every state but D" },
	{ "than", 0, "T", PROF_OPT_FN, 0, 0, 0, stage_opt_than,
	  "print each stay in a shown state longer than T (s, ms,\n"
	  "us, ns): the event that entered it (with its stack\n"
	  "under -g: where a task slept) and the one that left it" },
	{ "filter", 0, "COMM[,COMM...]", PROF_OPT_STRING, offsetof(struct ts, filter), 0, 0, NULL,
	  "only tasks whose name matches one of the globs (java*)" },
	{ "perins", 0, NULL, PROF_OPT_FLAG, offsetof(struct ts, perins), 0, 0, NULL,
	  "rows per thread too" },
	{ "max-pending", 0, "N", PROF_OPT_LONG, offsetof(struct ts, c.max_pending), 1, 1L << 30,
	  NULL,
	  "tasks followed at once (default 262144): past it the\n"
	  "one unseen longest is dropped and counted (evicted)" },
	{ NULL },
};

/* ---- rows ---- */

static const char *row_name(const struct ts *ts, int row)
{
	if (row == ROW_RUN)
		return "R";
	if (row == ROW_RD)
		return "RD";
	if (row == ROW_UNKNOWN)
		return "?";
	return tstate_map__letter(&ts->map, row);
}

static bool row_shown(const struct ts *ts, int row)
{
	return row < 64 && (ts->shown >> row) & 1;
}

/* ---- setup ---- */

static int ts_check(struct prof *p, void *priv)
{
	struct ts *ts = priv;
	int ret;

	if (p->opts.nr_positional)
		return prof_usage(p, "'%s' is not an option (a COMMAND goes after --)",
				  p->opts.positional[0]);
	ts->c.watch.fd = -1;
	if ((ts->only_s && ts->no_s) || (ts->only_d && ts->no_d))
		return prof_usage(p, "-S/-D and --no-interruptible/--no-uninterruptible contradict");
	/* -p/-t filter system-wide events: a task is woken from another task's context */
	stage_watch__take(p, &ts->c.watch);
	for (int i = 0; i < ts->c.watch.nr; i++) {
		if (ts->c.watch.is_pid[i])
			ts->pids[ts->nr_pids++] = ts->c.watch.ids[i];
		else
			ts->tids[ts->nr_tids++] = ts->c.watch.ids[i];
	}
	if (!p->opts.events) {
		snprintf(ts->events_buf, sizeof(ts->events_buf), "%s", TS_EVENTS);
		p->opts.events = ts->events_buf;
		p->opts.nr_event_args = 1;
		p->opts.event_arg_pos[0] = 0;
	}
	if (keymap__init(&ts->member, sizeof(uint8_t), 0))
		return -ENOMEM;
	ret = stage_core__init(&ts->c);
	if (ret && !ts->c.inited)
		keymap__exit(&ts->member);
	return ret;
}

static int ts_kind(const struct prof_event *ev)
{
	const char *name = ev->spec->event;

	if (!name || !ev->spec->sys || strcmp(ev->spec->sys, "sched"))
		return TS_OTHER;
	if (!strcmp(name, "sched_switch"))
		return TS_SWITCH;
	if (!strcmp(name, "sched_wakeup") || !strcmp(name, "sched_wakeup_new"))
		return TS_WAKEUP;
	return TS_OTHER;
}

/* An integer field of the format, read with its own offset, size and sign. */
static int int_field(struct prof *p, struct prof_event *ev, const char *name,
		     const struct psc_tp_field **out)
{
	const struct psc_tp_field *f = psc_tp_format__field(ev->fmt, name);

	if (f && !f->is_string && !f->is_array && f->size <= 8) {
		*out = f;
		return 0;
	}
	fprintf(stderr, "perfscope %s: %s has no integer field '%s': not the sched event "
			"task-state knows\n",
		p->name, ev->name, name);
	return -EINVAL;
}

/* "(comm~"a"||comm~"b*")&&(pid==1||pid==2)" for one side of an event; "" when no filter. */
static void side_cond(const struct ts *ts, const char *comm, const char *pid, char *buf,
		      size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	if (ts->filter) {
		const char *c = ts->filter;

		n += (size_t)snprintf(buf + n, len - n, "(");
		while (*c && n < len) {
			size_t l = strcspn(c, ",");

			if (l)
				n += (size_t)snprintf(buf + n, len - n, "%s%s~\"%.*s\"",
						      buf[n - 1] == '(' ? "" : "||", comm, (int)l, c);
			c += l + (c[l] == ',');
		}
		if (n < len)
			n += (size_t)snprintf(buf + n, len - n, ")");
	}
	if (ts->nr_tids && n < len) {
		n += (size_t)snprintf(buf + n, len - n, "%s(", n ? "&&" : "");
		for (int i = 0; i < ts->nr_tids && n < len; i++)
			n += (size_t)snprintf(buf + n, len - n, "%s%s==%d", i ? "||" : "", pid,
					      ts->tids[i]);
		if (n < len)
			snprintf(buf + n, len - n, ")");
	}
}

static int ts_event(struct prof *p, void *priv, struct prof_event *ev,
		    struct perf_event_attr *attr)
{
	struct ts *ts = priv;
	struct ts_ev *te = ev->priv;
	char cond[2048];
	int ret;

	te->kind = ts_kind(ev);
	if (te->kind == TS_OTHER)
		return prof_usage(p, "task-state reads sched:sched_switch and sched:sched_wakeup*, "
				     "not %s",
				  ev->name);
	if (!ev->fmt)
		return prof_usage(p, "no format for %s", ev->name);
	if (te->kind == TS_SWITCH) {
		if ((ret = int_field(p, ev, "prev_pid", &te->a)) ||
		    (ret = int_field(p, ev, "next_pid", &te->b)) ||
		    (ret = int_field(p, ev, "prev_state", &te->state)))
			return ret;
		if (!ts->map_ok) {
			ret = tstate_map__init(&ts->map, ev->fmt);
			if (ret) {
				fprintf(stderr, "perfscope %s: cannot read the task states from the "
						"print fmt of %s: its prev_state is not printed as "
						"the kernel's sched.h does\n",
					p->name, ev->name);
				return ret;
			}
			ts->map_ok = true;
		}
		side_cond(ts, "prev_comm", "prev_pid", cond, sizeof(cond));
		if (cond[0] && (ret = stage_compile(p, ev, cond, &te->pass_a)))
			return ret;
		side_cond(ts, "next_comm", "next_pid", cond, sizeof(cond));
		if (cond[0] && (ret = stage_compile(p, ev, cond, &te->pass_b)))
			return ret;
	} else {
		if ((ret = int_field(p, ev, "pid", &te->a)))
			return ret;
		side_cond(ts, "comm", "pid", cond, sizeof(cond));
		if (cond[0] && (ret = stage_compile(p, ev, cond, &te->pass_a)))
			return ret;
	}
	return stage_ev__init(&ts->c, &te->se, ev);
}

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev);
static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta);

static const struct pair_impl ts_impl = {
	.name = "task-state",
	.data_size = sizeof(struct ts_data),
	.start = impl_start,
	.paired = impl_paired,
	.release = stage_release_copy,
};

/* The kernel filter of an event: the user's and ours (the side conditions), where it takes it. */
static void apply_filters(struct prof *p, struct ts *ts)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct ts_ev *te = ev->priv;
		char a[2048], b[2048], text[4608];
		size_t n = 0;

		if (ev->filter)
			continue; /* a user filter the kernel refused: all in user space */
		if (te->kind == TS_SWITCH) {
			side_cond(ts, "prev_comm", "prev_pid", a, sizeof(a));
			side_cond(ts, "next_comm", "next_pid", b, sizeof(b));
		} else {
			side_cond(ts, "comm", "pid", a, sizeof(a));
			b[0] = 0;
		}
		if (!a[0])
			continue;
		if (ev->spec->filter)
			n = (size_t)snprintf(text, sizeof(text), "(%s)&&", ev->spec->filter);
		if (b[0])
			snprintf(text + n, sizeof(text) - n, "((%s)||(%s))", a, b);
		else
			snprintf(text + n, sizeof(text) - n, "(%s)", a);
		stage_apply_filter(p, ev, text);
	}
}

static int ts_start(struct prof *p, void *priv)
{
	struct ts *ts = priv;
	bool only = ts->only_s || ts->only_d;
	int ret;

	if (!ts->map_ok)
		return prof_usage(p, "task-state needs sched:sched_switch among its events");
	ts->cls_s = tstate_map__find(&ts->map, "S");
	ts->cls_d = tstate_map__find(&ts->map, "D");
	if (only) {
		if (ts->only_s && ts->cls_s > 0)
			ts->shown |= 1ull << ts->cls_s;
		if (ts->only_d && ts->cls_d > 0)
			ts->shown |= 1ull << ts->cls_d;
	} else {
		ts->shown = ~0ull;
		if (ts->no_s && ts->cls_s > 0)
			ts->shown &= ~(1ull << ts->cls_s);
		if (ts->no_d && ts->cls_d > 0)
			ts->shown &= ~(1ull << ts->cls_d);
	}
	ret = stage_core__start(p, &ts->c, &ts_impl, ts);
	if (ret)
		return ret;
	/* a COMMAND: its process's threads, followed as -p follows one */
	if (p->target.has_command && p->target.launch.pid > 0)
		ts->pids[ts->nr_pids++] = p->target.launch.pid;
	apply_filters(p, ts);
	return stage_watch__start(p, &ts->c.watch);
}

/* ---- events ---- */

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct ts *ts = ctx;
	struct ts_data *d = data;
	const struct ts_ctx *c = ev->ctx;

	d->row = c->row;
	if (!ts->c.than || !ev->sample || !row_shown(ts, c->row))
		return 0;
	d->copy = mt_copy__new(ev->sample, ev->idx, ev->cpu, ev->key);
	return d->copy ? 0 : -ENOMEM;
}

static void print_outlier(struct prof *p, struct ts *ts, const struct pair_entry *start,
			  const struct ts_data *d, const struct pair_event *end, uint64_t delta)
{
	const char *comm = prof__comm(p, (uint32_t)start->key, (uint32_t)start->key);
	char lat[32];

	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outlier");
		json__bool(&p->json, true);
		JSON_KEY(&p->json, "tid");
		json__u64(&p->json, start->key);
		JSON_KEY(&p->json, "comm");
		json__str(&p->json, comm);
		JSON_KEY(&p->json, "state");
		json__str(&p->json, row_name(ts, d->row));
		JSON_KEY(&p->json, "latency_ns");
		json__u64(&p->json, delta);
		stage_outlier_events(p, &ts->c, d->copy, end, true);
		json__end_line(&p->json);
		return;
	}
	hist_fmt(lat, sizeof(lat), delta, "ns");
	out__printf(p->out, "task-state: %llu %s in %s for %s (%llu ns)\n",
		    (unsigned long long)start->key, comm, row_name(ts, d->row), lat,
		    (unsigned long long)delta);
	stage_outlier_events(p, &ts->c, d->copy, end, false);
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct ts *ts = ctx;
	struct ts_data *d = data;
	const struct ts_ctx *c = end->ctx;
	bool over = ts->c.than && delta > ts->c.than && row_shown(ts, d->row);
	struct lat_row *row;

	if (!row_shown(ts, d->row))
		return;
	row = lat_rows__get(&ts->c.rows, (uint64_t)d->row);
	if (row)
		lat_row__add(row, delta, over, false, true);
	if (ts->perins) {
		row = lat_rows__get(&ts->c.rows, (start->key + 1) << 8 | (uint64_t)d->row);
		if (row)
			lat_row__add(row, delta, over, false, true);
	}
	if (over) {
		ts->c.outliers++;
		print_outlier(c->p, ts, start, d, end, delta);
	}
}

static bool field(struct ts_ev *te, const struct psc_tp_field *f, const struct psc_sample *s,
		  uint64_t *out)
{
	if (psc_tp_field__u64(f, s->raw.data, s->raw.size, out)) {
		te->se.errors++;
		return false;
	}
	return true;
}

static bool eval(struct ts_ev *te, struct expr *e, const struct psc_sample *s, uint64_t *out)
{
	struct expr_val v;

	if (expr__eval(e, s->raw.data, s->raw.size, s, &v)) {
		te->se.errors++;
		return false;
	}
	*out = v.i;
	return true;
}

/* -p: is tid one of the processes' threads? Asked of /proc once per thread. */
static bool member(struct ts *ts, uint64_t tid)
{
	uint8_t *v = keymap__find(&ts->member, tid);
	bool created;
	char path[64];

	if (v)
		return *v == 1;
	for (int i = 0; i < ts->nr_pids; i++)
		if ((uint64_t)ts->pids[i] == tid)
			return true;
	v = keymap__insert(&ts->member, tid, &created);
	if (!v)
		return false;
	*v = 2;
	for (int i = 0; i < ts->nr_pids; i++) {
		snprintf(path, sizeof(path), "/proc/%d/task/%llu", ts->pids[i],
			 (unsigned long long)tid);
		if (!access(path, F_OK)) {
			*v = 1;
			break;
		}
	}
	return *v == 1;
}

static bool side_pass(struct ts *ts, struct ts_ev *te, struct expr *pass, uint64_t tid,
		      const struct psc_sample *s)
{
	uint64_t ok;

	if (!tid || tid > UINT32_MAX)
		return false; /* the idle tasks */
	if (pass && (!eval(te, pass, s, &ok) || !ok))
		return false;
	if (ts->nr_pids && !member(ts, tid))
		return false;
	return true;
}

/* The task enters row: ends its pending state (when it is one of ends_mask), starts row. */
static void enter(struct ts *ts, struct pair_event *pe, struct ts_ctx *c, uint64_t ends_mask,
		  int row)
{
	struct pair_entry *e = pair__find(ts->c.pr, pe->key);

	if (e) {
		const struct ts_data *d = pair_entry__cdata(e);

		if (d->row < 64 && (ends_mask >> d->row) & 1)
			pair__end(ts->c.pr, pe);
	}
	c->row = row;
	pair__start(ts->c.pr, pe); /* a pending state left as it was is replaced: counted */
}

static int ts_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	struct ts *ts = priv;
	struct ts_ev *te = ev->priv;
	struct ts_ctx c = { .p = p };
	struct pair_event pe = { .time = s->time, .cpu = cpu, .pid = s->pid, .tid = s->tid,
				 .idx = ev->idx, .sample = s, .ctx = &c };
	uint64_t a, b, state;

	stage_core__seen(&ts->c, s->time);
	if (!field(te, te->a, s, &a))
		return 0;
	if (te->kind == TS_WAKEUP) {
		struct pair_entry *e;

		if (!side_pass(ts, te, te->pass_a, a, s))
			return 0;
		pe.key = a;
		e = pair__find(ts->c.pr, a);
		if (e) {
			const struct ts_data *d = pair_entry__cdata(e);

			if (d->row == ROW_RUN || d->row == ROW_RD)
				return 0; /* woken while running or runnable: no change */
		}
		enter(ts, &pe, &c, ~((1ull << ROW_RUN) | (1ull << ROW_RD)), ROW_RD);
		return 0;
	}
	if (!field(te, te->b, s, &b) || !field(te, te->state, s, &state))
		return 0;
	if (side_pass(ts, te, te->pass_a, a, s)) {
		int cls = tstate_map__class(&ts->map, state);
		int row = cls < 0 ? ROW_UNKNOWN : cls == TSTATE_RUNNABLE ? ROW_RD : cls;

		pe.key = a;
		enter(ts, &pe, &c, 1ull << ROW_RUN, row);
	}
	if (side_pass(ts, te, te->pass_b, b, s)) {
		pe.key = b;
		enter(ts, &pe, &c, ~(1ull << ROW_RUN), ROW_RUN);
	}
	return 0;
}

/* A loss: no state that began before it is measured (pair.h, lost windows). */
static void ts_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	stage_core__lost(p, priv);
}

/* ---- tables ---- */

/* Per thread rows after the totals: ids with a thread come after the plain ones (R first,
 * sleeps by bit, RD and ? last: their ids are in that order already). */
static void text_label(struct prof *p, void *ctx, const struct lat_row *r, char *buf,
		       size_t len)
{
	struct ts *ts = ctx;
	int row = (int)(r->id & 0xff);

	if (r->id >> 8) {
		uint32_t tid = (uint32_t)((r->id >> 8) - 1);

		snprintf(buf, len, "%-2s %u %s", row_name(ts, row), tid, prof__comm(p, tid, tid));
	} else {
		snprintf(buf, len, "%s", row_name(ts, row));
	}
}

static void json_row(struct prof *p, void *ctx, const struct lat_row *r)
{
	struct ts *ts = ctx;

	JSON_KEY(&p->json, "state");
	json__str(&p->json, row_name(ts, (int)(r->id & 0xff)));
	if (r->id >> 8) {
		uint32_t tid = (uint32_t)((r->id >> 8) - 1);

		JSON_KEY(&p->json, "tid");
		json__u64(&p->json, tid);
		JSON_KEY(&p->json, "comm");
		json__str(&p->json, prof__comm(p, tid, tid));
	}
}

static void json_outcomes(struct prof *p, void *ctx)
{
	JSON_KEY(&p->json, "task_state");
	json__str(&p->json, "outcomes");
}

static struct stage_table table(struct ts *ts)
{
	return (struct stage_table){ .width = ts->perins ? 32 : 4,
				     .head = ts->perins ? "St tid comm" : "St",
				     .ctx = ts,
				     .json_row = json_row,
				     .text_label = text_label,
				     .json_outcomes = json_outcomes };
}

static int ts_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct stage_table t = table(priv);

	return stage_core__interval(p, priv, &t);
}

static int ts_report(struct prof *p, void *priv)
{
	struct stage_table t = table(priv);

	return stage_core__report(p, priv, &t, "states");
}

static void ts_teardown(struct prof *p, void *priv)
{
	struct ts *ts = priv;

	if (ts->c.inited)
		keymap__exit(&ts->member);
	for (int i = 0; i < p->nr_events; i++) {
		struct ts_ev *te = p->events_arr[i].priv;

		if (!te)
			continue;
		expr__delete(te->pass_a);
		expr__delete(te->pass_b);
	}
	stage_core__exit(p, &ts->c);
}

const struct profiler profiler_task_state = {
	.name = "task-state",
	.summary = "time per task state: on CPU (R), asleep (S, D, T, I ...), waiting to run (RD)",
	.usage = "[-S] [-D] [--than T] [--filter COMM[,COMM...]] [-p PID[,PID...] | -t TID[,...]]\n"
		 "                       [--perins] [-g] [-i MS] [-C CPUS] [--format text|json] "
		 "[-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"Follows every task through sched:sched_switch and sched:sched_wakeup*: the time from\n"
		"its switch-in to its switch-out is R (on CPU); from a switch-out to its wakeup, the\n"
		"state it switched out in (S, D, T, t, I, P ... as this kernel's sched_switch format\n"
		"prints prev_state); from a wakeup, or a switch-out while still runnable (R, R+), to\n"
		"its switch-in, RD (waiting for a CPU). A sleep whose wakeup was not seen lasts until\n"
		"the switch-in. Each state's stays go into a log-linear histogram (calls, total, min,\n"
		"mean, p50 ... max). --than T prints each stay longer than T in a shown state with\n"
		"the event that began it and the one that ended it; with -g the stack of a sleep's\n"
		"switch-out says where the task slept.\n"
		"\n"
		"A task is followed by one pair engine keyed by its thread id (perfscope help\n"
		"multi-trace): a state that began before a lost window is not measured, a task not seen\n"
		"for long is evicted past --max-pending, and every outcome is counted.",
	.events_help = "optional: sched:sched_switch,sched:sched_wakeup,sched:sched_wakeup_new\n"
		       "(a subset, with /FILTER/ and stack ATTRs)",
	.notes = "The state letters come from this kernel's sched_switch print fmt (through\n"
		 "libtraceevent), never from fixed bit values: they moved between kernels.\n"
		 "-p, -t and a COMMAND do not make the events per task (a task is woken from another\n"
		 "task's context): they filter system-wide events. -p follows the threads of the\n"
		 "processes, those created later too (/proc is asked once per thread seen); so does a\n"
		 "COMMAND for its own process (not its children).\n"
		 "\n"
		 "--format json: one object per state {\"state\", \"count\", \"min_ns\", \"max_ns\",\n"
		 "\"mean_ns\", \"p50_ns\", \"p95_ns\", \"p99_ns\", \"p999_ns\", \"total_ns\", \"over_than\"},\n"
		 "with \"tid\" and \"comm\" per thread (--perins), then {\"task_state\":\"outcomes\",\n"
		 "\"outcomes\":{...}, \"pending\", \"lost_windows\", \"kernel_dropped\" (at exit: see\n"
		 "perfscope-trace(1)), \"outliers\"}; per outlier {\"outlier\": true, \"tid\", \"comm\",\n"
		 "\"state\", \"latency_ns\", \"start\", \"end\"}.\n"
		 "\n"
		 "Stops on SIGINT/SIGTERM, at --duration, after -N events, when COMMAND ends or the\n"
		 "-p/-t tasks are gone. Exit status: 0 after a clean stop (COMMAND's own when it ends),\n"
		 "1 on a runtime failure, 2 on a usage error.",
	.examples = "task-state -i 1000 --no-interruptible --duration 2\n"
		    "task-state -p 1 --perins --ptrace --duration 1\n"
		    "task-state -p 1 -SD --than 20ms -g --duration 1\n"
		    "task-state --filter 'java,python*' -S --than 100ms -g --duration 1\n"
		    "task-state -D --than 1ms --format json --duration 1\n"
		    "task-state -- ip link show lo",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL |
		       CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_ORDER |
		       CLI_OPT_CALLCHAIN | CLI_OPT_EXIT_N | CLI_OPT_QUIET | CLI_OPT_USAGE_SELF |
		       CLI_OPT_IDS_FOLLOW,
	.opts = ts_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS | PROF_SUMMARY,
	.default_events = TS_EVENTS,
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct ts),
	.ev_priv_size = sizeof(struct ts_ev),
	.check = ts_check,
	.event = ts_event,
	.start = ts_start,
	.sample = ts_sample,
	.lost = ts_lost,
	.interval = ts_interval,
	.report = ts_report,
	.teardown = ts_teardown,
};
