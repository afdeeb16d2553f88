/* perfscope multi-trace: events of -e groups paired by key, latencies and outcomes (pair.h). */
#include "multi_trace.h"
#include "clock.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "caret.h"
#include "duration.h"
#include "expr.h"
#include "heatmap.h"
#include "syscalls.h"

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

static int opt_than(struct prof *p, void *priv, const char *arg)
{
	return duration__opt(p, "--than", arg, &((struct mt *)priv)->than);
}

static int opt_only_than(struct prof *p, void *priv, const char *arg)
{
	return duration__opt(p, "--only-than", arg, &((struct mt *)priv)->only_than);
}

static int opt_lower(struct prof *p, void *priv, const char *arg)
{
	return duration__opt(p, "--lower", arg, &((struct mt *)priv)->lower);
}

static int opt_detail(struct prof *p, void *priv, const char *arg)
{
	return mt_detail__parse(p, priv, arg);
}

static const char *const impl_names[] = {
	[MT_DELAY] = "delay",	      [MT_PAIR] = "pair", [MT_SYSCALLS] = "syscalls",
	[MT_KMEMPROF] = "kmemprof", [MT_CALL] = "call", [MT_CALL_DELAY] = "call-delay",
};

#define MT_OPTS \
	{ "key", 'k', "EXPR", PROF_OPT_STRING, offsetof(struct mt, key_text), 0, 0, NULL, \
	  "the key of events without key=: a field or any EXPR\n" \
	  "(default: the thread; idle tasks apart per CPU)" }, \
	{ "impl", 0, "IMPL", PROF_OPT_STRING, offsetof(struct mt, impl_text), 0, 0, NULL, \
	  "what pairs mean: delay (latency statistics, default),\n" \
	  "pair (what never paired), syscalls (latency and errors per\n" \
	  "system call of the end event's id and ret), kmemprof\n" \
	  "(bytes allocated, freed, not freed, by allocation stack),\n" \
	  "call (nested calls, each -e ENTER,EXIT one function: the\n" \
	  "call tree per thread), call-delay (the tree with each\n" \
	  "call path's latency statistics)" }, \
	{ "than", 0, "T", PROF_OPT_FN, 0, 0, 0, opt_than, \
	  "print each pair whose latency is above T (s, ms, us, ns)\n" \
	  "and count them in the tables (over_than)" }, \
	{ "only-than", 0, "T", PROF_OPT_FN, 0, 0, 0, opt_only_than, \
	  "as --than, but print only those pairs: no tables" }, \
	{ "lower", 0, "T", PROF_OPT_FN, 0, 0, 0, opt_lower, \
	  "print each pair whose latency is below T" }, \
	{ "perins", 0, NULL, PROF_OPT_FLAG, offsetof(struct mt, perins), 0, 0, NULL, \
	  "statistics per key (per thread by default) too" }, \
	{ "heatmap", 0, "FILE", PROF_OPT_STRING, offsetof(struct mt, heatmap), 0, 0, NULL, \
	  "write a latency heatmap (SVG) of the first pair to FILE,\n" \
	  "of the next ones to FILE.2, FILE.3 ..." }, \
	{ "detail", 0, "[=SPEC]", PROF_OPT_FN, 0, 0, 0, opt_detail, \
	  "with --than: print the events around each outlier:\n" \
	  "-N before the start, +N after the end (times: 1ms),\n" \
	  "samecpu, samepid, sametid, samekey (1, 2: as the start\n" \
	  "or the end only), hide<N (hide gaps below N), comma\n" \
	  "separated; untraced events included" }, \
	{ "cycle", 0, NULL, PROF_OPT_FLAG, offsetof(struct mt, cycle), 0, 0, NULL, \
	  "pair the last group back to the first one too" }, \
	{ "max-pending", 0, "N", PROF_OPT_LONG, offsetof(struct mt, max_pending), 1, 1L << 30, \
	  NULL, \
	  "starts kept waiting for their end per pair (default\n" \
	  "262144): past it the oldest is evicted and counted" }, \

const struct prof_opt mt_opts[] = {
	MT_OPTS
	{ NULL },
};

/* rundelay's: multi-trace's, and its filters that also set the keys. */
const struct prof_opt mt_rundelay_opts[] = {
	MT_OPTS
	{ "filter", 0, "COMM", PROF_OPT_STRING, offsetof(struct mt, filter_comm), 0, 0, NULL,
	  "only tasks whose name matches COMM (a glob: java*)" },
	{ NULL },
};


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
	return prof_usage(p, "--impl takes delay, pair, syscalls, kmemprof, call or call-delay, "
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
			return prof_usage(p, "--than and --only-than give two thresholds: keep one");
		mt->than = mt->only_than;
	}
	if (mt->than && mt->lower && mt->lower <= mt->than)
		return prof_usage(p, "--lower %llu ns is not above --than %llu ns: no latency "
				     "could be both",
				  (unsigned long long)mt->lower, (unsigned long long)mt->than);
	mt->print_outliers = mt->than || mt->lower;
	mt->ival = p->opts.interval_ms > 0 || (p->opts.events && strstr(p->opts.events, "trigger"));
	if (mt->detail && !mt->print_outliers)
		return prof_usage(p, "--detail prints the events around outliers: give --than T, "
				     "--only-than T or --lower T too");
	if (p->opts.events && p->opts.nr_event_args > MT_MAX_GROUPS)
		return prof_usage(p, "at most %d -e groups", MT_MAX_GROUPS);
	if (mt->print_outliers || mt->detail) {
		mt->ep = evprint__new(NULL);
		if (!mt->ep)
			return -errno;
	}
	return 0;
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
	struct expr_opts o;
	struct expr_error err;

	prof__expr_opts(p, ev, &o);
	o.want_int = true;
	me->key = expr__compile(text, &o, &err);
	if (me->key) {
		me->own_key = true;
		return 0;
	}
	if (errno == ENOMEM)
		return -ENOMEM;
	fprintf(stderr, "perfscope %s: %s %s on %s: %s\n", p->name, what, text, ev->name, err.msg);
	caret__print(stderr, "  ", NULL, text, err.pos > 0 ? err.pos : 0);
	if (err.unknown_name)
		expr_print_names(stderr, "  ", ev->spec->name, &o);
	return 2;
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

	(void)attr;
	me->group = event_group(p, ev);
	if (me->group + 1 > mt->nr_groups)
		mt->nr_groups = me->group + 1;
	me->untraced = prof_event__attr(ev, "untraced") != NULL;
	me->trigger = prof_event__attr(ev, "trigger") != NULL;
	me->role = role ? role->expr : NULL;
	if (key) {
		me->key = key->expr;
	} else if (mt->key_text && !(me->untraced && !ev->fmt)) {
		/* an untraced sample (profile/-F 200/untraced/) has no fields: keyed by tid */
		if ((ret = compile_key(p, ev, me, mt->key_text, "-k")))
			return ret;
	} else if (mt->preset == MT_PRESET_RUNDELAY && mt_rundelay_key(ev, me->group)) {
		if ((ret = compile_key(p, ev, me, mt_rundelay_key(ev, me->group), "key")))
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
	if (mt->ep) {
		ret = evprint_event__init(&me->print, mt->ep, ev->name, ev->fmt);
		if (ret)
			return ret;
		me->print_ok = true;
	}
	return 0;
}

static const char *short_name(const struct prof_event *ev)
{
	if (ev->spec->alias)
		return ev->spec->alias;
	return ev->spec->event ? ev->spec->event : ev->name;
}

/* "a,b -> c": the events of group g (traced ones). */
static void group_name(struct prof *p, int g, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < p->nr_events && n < len; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct mt_ev *me = ev->priv;

		if (me->group != g || me->untraced)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", short_name(ev));
	}
}

static struct mt_stat *stat_new(uint64_t id)
{
	struct mt_stat *st = calloc(1, sizeof(*st));

	if (st)
		st->id = id;
	return st;
}

static void stat_delete(struct mt_stat *st)
{
	if (!st)
		return;
	hist__exit(&st->total);
	hist__exit(&st->ival);
	free(st);
}

static const struct pair_impl mt_pair_impl;

int mt_start(struct prof *p, void *priv)
{
	struct mt *mt = priv;
	int nr_traced[MT_MAX_GROUPS] = { 0 };

	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		if (!me->untraced)
			nr_traced[me->group]++;
	}
	for (int g = 0; g < mt->nr_groups; g++)
		if (!nr_traced[g])
			return prof_usage(p, "-e group %d has only untraced events: each group needs "
					     "an event to pair",
					  g + 1);
	if (mt->impl == MT_CALL || mt->impl == MT_CALL_DELAY) {
		int ret = mt_call__start(p, mt, nr_traced);

		if (ret)
			return ret;
		goto links_done;
	}
	if (mt->nr_groups < 2 && !mt->cycle)
		return prof_usage(p, "pairs need two -e groups (starts, then ends), or --cycle "
				     "to pair one group with itself");
	mt->nr_links = mt->cycle ? mt->nr_groups : mt->nr_groups - 1;
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct pair_opts po = { .impl = &mt_pair_impl, .ctx = lk,
					.max_pending = (size_t)mt->max_pending,
					.unordered = !p->order };
		char a[80], b[80];

		lk->mt = mt;
		lk->from = l;
		lk->to = (l + 1) % mt->nr_groups;
		group_name(p, lk->from, a, sizeof(a));
		group_name(p, lk->to, b, sizeof(b));
		snprintf(lk->name, sizeof(lk->name), "%s -> %s", a, b);
		lk->pr = pair__new(&po);
		if (mt->impl == MT_KMEMPROF && mt_kmem__new(lk))
			return -ENOMEM;
		lk->all = stat_new(0);
		if (!lk->pr || !lk->all || keymap__init(&lk->by, sizeof(struct mt_stat *), 0))
			return -ENOMEM;
		if (mt->heatmap) {
			lk->hm = heatmap__new(NULL);
			if (!lk->hm)
				return -errno;
		}
	}
links_done:
	if (mt->detail && mt_detail__init(p, mt))
		return -ENOMEM;
	if (mt->ep)
		evprint__set_callchain(mt->ep, prof__callchain(p));
	mt->ival_start = mono_ns();
	return 0;
}

/* ---- copies and printing ---- */

struct mt_copy *mt_copy__new(const struct psc_sample *s, int ev_idx, int cpu, uint64_t key)
{
	size_t raw = s->raw.data ? s->raw.size : 0;
	size_t cc = s->callchain.ips ? s->callchain.nr * sizeof(uint64_t) : 0;
	struct mt_copy *c = malloc(sizeof(*c) + cc + raw);
	char *tail;

	if (!c)
		return NULL;
	c->s = *s;
	c->ev_idx = ev_idx;
	c->cpu = cpu;
	c->key = key;
	/* what points into the ring is copied, the rest of the sample is not printed */
	tail = (char *)(c + 1);
	if (cc) {
		memcpy(tail, s->callchain.ips, cc);
		c->s.callchain.ips = (const uint64_t *)(void *)tail;
		tail += cc;
	}
	if (raw) {
		memcpy(tail, s->raw.data, raw);
		c->s.raw.data = tail;
	}
	c->s.branch_stack.nr = 0;
	c->s.stack_user.size = 0;
	c->s.stack_user.data = NULL;
	return c;
}

void mt_print_event(struct prof *p, struct mt *mt, int ev_idx, int cpu,
		    const struct psc_sample *s, const char *indent)
{
	struct mt_ev *me = p->events_arr[ev_idx].priv;

	if (!me->print_ok)
		return;
	if (indent && *indent)
		out__printf(p->out, "%s", indent);
	evprint__text(mt->ep, p->out, &me->print, cpu, prof__comm(p, s->pid, s->tid), s);
}

void mt_json_event(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s)
{
	struct mt_ev *me = p->events_arr[ev_idx].priv;

	json__obj(&p->json);
	if (me->print_ok)
		evprint__json_members(mt->ep, &p->json, &me->print, cpu,
				      prof__comm(p, s->pid, s->tid), s);
	json__end(&p->json);
}

const char *mt_key_str(struct prof *p, struct mt *mt, int ev_idx, uint64_t key)
{
	const struct prof_attr_val *pk = prof_event__attr(&p->events_arr[ev_idx], "printkey");
	struct expr_val v;

	if (pk) {
		expr__set_var(pk->expr, 0, key);
		if (!expr__eval(pk->expr, NULL, 0, NULL, &v)) {
			expr_val__snprint(expr__type(pk->expr), &v, mt->keybuf, sizeof(mt->keybuf));
			return mt->keybuf;
		}
	}
	snprintf(mt->keybuf, sizeof(mt->keybuf), "%llu", (unsigned long long)key);
	return mt->keybuf;
}

/* ---- the impl: what a pair does ---- */

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct mt_link *lk = ctx;
	struct mt_data *d = data;

	(void)e;
	if (lk->kmem)
		mt_kmem__alloc(ev->ctx, lk, d, ev);
	if (!lk->mt->print_outliers || !ev->sample)
		return 0;
	d->copy = mt_copy__new(ev->sample, ev->idx, ev->cpu, ev->key);
	return d->copy ? 0 : -ENOMEM;
}

static void impl_release(void *ctx, void *data)
{
	struct mt_data *d = data;

	(void)ctx;
	free(d->copy);
	d->copy = NULL;
}

static struct mt_stat *stat_by(struct mt_link *lk, uint64_t id)
{
	bool created;
	struct mt_stat **slot = keymap__insert(&lk->by, id, &created);

	if (!slot)
		return NULL;
	if (created)
		*slot = stat_new(id);
	return *slot;
}

static void stat_add(struct mt_stat *st, uint64_t delta, bool over, bool error, bool ival)
{
	hist__add(&st->total, delta);
	st->over += over;
	st->errors += error;
	if (ival) {
		hist__add(&st->ival, delta);
		st->ival_over += over;
		st->ival_errors += error;
	}
}

static void print_outlier(struct mt_link *lk, const struct pair_entry *start,
			  const struct mt_data *d, const struct pair_event *end, uint64_t delta);

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct mt_link *lk = ctx;
	struct mt *mt = lk->mt;
	struct prof *p = end->ctx;
	bool over = (mt->than && delta > mt->than) || (mt->lower && delta < mt->lower);
	bool error = false;

	if (lk->kmem)
		mt_kmem__free(lk, data);
	if (mt->impl == MT_SYSCALLS) {
		/* per system call only: the pair's total is their sum, merged when printed */
		struct mt_ev *me = p->events_arr[end->idx].priv;
		const struct psc_sample *s = end->sample;
		uint64_t id = UINT64_MAX, ret;
		struct mt_stat *st;

		if (me->sc_id && s && !psc_tp_field__u64(me->sc_id, s->raw.data, s->raw.size, &ret))
			id = ret;
		if (me->sc_ret && s && !psc_tp_field__u64(me->sc_ret, s->raw.data, s->raw.size, &ret))
			error = (int64_t)ret < 0;
		st = lk->last && lk->last->id == id ? lk->last : stat_by(lk, id);
		if (st) {
			lk->last = st;
			stat_add(st, delta, over, error, mt->ival);
		} else {
			lk->dropped++;
		}
	} else {
		if (mt->perins) {
			struct mt_stat *st = stat_by(lk, start->key);

			if (st)
				stat_add(st, delta, over, false, mt->ival);
			else
				lk->dropped++;
		}
		stat_add(lk->all, delta, over, error, mt->ival);
	}
	if (lk->hm)
		heatmap__add(lk->hm, end->time, delta);
	if (over) {
		mt->outliers++;
		print_outlier(lk, start, data, end, delta);
	}
}

static const struct pair_impl mt_pair_impl = {
	.name = "multi-trace",
	.data_size = sizeof(struct mt_data),
	.start = impl_start,
	.paired = impl_paired,
	.release = impl_release,
};

static void print_outlier(struct mt_link *lk, const struct pair_entry *start,
			  const struct mt_data *d, const struct pair_event *end, uint64_t delta)
{
	struct mt *mt = lk->mt;
	struct prof *p = end->ctx;
	struct mt_copy *ec;
	char lat[32];

	if (!end->sample)
		return;
	if (mt->detail) {
		/* printed when the events after it are in (+N), with its context */
		ec = mt_copy__new(end->sample, end->idx, end->cpu, end->key);
		if (ec && d->copy)
			mt_detail__outlier(p, mt, d->copy, ec);
		free(ec);
		return;
	}
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outlier");
		json__bool(&p->json, true);
		JSON_KEY(&p->json, "pair");
		json__str(&p->json, lk->name);
		JSON_KEY(&p->json, "key");
		json__str(&p->json, mt_key_str(p, mt, end->idx, start->key));
		JSON_KEY(&p->json, "latency_ns");
		json__u64(&p->json, delta);
		if (d->copy) {
			JSON_KEY(&p->json, "start");
			mt_json_event(p, mt, d->copy->ev_idx, d->copy->cpu, &d->copy->s);
		}
		JSON_KEY(&p->json, "end");
		mt_json_event(p, mt, end->idx, end->cpu, end->sample);
		json__end_line(&p->json);
		return;
	}
	hist_fmt(lat, sizeof(lat), delta, "ns");
	if (d->copy)
		mt_print_event(p, mt, d->copy->ev_idx, d->copy->cpu, &d->copy->s, NULL);
	mt_print_event(p, mt, end->idx, end->cpu, end->sample, NULL);
	out__printf(p->out, "  %s: latency %s (%llu ns), key %s\n", lk->name, lat,
		    (unsigned long long)delta, mt_key_str(p, mt, end->idx, start->key));
}

/* ---- events ---- */

static bool eval_u64(struct expr *e, const struct psc_sample *s, uint64_t *out, uint64_t *errors)
{
	struct expr_val v;

	if (expr__eval(e, s->raw.data, s->raw.size, s, &v)) {
		(*errors)++;
		return false;
	}
	*out = v.i;
	return true;
}

int mt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s)
{
	struct mt *mt = priv;
	struct mt_ev *me = ev->priv;
	struct pair_event pe = { .time = s->time, .cpu = cpu, .pid = s->pid, .tid = s->tid,
				 .idx = ev->idx, .sample = s, .ctx = p };
	uint64_t role = 3;
	int g = me->group;

	if (s->time > mt->last_time)
		mt->last_time = s->time;
	if (mt->preset == MT_PRESET_RUNDELAY && !mt_rundelay_pass(p, mt, ev, s))
		return 0;
	/* the thread; the idle tasks are all tid 0, one per CPU: told apart by their CPU */
	pe.key = s->tid ? s->tid : (1ull << 63) | (uint32_t)cpu;
	if (me->key && !eval_u64(me->key, s, &pe.key, &me->key_errors))
		return 0;
	if (mt->dt)
		mt_detail__add(p, mt, ev->idx, cpu, s, pe.key);
	if (me->untraced)
		return me->trigger ? mt_interval(p, mt, s->time) : 0;
	if (me->role && !eval_u64(me->role, s, &role, &me->role_errors))
		return 0;
	if (mt->call) {
		mt_call__sample(mt, me, &pe);
		role = 0;
	}
	/* the end of the pair into this group first, then the start of the pair out of it */
	if (role & 2) {
		int l = g - 1 < 0 ? (mt->cycle ? mt->nr_groups - 1 : -1) : g - 1;

		if (l >= 0 && l < mt->nr_links)
			pair__end(mt->links[l].pr, &pe);
	}
	if ((role & 1) && g < mt->nr_links)
		pair__start(mt->links[g].pr, &pe);
	if (mt->dt)
		mt_detail__flush(p, mt, false);
	/* perf-prof's trigger: the event, not a timer, says when the interval's tables come */
	if (me->trigger)
		return mt_interval(p, mt, s->time);
	return 0;
}

/*
 * A loss: the kernel dropped events before now. No start older than now may pair any more (its
 * end may be among those lost); the sample clock is CLOCK_MONOTONIC (session.c).
 */
void mt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct mt *mt = priv;
	uint64_t barrier = mono_ns();

	(void)p;
	(void)ev;
	(void)cpu;
	(void)n;
	mt->lost_windows++;
	for (int l = 0; l < mt->nr_links; l++)
		pair__lost(mt->links[l].pr, barrier);
}

/* ---- tables ---- */

static void print_stat_text(struct prof *p, struct mt *mt, const char *label,
			    const struct hist *h, uint64_t over, uint64_t errors)
{
	char v[8][24];
	uint64_t vals[8] = { hist__min(h), hist__mean(h), hist__percentile(h, 50),
			     hist__percentile(h, 95), hist__percentile(h, 99),
			     hist__percentile(h, 99.9), hist__max(h) };

	for (int i = 0; i < 7; i++)
		hist_fmt(v[i], sizeof(v[i]), vals[i], "ns");
	out__printf(p->out, "%-*s %10llu %10s %10s %10s %10s %10s %10s %10s", mt->label_width, label,
		    (unsigned long long)hist__count(h), v[0], v[1], v[2], v[3], v[4], v[5], v[6]);
	if (mt->than || mt->lower)
		out__printf(p->out, " %10llu", (unsigned long long)over);
	if (mt->impl == MT_SYSCALLS)
		out__printf(p->out, " %8llu", (unsigned long long)errors);
	out__printf(p->out, "\n");
}

static void print_header(struct prof *p, struct mt *mt, const char *first)
{
	out__printf(p->out, "%-*s %10s %10s %10s %10s %10s %10s %10s %10s", mt->label_width, first,
		    "calls", "min",
		    "mean", "p50", "p95", "p99", "p99.9", "max");
	if (mt->than || mt->lower)
		out__printf(p->out, " %10s", mt->lower ? "outliers" : "over_than");
	if (mt->impl == MT_SYSCALLS)
		out__printf(p->out, " %8s", "errors");
	out__printf(p->out, "\n");
}

static int cmp_stat(const void *a, const void *b)
{
	const struct mt_stat *x = *(const struct mt_stat *const *)a;
	const struct mt_stat *y = *(const struct mt_stat *const *)b;

	if (hist__count(&x->total) != hist__count(&y->total))
		return hist__count(&x->total) < hist__count(&y->total) ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The rows of lk->by, most calls first (the ones with values in this interval). */
static struct mt_stat **sorted_by(struct mt_link *lk, size_t *nr)
{
	struct keymap_iter it;
	struct mt_stat **arr, **v;
	uint64_t key;
	size_t n = 0;

	arr = calloc(keymap__nr(&lk->by) + 1, sizeof(*arr));
	if (!arr)
		return NULL;
	keymap__for_each(&lk->by, &it, key, v)
		arr[n++] = *v;
	qsort(arr, n, sizeof(*arr), cmp_stat);
	*nr = n;
	return arr;
}

static void stat_json(struct prof *p, struct mt *mt, const struct hist *h, uint64_t over,
		      uint64_t errors)
{
	hist__json(h, &p->json, "ns");
	if (hist__count(h)) {
		JSON_KEY(&p->json, "total_ns");
		json__u64(&p->json, (uint64_t)hist__sum(h));
	}
	JSON_KEY(&p->json, "over_than");
	json__u64(&p->json, over);
	if (mt->impl == MT_SYSCALLS) {
		JSON_KEY(&p->json, "errors");
		json__u64(&p->json, errors);
	}
}

static void row_label(struct prof *p, struct mt *mt, struct mt_link *lk, const struct mt_stat *st,
		      char *buf, size_t len)
{
	if (mt->impl == MT_SYSCALLS) {
		const char *name = st->id == UINT64_MAX ? NULL : syscall__name(st->id);

		if (st->id == UINT64_MAX)
			snprintf(buf, len, "  (no id)");
		else
			snprintf(buf, len, "  %s(%llu)", name ? name : "?", (unsigned long long)st->id);
		return;
	}
	snprintf(buf, len, "  %s", mt_key_str(p, mt, lk->from, st->id));
	(void)lk;
}

static void print_outcomes_text(struct prof *p, struct mt_link *lk, const uint64_t *c)
{
	out__printf(p->out, "  outcomes:");
	for (int o = 0; o < PAIR_NR_OUTCOMES; o++)
		out__printf(p->out, "%s %s %llu", o ? "," : "", pair_outcome__name(o),
			    (unsigned long long)c[o]);
	out__printf(p->out, "; pending %zu (peak %zu, bound %zu)\n", pair__nr_pending(lk->pr),
		    pair__peak_pending(lk->pr), pair__max_pending(lk->pr));
}

static void outcomes_json(struct prof *p, const uint64_t *c)
{
	JSON_KEY(&p->json, "outcomes");
	json__obj(&p->json);
	for (int o = 0; o < PAIR_NR_OUTCOMES; o++) {
		json__key(&p->json, pair_outcome__name(o));
		json__u64(&p->json, c[o]);
	}
	json__end(&p->json);
}

/* syscalls keep rows only: the pair's total is their sum. */
static void sum_rows(struct mt_link *lk)
{
	struct mt_stat *all = lk->all, **v;
	struct keymap_iter it;
	uint64_t key;

	hist__reset(&all->total);
	hist__reset(&all->ival);
	all->over = all->ival_over = all->errors = all->ival_errors = 0;
	keymap__for_each(&lk->by, &it, key, v) {
		if (hist__merge(&all->total, &(*v)->total) || hist__merge(&all->ival, &(*v)->ival))
			lk->dropped++;
		all->over += (*v)->over;
		all->ival_over += (*v)->ival_over;
		all->errors += (*v)->errors;
		all->ival_errors += (*v)->ival_errors;
	}
}

/* One pair's table: the totals (final) or the interval's values. */
static void print_link(struct prof *p, struct mt *mt, struct mt_link *lk, bool final)
{
	uint64_t c[PAIR_NR_OUTCOMES];
	const uint64_t *now = pair__counts(lk->pr);
	struct mt_stat **rows = NULL;
	size_t nr = 0;
	char label[96];
	bool table = !mt->only_than && mt->impl != MT_PAIR && mt->impl != MT_KMEMPROF &&
		     mt->impl != MT_CALL && mt->impl != MT_CALL_DELAY;

	for (int o = 0; o < PAIR_NR_OUTCOMES; o++)
		c[o] = final ? now[o] : now[o] - lk->ival_counts[o];
	if (mt->impl == MT_SYSCALLS)
		sum_rows(lk);
	if (mt->impl == MT_SYSCALLS || mt->perins)
		rows = sorted_by(lk, &nr);
	if (lk->kmem && final) {
		mt_kmem__print(p, lk);
		if (!p->json_fmt)
			print_outcomes_text(p, lk, c);
		return;
	}
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "pair");
		json__str(&p->json, lk->name);
		if (final) {
			JSON_KEY(&p->json, "final");
			json__bool(&p->json, true);
		} else {
			JSON_KEY(&p->json, "interval_s");
			json__dbl(&p->json, prof__elapsed(p));
		}
		stat_json(p, mt, final ? &lk->all->total : &lk->all->ival,
			  final ? lk->all->over : lk->all->ival_over,
			  final ? lk->all->errors : lk->all->ival_errors);
		outcomes_json(p, c);
		JSON_KEY(&p->json, "pending");
		json__u64(&p->json, pair__nr_pending(lk->pr));
		JSON_KEY(&p->json, "lost_windows");
		json__u64(&p->json, mt->lost_windows);
		json__end_line(&p->json);
		for (size_t i = 0; i < nr; i++) {
			const struct mt_stat *st = rows[i];
			const struct hist *h = final ? &st->total : &st->ival;

			if (!hist__count(h))
				continue;
			json__begin(&p->json, p->out);
			JSON_KEY(&p->json, "pair");
			json__str(&p->json, lk->name);
			if (final) {
				JSON_KEY(&p->json, "final");
				json__bool(&p->json, true);
			}
			if (mt->impl == MT_SYSCALLS) {
				const char *name = syscall__name(st->id);

				JSON_KEY(&p->json, "syscall");
				name && st->id != UINT64_MAX ? json__str(&p->json, name)
							     : json__null(&p->json);
				JSON_KEY(&p->json, "id");
				st->id == UINT64_MAX ? json__null(&p->json)
						     : json__i64(&p->json, (int64_t)st->id);
			} else {
				JSON_KEY(&p->json, "key");
				json__str(&p->json, mt_key_str(p, mt, lk->from, st->id));
			}
			stat_json(p, mt, h, final ? st->over : st->ival_over,
				  final ? st->errors : st->ival_errors);
			json__end_line(&p->json);
		}
		free(rows);
		return;
	}
	if (table) {
		mt->label_width = 28;
		if (strlen(lk->name) > (size_t)mt->label_width)
			mt->label_width = (int)strlen(lk->name);
		print_header(p, mt, final ? lk->name : lk->name);
		print_stat_text(p, mt, "  all", final ? &lk->all->total : &lk->all->ival,
				final ? lk->all->over : lk->all->ival_over,
				final ? lk->all->errors : lk->all->ival_errors);
		for (size_t i = 0; i < nr; i++) {
			const struct mt_stat *st = rows[i];
			const struct hist *h = final ? &st->total : &st->ival;

			if (!hist__count(h))
				continue;
			row_label(p, mt, lk, st, label, sizeof(label));
			print_stat_text(p, mt, label, h, final ? st->over : st->ival_over,
					final ? st->errors : st->ival_errors);
		}
	} else {
		out__printf(p->out, "%s\n", lk->name);
	}
	print_outcomes_text(p, lk, c);
	free(rows);
}

static void reset_interval(struct mt *mt)
{
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct keymap_iter it;
		struct mt_stat **v;
		uint64_t key;

		hist__reset(&lk->all->ival);
		lk->all->ival_over = lk->all->ival_errors = 0;
		keymap__for_each(&lk->by, &it, key, v) {
			hist__reset(&(*v)->ival);
			(*v)->ival_over = (*v)->ival_errors = 0;
		}
		memcpy(lk->ival_counts, pair__counts(lk->pr), sizeof(lk->ival_counts));
	}
}

int mt_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct mt *mt = priv;
	time_t t = time(NULL);
	struct tm tm;
	char buf[32];

	(void)now_ns;
	if (!p->json_fmt && !mt->only_than) {
		localtime_r(&t, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
		out__printf(p->out, "%s\n", buf);
	}
	if (mt->call)
		mt_call__print(p, mt, false);
	for (int l = 0; l < mt->nr_links; l++)
		print_link(p, mt, &mt->links[l], false);
	reset_interval(mt);
	return 0;
}

static int write_heatmaps(struct prof *p, struct mt *mt)
{
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct heatmap_svg svg = { .title = lk->name, .ylabel = "latency", .unit = "ns" };
		char path[4096];
		struct out *o;
		int ret;

		if (l)
			snprintf(path, sizeof(path), "%s.%d", mt->heatmap, l + 1);
		else
			snprintf(path, sizeof(path), "%s", mt->heatmap);
		o = out__open(path, 64 * 1024);
		if (!o) {
			fprintf(stderr, "perfscope %s: cannot write the heatmap to '%s': %s\n",
				p->name, path, strerror(errno));
			return -errno;
		}
		ret = heatmap__write_svg(lk->hm, o, &svg);
		out__delete(o);
		if (ret)
			return ret;
	}
	return 0;
}

int mt_report(struct prof *p, void *priv)
{
	struct mt *mt = priv;
	uint64_t key_errors = 0;

	for (int l = 0; l < mt->nr_links; l++)
		pair__finish(mt->links[l].pr);
	if (mt->dt) {
		mt_detail__flush(p, mt, true);
		mt_detail__report(p, mt);
	}
	if (mt->call)
		mt_call__print(p, mt, true);
	for (int l = 0; l < mt->nr_links; l++)
		print_link(p, mt, &mt->links[l], true);
	if (!p->json_fmt && mt->print_outliers)
		out__printf(p->out, "outliers: %llu\n", (unsigned long long)mt->outliers);
	if (!p->json_fmt && mt->lost_windows)
		out__printf(p->out, "lost windows: %llu (pending starts invalidated, counted as "
				    "lost; no latency is measured across them)\n",
			    (unsigned long long)mt->lost_windows);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outliers");
		json__u64(&p->json, mt->outliers);
		JSON_KEY(&p->json, "lost_windows");
		json__u64(&p->json, mt->lost_windows);
		JSON_KEY(&p->json, "kernel_dropped");
		json__u64(&p->json, prof__kernel_dropped(p));
		JSON_KEY(&p->json, "final");
		json__bool(&p->json, true);
		json__end_line(&p->json);
	}
	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		key_errors += me->key_errors + me->role_errors + me->pass_errors;
	}
	for (int l = 0; l < mt->nr_links; l++)
		if (mt->links[l].dropped)
			fprintf(stderr, "perfscope %s: %s: %llu latencies not in the tables (no memory)\n",
				p->name, mt->links[l].name,
				(unsigned long long)mt->links[l].dropped);
	if (key_errors)
		fprintf(stderr, "perfscope %s: %llu events whose key= or role= could not be "
				"computed were skipped\n",
			p->name, (unsigned long long)key_errors);
	if (mt->heatmap)
		return write_heatmaps(p, mt);
	return 0;
}

void mt_teardown(struct prof *p, void *priv)
{
	struct mt *mt = priv;

	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct keymap_iter it;
		struct mt_stat **v;
		uint64_t key;

		pair__delete(lk->pr);
		stat_delete(lk->all);
		keymap__for_each(&lk->by, &it, key, v)
			stat_delete(*v);
		keymap__exit(&lk->by);
		heatmap__delete(lk->hm);
		mt_kmem__delete(lk->kmem);
	}
	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		if (!me)
			continue;
		if (me->own_key)
			expr__delete(me->key);
		expr__delete(me->pass);
		if (me->own_size)
			expr__delete(me->size);
		if (me->print_ok)
			evprint_event__exit(&me->print);
	}
	mt_detail__delete(mt->dt);
	mt_call__delete(mt->call);
	evprint__delete(mt->ep);
}

/* ---- for mt_call.c ---- */

struct mt_stat *mt_stat_new(uint64_t id)
{
	return stat_new(id);
}

void mt_stat_delete(struct mt_stat *st)
{
	stat_delete(st);
}

void mt_stat_add(struct mt_stat *st, uint64_t delta, bool over, bool ival)
{
	stat_add(st, delta, over, false, ival);
}

void mt_stat_json(struct prof *p, struct mt *mt, const struct hist *h, uint64_t over)
{
	stat_json(p, mt, h, over, 0);
}

void mt_print_stat_header(struct prof *p, struct mt *mt, const char *first)
{
	print_header(p, mt, first);
}

void mt_print_stat_row(struct prof *p, struct mt *mt, const char *label, const struct hist *h,
		       uint64_t over)
{
	print_stat_text(p, mt, label, h, over, 0);
}

void mt_outlier(struct mt_link *lk, const struct pair_entry *start, const struct mt_data *d,
		const struct pair_event *end, uint64_t delta)
{
	print_outlier(lk, start, d, end, delta);
}

const char *mt_short_name(const struct prof_event *ev)
{
	return short_name(ev);
}

const struct profiler profiler_multi_trace = {
	.name = "multi-trace",
	.summary = "pair events by key across -e groups: latency statistics, outliers, what never "
		   "paired",
	.usage = "-e EVENTS -e EVENTS [-e ...] [-k EXPR] [--impl IMPL] [--than T | --only-than T]\n"
		 "                       [--lower T] [--perins] [--heatmap FILE] [--detail[=SPEC]] "
		 "[--cycle]\n"
		 "                       [-i MS] [-C CPUS] [-p PID | -t TID] [--format text|json] "
		 "[-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"The events of the first -e group start something, those of the second end it; more\n"
		"groups make a chain reduced to consecutive pairs (A -> B, B -> C; --cycle adds C -> A).\n"
		"A start waits, under its key (key=EXPR on the event, or -k EXPR; default the thread),\n"
		"for the next end with the same key. Each pair's latency goes into a log-linear\n"
		"histogram (calls, min, mean, p50, p95, p99, p99.9, max within 1/64); --than T prints\n"
		"each pair slower than T (both events and the latency) and counts them.\n"
		"\n"
		"Every event ends in one counted outcome: paired; replaced (a newer start of the same\n"
		"key came first); no_start (an end with no start); open (still waiting at the end);\n"
		"evicted (more than --max-pending starts waiting: the oldest goes); lost (the kernel\n"
		"dropped events after the start: its latency could span them, so it is never\n"
		"measured); reversed (an end older than its start, out of order); nomem.\n"
		"\n"
		"role=EXPR on an event of a middle group says per event whether it may start (bit 0)\n"
		"and end (bit 1); untraced events are not paired but shown by --detail, which prints\n"
		"the events around each outlier from a backlog of the last 65536 events.\n"
		"\n"
		"--impl call and call-delay (perf-prof's nested-trace) read each -e group as one\n"
		"function, ENTER,EXIT, nested per key (the thread): the end prints the call tree.",
	.events_help = "a group of starts, then a group of ends (-e again); ATTRs: key=EXPR,\n"
		       "printkey=EXPR, role=EXPR, untraced, trigger, stack, size=EXPR,\n"
		       "alias=NAME",
	.notes = "With -i the table of the interval is printed every MS milliseconds; at the end the\n"
		 "totals. --format json gives one object per line: per pair {\"pair\", \"count\",\n"
		 "\"min_ns\", \"max_ns\", \"mean_ns\", \"p50_ns\", \"p95_ns\", \"p99_ns\", \"p999_ns\",\n"
		 "\"total_ns\", \"over_than\", \"outcomes\":{...}, \"pending\", \"final\"}, per key\n"
		 "(--perins) or system call (--impl syscalls) the same with \"key\" or \"syscall\" and\n"
		 "\"id\", and per outlier {\"outlier\":true, \"key\", \"latency_ns\", \"start\", \"end\"}.\n"
		 "\n"
		 "Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		 "process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		 "a runtime failure, 2 on a usage error.",
	.examples =
		"multi-trace -e 'syscalls:sys_enter_nanosleep//key=common_pid/' -e "
		"'syscalls:sys_exit_nanosleep//key=common_pid/' --than 20ms -- sleep 0.03\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000 --impl "
		"pair\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000 --than "
		"100us --detail=-1ms\n"
		"multi-trace -e 'sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_switch/"
		"prev_state==0&&prev_pid>0/key=prev_pid/' -e 'sched:sched_switch//key=next_pid/' "
		"-k pid --than 20ms --detail=samecpu\n"
		"multi-trace -e 'sched:sched_switch//role=(next_pid?1:0)|(prev_pid?2:0)/' --cycle -i "
		"1000\n"
		"multi-trace -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit --impl syscalls "
		"--format json -- ls\n"
		"multi-trace -e 'kmem:kmalloc//key=ptr/stack/' -e 'kmem:kfree//key=ptr/' --impl "
		"kmemprof --duration 1\n"
		"multi-trace -e syscalls:sys_enter_write,syscalls:sys_exit_write -e "
		"'irq:softirq_entry/vec==3/,irq:softirq_exit/vec==3/' --impl call-delay -- bash -c "
		"'echo x >/dev/udp/127.0.0.1/9'",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL |
		       CLI_OPT_DURATION | CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT |
		       CLI_OPT_ORDER | CLI_OPT_CALLCHAIN | CLI_OPT_EXIT_N | CLI_OPT_QUIET |
		       CLI_OPT_USAGE_SELF,
	.opts = mt_opts,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS,
	.attrs = mt_attrs,
	.conformance_args = "-e sched:sched_wakeup//key=pid/ -e sched:sched_switch//key=next_pid/ "
			    "-i 200",
	.priv_size = sizeof(struct mt),
	.ev_priv_size = sizeof(struct mt_ev),
	.check = mt_check,
	.event = mt_event,
	.start = mt_start,
	.sample = mt_sample,
	.lost = mt_lost,
	.interval = mt_interval,
	.report = mt_report,
	.teardown = mt_teardown,
};
