/* flightrec: per-CPU overwrite rings of raw stack samples in memory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include "flightrec.h"

struct slot {
	uint64_t time, period;
	uint32_t pid, tid;
	uint32_t nr;
	uint64_t ips[FLIGHTREC_MAX_FRAMES];
};

struct ring {
	struct slot *slots;
	size_t head; /* next slot written */
	size_t used;
};

struct flightrec {
	int nr_cpus;
	size_t nr_slots;
	struct ring *rings;
	uint64_t cut;
};

struct flightrec *flightrec__new(int nr_cpus, size_t slots)
{
	struct flightrec *fr = calloc(1, sizeof(*fr));

	if (!fr)
		return NULL;
	fr->nr_cpus = nr_cpus;
	fr->nr_slots = slots ? slots : 1;
	fr->rings = calloc((size_t)nr_cpus, sizeof(*fr->rings));
	if (!fr->rings) {
		free(fr);
		errno = ENOMEM;
		return NULL;
	}
	/* a ring's slots are allocated at its CPU's first sample: offline CPUs cost nothing */
	return fr;
}

void flightrec__delete(struct flightrec *fr)
{
	if (!fr)
		return;
	for (int i = 0; i < fr->nr_cpus; i++)
		free(fr->rings[i].slots);
	free(fr->rings);
	free(fr);
}

void flightrec__add(struct flightrec *fr, int cpu, const struct psc_sample *s)
{
	struct ring *r;
	struct slot *sl;
	uint64_t nr = (s->sample_type & PERF_SAMPLE_CALLCHAIN) ? s->callchain.nr : 0;

	if (cpu < 0 || cpu >= fr->nr_cpus)
		return;
	r = &fr->rings[cpu];
	if (!r->slots) {
		r->slots = malloc(fr->nr_slots * sizeof(*r->slots));
		if (!r->slots)
			return; /* no history for this CPU; captures still take what comes */
	}
	sl = &r->slots[r->head];
	if (nr > FLIGHTREC_MAX_FRAMES) {
		nr = FLIGHTREC_MAX_FRAMES; /* the innermost frames are kept: the leaf matters */
		fr->cut++;
	}
	sl->time = s->time;
	sl->period = (s->sample_type & PERF_SAMPLE_PERIOD) ? s->period : 0;
	sl->pid = s->pid;
	sl->tid = s->tid;
	sl->nr = (uint32_t)nr;
	if (nr)
		memcpy(sl->ips, s->callchain.ips, nr * sizeof(uint64_t));
	r->head = (r->head + 1) % fr->nr_slots;
	if (r->used < fr->nr_slots)
		r->used++;
}

uint64_t flightrec__cut(const struct flightrec *fr)
{
	return fr->cut;
}

static size_t each_ring(const struct flightrec *fr, int cpu, uint64_t from, uint64_t to,
			void (*fn)(void *ctx, int cpu, const struct psc_sample *s), void *ctx)
{
	const struct ring *r = &fr->rings[cpu];
	size_t n = 0;

	if (!r->slots)
		return 0;
	for (size_t i = 0; i < r->used; i++) {
		size_t at = (r->head + fr->nr_slots - r->used + i) % fr->nr_slots;
		const struct slot *sl = &r->slots[at];
		struct psc_sample s = {
			.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
				       PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		};

		if (sl->time < from || sl->time >= to)
			continue;
		s.time = sl->time;
		s.pid = sl->pid;
		s.tid = sl->tid;
		s.cpu = (uint32_t)cpu;
		s.period = sl->period;
		s.callchain.nr = sl->nr;
		s.callchain.ips = sl->ips;
		fn(ctx, cpu, &s);
		n++;
	}
	return n;
}

size_t flightrec__each(const struct flightrec *fr, int cpu, uint64_t from, uint64_t to,
		       void (*fn)(void *ctx, int cpu, const struct psc_sample *s), void *ctx)
{
	size_t n = 0;

	if (cpu >= fr->nr_cpus)
		return 0;
	if (cpu >= 0)
		return each_ring(fr, cpu, from, to, fn, ctx);
	for (int c = 0; c < fr->nr_cpus; c++)
		n += each_ring(fr, c, from, to, fn, ctx);
	return n;
}
