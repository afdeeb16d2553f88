/* task-state's filters: --filter, -p and -t on each side of an event, in the kernel and here. */
#include "task_state.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "expr.h"

/* "(comm~"a"||comm~"b*")&&(pid==1||pid==2)" for one side of an event; "" when no filter. */
void ts_side_cond(const struct ts *ts, const char *comm, const char *pid, char *buf, size_t len)
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
						      buf[n - 1] == '(' ? "" : "||", comm, (int)l,
						      c);
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

/* The kernel filter of an event: the user's and ours (the side conditions), where it takes it. */
void ts_apply_filters(struct prof *p, struct ts *ts)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct ts_ev *te = ev->priv;
		char a[2048], b[2048], text[4608];
		size_t n = 0;

		if (ev->filter)
			continue; /* a user filter the kernel refused: all in user space */
		if (te->kind == TS_SWITCH) {
			ts_side_cond(ts, "prev_comm", "prev_pid", a, sizeof(a));
			ts_side_cond(ts, "next_comm", "next_pid", b, sizeof(b));
		} else {
			ts_side_cond(ts, "comm", "pid", a, sizeof(a));
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

bool ts_side_pass(struct ts *ts, struct ts_ev *te, struct expr *pass, uint64_t tid,
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
