/* perf stat's derived figures and the spread of repeated runs (stat_derived.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stat_derived.h"

#define CACHE(id, op, res)                                               \
	(PERF_COUNT_HW_CACHE_##id | (PERF_COUNT_HW_CACHE_OP_##op << 8) | \
	 ((unsigned long long)PERF_COUNT_HW_CACHE_RESULT_##res << 16))

static const struct {
	unsigned long long config;
	enum stat_kind kind;
} cache_kinds[] = {
	{ CACHE(L1D, READ, ACCESS), STAT_L1D_LOADS },
	{ CACHE(L1D, READ, MISS), STAT_L1D_LOAD_MISSES },
	{ CACHE(L1I, READ, ACCESS), STAT_L1I_LOADS },
	{ CACHE(L1I, READ, MISS), STAT_L1I_LOAD_MISSES },
	{ CACHE(LL, READ, ACCESS), STAT_LLC_LOADS },
	{ CACHE(LL, READ, MISS), STAT_LLC_LOAD_MISSES },
	{ CACHE(DTLB, READ, ACCESS), STAT_DTLB_LOADS },
	{ CACHE(DTLB, READ, MISS), STAT_DTLB_LOAD_MISSES },
	{ CACHE(ITLB, READ, ACCESS), STAT_ITLB_LOADS },
	{ CACHE(ITLB, READ, MISS), STAT_ITLB_LOAD_MISSES },
};

enum stat_kind stat_kind_of(const struct perf_event_attr *a)
{
	/* hybrid machines put the PMU's type in the upper half of a hardware event's config */
	unsigned long long config = a->config & 0xffffffffull;

	switch (a->type) {
	case PERF_TYPE_SOFTWARE:
		if (a->config == PERF_COUNT_SW_TASK_CLOCK)
			return STAT_TASK_CLOCK;
		if (a->config == PERF_COUNT_SW_CPU_CLOCK)
			return STAT_CPU_CLOCK;
		return STAT_OTHER;
	case PERF_TYPE_HARDWARE:
		switch (config) {
		case PERF_COUNT_HW_CPU_CYCLES:
			return STAT_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS:
			return STAT_INSTRUCTIONS;
		case PERF_COUNT_HW_BRANCH_INSTRUCTIONS:
			return STAT_BRANCHES;
		case PERF_COUNT_HW_BRANCH_MISSES:
			return STAT_BRANCH_MISSES;
		case PERF_COUNT_HW_CACHE_REFERENCES:
			return STAT_CACHE_REFS;
		case PERF_COUNT_HW_CACHE_MISSES:
			return STAT_CACHE_MISSES;
		case PERF_COUNT_HW_STALLED_CYCLES_FRONTEND:
			return STAT_STALLED_FRONTEND;
		case PERF_COUNT_HW_STALLED_CYCLES_BACKEND:
			return STAT_STALLED_BACKEND;
		}
		return STAT_OTHER;
	case PERF_TYPE_HW_CACHE:
		for (size_t i = 0; i < sizeof(cache_kinds) / sizeof(cache_kinds[0]); i++)
			if (cache_kinds[i].config == config)
				return cache_kinds[i].kind;
		return STAT_OTHER;
	}
	return STAT_OTHER;
}

unsigned int stat_ctx_of(const struct perf_event_attr *a)
{
	return (unsigned int)a->exclude_user | (unsigned int)a->exclude_kernel << 1 |
	       (unsigned int)a->exclude_hv << 2 | (unsigned int)a->exclude_host << 3 |
	       (unsigned int)a->exclude_idle << 4;
}

/* The first counted counter of kind k in ctx, or NULL. */
static const struct stat_counter *find(const struct stat_counter *c, int n, enum stat_kind k,
				       unsigned int ctx)
{
	for (int i = 0; i < n; i++)
		if (c[i].kind == k && c[i].ctx == ctx && c[i].counted)
			return &c[i];
	return NULL;
}

/* The first counted counter of kind k, whatever its context. */
static const struct stat_counter *find_any(const struct stat_counter *c, int n, enum stat_kind k)
{
	for (int i = 0; i < n; i++)
		if (c[i].kind == k && c[i].counted)
			return &c[i];
	return NULL;
}

/*
 * The clock that rates (and GHz) are per second of: task-clock, else cpu-clock, in any context,
 * as perf keeps one clock per CPU (page-faults:u is per second of task-clock).
 */
static const struct stat_counter *clock_of(const struct stat_counter *c, int n)
{
	const struct stat_counter *t = find_any(c, n, STAT_TASK_CLOCK);

	return t ? t : find_any(c, n, STAT_CPU_CLOCK);
}

static void set(struct stat_metric *m, enum stat_metric_fmt fmt, double v, const char *unit)
{
	m->fmt = fmt;
	m->value = v;
	snprintf(m->unit, sizeof(m->unit), "%s", unit);
}

/* numerator as a percentage of the counted denominator of kind den (0 % when it is 0) */
static void ratio_pct(struct stat_metric *m, const struct stat_counter *c, int n, int i,
		      enum stat_kind den, const char *unit)
{
	const struct stat_counter *d = find(c, n, den, c[i].ctx);

	if (d)
		set(m, STAT_METRIC_PCT, d->value ? 100.0 * c[i].value / d->value : 0, unit);
}

static void rate(struct stat_metric *m, const struct stat_counter *c, int n, int i)
{
	const struct stat_counter *clk = clock_of(c, n);
	static const char *const units[] = { "/sec", "K/sec", "M/sec", "G/sec" };
	double v;
	int u = 0;

	if (!clk)
		return;
	v = clk->value ? 1e9 * c[i].value / clk->value : 0;
	while (v > 1000.0 && u < 3) { /* perf's steps: above 1000 the next prefix */
		v /= 1000.0;
		u++;
	}
	set(m, STAT_METRIC_RATIO, v, units[u]);
}

void stat_metric(const struct stat_counter *c, int n, int i, double wall_ns, struct stat_metric *m)
{
	const struct stat_counter *d;

	memset(m, 0, sizeof(*m));
	if (i < 0 || i >= n || !c[i].counted)
		return;
	switch (c[i].kind) {
	case STAT_TASK_CLOCK:
	case STAT_CPU_CLOCK:
		if (wall_ns > 0)
			set(m, STAT_METRIC_RATIO, c[i].value / wall_ns, "CPUs utilized");
		return;
	case STAT_INSTRUCTIONS:
		d = find(c, n, STAT_CYCLES, c[i].ctx);
		if (d && d->value)
			set(m, STAT_METRIC_IPC, c[i].value / d->value, "insn per cycle");
		return;
	case STAT_CYCLES:
		d = clock_of(c, n);
		if (d && d->value)
			set(m, STAT_METRIC_RATIO, c[i].value / d->value, "GHz");
		return;
	case STAT_BRANCH_MISSES:
		ratio_pct(m, c, n, i, STAT_BRANCHES, "of all branches");
		return;
	case STAT_CACHE_MISSES:
		ratio_pct(m, c, n, i, STAT_CACHE_REFS, "of all cache refs");
		return;
	case STAT_L1D_LOAD_MISSES:
		ratio_pct(m, c, n, i, STAT_L1D_LOADS, "of all L1-dcache accesses");
		return;
	case STAT_L1I_LOAD_MISSES:
		ratio_pct(m, c, n, i, STAT_L1I_LOADS, "of all L1-icache accesses");
		return;
	case STAT_LLC_LOAD_MISSES:
		ratio_pct(m, c, n, i, STAT_LLC_LOADS, "of all LL-cache accesses");
		return;
	case STAT_DTLB_LOAD_MISSES:
		ratio_pct(m, c, n, i, STAT_DTLB_LOADS, "of all dTLB cache accesses");
		return;
	case STAT_ITLB_LOAD_MISSES:
		ratio_pct(m, c, n, i, STAT_ITLB_LOADS, "of all iTLB cache accesses");
		return;
	case STAT_STALLED_FRONTEND:
		ratio_pct(m, c, n, i, STAT_CYCLES, "frontend cycles idle");
		return;
	case STAT_STALLED_BACKEND:
		ratio_pct(m, c, n, i, STAT_CYCLES, "backend cycles idle");
		return;
	case STAT_DURATION:
		return; /* perf divides it by task-clock ("G/sec"), which means nothing */
	default:
		rate(m, c, n, i);
		return;
	}
}

const char *stat_metric_str(const struct stat_metric *m, bool trim, char *buf, size_t len)
{
	const char *s = buf;

	switch (m->fmt) {
	case STAT_METRIC_NONE:
		buf[0] = '\0';
		break;
	case STAT_METRIC_RATIO:
		snprintf(buf, len, "%8.3f", m->value);
		break;
	case STAT_METRIC_IPC:
		snprintf(buf, len, "%7.2f ", m->value);
		break;
	case STAT_METRIC_PCT:
		snprintf(buf, len, "%7.2f%%", m->value);
		break;
	}
	if (trim) {
		while (*s == ' ')
			s++;
		memmove(buf, s, strlen(s) + 1);
		for (size_t n = strlen(buf); n && buf[n - 1] == ' '; n--)
			buf[n - 1] = '\0';
	}
	return buf;
}

void stat_stats__add(struct stat_stats *s, double v)
{
	double delta = v - s->mean;

	s->n++;
	s->mean += delta / s->n;
	s->m2 += delta * (v - s->mean);
}

double stat_stats__sem(const struct stat_stats *s)
{
	if (s->n < 2)
		return 0;
	return sqrt(s->m2 / (s->n - 1) / s->n);
}

double stat_stats__rel_pct(const struct stat_stats *s)
{
	return s->mean ? 100.0 * stat_stats__sem(s) / fabs(s->mean) : 0;
}

int stat_precision(double sd)
{
	if (!(sd > 0))
		return 9;
	if (sd > 1)
		return 2;
	double p = ceil(-log10(sd)) + 2;

	return p > 9 ? 9 : (int)p;
}
