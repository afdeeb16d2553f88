/* multi-trace output: events, outliers, per-pair tables (text and JSON) and heatmap files. */
#include "multi_trace.h"
#include "pair_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "heatmap.h"
#include "sample_keep.h"
#include "syscall_names.h"

/* ---- copies and printing ---- */

struct mt_copy *mt_copy__new(const struct psc_sample *s, int ev_idx, int cpu, uint64_t key)
{
	size_t parts = sample_keep__bytes(s);
	struct mt_copy *c = malloc(sizeof(*c) + parts);

	if (!c)
		return NULL;
	/* printed later: it owns what printing reads (the user stack and registers with dwarf) */
	sample_keep__into(&c->s, s, c + 1);
	c->ev_idx = ev_idx;
	c->cpu = cpu;
	c->key = key;
	c->bytes = sizeof(*c) + parts;
	return c;
}

void mt_print_event(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s,
		    const char *indent)
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

void mt_outlier(struct mt_link *lk, const struct pair_entry *start, const struct mt_data *d,
		const struct pair_event *end, uint64_t delta)
{
	struct mt *mt = lk->mt;
	struct prof *p = end->ctx;
	char lat[32];

	if (!end->sample)
		return;
	if (mt->detail) {
		/* printed when the events after it are in (+N), with its context; a copy that
		 * could not be made is counted there */
		mt_detail__outlier(p, mt, d->copy, end);
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

/* ---- tables ---- */

static void print_stat_text(struct prof *p, struct mt *mt, const char *label, const struct hist *h,
			    uint64_t over, uint64_t errors)
{
	char v[8][24];
	uint64_t vals[8] = { hist__min(h),
			     hist__mean(h),
			     hist__percentile(h, 50),
			     hist__percentile(h, 95),
			     hist__percentile(h, 99),
			     hist__percentile(h, 99.9),
			     hist__max(h) };

	for (int i = 0; i < 7; i++)
		hist_fmt(v[i], sizeof(v[i]), vals[i], "ns");
	out__printf(p->out, "%-*s %10llu", mt->label_width, label,
		    (unsigned long long)hist__count(h));
	if (mt->impl == MT_SYSCALLS) {
		hist_fmt(v[7], sizeof(v[7]), hist__count(h) ? (uint64_t)hist__sum(h) : 0, "ns");
		out__printf(p->out, " %10s", v[7]);
	}
	out__printf(p->out, " %10s %10s %10s %10s %10s %10s %10s", v[0], v[1], v[2], v[3], v[4],
		    v[5], v[6]);
	if (mt->than || mt->lower)
		out__printf(p->out, " %10llu", (unsigned long long)over);
	if (mt->impl == MT_SYSCALLS)
		out__printf(p->out, " %8llu", (unsigned long long)errors);
	out__printf(p->out, "\n");
}

static void print_header(struct prof *p, struct mt *mt, const char *first)
{
	out__printf(p->out, "%-*s %10s", mt->label_width, first, "calls");
	if (mt->impl == MT_SYSCALLS)
		out__printf(p->out, " %10s", "total");
	out__printf(p->out, " %10s %10s %10s %10s %10s %10s %10s", "min", "mean", "p50", "p95",
		    "p99", "p99.9", "max");
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
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* syscalls: where the time goes, most total time first */
static int cmp_time(const void *a, const void *b)
{
	const struct mt_stat *x = *(const struct mt_stat *const *)a;
	const struct mt_stat *y = *(const struct mt_stat *const *)b;
	hist_u128 sx = hist__count(&x->total) ? hist__sum(&x->total) : 0;
	hist_u128 sy = hist__count(&y->total) ? hist__sum(&y->total) : 0;

	if (sx != sy)
		return sx < sy ? 1 : -1;
	return cmp_stat(a, b);
}

/* The rows of lk->by, most calls (syscalls: most time) first. */
static struct mt_stat **sorted_by(struct mt *mt, struct mt_link *lk, size_t *nr)
{
	struct keymap_iter it;
	struct mt_stat **arr, **v;
	uint64_t key;
	size_t n = 0;

	arr = calloc(keymap__nr(&lk->by) + 1, sizeof(*arr));
	if (!arr)
		return NULL;
	keymap__for_each(&lk->by, &it, key, v) arr[n++] = *v;
	qsort(arr, n, sizeof(*arr), mt->impl == MT_SYSCALLS ? cmp_time : cmp_stat);
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
	const struct mt_ev *me = p->events_arr[lk->from].priv;
	char who[64] = "";

	if (mt->impl == MT_SYSCALLS) {
		const char *name = st->id == UINT64_MAX ? NULL : syscall__name(st->id);

		if (mt->perins)
			snprintf(who, sizeof(who), " %s",
				 prof__tid_label(p, (uint32_t)st->tid, mt->keybuf,
						 sizeof(mt->keybuf)));
		if (st->id == UINT64_MAX)
			snprintf(buf, len, " %s (no id)", who);
		else
			snprintf(buf, len, " %s %s(%llu)", who, name ? name : "?",
				 (unsigned long long)st->id);
		return;
	}
	/* a thread's row says whose: comm/tid (the idle tasks: one per CPU) */
	if (me && me->key_tid && !prof_event__attr(&p->events_arr[lk->from], "printkey")) {
		if (st->id >> 63)
			snprintf(buf, len, "  idle/cpu%u", (uint32_t)st->id);
		else
			snprintf(buf, len, "  %s",
				 prof__tid_label(p, (uint32_t)st->id, mt->keybuf,
						 sizeof(mt->keybuf)));
		return;
	}
	snprintf(buf, len, "  %s", mt_key_str(p, mt, lk->from, st->id));
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
	keymap__for_each(&lk->by, &it, key, v)
	{
		if (hist__merge(&all->total, &(*v)->total) || hist__merge(&all->ival, &(*v)->ival))
			lk->dropped++;
		all->over += (*v)->over;
		all->ival_over += (*v)->ival_over;
		all->errors += (*v)->errors;
		all->ival_errors += (*v)->ival_errors;
	}
}

/* One pair's table: the totals (final) or the interval's values. */
void mt_print_link(struct prof *p, struct mt *mt, struct mt_link *lk, bool final)
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
		rows = sorted_by(mt, lk, &nr);
	if (lk->kmem && final) {
		mt_kmem__print(p, lk);
		if (!p->json_fmt)
			pair_out__text(p->out, lk->pr, c);
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
		pair_out__json(&p->json, c);
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
				if (mt->perins) {
					JSON_KEY(&p->json, "tid");
					json__u64(&p->json, (uint32_t)st->tid);
					JSON_KEY(&p->json, "comm");
					json__str(&p->json, prof__comm(p, (uint32_t)st->tid,
								       (uint32_t)st->tid));
				}
			} else {
				const struct mt_ev *me = p->events_arr[lk->from].priv;

				JSON_KEY(&p->json, "key");
				json__str(&p->json, mt_key_str(p, mt, lk->from, st->id));
				if (me && me->key_tid && !(st->id >> 63)) { /* whose: the thread's */
					JSON_KEY(&p->json, "comm");
					json__str(&p->json, prof__comm(p, (uint32_t)st->id,
								       (uint32_t)st->id));
				}
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
		for (size_t i = 0; i < nr; i++) {
			row_label(p, mt, lk, rows[i], label, sizeof(label));
			if (strlen(label) > (size_t)mt->label_width)
				mt->label_width = (int)strlen(label);
		}
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
	pair_out__text(p->out, lk->pr, c);
	free(rows);
}

int mt_write_heatmaps(struct prof *p, struct mt *mt)
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

/* ---- for mt_call.c ---- */

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
