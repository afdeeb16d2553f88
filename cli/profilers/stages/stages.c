/* stages: what task-state and blktrace share around the pair engine: rows, outliers, reports. */
#include "stages.h"
#include "pair_out.h"
#include "clock.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/evsel.h>

#include "expr.h"
#include "session.h"

int stage_core__init(struct prof *p, struct stage_core *c)
{
	int err = c->than ? prof__use_printer(p) : 0;

	if (err)
		return err;
	if (lat_rows__init(&c->rows))
		return -ENOMEM;
	c->inited = true;
	return 0;
}

int stage_core__start(struct prof *p, struct stage_core *c, const struct pair_impl *impl,
		      void *ctx)
{
	struct pair_opts po = { .impl = impl, .ctx = ctx, .max_pending = (size_t)c->max_pending,
				.unordered = !p->order };

	c->pr = pair__new(&po);
	return c->pr ? 0 : -errno;
}

void stage_apply_filter(struct prof *p, struct prof_event *ev, const char *text)
{
	if (psc_evsel__apply_filter(ev->evsel, text) && p->opts.verbose)
		fprintf(stderr, "perfscope %s: the kernel refused the filter '%s' on %s: "
				"applied in user space\n",
			p->name, text, ev->name);
}

int stage_compile(struct prof *p, struct prof_event *ev, const char *text, struct expr **out)
{
	struct expr_opts o;
	struct expr_error err;

	prof__expr_opts(p, ev, &o);
	o.want_int = true;
	*out = expr__compile(text, &o, &err);
	if (*out)
		return 0;
	if (errno == ENOMEM)
		return -ENOMEM;
	/* a format without the fields the preset reads: say which, and what it has */
	fprintf(stderr, "perfscope %s: '%s' on %s: %s\n", p->name, text, ev->name, err.msg);
	if (err.unknown_name)
		expr_print_names(stderr, "  ", ev->spec->name, &o);
	return -EINVAL;
}

void stage_release_copy(void *ctx, void *data)
{
	struct pair_copy **copy = data;

	/* not free(NULL) per pair: a call into libc per event, and a trap when free is probed */
	if (*copy) {
		free(*copy);
		*copy = NULL;
	}
}

void stage_core__lost(struct prof *p, struct stage_core *c)
{
	c->lost_windows++;
	pair__lost(c->pr, mono_ns()); /* a loss heard now happened before now */
}

static void print_event(struct prof *p, struct stage_core *c, int idx, int cpu,
			const struct psc_sample *s, bool json)
{
	const struct prof_event *ev = &p->events_arr[idx];

	if (json) {
		json__obj(&p->json);
		if (ev->print)
			prof__print_members(p, ev, cpu, s);
		json__end(&p->json);
		return;
	}
	if (ev->print) {
		out__printf(p->out, "  ");
		prof__print(p, ev, cpu, s);
	}
}

void stage_outlier_events(struct prof *p, struct stage_core *c, const struct pair_copy *start,
			  const struct pair_event *end, bool json)
{
	if (start) {
		if (json)
			JSON_KEY(&p->json, "start");
		print_event(p, c, start->ev_idx, start->cpu, &start->s, json);
	}
	if (end->sample) {
		if (json)
			JSON_KEY(&p->json, "end");
		print_event(p, c, end->idx, end->cpu, end->sample, json);
	}
}

static void print_table(struct prof *p, struct stage_core *c, const struct stage_table *t,
			bool final)
{
	const uint64_t *now = pair__counts(c->pr);
	uint64_t n[PAIR_NR_OUTCOMES];
	size_t nr = 0;
	struct lat_row **rows = lat_rows__sorted(&c->rows, lat_row__cmp_id, &nr);
	struct lat_cols cols = { .width = t->width, .total_width = 12,
				 .over = c->than ? "over_than" : NULL };
	char label[96];

	for (int o = 0; o < PAIR_NR_OUTCOMES; o++)
		n[o] = final ? now[o] : now[o] - c->ival_counts[o];
	if (!rows)
		return;
	if (p->json_fmt) {
		for (size_t i = 0; i < nr; i++) {
			const struct hist *h = final ? &rows[i]->total : &rows[i]->ival;

			if (!hist__count(h))
				continue;
			json__begin(&p->json, p->out);
			t->json_row(p, t->ctx, rows[i]);
			if (final) {
				JSON_KEY(&p->json, "final");
				json__bool(&p->json, true);
			} else {
				JSON_KEY(&p->json, "interval_s");
				json__dbl(&p->json, prof__elapsed(p));
			}
			lat_row__json(&p->json, h, final ? rows[i]->over : rows[i]->ival_over, NULL);
			json__end_line(&p->json);
		}
		json__begin(&p->json, p->out);
		t->json_outcomes(p, t->ctx);
		if (final) {
			JSON_KEY(&p->json, "final");
			json__bool(&p->json, true);
		}
		pair_out__json(&p->json, n);
		JSON_KEY(&p->json, "pending");
		json__u64(&p->json, pair__nr_pending(c->pr));
		JSON_KEY(&p->json, "lost_windows");
		json__u64(&p->json, c->lost_windows);
		if (final) {
			JSON_KEY(&p->json, "kernel_dropped");
			json__u64(&p->json, prof__kernel_dropped(p));
		}
		JSON_KEY(&p->json, "outliers");
		json__u64(&p->json, c->outliers);
		json__end_line(&p->json);
		free(rows);
		return;
	}
	lat_cols__header(&cols, p->out, t->head);
	for (size_t i = 0; i < nr; i++) {
		const struct hist *h = final ? &rows[i]->total : &rows[i]->ival;

		if (!hist__count(h))
			continue;
		t->text_label(p, t->ctx, rows[i], label, sizeof(label));
		lat_cols__row(&cols, p->out, label, h, final ? rows[i]->over : rows[i]->ival_over, 0);
	}
	pair_out__text(p->out, c->pr, n);
	free(rows);
}

int stage_core__interval(struct prof *p, struct stage_core *c, const struct stage_table *t)
{
	time_t now = time(NULL);
	struct tm tm;
	char buf[32];

	if (!p->json_fmt) {
		localtime_r(&now, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
		out__printf(p->out, "%s\n", buf);
	}
	print_table(p, c, t, false);
	lat_rows__reset_ival(&c->rows);
	memcpy(c->ival_counts, pair__counts(c->pr), sizeof(c->ival_counts));
	return 0;
}

int stage_core__report(struct prof *p, struct stage_core *c, const struct stage_table *t,
		       const char *what)
{
	uint64_t errors = 0;

	pair__finish(c->pr);
	print_table(p, c, t, true);
	if (!p->json_fmt && c->than)
		out__printf(p->out, "outliers: %llu\n", (unsigned long long)c->outliers);
	if (!p->json_fmt && c->lost_windows)
		out__printf(p->out, "lost windows: %llu (%s begun before a loss are not "
				    "measured, counted as lost)\n",
			    (unsigned long long)c->lost_windows, what);
	for (int i = 0; i < p->nr_events; i++)
		errors += ((struct stage_ev *)p->events_arr[i].priv)->errors;
	if (errors)
		fprintf(stderr, "perfscope %s: %llu events whose fields could not be read were "
				"skipped\n",
			p->name, (unsigned long long)errors);
	return 0;
}

void stage_core__exit(struct prof *p, struct stage_core *c)
{
	pair__delete(c->pr);
	if (c->inited)
		lat_rows__exit(&c->rows);
}
