/* multi-trace options and -e ATTRs: parsed, checked, and compiled per event before the run. */
#include "multi_trace.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "expr.h"

/* The tables are laid out by hand: clang-format would give each field a line of its own. */
/* clang-format off */
static const char *const printkey_vars[] = { "key", NULL };

const struct prof_attr mt_attrs[] = {
	{ "key", PROF_ATTR_EXPR, false, "key=EXPR: what a start and its end share (default: -k, "
					"else the thread)" },
	{ "printkey", PROF_ATTR_EXPR, false, "printkey=EXPR: how the key is shown, e.g. "
	  "printf(\"0x%x\", key)", true, printkey_vars },
	{ "role", PROF_ATTR_EXPR, false, "role=EXPR: bit 0: may start, bit 1: may end (default 3)" },
	{ "untraced", PROF_ATTR_FLAG, false, "untraced: context for --detail only, never paired" },
	{ "trigger", PROF_ATTR_FLAG, false, "trigger: each of its events prints the interval" },
	{ "size", PROF_ATTR_EXPR, false, "size=EXPR: kmemprof: the bytes of an allocation "
					 "(default: bytes_alloc)" },
	{ NULL },
};
/* clang-format on */

int mt_opt_detail(struct prof *p, void *priv, const char *arg)
{
	return mt_detail__parse(p, priv, arg);
}

static const char *const impl_names[] = {
	[MT_DELAY] = "delay",	    [MT_PAIR] = "pair", [MT_SYSCALLS] = "syscalls",
	[MT_KMEMPROF] = "kmemprof", [MT_CALL] = "call", [MT_CALL_DELAY] = "call-delay",
};

/* clang-format off */
const struct prof_opt mt_opts[] = {
	MT_OPTS
	{ NULL },
};
/* clang-format on */

/* ---- setup ---- */

static int parse_impl(struct prof *p, struct mt *mt)
{
	if (!mt->impl_text)
		return 0;
	for (size_t i = 0; i < sizeof(impl_names) / sizeof(impl_names[0]); i++) {
		if (strcmp(mt->impl_text, impl_names[i]))
			continue;
		mt->impl = (enum mt_impl)i;
		return 0;
	}
	return prof_usage(p,
			  "--impl takes delay, pair, syscalls, kmemprof, call or call-delay, "
			  "not '%s'",
			  mt->impl_text);
}

int mt_check(struct prof *p, void *priv)
{
	struct mt *mt = priv;
	int ret;

	if (p->opts.nr_positional)
		return prof_usage(p, "'%s' is not an option (a COMMAND goes after --)",
				  p->opts.positional[0]);
	if ((ret = parse_impl(p, mt)))
		return ret;
	if (mt->only_than) {
		if (mt->than && mt->than != mt->only_than)
			return prof_usage(p,
					  "--than and --only-than give two thresholds: keep one");
		mt->than = mt->only_than;
	}
	if (mt->than && mt->lower && mt->lower <= mt->than)
		return prof_usage(p,
				  "--lower %llu ns is not above --than %llu ns: no latency "
				  "could be both",
				  (unsigned long long)mt->lower, (unsigned long long)mt->than);
	mt->print_outliers = mt->than || mt->lower;
	mt->ival = p->opts.interval_ms > 0 || (p->opts.events && strstr(p->opts.events, "trigger"));
	if (mt->detail && !mt->print_outliers)
		return prof_usage(p, "--detail prints the events around outliers: give --than T, "
				     "--only-than T or --lower T too");
	if (p->opts.events && p->opts.nr_event_args > MT_MAX_GROUPS)
		return prof_usage(p, "at most %d -e groups", MT_MAX_GROUPS);
	/* the outliers' events, and those around them, printed */
	return mt->print_outliers || mt->detail ? prof__use_printer(p) : 0;
}

/* Which -e an event came from: the last -e that began at or before its text. */
static int event_group(const struct prof *p, const struct prof_event *ev)
{
	int g = 0;

	for (int i = 0; i < p->opts.nr_event_args; i++)
		if (p->opts.event_arg_pos[i] <= ev->spec->text_pos)
			g = i;
	return g;
}

static int compile_key(struct prof *p, struct prof_event *ev, struct mt_ev *me, const char *text,
		       const char *what)
{
	int ret = prof__expr_compile(p, ev, what, text, true, &me->key);

	if (!ret)
		me->own_key = true;
	return ret;
}

/* An integer field of the event, NULL when it has none (read inline per event: cheaper). */
static const struct psc_tp_field *int_field(struct prof_event *ev, const char *name)
{
	const struct psc_tp_field *f = ev->fmt ? psc_tp_format__field(ev->fmt, name) : NULL;

	return f && !f->is_string && !f->is_array && f->size <= 8 ? f : NULL;
}

int mt_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *attr)
{
	struct mt *mt = priv;
	struct mt_ev *me = ev->priv;
	const struct prof_attr_val *key = prof_event__attr(ev, "key");
	const struct prof_attr_val *role = prof_event__attr(ev, "role");
	int ret;

	me->group = event_group(p, ev);
	if (me->group + 1 > mt->nr_groups)
		mt->nr_groups = me->group + 1;
	me->untraced = prof_event__attr(ev, "untraced") != NULL;
	me->trigger = prof_event__attr(ev, "trigger") != NULL;
	me->role = role ? role->expr : NULL;
	/* a preset's own keys are thread ids too (rundelay: pid, next_pid) */
	me->key_tid = !key && !mt->key_text;
	if (key) {
		me->key = key->expr;
	} else if (mt->key_text && !(me->untraced && !ev->fmt)) {
		/* an untraced sample (profile/-F 200/untraced/) has no fields: keyed by tid */
		if ((ret = prof__opt_expr(p, ev, "key", &me->key)))
			return ret;
		me->own_key = true;
	} else if (mt->hooks && mt->hooks->key && mt->hooks->key(ev, me->group)) {
		if ((ret = compile_key(p, ev, me, mt->hooks->key(ev, me->group), "key")))
			return ret;
	}
	if (mt->impl == MT_KMEMPROF) {
		const struct prof_attr_val *size = prof_event__attr(ev, "size");

		if (size) {
			me->size = size->expr;
		} else if (int_field(ev, "bytes_alloc") || int_field(ev, "bytes_req")) {
			struct expr_opts o;
			struct expr_error err;

			prof__expr_opts(p, ev, &o);
			o.want_int = true;
			me->size = expr__compile(int_field(ev, "bytes_alloc") ? "bytes_alloc"
									      : "bytes_req",
						 &o, &err);
			if (!me->size)
				return -ENOMEM;
			me->own_size = true;
		}
	}
	if (mt->impl == MT_SYSCALLS) {
		me->sc_id = int_field(ev, "id");
		me->sc_ret = int_field(ev, "ret");
	}
	return 0;
}
