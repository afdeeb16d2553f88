/* The session loop: epoll over rings, signalfd, timerfds, pidfd; ordered or plain delivery. */
#include "session_internal.h"
#include "order_merge.h"

/*
 * The session's row of evsel: its index in the evlist, else the unattributed row. The index is
 * checked against the list (an evsel added to another list since has that list's index): this
 * runs when a ring's evsel changes, not per record.
 */
static int evsel_idx(const struct session *s, const struct psc_evsel *evsel)
{
	int idx = evsel ? psc_evsel__idx(evsel) : -1;

	return idx >= 0 && idx < s->nr_evsels && psc_evlist__at(s->evlist, idx) == evsel
		       ? idx
		       : s->nr_evsels;
}

struct session *session__new(struct psc_evlist *evlist, const struct session_opts *opts,
			     const struct session_hooks *hooks)
{
	struct session *s;
	struct psc_evsel *evsel;
	size_t nlost;
	int i, err = -ENOMEM;

	if (!evlist || !opts || opts->sz < offsetof(struct session_opts, target)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	memcpy(&s->opts, opts, opts->sz < sizeof(s->opts) ? opts->sz : sizeof(s->opts));
	if (hooks)
		s->hooks = *hooks;
	s->say = (struct say){ s->hooks.say, s->hooks.ctx };
	if (!s->opts.slack_ns)
		s->opts.slack_ns = DEFAULT_SLACK_NS;
	if (s->opts.poll_ms <= 0)
		s->opts.poll_ms = DEFAULT_POLL_MS;
	s->evlist = evlist;
	s->epfd = s->sigfd = s->intfd = s->durfd = s->pidfd = -1;
	s->command_exit = -1;
	s->nr_evsels = psc_evlist__nr(evlist);
	s->nr_rings = s->opts.counting ? 0 : psc_evlist__nr_rings(evlist);
	if (s->nr_rings <= 0 && !s->opts.counting) {
		err = -EINVAL; /* not mmapped */
		goto fail;
	}
	if (s->opts.order) {
		psc_evlist__for_each(evlist, i, evsel)
		{
			if (psc_evsel__is_open(evsel) &&
			    !(psc_evsel__attr(evsel)->sample_type & PERF_SAMPLE_TIME)) {
				err = -EINVAL;
				goto fail;
			}
		}
	}
	nlost = (size_t)(s->nr_evsels + 1) * s->nr_rings;
	s->samples_prev = calloc(s->nr_evsels + 1, sizeof(uint64_t));
	s->throttled = calloc(s->nr_evsels + 1, sizeof(uint64_t));
	s->lost = calloc(nlost, sizeof(uint64_t));
	s->lost_prev = calloc(nlost, sizeof(uint64_t));
	s->lost_seen = calloc(nlost, sizeof(uint64_t));
	s->seen = calloc(nlost, sizeof(uint64_t));
	s->counted = calloc(nlost, sizeof(uint64_t));
	s->kdropped = calloc(nlost, sizeof(uint64_t));
	s->period_ns = calloc(nlost, sizeof(uint64_t));
	s->weighted = calloc(s->nr_evsels + 1, sizeof(bool));
	s->rings = calloc(s->nr_rings ? s->nr_rings : 1, sizeof(*s->rings));
	if (!s->samples_prev || !s->throttled || !s->lost || !s->lost_prev || !s->lost_seen ||
	    !s->seen || !s->counted || !s->kdropped || !s->period_ns || !s->weighted || !s->rings)
		goto fail;
	for (i = 0; i < s->nr_rings; i++) {
		s->rings[i].ring = psc_evlist__ring(evlist, i);
		s->rings[i].idx = i;
		s->rings[i].cpu = psc_ring__cpu(s->rings[i].ring);
	}
	err = order__init(&s->order, s->nr_rings);
	if (err)
		goto fail;
	s->loss_maybe = calloc(s->nr_rings ? s->nr_rings : 1, sizeof(*s->loss_maybe));
	s->lost_told = calloc(s->nr_rings ? s->nr_rings : 1, sizeof(*s->lost_told));
	err = !s->loss_maybe || !s->lost_told ? -ENOMEM
					      : loss_watch__init(&s->loss_watch, s->nr_rings);
	if (err)
		goto fail;
	s->order.mem_max = s->opts.backlog_max;
	/* now, so that extra fds can be added before the run */
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0) {
		err = -errno;
		goto fail;
	}
	s->lost_fmt = !s->opts.counting;
	psc_evlist__for_each(evlist, i, evsel)
	{
		if (psc_evsel__is_open(evsel) &&
		    !(psc_evsel__attr(evsel)->read_format & PERF_FORMAT_LOST))
			s->lost_fmt = false;
	}
	return s;
fail:
	session__delete(s);
	errno = -err;
	return NULL;
}

void session_close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void session__delete(struct session *s)
{
	int i;

	if (!s)
		return;
	session_end_fds(s);
	free(s->fds);
	session_close_fd(&s->epfd);
	session_close_fd(&s->sigfd);
	session_close_fd(&s->intfd);
	session_close_fd(&s->durfd);
	session_close_fd(&s->pidfd);
	if (s->mask_saved)
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	for (i = 0; s->rings && i < s->nr_rings; i++)
		order_ring__exit(&s->order, &s->rings[i]);
	order__exit(&s->order);
	free(s->samples_prev);
	free(s->throttled);
	free(s->lost);
	free(s->lost_prev);
	free(s->lost_seen);
	free(s->seen);
	free(s->counted);
	free(s->kdropped);
	free(s->period_ns);
	free(s->weighted);
	free(s->rings);
	free(s->loss_maybe);
	free(s->lost_told);
	loss_watch__exit(&s->loss_watch);
	free(s);
}

/* ---- delivery ---- */

/* The lost samples the kernel's counts told for ring r so far, over its events. */
static uint64_t heard_on_ring(const struct session *s, int r)
{
	uint64_t n = 0;

	for (int i = 0; i < s->nr_evsels; i++)
		n += s->lost_seen[(size_t)i * s->nr_rings + r];
	return n;
}

static void count_lost(struct session *s, struct order_ring *r, struct psc_evsel *evsel, uint64_t n)
{
	s->st.lost_records += n;
	if (s->lost_fmt) {
		/*
		 * The per-fd counts are read instead (refresh_lost), later; the hook hears now,
		 * with n = 0, where in this ring's stream the loss is (two-event profilers must not
		 * pair across it, and the count comes too late for that). Unless the counts, read
		 * before a round (lost_early), told this ring's loss already: heard twice, the
		 * second barrier would invalidate the starts that came after the loss.
		 */
		s->lost_told[r->idx] += n;
		if (s->hooks.lost && s->lost_told[r->idx] > heard_on_ring(s, r->idx))
			s->hooks.lost(s->hooks.ctx, evsel, r->cpu, 0);
		return;
	}
	s->lost[(size_t)evsel_idx(s, evsel) * s->nr_rings + r->idx] += n;
	s->st.lost += n;
	if (s->hooks.lost)
		s->hooks.lost(s->hooks.ctx, evsel, r->cpu, n);
}

void session_hook_stop(struct session *s, int ret)
{
	s->stop = true;
	if (ret < 0) {
		if (!s->err)
			s->err = ret;
		s->end = SESSION_ERROR;
	} else if (s->end == SESSION_RUNNING) {
		s->end = SESSION_HOOK;
	}
}

/*
 * Delivers the decoded head of r (peek filled it). deliver, decode and peek run once per record:
 * inlined into the loops, they cost no calls and their state stays in registers.
 */
#define HOT static inline __attribute__((always_inline))

HOT void deliver(struct session *s, struct order_ring *r)
{
	const struct psc_record *rec = &r->rec;
	struct psc_evsel *evsel = r->evsel;
	int idx;

	/* the clock is read then: every 256 is within microseconds, the check is every 50 ms */
	if (!(++s->deliveries & 255))
		session_check_signals(s);
	if (s->draining)
		s->drain_delivered++;
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		/* one count per sample: an event's and the session's totals are sums of these */
		idx = r->evsel_idx;
		s->seen[(size_t)idx * s->nr_rings + r->idx]++;
		if (rec->sample.sample_type & PERF_SAMPLE_PERIOD) {
			s->period_ns[(size_t)idx * s->nr_rings + r->idx] += rec->sample.period;
			if (rec->sample.period != 1)
				s->weighted[idx] = true;
		}
		if (s->hooks.sample)
			session_hook_result(s, s->hooks.sample(s->hooks.ctx, evsel, r->cpu, rec));
		break;
	case PERF_RECORD_LOST:
		count_lost(s, r, psc_evlist__evsel_by_id(s->evlist, rec->lost.id), rec->lost.lost);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		count_lost(s, r,
			   rec->sid.present ? psc_evlist__evsel_by_id(s->evlist, rec->sid.id)
					    : evsel,
			   rec->lost_samples.lost);
		break;
	case PERF_RECORD_THROTTLE:
		/* the kernel stops sampling this event for the rest of the tick: not silent */
		s->throttled[evsel_idx(s, psc_evlist__evsel_by_id(s->evlist, rec->throttle.id))]++;
		s->st.throttled++;
		s->st.records++;
		if (s->hooks.record)
			session_hook_result(s, s->hooks.record(s->hooks.ctx, evsel, r->cpu, rec));
		break;
	default:
		s->st.records++;
		if (s->hooks.record)
			session_hook_result(s, s->hooks.record(s->hooks.ctx, evsel, r->cpu, rec));
	}
}

/* r->evsel, its row and attr set for evsel: lookups only when it differs from the last. */
HOT void ring_set_evsel(struct session *s, struct order_ring *r, struct psc_evsel *evsel)
{
	if (evsel != r->evsel || !r->attr) {
		r->evsel = evsel;
		r->evsel_idx = evsel_idx(s, evsel);
		r->attr = psc_evsel__attr(evsel ? evsel : psc_evlist__at(s->evlist, 0));
	}
}

/*
 * r->evsel, row and attr for hdr. A sample's identifier is its first u64 (where
 * psc_evlist__evsel_for_record reads it too); what an identifier was found to be is kept in the
 * ring's slots, so the events that alternate on a ring (a start and its end) cost no lookup.
 * With one evsel in the list there is no identifier, but every record has that evsel, and any
 * first u64 gives the right answer as well.
 */
HOT void ring_find_evsel(struct session *s, struct order_ring *r,
			 const struct perf_event_header *hdr)
{
	struct order_id_slot *slot;
	uint64_t id;

	if (hdr->type != PERF_RECORD_SAMPLE || hdr->size < sizeof(*hdr) + sizeof(id)) {
		ring_set_evsel(s, r, psc_evlist__evsel_for_record(s->evlist, hdr));
		return;
	}
	memcpy(&id, hdr + 1, sizeof(id));
	slot = &r->ids[id % ORDER_ID_SLOTS];
	if (!slot->ok || slot->id != id) {
		ring_set_evsel(s, r, psc_evlist__evsel_for_record(s->evlist, hdr));
		*slot = (struct order_id_slot){ id, r->evsel, r->attr, r->evsel_idx, true };
		return;
	}
	r->evsel = slot->evsel;
	r->attr = slot->attr;
	r->evsel_idx = slot->evsel_idx;
}

/* hdr decoded into r (evsel, rec, time); false when the decoder refuses it (counted). */
HOT bool decode(struct session *s, struct order_ring *r, const struct perf_event_header *hdr)
{
	ring_find_evsel(s, r, hdr);
	/* a sample like the last one: only what its sample_type holds is rewritten */
	if (!(r->rec_ok && psc_record__parse_again(hdr, r->attr, &r->rec))) {
		r->rec_ok = !psc_record__parse(hdr, r->attr, &r->rec);
		if (!r->rec_ok) {
			s->st.undecodable++;
			return false;
		}
	}
	if (r->rec.type == PERF_RECORD_SAMPLE)
		r->time = (r->rec.sample.sample_type & PERF_SAMPLE_TIME) ? r->rec.sample.time : 0;
	else
		r->time = (r->rec.sid.present & PERF_SAMPLE_TIME) ? r->rec.sid.time : 0;
	return true;
}

/* Reads the record at the front of r's source (backlog, then ring) into r; false at its end. */
HOT bool peek(void *ctx, struct order_ring *r)
{
	struct session *s = ctx;
	const struct perf_event_header *hdr;

	/*
	 * Records before this one are delivered: let the kernel reuse their space already. Every
	 * 16th record: the ring gives back an eighth of itself at a time anyway.
	 */
	if (!(++r->peeks & 15))
		psc_ring__release(r->ring);
	for (;;) {
		hdr = order_ring__next(r); /* NULL: errno says why */
		if (!hdr) {
			if (errno == EBADMSG)
				s->st.corrupt++;
			return false;
		}
		if (decode(s, r, hdr))
			break;
		/* Counted and skipped: one bad record must not stop the stream. */
		order_ring__consume(&s->order, r);
	}
	return true;
}

/* ---- --overwrite: the flight recorder's rings, read once ---- */

struct snap_rec {
	uint64_t time;
	size_t off; /* of the record's copy in the snapshot */
	int ring;
	int seq; /* read order within its ring: newest first */
};

static int by_time(const void *a, const void *b)
{
	const struct snap_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring - y->ring;
	return y->seq - x->seq; /* a backward ring is read newest first */
}

/*
 * Backward rings are read from the newest record to the oldest; every ring is copied (they are
 * paused, at most -m pages each), then delivered in time order across all of them.
 */
static void round_overwrite(struct session *s)
{
	struct snap_rec *recs = NULL;
	char *buf = NULL;
	size_t nr = 0, cap = 0, used = 0, room = 0;

	for (int i = 0; i < s->nr_rings; i++) {
		struct order_ring *r = &s->rings[i];
		const struct perf_event_header *hdr;
		int seq = 0;

		if (psc_ring__read_init(r->ring))
			continue;
		while ((hdr = psc_ring__next(r->ring)) && !s->st.nomem) {
			if (!decode(s, r, hdr)) {
				psc_ring__consume(r->ring);
				continue;
			}
			if (nr == cap) {
				struct snap_rec *g =
					realloc(recs, (cap = cap ? 2 * cap : 1024) * sizeof(*recs));
				if (!g) {
					s->st.nomem = true;
					break;
				}
				recs = g;
			}
			if (used + hdr->size > room) {
				char *g = realloc(buf, (room = 2 * (used + hdr->size) + 65536));

				if (!g) {
					s->st.nomem = true;
					break;
				}
				buf = g;
			}
			memcpy(buf + used, hdr, hdr->size);
			recs[nr++] = (struct snap_rec){ r->time, used, i, seq++ };
			used += hdr->size;
			psc_ring__consume(r->ring);
		}
		psc_ring__read_done(r->ring);
	}
	s->st.overwrite_kept = nr;
	qsort(recs, nr, sizeof(*recs), by_time);
	for (size_t k = 0; k < nr && !s->stop; k++) {
		struct order_ring *r = &s->rings[recs[k].ring];

		if (decode(s, r, (const struct perf_event_header *)(buf + recs[k].off)))
			deliver(s, r);
	}
	free(recs);
	free(buf);
}

/*
 * Each ring drained in turn: no order across CPUs, nothing held back. A ring gives what it held
 * when its turn began (backlog and ring), not what a fast writer adds meanwhile: that is copied
 * to its backlog when the ring fills (order__keep_drained), and delivered in the next round, so
 * the other rings and the signals get their turn.
 */
static bool round_plain(struct session *s)
{
	bool pending = false;
	int i;

	for (i = 0; i < s->nr_rings && !s->stop; i++) {
		struct order_ring *r = &s->rings[i];
		uint64_t quota, done = 0;

		if (!order_ring__begin(r))
			continue;
		quota = r->backlog.bytes + psc_ring__pending(r->ring);
		while (!s->stop && done < quota && peek(s, r)) {
			deliver(s, r);
			done += r->rec.size;
			order_ring__consume(&s->order, r);
			order__keep_drained(&s->order, s->rings, s->nr_rings, NULL);
		}
		order_ring__end(r);
	}
	/* what a long batch moved to memory is delivered at the next round, not the next wakeup */
	for (i = 0; i < s->nr_rings && !pending; i++)
		pending = s->rings[i].backlog.records != 0;
	s->st.corrupt += s->order.corrupt;
	s->order.corrupt = 0;
	return pending;
}

/* The merge with the session's peek and deliver inlined (order_merge.h). */
#define SESSION_PEEK(ops, r) peek((ops)->ctx, r)
#define SESSION_DELIVER(ops, r) (deliver((ops)->ctx, r), !((struct session *)(ops)->ctx)->stop)
ORDER_MERGE_DEFINE(merge_session, SESSION_PEEK, SESSION_DELIVER)

/*
 * k-way merge up to the watermark. The clock is read before any ring head: see session.h.
 * Returns true when records newer than the watermark were left in the rings.
 */
static bool round_ordered(struct session *s, uint64_t wm)
{
	/* merge_session calls peek and deliver by name; ops.peek serves order__keep_drained */
	const struct order_ops ops = { .peek = peek, .ctx = s };
	bool pending;

	pending = merge_session(&s->order, s->rings, s->nr_rings, wm, &ops);
	s->st.out_of_order = s->order.out_of_order;
	s->st.corrupt += s->order.corrupt;
	s->order.corrupt = 0;
	return pending;
}

/* Records still waiting in a backlog, or bytes unread in a ring. */
bool session_pending_records(const struct session *s)
{
	int i;

	for (i = 0; i < s->nr_rings; i++)
		if (s->rings[i].backlog.records || psc_ring__pending(s->rings[i].ring))
			return true;
	return false;
}

/*
 * opts.lost_early, before the rings of an ordered round are read and after its watermark was
 * taken: an event delivered in the round was written before now, so a loss before it is heard
 * first (loss_watch.h). The kernel's counts are read only for the rings that came close enough
 * to full to have lost anything since the last round.
 */
static void hear_losses(struct session *s)
{
	bool any = false;

	if (!s->lost_fmt)
		return; /* no counts to read (before Linux 6.0): the LOST records tell, late */

	for (int i = 0; i < s->nr_rings; i++) {
		s->loss_maybe[i] = loss_watch__check(&s->loss_watch, i, s->rings[i].ring);
		any |= s->loss_maybe[i];
	}
	if (any) {
		s->st.loss_reads++;
		session_refresh_lost(s, s->loss_maybe);
	}
}

static bool do_round(struct session *s, bool final)
{
	bool pending = false;

	s->st.rounds++;
	if (s->opts.order) {
		uint64_t wm = final ? UINT64_MAX : mono_ns() - s->opts.slack_ns;

		if (s->opts.lost_early)
			hear_losses(s);
		pending = round_ordered(s, wm);
	} else
		pending = round_plain(s);
	if (s->hooks.round_end)
		session_hook_result(s, s->hooks.round_end(s->hooks.ctx));
	return pending;
}

int session__run(struct session *s)
{
	struct epoll_event evs[16];
	bool pending = false;
	int i, n, err, timeout;

	err = session_setup_fds(s);
	if (err)
		return err;
	if (s->opts.target) {
		err = target_start(s->opts.target, s->evlist);
		if (err) {
			char msg[512];

			say(&s->say, "%s", target_start_error(s->opts.target, msg, sizeof(msg)));
			return err; /* 127/126 or 1 */
		}
	} else if ((err = psc_evlist__enable(s->evlist))) {
		return err;
	}
	session_watch_target(s);
	/* a script waits for this line before it starts its workload or its stop timer */
	if (s->opts.verbose)
		say(&s->say, "running (%d event%s, %d ring%s); SIGINT or SIGTERM ends the run",
		    s->nr_evsels, s->nr_evsels == 1 ? "" : "s", s->nr_rings,
		    s->nr_rings == 1 ? "" : "s");

	while (!s->stop) {
		timeout = pending ? (int)((s->opts.slack_ns + 999999) / 1000000) : s->opts.poll_ms;
		n = epoll_wait(s->epfd, evs, 16, timeout);
		if (n < 0 && errno != EINTR) {
			s->err = -errno;
			s->end = SESSION_ERROR;
			break;
		}
		for (i = 0; i < n; i++) {
			int tag = (int)(uint32_t)evs[i].data.u64;

			if (tag <= TAG_EXTRA)
				session_on_extra_fd(s, TAG_EXTRA - tag,
						    (uint32_t)(evs[i].data.u64 >> 32),
						    evs[i].events);
			else if (tag == TAG_SIGNAL)
				session_on_signal(s);
			else if (tag == TAG_INTERVAL)
				session_on_timer(s, s->intfd, true);
			else if (tag == TAG_DURATION)
				session_on_timer(s, s->durfd, false);
			else if (tag == TAG_PIDFD)
				session_on_target_exit(s);
			else if (tag >= 0 && (evs[i].events & (EPOLLHUP | EPOLLERR)) &&
				 !(evs[i].events & EPOLLIN))
				/* Its events are gone (a followed thread exited): stop polling it.
				 */
				epoll_ctl(s->epfd, EPOLL_CTL_DEL, psc_ring__fd(s->rings[tag].ring),
					  NULL);
		}
		if (!s->opts.overwrite)
			pending = do_round(s, false);
	}

	/* Deliver what the kernel wrote before the events were disabled. */
	psc_evlist__disable(s->evlist);
	for (i = 0; i < s->nr_rings && s->opts.overwrite; i++)
		psc_ring__pause(s->rings[i].ring); /* a still snapshot to read */
	if (s->end != SESSION_ERROR) {
		bool was_stopped_by_hook = s->end == SESSION_HOOK;

		s->stop = was_stopped_by_hook;
		s->draining = true;
		s->drain_start_ns = mono_ns();
		if (s->opts.overwrite && !s->stop)
			round_overwrite(s);
		for (i = 0; i < 4 && !s->stop && !s->opts.overwrite; i++)
			if (!do_round(s, true) && !session_pending_records(s))
				break;
		s->draining = false;
		if (s->drain_cut)
			session_report_cut_drain(s);
	}
	session_refresh_lost(s, NULL);
	if (s->end != SESSION_ERROR && s->end != SESSION_HOOK)
		session_check_kdrop(s);
	session_finish_command(s);
	/* an output still holding events writes them now, SIGINT/SIGTERM still watched */
	session_end_fds(s);
	/*
	 * A stop signal that came after the loop ended for another reason (a full pipe given up
	 * on, --duration, a second Ctrl-C while the command is finished) is taken here: restoring
	 * the mask with it pending would kill perfscope before the profiler's report.
	 */
	session_on_signal(s);
	if (s->mask_saved) {
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
		s->mask_saved = false;
	}
	return s->err;
}

int session__enable_cpu(struct session *s, int cpu, bool on)
{
	struct psc_evsel *evsel;
	bool found = false;
	int i, idx, err;

	/* not the side-band event: task names and mmaps must go on arriving from every CPU */
	psc_evlist__for_each(s->evlist, i, evsel)
	{
		if (!psc_evsel__is_open(evsel) || session_is_sideband(evsel) ||
		    psc_evsel__leader(evsel) != evsel)
			continue;
		idx = psc_cpumap__idx(psc_evsel__cpus(evsel), cpu);
		if (idx < 0)
			continue;
		found = true;
		err = on ? psc_evsel__enable_cpu(evsel, idx) : psc_evsel__disable_cpu(evsel, idx);
		if (err)
			return err;
	}
	return found ? 0 : -ENOENT;
}

void session__stop(struct session *s)
{
	s->stop = true;
	if (s->end == SESSION_RUNNING)
		s->end = SESSION_HOOK;
}

enum session_end session__end(const struct session *s)
{
	return s->end;
}

int session__command_exit(const struct session *s)
{
	return s->command_exit;
}
