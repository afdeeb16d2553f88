/* task-state's tables: rows named by state (and thread under --perins), intervals, the end. */
#include "task_state.h"

#include <stdio.h>

const char *ts_row_name(const struct ts *ts, int row)
{
	if (row == ROW_RUN)
		return "R";
	if (row == ROW_RD)
		return "RD";
	if (row == ROW_UNKNOWN)
		return "?";
	return tstate_map__letter(&ts->map, row);
}

/* Per thread rows after the totals: ids with a thread come after the plain ones (R first,
 * sleeps by bit, RD and ? last: their ids are in that order already). */
static void text_label(struct prof *p, void *ctx, const struct lat_row *r, char *buf,
		       size_t len)
{
	struct ts *ts = ctx;
	int row = (int)(r->id & 0xff);

	if (r->id >> 8) {
		uint32_t tid = (uint32_t)((r->id >> 8) - 1);

		snprintf(buf, len, "%-2s %u %s", ts_row_name(ts, row), tid,
			 prof__comm(p, tid, tid));
	} else {
		snprintf(buf, len, "%s", ts_row_name(ts, row));
	}
}

static void json_row(struct prof *p, void *ctx, const struct lat_row *r)
{
	struct ts *ts = ctx;

	JSON_KEY(&p->json, "state");
	json__str(&p->json, ts_row_name(ts, (int)(r->id & 0xff)));
	if (r->id >> 8) {
		uint32_t tid = (uint32_t)((r->id >> 8) - 1);

		JSON_KEY(&p->json, "tid");
		json__u64(&p->json, tid);
		JSON_KEY(&p->json, "comm");
		json__str(&p->json, prof__comm(p, tid, tid));
	}
}

static void json_outcomes(struct prof *p, void *ctx)
{
	JSON_KEY(&p->json, "task_state");
	json__str(&p->json, "outcomes");
}

static struct stage_table table(struct ts *ts)
{
	return (struct stage_table){ .width = ts->perins ? 32 : 4,
				     .head = ts->perins ? "St tid comm" : "St",
				     .ctx = ts,
				     .json_row = json_row,
				     .text_label = text_label,
				     .json_outcomes = json_outcomes };
}

int ts_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct stage_table t = table(priv);

	return stage_core__interval(p, priv, &t);
}

int ts_report(struct prof *p, void *priv)
{
	struct stage_table t = table(priv);
	int ret = stage_core__report(p, priv, &t, "states");
	int fl = ts_flame_report(p, priv);

	return ret ? ret : fl;
}
