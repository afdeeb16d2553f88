/* multi-trace's tables: per pair and per key or system call (text or JSON), intervals, the end. */
#include "multi_trace.h"
#include "pair_out.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "heatmap_file.h"
#include "syscall_names.h"

/* A row's members after its own: errors for syscalls. */
static void stat_json(struct prof *p, struct mt *mt, const struct hist *h, uint64_t over,
		      uint64_t errors)
{
	lat_row__json(&p->json, h, over, mt->impl == MT_SYSCALLS ? &errors : NULL);
}

static void row_label(struct prof *p, struct mt *mt, struct mt_link *lk, const struct lat_row *st,
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

/* One pair's table: the totals (final) or the interval's values. */
static void mt_print_link(struct prof *p, struct mt *mt, struct mt_link *lk, bool final)
{
	uint64_t c[PAIR_NR_OUTCOMES];
	const uint64_t *now = pair__counts(lk->pr);
	struct lat_row **rows = NULL;
	struct lat_cols cols;
	size_t nr = 0;
	char label[96];
	bool table = !mt->only_than && mt->impl != MT_PAIR && mt->impl != MT_KMEMPROF &&
		     mt->impl != MT_CALL && mt->impl != MT_CALL_DELAY;

	for (int o = 0; o < PAIR_NR_OUTCOMES; o++)
		c[o] = final ? now[o] : now[o] - lk->ival_counts[o];
	/* syscalls keep rows only: the pair's total is their sum */
	if (mt->impl == MT_SYSCALLS)
		lk->dropped += lat_rows__sum(&lk->by, lk->all);
	if (mt->impl == MT_SYSCALLS || mt->perins)
		rows = lat_rows__sorted(
			&lk->by, mt->impl == MT_SYSCALLS ? lat_row__cmp_total : lat_row__cmp_count,
			&nr);
	if (lk->kmem && final) {
		mt_kmem__print(p, lk);
		if (!p->json_fmt)
			pair_out__text(p->out, lk->pr, c);
		free(rows); /* --perins sorted them for nothing: kmemprof's rows are its stacks */
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
			const struct lat_row *st = rows[i];
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
				if (me && me->key_tid &&
				    !(st->id >> 63)) { /* whose: the thread's */
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
		cols = mt_cols(mt);
		lat_cols__header(&cols, p->out, lk->name);
		lat_cols__row(&cols, p->out, "  all", final ? &lk->all->total : &lk->all->ival,
			      final ? lk->all->over : lk->all->ival_over,
			      final ? lk->all->errors : lk->all->ival_errors);
		for (size_t i = 0; i < nr; i++) {
			const struct lat_row *st = rows[i];
			const struct hist *h = final ? &st->total : &st->ival;

			if (!hist__count(h))
				continue;
			row_label(p, mt, lk, st, label, sizeof(label));
			lat_cols__row(&cols, p->out, label, h, final ? st->over : st->ival_over,
				      final ? st->errors : st->ival_errors);
		}
	} else {
		out__printf(p->out, "%s\n", lk->name);
	}
	pair_out__text(p->out, lk->pr, c);
	free(rows);
}

static int write_heatmaps(struct prof *p, struct mt *mt)
{
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct heatmap_svg svg = { .title = lk->name, .ylabel = "latency", .unit = "ns" };
		char path[4096];
		bool opened;
		int ret;

		if (l)
			snprintf(path, sizeof(path), "%s.%d", mt->heatmap, l + 1);
		else
			snprintf(path, sizeof(path), "%s", mt->heatmap);
		ret = heatmap__write_file(lk->hm, path, &svg, &opened);
		if (ret && !opened)
			fprintf(stderr, "perfscope %s: cannot write the heatmap to '%s': %s\n",
				p->name, path, strerror(-ret));
		if (ret)
			return ret;
	}
	return 0;
}

static void reset_interval(struct mt *mt)
{
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];

		lat_row__reset_ival(lk->all);
		lat_rows__reset_ival(&lk->by);
		memcpy(lk->ival_counts, pair__counts(lk->pr), sizeof(lk->ival_counts));
	}
}

int mt_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct mt *mt = priv;
	time_t t = time(NULL);
	struct tm tm;
	char buf[32];

	if (!p->json_fmt && !mt->only_than) {
		localtime_r(&t, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
		out__printf(p->out, "%s\n", buf);
	}
	if (mt->call)
		mt_call__print(p, mt, false);
	for (int l = 0; l < mt->nr_links; l++)
		mt_print_link(p, mt, &mt->links[l], false);
	reset_interval(mt);
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
		mt_print_link(p, mt, &mt->links[l], true);
	if (!p->json_fmt && mt->print_outliers)
		out__printf(p->out, "outliers: %llu\n", (unsigned long long)mt->outliers);
	if (!p->json_fmt && mt->lost_windows)
		out__printf(p->out,
			    "lost windows: %llu (pending starts invalidated, counted as "
			    "lost; no latency is measured across them)\n",
			    (unsigned long long)mt->lost_windows);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outliers");
		json__u64(&p->json, mt->outliers);
		JSON_KEY(&p->json, "lost_windows");
		json__u64(&p->json, mt->lost_windows);
		prof__json_end_counts(p, true);
	}
	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		key_errors += me->key_errors + me->role_errors + me->pass_errors;
	}
	for (int l = 0; l < mt->nr_links; l++)
		if (mt->links[l].dropped)
			fprintf(stderr,
				"perfscope %s: %s: %llu latencies not in the tables (no memory)\n",
				p->name, mt->links[l].name,
				(unsigned long long)mt->links[l].dropped);
	if (key_errors)
		fprintf(stderr,
			"perfscope %s: %llu events whose key= or role= could not be "
			"computed were skipped\n",
			p->name, (unsigned long long)key_errors);
	if (mt->heatmap)
		return write_heatmaps(p, mt);
	return 0;
}
