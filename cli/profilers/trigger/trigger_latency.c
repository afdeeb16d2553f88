/* trigger_latency: --latency conditions of perfscope trigger over the pair engine; see the .h. */
#include "trigger_latency.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <perfscope/perfscope.h>

#include "expr.h"
#include "pair.h"
#include "target.h"

#define NS 1000000000ull

const struct prof_attr tlat_attrs[] = {
	{ "key", PROF_ATTR_EXPR, false,
	  "key=EXPR: --latency events: what a start and its end share (default: the thread)" },
	{ NULL },
};

struct tlat {
	char *events; /* "START,END" as given */
	char name[96];
	char tag[48];
	uint64_t threshold_ns;
	int pos, len; /* where events are in the session's event list */
	struct prof_event *start_ev, *end_ev;
	struct pair *pr;
	bool order;
	int nr_cpus;
	/* per CPU, this period: the longest latency ended there and how many ended */
	uint64_t *worst, *n;
	/* per unit (slot 0: every CPU, cpu + 1: one): the last value and when it was taken */
	uint64_t *hold_ns, *hold_at;
	bool *held;
	uint64_t pairs, over, max_ns, key_errors, out_of_range;
	uint64_t lost_windows;
};

/* multi-trace's time arguments: a number with an optional unit s, ms, us or ns (the default). */
static int parse_time(const char *arg, uint64_t *out)
{
	char *end;
	double v, mult = 1;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || !(v > 0) || v > 86400.0 * 365)
		return -1;
	if (!strcmp(end, "s"))
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (*end && strcmp(end, "ns"))
		return -1;
	*out = (uint64_t)(v * mult + 0.5);
	return *out ? 0 : -1;
}

static const char *short_name(const struct psc_event_spec *s)
{
	if (s->alias)
		return s->alias;
	return s->event ? s->event : s->name;
}

#define SPEC_EXAMPLE \
	"'syscalls:sys_enter_clock_nanosleep//key=common_pid/,syscalls:sys_exit_clock_nanosleep//key=common_pid/>20ms'"

int tlat_set__add(struct tlat_set *set, struct prof *p, const char *spec, struct tlat **out)
{
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs = NULL;
	const char *gt = strrchr(spec, '>');
	const char *thr;
	struct tlat *l;
	int ret;

	if (set->nr == TLAT_MAX)
		return prof_usage(p, "at most %d --latency conditions", TLAT_MAX);
	if (!gt || gt == spec)
		return prof_usage(p,
				  "--latency takes START,END>THRESHOLD (two events, then a time), "
				  "e.g. " SPEC_EXAMPLE ", not '%s'",
				  spec);
	thr = gt + 1 + (gt[1] == '=');
	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	if (parse_time(thr, &l->threshold_ns)) {
		free(l);
		return prof_usage(
			p,
			"--latency %s: the threshold after '>' must be a time above 0 with "
			"an optional unit s, ms, us or ns (the default), e.g. >10ms; not '%s'",
			spec, thr);
	}
	l->events = strndup(spec, (size_t)(gt - spec));
	if (!l->events) {
		free(l);
		return -ENOMEM;
	}
	if (strchr(l->events, ':'))
		psc_tracefs__mount();
	ret = psc_parse_events(l->events, NULL, &specs, &perr);
	if (ret) {
		cli_report_parse_error(p->name, l->events, &perr, ret);
		free(l->events);
		free(l);
		return ret == -ENOMEM ? -ENOMEM : 2;
	}
	if (specs->nr != 2) {
		int nr = specs->nr;

		psc_event_list__delete(specs);
		free(l->events);
		free(l);
		return prof_usage(p,
				  "--latency %s: give exactly two events, the start then the end "
				  "(this names %d%s), e.g. " SPEC_EXAMPLE,
				  spec, nr, nr > 2 ? ": a glob names each event it matches" : "");
	}
	snprintf(l->name, sizeof(l->name), "latency %s->%s>%s", short_name(&specs->specs[0]),
		 short_name(&specs->specs[1]), thr);
	snprintf(l->tag, sizeof(l->tag), "lat-%s", short_name(&specs->specs[1]));
	psc_event_list__delete(specs);
	set->v[set->nr++] = l;
	*out = l;
	return 0;
}

const char *tlat__name(const struct tlat *l)
{
	return l->name;
}

const char *tlat__tag(const struct tlat *l)
{
	return l->tag;
}

double tlat__threshold_ms(const struct tlat *l)
{
	return (double)l->threshold_ns / 1e6;
}

int tlat_set__check(struct tlat_set *set, struct prof *p)
{
	int ret;

	if (!set->nr)
		return 0;
	/* after the profiler's own (default) events: each one's place tells its events apart */
	for (int i = 0; i < set->nr; i++) {
		struct tlat *l = set->v[i];

		if ((ret = prof__add_events(p, l->events, &l->pos)))
			return ret;
		l->len = (int)strlen(l->events);
	}
	/* a start and its end on two CPUs: paired in time order, never ended before started */
	p->order = true;
	return 0;
}

static struct tlat *owner(struct tlat_set *set, const struct prof_event *ev)
{
	for (int i = 0; i < set->nr; i++) {
		struct tlat *l = set->v[i];

		if (ev->spec->text_pos >= l->pos && ev->spec->text_pos < l->pos + l->len)
			return l;
	}
	return NULL;
}

int tlat_set__event(struct tlat_set *set, struct prof *p, struct prof_event *ev,
		    struct perf_event_attr *attr)
{
	struct tlat *l = owner(set, ev);

	if (!l) {
		/* the profiler's own events take no key= */
		if (prof_event__attr(ev, "key"))
			return prof_usage(p, "key= is for the events of --latency only");
		return 0;
	}
	if (!l->start_ev) {
		l->start_ev = ev;
	} else if (!l->end_ev) {
		l->end_ev = ev;
	} else {
		return prof_usage(p, "--latency %s: give exactly two events", l->events);
	}
	/* every occurrence, without a stack: they are paired, not profiled */
	attr->freq = 0;
	attr->sample_freq = 0;
	attr->sample_period = 1;
	attr->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
	return 1;
}

static void paired(void *ctx, const struct pair_entry *start, void *data,
		   const struct pair_event *end, uint64_t delta)
{
	struct tlat *l = ctx;

	l->pairs++;
	if (delta > l->threshold_ns)
		l->over++;
	if (delta > l->max_ns)
		l->max_ns = delta;
	if (end->cpu < 0 || end->cpu >= l->nr_cpus) {
		l->out_of_range++;
		return;
	}
	if (delta > l->worst[end->cpu])
		l->worst[end->cpu] = delta;
	l->n[end->cpu]++;
}

static const struct pair_impl tlat_impl = {
	.name = "trigger-latency",
	.paired = paired,
};

int tlat_set__start(struct tlat_set *set, struct prof *p)
{
	int nr_cpus = psc_cpu__nr_possible();

	for (int i = 0; i < set->nr; i++) {
		struct tlat *l = set->v[i];
		struct pair_opts po = { .impl = &tlat_impl, .ctx = l, .unordered = !p->order };
		size_t slots = (size_t)nr_cpus + 1;

		l->order = p->order;
		l->nr_cpus = nr_cpus;
		l->pr = pair__new(&po);
		l->worst = calloc((size_t)nr_cpus, sizeof(*l->worst));
		l->n = calloc((size_t)nr_cpus, sizeof(*l->n));
		l->hold_ns = calloc(slots, sizeof(*l->hold_ns));
		l->hold_at = calloc(slots, sizeof(*l->hold_at));
		l->held = calloc(slots, sizeof(*l->held));
		if (!l->pr || !l->worst || !l->n || !l->hold_ns || !l->hold_at || !l->held)
			return -ENOMEM;
		if (!l->start_ev || !l->end_ev)
			return prof_usage(p, "--latency %s: its two events were not set up",
					  l->events);
	}
	return 0;
}

bool tlat_set__sample(struct tlat_set *set, struct prof_event *ev, int cpu,
		      const struct psc_sample *s)
{
	for (int i = 0; i < set->nr; i++) {
		struct tlat *l = set->v[i];
		const struct prof_attr_val *key;
		struct pair_event pe = { .time = s->time,
					 .cpu = cpu,
					 .pid = s->pid,
					 .tid = s->tid,
					 .idx = ev->idx,
					 .sample = s };

		if (ev != l->start_ev && ev != l->end_ev)
			continue;
		/* the thread; the idle tasks are all tid 0, one per CPU: told apart by their CPU */
		pe.key = s->tid ? s->tid : (1ull << 63) | (uint32_t)cpu;
		key = prof_event__attr(ev, "key");
		if (key && key->expr) {
			struct expr_val v;

			if (expr__eval(key->expr, s->raw.data, s->raw.size, s, &v)) {
				l->key_errors++;
				return true;
			}
			pe.key = v.i;
		}
		/* one event as both (A,A): the end of the pending one, then the next start */
		if (ev == l->end_ev)
			pair__end(l->pr, &pe);
		if (ev == l->start_ev)
			pair__start(l->pr, &pe);
		return true;
	}
	return false;
}

void tlat_set__lost(struct tlat_set *set)
{
	/* the sample clock is CLOCK_MONOTONIC (session.c): no start before now may pair */
	uint64_t now = mono_ns();

	for (int i = 0; i < set->nr; i++) {
		if (!set->v[i]->pr)
			continue;
		set->v[i]->lost_windows++;
		pair__lost(set->v[i]->pr, now);
	}
}

double tlat__take(struct tlat *l, int cpu, uint64_t period_ns)
{
	uint64_t worst = 0, n = 0, now = mono_ns();
	int slot = cpu < 0 ? 0 : cpu + 1;

	if (!l->worst || cpu >= l->nr_cpus)
		return -1;
	for (int c = cpu < 0 ? 0 : cpu; c < (cpu < 0 ? l->nr_cpus : cpu + 1); c++) {
		if (l->worst[c] > worst)
			worst = l->worst[c];
		n += l->n[c];
		l->worst[c] = 0;
		l->n[c] = 0;
	}
	if (n) {
		l->hold_ns[slot] = worst;
		l->hold_at[slot] = now;
		l->held[slot] = true;
		return (double)worst / 1e6;
	}
	/* no pair ended: the last latency still stands for as long as itself, plus a period */
	if (l->held[slot] && now - l->hold_at[slot] <= l->hold_ns[slot] + period_ns)
		return (double)l->hold_ns[slot] / 1e6;
	l->held[slot] = false;
	return -1;
}

void tlat_set__report(struct tlat_set *set, void (*line)(void *ctx, const char *text), void *ctx)
{
	for (int i = 0; i < set->nr; i++) {
		struct tlat *l = set->v[i];
		char buf[1024];
		size_t n;

		if (!l->pr)
			continue;
		n = (size_t)snprintf(buf, sizeof(buf),
				     "%s: %llu pairs, %llu above the threshold, longest %.3f ms",
				     l->name, (unsigned long long)l->pairs,
				     (unsigned long long)l->over, (double)l->max_ns / 1e6);
		pair__finish(l->pr); /* the starts still waiting: counted as open */
		for (int o = 0; o < PAIR_NR_OUTCOMES && n < sizeof(buf); o++) {
			uint64_t c = pair__count(l->pr, (enum pair_outcome)o);

			if (o == PAIR_PAIRED || !c)
				continue;
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "; %llu %s",
					      (unsigned long long)c,
					      pair_outcome__help((enum pair_outcome)o));
		}
		if (l->key_errors && n < sizeof(buf))
			n += (size_t)snprintf(buf + n, sizeof(buf) - n,
					      "; %llu events whose key= could not be computed",
					      (unsigned long long)l->key_errors);
		if (l->lost_windows && n < sizeof(buf))
			snprintf(buf + n, sizeof(buf) - n, "; %llu losses (no pair across them)",
				 (unsigned long long)l->lost_windows);
		line(ctx, buf);
	}
}

void tlat_set__free(struct tlat_set *set)
{
	for (int i = 0; i < set->nr; i++) {
		struct tlat *l = set->v[i];

		pair__delete(l->pr);
		free(l->events);
		free(l->worst);
		free(l->n);
		free(l->hold_ns);
		free(l->hold_at);
		free(l->held);
		free(l);
	}
	set->nr = 0;
}
