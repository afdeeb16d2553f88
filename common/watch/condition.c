/* condition: a threshold on a CPU share, event rate or latency that must hold a time, per unit. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "condition.h"
#include "percent.h"
#include "ratecount.h"

int cond__init_share(struct cond *c, enum cpustat_kind kind, const char *arg)
{
	double v;

	if (percent__parse(arg, &v))
		return -EINVAL;
	c->type = COND_SHARE;
	c->kind = kind;
	c->threshold = v;
	snprintf(c->name, sizeof(c->name), "%s>=%g%%", cpustat__kind_name(kind), v);
	snprintf(c->tag, sizeof(c->tag), "%s", cpustat__kind_name(kind));
	return 0;
}

int cond__split_rate(const char *arg, char **event, double *per_s)
{
	/* the last '>': tracepoint filters may hold one, the threshold never does */
	const char *gt = strrchr(arg, '>');
	char *end;

	if (!gt || gt == arg)
		return -EINVAL;
	errno = 0;
	*per_s = strtod(gt + 1 + (gt[1] == '='), &end);
	if (errno || end == gt + 1 || *end || !(*per_s > 0))
		return -ERANGE;
	*event = strndup(arg, (size_t)(gt - arg));
	return *event ? 0 : -ENOMEM;
}

void cond__init_rate(struct cond *c, char *event, struct psc_event_list *specs, double per_s)
{
	const struct psc_event_spec *s = &specs->specs[0];

	c->type = COND_RATE;
	c->event = event;
	c->specs = specs;
	c->threshold = per_s;
	snprintf(c->name, sizeof(c->name), "%s>=%g/s", event, per_s);
	snprintf(c->tag, sizeof(c->tag), "rate-%s", s->event ? s->event : s->name);
}

void cond__init_latency(struct cond *c, struct tlat *lat, const char *name, const char *tag,
			double threshold_ms)
{
	c->type = COND_LATENCY;
	c->lat = lat;
	c->threshold = threshold_ms;
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->tag, sizeof(c->tag), "%s", tag);
}

int cond__alloc_units(struct cond *c, int nr)
{
	size_t n = (size_t)nr;

	c->nr_units = nr;
	c->last = calloc(n, sizeof(*c->last));
	c->since = calloc(n, sizeof(*c->since));
	c->sum = calloc(n, sizeof(*c->sum));
	c->n = calloc(n, sizeof(*c->n));
	c->value = calloc(n, sizeof(*c->value));
	if (!c->last || !c->since || !c->sum || !c->n || !c->value)
		return -ENOMEM;
	for (size_t u = 0; u < n; u++)
		c->value[u] = -1;
	return 0;
}

void cond__free(struct cond *c)
{
	psc_evsel__delete(c->evsel);
	psc_event_list__delete(c->specs);
	free(c->event);
	free(c->last);
	free(c->since);
	free(c->sum);
	free(c->n);
	free(c->value);
}

double cond__rate(struct cond *c, int unit, int cpu, double dt_s, bool first)
{
	uint64_t total = ratecount__read(c->evsel, cpu), prev = c->last[unit];

	c->last[unit] = total;
	if (first || dt_s <= 0 || total < prev)
		return -1;
	return (double)(total - prev) / dt_s;
}

void cond__reset(struct cond *c, int unit)
{
	c->since[unit] = 0;
	c->sum[unit] = 0;
	c->n[unit] = 0;
}

bool cond__holds(struct cond *c, int unit, double v, uint64_t now, uint64_t prev_ns,
		 uint64_t for_ns, uint64_t slack_ns)
{
	c->value[unit] = v;
	if (v < c->threshold) {
		cond__reset(c, unit);
		return false;
	}
	if (!c->since[unit])
		c->since[unit] = prev_ns ? prev_ns : now;
	c->sum[unit] += v;
	c->n[unit]++;
	return now - c->since[unit] + slack_ns >= for_ns;
}

double cond__mean(const struct cond *c, int unit)
{
	return c->n[unit] ? c->sum[unit] / c->n[unit] : 0;
}
