/* prof_backlog: events kept raw while a late reader holds the output at its bound. */
#include "prof_internal.h"

/* ---- the raw backlog (prof__defer_output) ---- */

/* The text queue's share of --output-queue when events wait raw: the rest holds them raw. */
#define TEXT_SHARE 8
/*
 * --output-queue's default when events wait raw. A reader one second late meets about a second
 * of events: 2 M getppid calls here make up to 920,000 of them in that second, 80 bytes each
 * raw (bench/README.md), so 64 MiB dropped some and 192 MiB none. Memory only a late reader uses.
 */
#define DEFER_QUEUE_DEFAULT (192ull << 20)

uint64_t prof_defer_queue_bytes(const struct prof *p)
{
	return p->opts.output_queue_mib ? (uint64_t)p->opts.output_queue_mib << 20
					: DEFER_QUEUE_DEFAULT;
}

/* An event the output could not take: counted by event, said at the end (report_dropped). */
void prof_out_drop(struct prof *p, struct prof_event *ev, uint64_t n)
{
	ev->out_dropped += n;
	p->out_dropped += n;
}

/*
 * Events formatted from the backlog at a time (about 1 MiB of JSON): the rings must not wait
 * behind the whole text queue's worth; POLLOUT or the next round goes on.
 */
#define BACKLOG_BATCH 4096

/*
 * Formats what waits raw, oldest first, while the output has room, a batch at a time (all:
 * until none is left, the output detached and waiting for its reader). After an output error
 * the rest is dropped.
 */
void prof_backlog_format(struct prof *p, bool all)
{
	unsigned int n = 0;
	struct rawq *q = p->state->backlog;
	const struct perf_event_header *hdr;
	struct psc_sample s;
	struct prof_event *ev;
	uint16_t idx;
	int cpu;

	while ((hdr = rawq__peek(q, &idx, &cpu))) {
		if (idx == BACKLOG_SIDEBAND) {
			struct psc_record rec;

			/* a name taken after the events before it: taken now that they are text */
			if (!psc_record__parse(hdr, p->state->backlog_sideband, &rec))
				comm_cache__record(&p->state->comm, &rec);
			rawq__pop(q);
			continue;
		}
		ev = &p->events_arr[idx];
		if (out__error(p->out))
			p->out_unwritten++; /* said with the output's error */
		else if (!all && (!out__has_room(p->out) || ++n > BACKLOG_BATCH))
			break;
		else if (!psc_record__parse_sample(hdr, psc_evsel__attr(ev->evsel), &s))
			p->decl->sample(p, p->priv, ev, cpu, &s);
		rawq__pop(q);
	}
}

/* The reader took some of the queue: what waits raw becomes text. */
static void backlog_on_room(void *ctx)
{
	struct prof *p = ctx;

	prof_backlog_format(p, false);
	out__flush(p->out);
}

/* Events with stacks are not deferred: their symbols must be looked up while the process lives. */
#define DEFER_NOT                                                                 \
	(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | \
	 PERF_SAMPLE_BRANCH_STACK)

int prof__defer_output(struct prof *p)
{
	uint64_t max = prof_defer_queue_bytes(p);
	uint64_t text = max / TEXT_SHARE;
	int i;

	if (!p->out->nonblock || p->state->backlog || p->nr_events >= BACKLOG_SIDEBAND)
		return 0;
	/*
	 * Not with stacks (above), nor with a filter run here (the kernel refused it): it is run as
	 * the event comes, and may read a thread's name (comm_get) that the backlog holds back.
	 */
	for (i = 0; i < p->nr_events; i++)
		if (p->events_arr[i].filter ||
		    (p->events_arr[i].evsel &&
		     (psc_evsel__attr(p->events_arr[i].evsel)->sample_type & DEFER_NOT)))
			return 0;
	/* room for a few buffers of text (out__has_room keeps two free), so that the backlog is
	 * formatted while the reader takes the rest */
	if (text < 4 * p->out->cap)
		text = 4 * p->out->cap;
	p->state->backlog = rawq__new(max > text ? max - text : p->out->cap);
	if (!p->state->backlog)
		return -errno;
	p->out->queue_max = text;
	out__on_room(p->out, backlog_on_room, p);
	return 0;
}

bool prof_backlog_sideband(struct prof *p, struct psc_evsel *evsel, int cpu,
			   const struct psc_record *rec)
{
	struct prof_state *st = p->state;

	if (!st->backlog || !rawq__count(st->backlog) || !evsel ||
	    (rec->type != PERF_RECORD_COMM && rec->type != PERF_RECORD_FORK))
		return false;
	if (!rawq__push(st->backlog, BACKLOG_SIDEBAND, cpu, rec->hdr))
		return false;
	st->backlog_sideband = psc_evsel__attr(evsel);
	return true;
}

