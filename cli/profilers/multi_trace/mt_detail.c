/* multi-trace --detail: a bounded backlog of recent events, printed around each outlier. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "multi_trace.h"

/*
 * Every event (untraced ones included) is copied into a ring of the last DETAIL_BACKLOG events.
 * An outlier is printed once the events after its end are in (+N) or at the end of the run: its
 * window [start - N, end + N] is taken from the ring. A window that reaches back past the ring's
 * oldest event is printed as far as the ring goes and counted as truncated; outliers waiting
 * are bounded too (DETAIL_PENDING; more are counted as dropped, never silently). The ring is
 * bounded in bytes too (DETAIL_BACKLOG_BYTES): with --call-graph dwarf each copy owns its user
 * stack (up to 64 KiB), which 65536 events would turn into gigabytes.
 */
#define DETAIL_BACKLOG 65536
#define DETAIL_BACKLOG_BYTES (64u << 20)
#define DETAIL_PENDING 1024

struct mt_outlier {
	struct pair_copy *start, *end;
};

struct mt_detail {
	uint64_t before, after, hide; /* -N, +N, hide<N */
	bool samecpu, samepid, sametid, samekey;
	bool only1, only2; /* same* compares with the start (1) or the end (2) only */
	struct pair_copy **ring;
	size_t head, nr; /* oldest at head */
	size_t bytes; /* of the copies in the ring */
	struct mt_outlier pending[DETAIL_PENDING];
	size_t nr_pending;
	uint64_t printed, truncated, dropped, nomem, hidden;
};

static struct mt_detail *detail_opts(struct mt *mt)
{
	if (!mt->dt)
		mt->dt = calloc(1, sizeof(*mt->dt));
	return mt->dt;
}

int mt_detail__parse(struct prof *p, struct mt *mt, const char *arg)
{
	struct mt_detail *d = detail_opts(mt);
	char buf[256], *save = NULL, *tok;

	if (!d)
		return -ENOMEM;
	mt->detail = true;
	mt->detail_text = arg;
	if (!arg || !*arg)
		return 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "samecpu"))
			d->samecpu = true;
		else if (!strcmp(tok, "samepid"))
			d->samepid = true;
		else if (!strcmp(tok, "sametid"))
			d->sametid = true;
		else if (!strcmp(tok, "samekey"))
			d->samekey = true;
		else if (!strcmp(tok, "1"))
			d->only1 = true;
		else if (!strcmp(tok, "2"))
			d->only2 = true;
		else if (tok[0] == '-' && !duration__parse(tok + 1, &d->before))
			continue;
		else if (tok[0] == '+' && !duration__parse(tok + 1, &d->after))
			continue;
		else if (!strncmp(tok, "hide<", 5) && !duration__parse(tok + 5, &d->hide))
			continue;
		else
			return prof_usage(p,
					  "--detail takes -N, +N (times: 1ms), samecpu, samepid, "
					  "sametid, samekey, 1, 2 and hide<N, comma separated; not "
					  "'%s'",
					  tok);
	}
	return 0;
}

int mt_detail__init(struct prof *p, struct mt *mt)
{
	struct mt_detail *d = detail_opts(mt);

	if (!d)
		return -ENOMEM;
	d->ring = calloc(DETAIL_BACKLOG, sizeof(*d->ring));
	return d->ring ? 0 : -ENOMEM;
}

void mt_detail__add(struct prof *p, struct mt *mt, int ev_idx, int cpu, const struct psc_sample *s,
		    uint64_t key)
{
	struct mt_detail *d = mt->dt;
	struct pair_copy *c;

	if (!d->ring)
		return;
	c = pair_copy__new(s, ev_idx, cpu, key);
	if (!c) {
		d->nomem++;
		return;
	}
	/* the oldest go: a window reaching back past them is counted as truncated */
	while (d->nr == DETAIL_BACKLOG || (d->nr && d->bytes + c->bytes > DETAIL_BACKLOG_BYTES)) {
		d->bytes -= d->ring[d->head]->bytes;
		free(d->ring[d->head]);
		d->ring[d->head] = NULL;
		d->head = (d->head + 1) % DETAIL_BACKLOG;
		d->nr--;
	}
	d->ring[(d->head + d->nr) % DETAIL_BACKLOG] = c;
	d->nr++;
	d->bytes += c->bytes;
}

void mt_detail__outlier(struct prof *p, struct mt *mt, const struct pair_copy *start,
			const struct pair_event *end)
{
	struct mt_detail *d = mt->dt;
	struct mt_outlier *o;

	if (d->nr_pending == DETAIL_PENDING) {
		d->dropped++;
		return;
	}
	o = &d->pending[d->nr_pending];
	/* a copy of the start's copy (re-pointed into itself), and one of the end */
	o->start = start ? pair_copy__new(&start->s, start->ev_idx, start->cpu, start->key) : NULL;
	o->end = pair_copy__new(end->sample, end->idx, end->cpu, end->key);
	if (!o->start || !o->end) {
		free(o->start);
		free(o->end);
		d->nomem++;
		return;
	}
	d->nr_pending++;
}

/* Whether c shares what same* asks with the start or the end (only one of them with 1 or 2). */
static bool same(const struct mt_detail *d, const struct pair_copy *c, const struct mt_outlier *o)
{
	bool s1 = !d->only2 || d->only1, s2 = !d->only1 || d->only2;
	const struct pair_copy *a = o->start, *b = o->end;

	if (d->samecpu && !((s1 && c->cpu == a->cpu) || (s2 && c->cpu == b->cpu)))
		return false;
	if (d->samepid && !((s1 && c->s.pid == a->s.pid) || (s2 && c->s.pid == b->s.pid)))
		return false;
	if (d->sametid && !((s1 && c->s.tid == a->s.tid) || (s2 && c->s.tid == b->s.tid)))
		return false;
	if (d->samekey && !((s1 && c->key == a->key) || (s2 && c->key == b->key)))
		return false;
	return true;
}

static void print_one(struct prof *p, struct mt *mt, struct mt_outlier *o)
{
	struct mt_detail *d = mt->dt;
	uint64_t from = o->start->s.time > d->before ? o->start->s.time - d->before : 0;
	uint64_t to = o->end->s.time + d->after;
	uint64_t delta = o->end->s.time - o->start->s.time, last = 0;
	bool have_last = false;
	char lat[32];

	d->printed++;
	if (d->nr && d->ring[d->head]->s.time > from)
		d->truncated++;
	hist_fmt(lat, sizeof(lat), delta, "ns");
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outlier");
		json__bool(&p->json, true);
		JSON_KEY(&p->json, "key");
		json__str(&p->json, mt_key_str(p, mt, o->start->ev_idx, o->start->key));
		JSON_KEY(&p->json, "latency_ns");
		json__u64(&p->json, delta);
		JSON_KEY(&p->json, "start");
		mt_json_event(p, mt, o->start->ev_idx, o->start->cpu, &o->start->s);
		JSON_KEY(&p->json, "end");
		mt_json_event(p, mt, o->end->ev_idx, o->end->cpu, &o->end->s);
		JSON_KEY(&p->json, "detail");
		json__arr(&p->json);
	} else {
		out__printf(p->out, "latency %s (%llu ns), key %s:\n", lat,
			    (unsigned long long)delta,
			    mt_key_str(p, mt, o->start->ev_idx, o->start->key));
	}
	for (size_t i = 0; i < d->nr; i++) {
		struct pair_copy *c = d->ring[(d->head + i) % DETAIL_BACKLOG];
		bool is_start = c->s.time == o->start->s.time && c->ev_idx == o->start->ev_idx &&
				c->cpu == o->start->cpu;
		bool is_end = c->s.time == o->end->s.time && c->ev_idx == o->end->ev_idx &&
			      c->cpu == o->end->cpu;

		if (c->s.time < from)
			continue;
		if (c->s.time > to)
			break;
		if (!is_start && !is_end && !same(d, c, o))
			continue;
		if (!is_start && !is_end && d->hide && have_last && c->s.time - last < d->hide) {
			d->hidden++;
			continue;
		}
		last = c->s.time;
		have_last = true;
		if (p->json_fmt)
			mt_json_event(p, mt, c->ev_idx, c->cpu, &c->s);
		else
			mt_print_event(p, mt, c->ev_idx, c->cpu, &c->s,
				       is_start ? "S "
				       : is_end ? "E "
						: "  ");
	}
	if (p->json_fmt) {
		json__end(&p->json);
		json__end_line(&p->json);
	}
}

void mt_detail__flush(struct prof *p, struct mt *mt, bool all)
{
	struct mt_detail *d = mt->dt;
	size_t done = 0;

	if (!d)
		return;
	while (done < d->nr_pending) {
		struct mt_outlier *o = &d->pending[done];

		if (!all && mt->last_time <= o->end->s.time + d->after)
			break;
		print_one(p, mt, o);
		free(o->start);
		free(o->end);
		done++;
	}
	if (done) {
		memmove(d->pending, d->pending + done,
			(d->nr_pending - done) * sizeof(d->pending[0]));
		d->nr_pending -= done;
	}
}

void mt_detail__report(struct prof *p, struct mt *mt)
{
	struct mt_detail *d = mt->dt;

	if (!d || (!d->truncated && !d->dropped && !d->nomem && !d->hidden))
		return;
	fprintf(stderr,
		"perfscope %s: --detail: %llu outliers shown, %llu with their window cut at the "
		"backlog's %d events or %u MiB, %llu not shown (more than %d waiting), %llu events "
		"not kept (no memory), %llu hidden (hide<)\n",
		p->name, (unsigned long long)d->printed, (unsigned long long)d->truncated,
		DETAIL_BACKLOG, DETAIL_BACKLOG_BYTES >> 20, (unsigned long long)d->dropped,
		DETAIL_PENDING, (unsigned long long)d->nomem, (unsigned long long)d->hidden);
}

void mt_detail__delete(struct mt_detail *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr_pending; i++) {
		free(d->pending[i].start);
		free(d->pending[i].end);
	}
	if (d->ring)
		for (size_t i = 0; i < d->nr; i++)
			free(d->ring[(d->head + i) % DETAIL_BACKLOG]);
	free(d->ring);
	free(d);
}
