/* The hrtimer family's engine: events counted per CPU between the ticks of a per-CPU timer. */
#include "hrslot.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/cpumap.h>

#include "json.h"

int hrs__check(struct prof *p, struct hrs *h, uint64_t period_ns)
{
	int ret;

	if (period_ns < 10000)
		return prof_usage(p,
				  "a period below 10us would be all timer interrupts: give more");
	h->period_ns = period_ns;
	/* a tick printed as JSON: the event printer's members and stack */
	if ((ret = prof__use_printer(p)))
		return ret;
	snprintf(h->timer, sizeof(h->timer), "cpu-clock//period=%llu/",
		 (unsigned long long)period_ns);
	return prof__add_events(p, h->timer, NULL);
}

static bool is_tick(const struct prof *p, const struct prof_event *ev)
{
	return ev->idx == p->nr_events - 1;
}

void hrs__event(struct prof *p, struct hrs *h, struct prof_event *ev, struct perf_event_attr *attr)
{
	if (!is_tick(p, ev))
		attr->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
}

int hrs__start(struct prof *p, struct hrs *h)
{
	h->nr_cpus = psc_cpu__nr_possible();
	h->nr_ev = p->nr_events - 1;
	h->cnt = calloc((size_t)h->nr_cpus * (size_t)(h->nr_ev ? h->nr_ev : 1), sizeof(*h->cnt));
	h->last = calloc((size_t)h->nr_cpus, sizeof(*h->last));
	h->lost = calloc((size_t)h->nr_cpus, sizeof(*h->lost));
	h->ended = calloc((size_t)h->nr_cpus, sizeof(*h->ended));
	return h->cnt && h->last && h->lost && h->ended ? 0 : -ENOMEM;
}

/* The counts of cpu's slot going on, zeroed first when they still hold the last slot's. */
static uint64_t *counts(struct hrs *h, int cpu)
{
	uint64_t *c = h->cnt + (size_t)cpu * (size_t)h->nr_ev;

	if (h->ended[cpu]) {
		memset(c, 0, (size_t)h->nr_ev * sizeof(*c));
		h->ended[cpu] = false;
	}
	return c;
}

/* The slot of cpu that ends at t, then a fresh one; false when it is dropped for a loss. */
static bool end_slot(struct prof *p, struct hrs *h, int cpu, uint64_t t, struct hrs_slot *slot)
{
	uint64_t begin = h->last[cpu] ? h->last[cpu] : p->start_ns;
	bool kept = !h->lost[cpu];

	if (!kept)
		h->slots_lost++;
	*slot = (struct hrs_slot){
		.cpu = cpu,
		.counts = counts(h, cpu),
		.ns = t > begin ? t - begin : 0,
		.first = !h->last[cpu],
	};
	h->lost[cpu] = false;
	h->ended[cpu] = true;
	h->last[cpu] = t;
	return kept;
}

bool hrs__sample(struct prof *p, struct hrs *h, struct prof_event *ev, int cpu,
		 const struct psc_sample *s, struct hrs_slot *slot)
{
	if (cpu < 0 || cpu >= h->nr_cpus)
		return false;
	if (!is_tick(p, ev)) {
		counts(h, cpu)[ev->idx]++;
		return false;
	}
	return end_slot(p, h, cpu, s->time, slot);
}

void hrs__lost(struct hrs *h, int cpu)
{
	if (cpu >= 0 && cpu < h->nr_cpus && h->lost)
		h->lost[cpu] = true;
}

void hrs__flush(struct prof *p, struct hrs *h, uint64_t now_ns,
		void (*fn)(struct prof *p, void *priv, const struct hrs_slot *slot), void *priv)
{
	struct hrs_slot slot;

	for (int c = 0; h->last && c < h->nr_cpus; c++) {
		const uint64_t *n = counts(h, c);
		bool any = h->last[c];

		for (int e = 0; e < h->nr_ev && !any; e++)
			any = n[e];
		if (any && end_slot(p, h, c, now_ns, &slot))
			fn(p, priv, &slot);
		h->last[c] = 0;
	}
}

const char *hrs__name(const struct prof_event *ev)
{
	if (ev->spec->alias)
		return ev->spec->alias;
	return ev->spec->event ? ev->spec->event : ev->name;
}

void hrs__print_tick(struct prof *p, struct hrs *h, const char *what, struct prof_event *ev,
		     int cpu, const struct psc_sample *s, const struct hrs_slot *slot)
{
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		prof__print_members(p, ev, cpu, s);
		JSON_KEY(&p->json, "slot_ns");
		json__u64(&p->json, slot->ns);
		if (h->nr_ev) {
			JSON_KEY(&p->json, "counts");
			json__obj(&p->json);
			for (int e = 0; e < h->nr_ev; e++) {
				json__key(&p->json, hrs__name(&p->events_arr[e]));
				json__u64(&p->json, slot->counts[e]);
			}
			json__end(&p->json);
		}
		json__end_line(&p->json);
		return;
	}
	out__printf(p->out, "%16s %7u/%u [%03d] %llu.%06u: %s: cpu-clock %llu ns\n",
		    prof__comm(p, s->pid, s->tid), s->pid, s->tid, cpu,
		    (unsigned long long)(s->time / 1000000000ull),
		    (unsigned int)(s->time % 1000000000ull / 1000), what,
		    (unsigned long long)slot->ns);
	for (int e = 0; e < h->nr_ev; e++)
		out__printf(p->out, "    %s %llu\n", hrs__name(&p->events_arr[e]),
			    (unsigned long long)slot->counts[e]);
	prof__stack_text(p, s);
}

void hrs__exit(struct hrs *h)
{
	free(h->cnt);
	free(h->last);
	free(h->lost);
	free(h->ended);
}
