/* multi-trace's outliers: a pair above --than (below --lower), printed now or kept for --detail. */
#include "multi_trace.h"

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
