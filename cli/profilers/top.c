/* perfscope top: events summed per key (key=EXPR) into a table sorted by top-by= columns. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "expr.h"
#include "live.h"
#include "profiler.h"
#include "toptable.h"

struct top_ev {
	struct expr *key; /* -k, compiled here; else the key= ATTR's (owned by the engine) */
	bool own_key;
	int col0, nr_cols; /* its columns in the table */
	struct expr *comm; /* comm= */
	uint64_t errors; /* events whose key or value could not be computed */
};

struct top {
	const char *key_text; /* -k */
	bool only_comm;
	bool cumulative; /* --cumulative: -i tables of totals since the start, not per interval */
	bool cleared; /* an interval's rows were printed and let go */
	long rows; /* --rows */
	struct toptable table;
	struct expr **col_e; /* per column: the EXPR it sums; NULL: the event count */
	int cap_col_e;
	bool name_from_key; /* the key is a pid: its comm names the row */
	bool have_name; /* a name column */
	struct expr *printkey;
	const char *key_title;
	struct live live; /* redrawn in place on a terminal (stderr with a COMMAND) */
	struct prof *p; /* for the table's callbacks */
};

static const char *const printkey_vars[] = { "key", NULL };

static const struct prof_attr top_attrs[] = {
	{ "key", PROF_ATTR_EXPR, false, "key=EXPR: the row of an event (default: its pid)" },
	{ "top-by", PROF_ATTR_EXPR, true, "top-by=EXPR: a column summing EXPR, sorted by" },
	{ "top-add", PROF_ATTR_EXPR, true, "top-add=EXPR: a column summing EXPR, shown" },
	{ "comm", PROF_ATTR_EXPR, false, "comm=EXPR: the row's name (default: the key's comm)",
	  true },
	{ "printkey", PROF_ATTR_EXPR, false,
	  "printkey=EXPR: how the key is shown, e.g. "
	  "printf(\"0x%x\", key)",
	  true, printkey_vars },
	{ NULL },
};

static int top_check(struct prof *p, void *priv)
{
	struct top *t = priv;

	live__init(&t->live, prof__report_fd(p), p->json_fmt);
	return 0;
}

static bool pid_like(const char *text)
{
	size_t n = strlen(text);

	if (!strcmp(text, "_pid") || !strcmp(text, "_tid"))
		return true;
	return n >= 3 && !strcmp(text + n - 3, "pid") && !strchr(text, ' ') && !strchr(text, '(');
}

/* A column of the table and the EXPR it sums (NULL: it counts the events). */
static int add_col(struct top *t, const char *title, bool by, struct expr *e)
{
	int i;

	if (t->table.nr_cols == t->cap_col_e) {
		int cap = t->cap_col_e ? 2 * t->cap_col_e : 8;
		struct expr **v = realloc(t->col_e, (size_t)cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->col_e = v;
		t->cap_col_e = cap;
	}
	i = toptable__add_col(&t->table, title, by);
	if (i >= 0)
		t->col_e[i] = e;
	return i < 0 ? i : 0;
}

static int top_event(struct prof *p, void *priv, struct prof_event *ev,
		     struct perf_event_attr *attr)
{
	struct top *t = priv;
	struct top_ev *te = ev->priv;
	const struct prof_attr_val *key = prof_event__attr(ev, "key");
	const char *key_text = key ? key->value : t->key_text ? t->key_text : "_pid";
	const char *title = ev->spec->alias   ? ev->spec->alias
			    : ev->spec->event ? ev->spec->event
					      : ev->name;
	int nr_by = 0, nr_add = 0;

	if (key && t->key_text && !p->opts.quiet && ev->idx == 0)
		fprintf(stderr, "perfscope top: key=%s on %s overrides -k %s\n", key->value,
			ev->name, t->key_text);
	if (key) {
		te->key = key->expr;
	} else {
		/* -k as the table compiles it; the thread's pid without it */
		int ret = t->key_text ? prof__opt_expr(p, ev, "key", &te->key)
				      : prof__expr_compile(p, ev, "-k", key_text, true, &te->key);

		if (ret)
			return ret;
		te->own_key = true;
	}
	if (ev->idx == 0) {
		t->name_from_key = pid_like(key_text);
		t->key_title = !strcmp(key_text, "_cpu")   ? "CPU"
			       : !strcmp(key_text, "_tid") ? "TID"
			       : t->name_from_key	   ? "PID"
							   : "KEY";
	}
	te->comm = prof_event__attr(ev, "comm") ? prof_event__attr(ev, "comm")->expr : NULL;
	if (te->comm)
		t->have_name = true;
	if (!t->printkey && prof_event__attr(ev, "printkey"))
		t->printkey = prof_event__attr(ev, "printkey")->expr;

	te->col0 = t->table.nr_cols;
	for (int i = 0; i < ev->nr_attrs; i++) {
		const struct prof_attr_val *a = &ev->attrs[i];
		bool by = !strcmp(a->decl->name, "top-by");
		int err;

		if (!by && strcmp(a->decl->name, "top-add"))
			continue;
		/* perf-prof's titles: the alias for an event's first column, else the EXPR */
		err = add_col(t,
			      nr_by + nr_add == 0 && ev->spec->alias ? ev->spec->alias : a->value,
			      by, a->expr);
		if (err)
			return err;
		by ? nr_by++ : nr_add++;
	}
	if (!nr_by && !nr_add) {
		int err = add_col(t, title, false, NULL);

		if (err)
			return err;
	}
	te->nr_cols = t->table.nr_cols - te->col0;
	return 0;
}

static int top_start(struct prof *p, void *priv)
{
	struct top *t = priv;

	if (t->name_from_key)
		t->have_name = true;
	t->p = p;
	return toptable__start(&t->table);
}

static int top_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		      const struct psc_sample *s)
{
	struct top *t = priv;
	struct top_ev *te = ev->priv;
	const void *raw = s->raw.data;
	uint32_t size = s->raw.size;
	struct expr_val v;
	struct toptable_row *r;
	bool created;

	if (expr__eval(te->key, raw, size, s, &v)) {
		te->errors++;
		return 0;
	}
	r = toptable__row(&t->table, v.i, &created);
	if (!r)
		return 0;
	if (created && t->name_from_key && !te->comm) {
		const char *c = prof__comm(p, (uint32_t)v.i, (uint32_t)v.i);

		toptable_row__set_name(r, c, strlen(c));
	}
	if (te->comm && expr__eval(te->comm, raw, size, s, &v)) {
		te->errors++; /* the row keeps the name it has: counted, not silent */
	} else if (te->comm) {
		if (expr__type(te->comm).kind == EXPR_STR) {
			toptable_row__set_name(r, v.s, v.len);
		} else {
			char buf[32];
			int len = expr_val__snprint(expr__type(te->comm), &v, buf, sizeof(buf));

			toptable_row__set_name(r, buf, (size_t)len);
		}
	}
	r->events++;
	for (int i = te->col0; i < te->col0 + te->nr_cols; i++) {
		struct expr *e = t->col_e[i];

		if (!e)
			r->vals[i]++;
		else if (!expr__eval(e, raw, size, s, &v))
			r->vals[i] += v.i;
		else
			te->errors++;
	}
	return 0;
}

/* printkey=: the key as the user shows it; else (or when it cannot run) its number. */
static void key_text(void *ctx, uint64_t key, char *buf, size_t len)
{
	struct top *t = ctx;
	struct expr_val v;

	if (t->printkey) {
		expr__set_var(t->printkey, 0, key);
		if (!expr__eval(t->printkey, NULL, 0, NULL, &v)) {
			expr_val__snprint(expr__type(t->printkey), &v, buf, len);
			return;
		}
	}
	snprintf(buf, len, "%llu", (unsigned long long)key);
}

static double elapsed(void *ctx)
{
	return prof__elapsed(((struct top *)ctx)->p);
}

static long screen_rows(const struct top *t)
{
	if (t->rows > 0)
		return t->rows;
	return live__rows(&t->live, 5); /* 0: all */
}

static int top_print(struct prof *p, struct top *t, bool final)
{
	size_t n, shown;
	struct keymap_entry *rows = toptable__sorted(&t->table, &n);
	long lim = final ? 0 : screen_rows(t);
	const struct toptable_show sh = {
		.key_text = t->printkey ? key_text : NULL,
		.ctx = t,
		.key_title = t->only_comm  ? NULL
			     : t->printkey ? "KEY"
					   : t->key_title,
		.have_name = t->have_name,
		.heading = !final	? "perfscope top"
			   : t->cleared ? "since the last interval"
					: "totals",
		.elapsed = elapsed,
		.final = final,
		.redraw = live__redraws(&t->live, final),
	};

	if (!rows)
		return -ENOMEM;
	shown = lim > 0 && (size_t)lim < n ? (size_t)lim : n;
	if (p->json_fmt)
		toptable__print_json(&t->table, &p->json, p->out, rows, shown, &sh);
	else
		toptable__print_text(&t->table, p->out, rows, shown, n, &sh);
	free(rows);
	return 0;
}

/* Each -i table counts that interval, as perf-prof's top and perfscope's other tables do. */
static int top_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct top *t = priv;
	int ret = top_print(p, t, false);

	if (!ret && !t->cumulative) {
		toptable__clear(&t->table);
		t->cleared = true;
	}
	return ret;
}

static int top_report(struct prof *p, void *priv)
{
	struct top *t = priv;
	int ret = top_print(p, t, true);

	for (int i = 0; i < p->nr_events; i++) {
		struct top_ev *te = p->events_arr[i].priv;

		if (te && te->errors)
			fprintf(stderr,
				"perfscope top: %s: %llu values could not be computed (a field "
				"outside the record or a division by zero); they are not counted\n",
				p->events_arr[i].name, (unsigned long long)te->errors);
	}
	if (t->table.dropped)
		fprintf(stderr, "perfscope top: %llu events not counted: no memory for their row\n",
			(unsigned long long)t->table.dropped);
	return ret;
}

static void top_teardown(struct prof *p, void *priv)
{
	struct top *t = priv;

	for (int i = 0; i < p->nr_events; i++) {
		struct top_ev *te = p->events_arr[i].priv;

		if (te && te->own_key)
			expr__delete(te->key);
	}
	toptable__exit(&t->table);
	free(t->col_e);
}

static const struct prof_opt top_opts[] = {
	{ "key", 'k', "EXPR", PROF_OPT_EXPR, offsetof(struct top, key_text), 0, 0, NULL,
	  "the row of each event, for events without key=:\n"
	  "_pid (default), _tid, _cpu, a field, any EXPR" },
	{ "only-comm", 0, NULL, PROF_OPT_FLAG, offsetof(struct top, only_comm), 0, 0, NULL,
	  "show the name column but not the key" },
	{ "cumulative", 0, NULL, PROF_OPT_FLAG, offsetof(struct top, cumulative), 0, 0, NULL,
	  "-i tables of running totals since the start\n(default: each counts its interval)" },
	{ "rows", 0, "N", PROF_OPT_LONG, offsetof(struct top, rows), 1, 1000000, NULL,
	  "rows shown each interval (default: the terminal's\n"
	  "height on a terminal, else all); the final table has all" },
	{ NULL },
};

const struct profiler profiler_top = {
	.name = "top",
	.summary = "sum events per key (pid, CPU, any EXPR) into a table sorted by top-by= columns",
	.usage =
		"-e EVENT[,EVENT...] [-k EXPR] [--only-comm] [--rows N] [-i MS [--cumulative]]\n"
		"                       [-C CPUS] [-p PID | -t TID] [--format text|json] [-o FILE]\n"
		"                       [-- COMMAND ARGS...]",
	.description =
		"A table of (key, name, columns) as perf-prof's top builds it: each event goes to the\n"
		"row of its key (key=EXPR on the event, or -k EXPR; default its pid), counts there, and\n"
		"adds each top-by=EXPR and top-add=EXPR to its column (an event with neither has a\n"
		"column counting it). Rows are sorted by the top-by columns in the order given, then by\n"
		"the others. The name column is comm=EXPR when given, else the key's thread name when the\n"
		"key is a pid. printkey=EXPR shows the key its way (the name 'key' is the key). With\n"
		"several events the key must mean the same on each; every event adds its own columns,\n"
		"titled by alias= or by the EXPR. Every row also counts the events it summed (EVENTS).",
	.events_help = "the events to sum, with ATTRs: key=EXPR, top-by=EXPR, top-add=EXPR,\n"
		       "comm=EXPR, printkey=EXPR, alias=TITLE (see perfscope expr)",
	.notes =
		"With -i the table is printed every interval (sorted, cut to --rows or the\n"
		"terminal, redrawn in place on a terminal) and counts that interval's events, as\n"
		"perf-prof's top does; at exit the events since the last one (the totals without\n"
		"-i). --cumulative makes every table the running totals since the start.\n"
		"With a COMMAND and no -o the text table goes to standard error.\n"
		"--format json gives one object per row per refresh: time, key, name, columns\n"
		"(title: sum) and events; the rows at exit have \"final\": true.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		"process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		"a runtime failure, 2 on a usage error.",
	.examples =
		"top -e 'syscalls:sys_enter_write//key=common_pid/top-by=count/' -- dd "
		"if=/dev/zero of=/dev/null bs=4096 count=1000 status=none\n"
		"top -e sched:sched_switch -k _cpu --duration 1\n"
		"top -e irq:irq_handler_entry//key=irq/ -C 0 -i 1000\n"
		"top -e 'sched:sched_stat_runtime//key=pid/comm=comm/top-by=\"runtime/1000\"/"
		"alias=run(us)/' -i 1000\n"
		"top -e sched:sched_stat_runtime//key=pid/comm=comm/top-by=runtime/,"
		"sched:sched_switch//key=prev_pid/comm=prev_comm/ -i 1000\n"
		"top -e 'sched:sched_process_exec//key=pid/comm=filename/' --only-comm\n"
		"top -e 'irq:softirq_entry//key=(_cpu<<32)|vec/printkey=printf(\"  %03d      %d\", "
		"key>>32, (int)key)/'\n"
		"top -e 'raw_syscalls:sys_enter//key=id/comm=syscall_name(id)/' --format json -i 1000",
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_SAMPLING_LIMIT,
	.opts = top_opts,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_COMM | PROF_TP_FORMAT | PROF_SUMMARY,
	.attrs = top_attrs,
	.conformance_args = "-e sched:sched_switch -i 200",
	.priv_size = sizeof(struct top),
	.ev_priv_size = sizeof(struct top_ev),
	.check = top_check,
	.event = top_event,
	.start = top_start,
	.sample = top_sample,
	.interval = top_interval,
	.report = top_report,
	.teardown = top_teardown,
};
