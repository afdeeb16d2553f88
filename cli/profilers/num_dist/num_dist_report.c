/* perfscope num-dist's reports: each distribution as text or JSON, the heatmap files. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap_file.h"
#include "keymap_sorted.h"
#include "num_dist.h"

static const char *key_name(struct prof *p, const struct nd *nd, const struct nd_ev *ne)
{
	if (ne->key)
		return "key";
	if (nd->perins)
		return p->target.per_cpu ? "cpu" : "tid";
	return NULL;
}

static void print_dist(struct prof *p, const char *kname, uint64_t key, const char *title,
		       const struct hist *h, bool final)
{
	static const double pct[] = { 50, 90, 95, 99, 99.9 };
	static const char *const pname[] = { "p50", "p90", "p95", "p99", "p99.9" };
	char label[64];

	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "time");
		json__dbl(&p->json, prof__elapsed(p));
		if (final) {
			JSON_KEY(&p->json, "final");
			json__bool(&p->json, true);
		}
		JSON_KEY(&p->json, "event");
		json__str(&p->json, title);
		if (kname) {
			json__key(&p->json, kname);
			json__u64(&p->json, key);
		}
		if (kname && !strcmp(kname, "tid")) {
			JSON_KEY(&p->json, "comm");
			json__str(&p->json, prof__comm(p, (uint32_t)key, (uint32_t)key));
		}
		hist__json(h, &p->json, NULL);
		json__end_line(&p->json);
		return;
	}
	out__printf(p->out, "%s", title);
	if (kname && !strcmp(kname, "tid")) /* --perins: whose, comm/tid */
		out__printf(p->out, " tid %s",
			    prof__tid_label(p, (uint32_t)key, label, sizeof(label)));
	else if (kname)
		out__printf(p->out, " %s %llu", kname, (unsigned long long)key);
	out__printf(p->out, ": count %llu  min %llu  mean %.1f  max %llu\n",
		    (unsigned long long)hist__count(h), (unsigned long long)hist__min(h),
		    hist__mean_dbl(h), (unsigned long long)hist__max(h));
	if (!hist__count(h))
		return;
	out__puts(p->out, " ");
	for (int i = 0; i < 5; i++)
		out__printf(p->out, " %s %llu", pname[i],
			    (unsigned long long)hist__percentile(h, pct[i]));
	out__puts(p->out, "\n");
	hist__print_log2(h, p->out);
	out__puts(p->out, "\n");
}

int nd_print(struct prof *p, struct nd *nd, bool final)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct nd_ev *ne = ev->priv;
		size_t n;
		struct keymap_entry *rows = keymap__sorted(&ne->dists, NULL, NULL, &n);
		const char *kname = key_name(p, nd, ne);

		if (!rows)
			return -ENOMEM;
		if (!n && !kname) {
			struct hist empty = { 0 };

			print_dist(p, NULL, 0, ev->name, &empty, final);
		}
		for (size_t r = 0; r < n; r++) {
			struct nd_dist *d = *(struct nd_dist **)rows[r].value;
			struct hist *h = final ? &d->total : &d->ival;

			print_dist(p, kname, rows[r].key, ev->name, h, final);
			if (!final)
				hist__reset(h);
		}
		free(rows);
	}
	return 0;
}

static int write_heatmap(struct prof *p, struct nd *nd, struct prof_event *ev)
{
	struct nd_ev *ne = ev->priv;
	char path[4096];
	bool opened;
	int ret;
	const struct heatmap_svg svg = {
		.title = ev->name,
		.ylabel = prof_event__attr(ev, "num")->value,
		.unit = NULL,
	};

	if (p->nr_events == 1)
		snprintf(path, sizeof(path), "%s", nd->heatmap);
	else
		snprintf(path, sizeof(path), "%s.%d.svg", nd->heatmap, ev->idx);
	ret = heatmap__write_file(ne->hm, path, &svg, &opened);
	if (ret) {
		if (!opened)
			fprintf(stderr, "perfscope num-dist: cannot write the heatmap to %s: %s\n",
				path, strerror(-ret));
		else
			fprintf(stderr, "perfscope num-dist: writing %s: %s\n", path, strerror(-ret));
		return ret;
	}
	if (!p->opts.quiet)
		fprintf(stderr, "perfscope num-dist: heatmap of %llu values in %s\n",
			(unsigned long long)heatmap__count(ne->hm), path);
	return 0;
}

int nd_report(struct prof *p, void *priv)
{
	struct nd *nd = priv;
	int ret = nd_print(p, nd, true);

	for (int i = 0; i < p->nr_events && !ret; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct nd_ev *ne = ev->priv;

		if (ne->errors)
			fprintf(stderr,
				"perfscope num-dist: %s: %llu events where num= or key= could not "
				"run (a field outside the record or a division by zero)\n",
				ev->name, (unsigned long long)ne->errors);
		if (ne->hm)
			ret = write_heatmap(p, nd, ev);
	}
	if (nd->dropped)
		fprintf(stderr, "perfscope num-dist: %llu events not counted: no memory\n",
			(unsigned long long)nd->dropped);
	return ret;
}
