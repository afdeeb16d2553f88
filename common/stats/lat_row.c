/* Latency rows: counting a row's values, and its table text and JSON members. */
#include "lat_row.h"

#include <stdlib.h>

#include "json.h"
#include "output.h"

struct lat_row *lat_row__new(uint64_t id)
{
	struct lat_row *r = calloc(1, sizeof(*r));

	if (r)
		r->id = id;
	return r;
}

void lat_row__delete(struct lat_row *r)
{
	if (!r)
		return;
	hist__exit(&r->total);
	hist__exit(&r->ival);
	free(r);
}

void lat_row__add(struct lat_row *r, uint64_t v, bool over, bool error, bool ival)
{
	hist__add(&r->total, v);
	r->over += over;
	r->errors += error;
	if (ival) {
		hist__add(&r->ival, v);
		r->ival_over += over;
		r->ival_errors += error;
	}
}

void lat_row__reset_ival(struct lat_row *r)
{
	hist__reset(&r->ival);
	r->ival_over = r->ival_errors = 0;
}

void lat_cols__header(const struct lat_cols *c, struct out *o, const char *first)
{
	out__printf(o, "%-*s %10s", c->width, first, "calls");
	if (c->total_width)
		out__printf(o, " %*s", c->total_width, "total");
	out__printf(o, " %10s %10s %10s %10s %10s %10s %10s", "min", "mean", "p50", "p95", "p99",
		    "p99.9", "max");
	if (c->over)
		out__printf(o, " %10s", c->over);
	if (c->errors)
		out__printf(o, " %8s", "errors");
	out__printf(o, "\n");
}

void lat_cols__row(const struct lat_cols *c, struct out *o, const char *label, const struct hist *h,
		   uint64_t over, uint64_t errors)
{
	uint64_t vals[7] = { hist__min(h),
			     hist__mean(h),
			     hist__percentile(h, 50),
			     hist__percentile(h, 95),
			     hist__percentile(h, 99),
			     hist__percentile(h, 99.9),
			     hist__max(h) };
	char v[7][24], total[24];

	for (int i = 0; i < 7; i++)
		hist_fmt(v[i], sizeof(v[i]), vals[i], "ns");
	out__printf(o, "%-*s %10llu", c->width, label, (unsigned long long)hist__count(h));
	if (c->total_width) {
		hist_fmt(total, sizeof(total), hist__count(h) ? (uint64_t)hist__sum(h) : 0, "ns");
		out__printf(o, " %*s", c->total_width, total);
	}
	out__printf(o, " %10s %10s %10s %10s %10s %10s %10s", v[0], v[1], v[2], v[3], v[4], v[5],
		    v[6]);
	if (c->over)
		out__printf(o, " %10llu", (unsigned long long)over);
	if (c->errors)
		out__printf(o, " %8llu", (unsigned long long)errors);
	out__printf(o, "\n");
}

void lat_row__json(struct json *j, const struct hist *h, uint64_t over, const uint64_t *errors)
{
	hist__json(h, j, "ns");
	if (hist__count(h)) {
		JSON_KEY(j, "total_ns");
		json__u64(j, (uint64_t)hist__sum(h));
	}
	JSON_KEY(j, "over_than");
	json__u64(j, over);
	if (errors) {
		JSON_KEY(j, "errors");
		json__u64(j, *errors);
	}
}
