/* The session loop: epoll over rings, signalfd, timerfds, pidfd; ordered or plain delivery; stats.
 */
#include "session.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/bpf.h>
#include <perfscope/cpumap.h>
#include <perfscope/evsel.h>
#include <perfscope/threadmap.h>
#include <perfscope/ring.h>

#include "keymap.h"
#include "kdrop.h"
#include "loss_watch.h"
#include "namelist.h"
#include "order.h"
#include "target.h"

#define DEFAULT_SLACK_NS (2 * 1000 * 1000ull)
#define DEFAULT_POLL_MS 100

_Static_assert(SESSION_BACKLOG_DEFAULT == ORDER_BACKLOG_DEFAULT, "one default backlog bound");

/*
 * epoll data: the low 32 bits a tag, the ring index or one of these (extra fd slot i is
 * TAG_EXTRA - i); the high 32 bits the extra fd slot's generation, so an event of a slot removed
 * and reused within one epoll_wait batch is not taken for the new fd's.
 */
enum {
	TAG_SIGNAL = -1,
	TAG_INTERVAL = -2,
	TAG_DURATION = -3,
	TAG_PIDFD = -4,
	TAG_EXTRA = -16,
};

/* A file descriptor registered with session__add_fd; fd -1: a free slot. */
struct session_fd {
	int fd;
	uint32_t events; /* polled now; 0: registered, not in epoll */
	uint32_t gen;
	int (*cb)(void *ctx, int fd, uint32_t revents);
	void *ctx;
};

struct session {
	struct psc_evlist *evlist;
	struct session_opts opts;
	struct session_hooks hooks;
	int nr_evsels, nr_rings;
	struct order_ring *rings; /* nr_rings */
	struct loss_watch loss_watch; /* opts.lost_early: the rings read before a round */
	bool *loss_maybe; /* per ring: loss_watch said it may have lost (scratch of hear_losses) */
	uint64_t *lost_told; /* per ring: the records its LOST records said were lost */
	struct order order;
	struct keymap evsel_index; /* evsel pointer -> its index in the evlist (int) */
	/* per evsel; lost also per evsel x ring, plus a row for unattributed (index nr_evsels) */
	uint64_t *samples, *samples_prev;
	uint64_t *throttled; /* per evsel (+ unattributed): PERF_RECORD_THROTTLE seen */
	uint64_t *lost, *lost_prev, *lost_seen;
	/* per evsel x ring: samples delivered, the kernel's counts, hits it dropped (kdrop.h) */
	uint64_t *seen, *counted, *kdropped;
	uint64_t *period_ns; /* evsel x ring: the periods the samples read stood for (kdrop.h) */
	bool *weighted; /* per evsel: a sample had a period other than 1 (__perf_count) */
	struct session_stats st;
	int epfd, sigfd, intfd, durfd, pidfd;
	sigset_t old_mask;
	bool mask_saved;
	bool stop;
	int err;
	enum session_end end;
	int command_exit;
	bool watch_is_command;
	bool signalled; /* a stop signal was passed on to the command */
	bool stop_deferred; /* the stop_signal hook finishes its work first; a second one stops */
	/*
	 * The signalfd is looked at inside a long round too (a backlog of records whose hooks are
	 * slow: DWARF unwinding, --detail): every SIG_CHECK_NS of delivering. In the drain after a
	 * stop, a second stop signal ends it, and the records not delivered are counted and told.
	 */
	uint64_t deliveries, next_sig_check_ns;
	bool draining, drain_said, drain_cut;
	uint64_t drain_start_ns, drain_delivered;
	int nr_watching; /* -p/-t lists: tasks not yet seen to exit */
	/* PERF_FORMAT_LOST: the kernel's exact count per fd, read at intervals and at the end */
	bool lost_fmt;
	struct session_fd *fds; /* session__add_fd */
	int nr_fds;
	uint32_t fd_gen;
};

/* PERF_FORMAT_LOST exists since Linux 6.0; older kernels refuse the attr with EINVAL. */
static bool kernel_has_format_lost(void)
{
	static int known = -1;
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.read_format = PERF_FORMAT_LOST,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	long fd;

	if (known < 0) {
		fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		known = fd >= 0;
		if (fd >= 0)
			close((int)fd);
	}
	return known;
}

bool session_is_sideband(const struct psc_evsel *evsel)
{
	const struct perf_event_attr *a = psc_evsel__attr(evsel);

	return a->type == PERF_TYPE_SOFTWARE && a->config == PERF_COUNT_SW_DUMMY &&
	       !strcmp(psc_evsel__name(evsel), SIDEBAND_NAME);
}

/* perf's trick: a dummy event that never samples carries the task and mmap records. */
static int add_sideband(struct psc_evlist *evlist, unsigned int sideband)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.disabled = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		/*
		 * It samples nothing, and task/comm/mmap records are not filtered by these; without
		 * them perf_event_paranoid 2 would refuse it to an unprivileged user tracing :u
		 * events of their own command.
		 */
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	struct psc_evsel *evsel;

	if (sideband & SIDEBAND_MMAP)
		a.mmap = a.mmap2 = 1;
	evsel = psc_evsel__new(&a, SIDEBAND_NAME);
	if (!evsel)
		return -errno;
	if (psc_evlist__add(evlist, evsel)) {
		psc_evsel__delete(evsel);
		return -ENOMEM;
	}
	return 0;
}

/* Default ring when nothing limits what we lock: see session_default_ring_pages. */
#define RING_PRIV_BYTES (4ull << 20)
#define RING_MIN_BYTES (512ull << 10)
#define RING_RAM_FRACTION 64

static long read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "re");
	long v;

	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/* CAP_IPC_LOCK in the effective set: the kernel then lets perf rings exceed every lock limit. */
static bool has_ipc_lock(void)
{
	char line[256];
	unsigned long long eff = 0;
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return geteuid() == 0;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &eff) == 1;
	fclose(f);
	return found ? (eff >> 14) & 1 : geteuid() == 0; /* CAP_IPC_LOCK is 14 */
}

static uint64_t rounddown_pow2(uint64_t v)
{
	while (v & (v - 1))
		v &= v - 1;
	return v;
}

size_t session_default_ring_pages(int nr_cpus)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t bytes, cap;
	long ram_pages;

	if (online < 1)
		online = 1;
	if (nr_cpus <= 0)
		nr_cpus = (int)online;
	if (has_ipc_lock() || read_long("/proc/sys/kernel/perf_event_paranoid", 2) < 0) {
		bytes = RING_PRIV_BYTES;
		ram_pages = sysconf(_SC_PHYS_PAGES);
		if (ram_pages > 0) {
			cap = (uint64_t)ram_pages * page / RING_RAM_FRACTION / (uint64_t)nr_cpus;
			if (bytes > cap)
				bytes = cap;
		}
		if (bytes < RING_MIN_BYTES)
			bytes = RING_MIN_BYTES;
	} else {
		/*
		 * The kernel charges a user's perf rings, control page included, against
		 * perf_event_mlock_kb times the online CPUs (then RLIMIT_MEMLOCK, which other
		 * mlock users share: not counted on).
		 */
		uint64_t budget = (uint64_t)read_long("/proc/sys/kernel/perf_event_mlock_kb", 516) *
				  1024 * (uint64_t)online;

		bytes = budget / (uint64_t)nr_cpus;
		bytes = bytes > page ? bytes - page : page;
	}
	bytes = rounddown_pow2(bytes / page);
	return bytes ? (size_t)bytes : 1;
}

int session_config_evlist(struct psc_evlist *evlist, size_t pages, unsigned int sideband)
{
	bool lost_fmt = kernel_has_format_lost();
	struct psc_evsel *evsel;
	long page = sysconf(_SC_PAGESIZE);
	int i, err;

	if (sideband && (err = add_sideband(evlist, sideband)))
		return err;
	err = psc_evlist__config_sampling(evlist);
	if (err)
		return err;
	if (!pages)
		pages = session_default_ring_pages(0);
	psc_evlist__for_each(evlist, i, evsel)
	{
		struct perf_event_attr *a = psc_evsel__attr_mut(evsel);

		if (!a)
			return -EBUSY;
		a->sample_type |= PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
		a->sample_id_all = 1;
		/*
		 * Exact lost counts per event and fd: a LOST record carries the ring's count, which
		 * mixes every event sharing the ring, and is never written when the ring stays
		 * full.
		 */
		if (lost_fmt && !(a->read_format & PERF_FORMAT_GROUP))
			a->read_format |= PERF_FORMAT_LOST;
		/* Timestamps comparable with clock_gettime: the ordering watermark needs them. */
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC;
		/*
		 * A wakeup per quarter ring, not per event: the poll timeout covers slow streams.
		 * A profiler that chose its own wakeup (every N events, or a watermark) keeps it.
		 */
		if (!a->wakeup_events) {
			a->watermark = 1;
			a->wakeup_watermark = (uint32_t)(pages * page / 4);
		}
	}
	return 0;
}

static int evsel_idx(const struct session *s, const struct psc_evsel *evsel)
{
	const int *idx = evsel ? keymap__find(&s->evsel_index, (uintptr_t)evsel) : NULL;

	return idx ? *idx : s->nr_evsels; /* else the unattributed row */
}

static int index_evsels(struct session *s)
{
	struct psc_evsel *evsel;
	int i, *idx;

	if (keymap__init(&s->evsel_index, sizeof(int), (size_t)s->nr_evsels))
		return -ENOMEM;
	psc_evlist__for_each(s->evlist, i, evsel)
	{
		idx = keymap__insert(&s->evsel_index, (uintptr_t)evsel, NULL);
		if (!idx)
			return -ENOMEM;
		*idx = i;
	}
	return 0;
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
	if (!s->opts.slack_ns)
		s->opts.slack_ns = DEFAULT_SLACK_NS;
	if (s->opts.poll_ms <= 0)
		s->opts.poll_ms = DEFAULT_POLL_MS;
	if (!s->opts.prof)
		s->opts.prof = "session";
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
	if (index_evsels(s))
		goto fail;
	nlost = (size_t)(s->nr_evsels + 1) * s->nr_rings;
	s->samples = calloc(s->nr_evsels + 1, sizeof(uint64_t));
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
	if (!s->samples || !s->samples_prev || !s->throttled || !s->lost || !s->lost_prev ||
	    !s->lost_seen || !s->seen || !s->counted || !s->kdropped || !s->period_ns || !s->weighted ||
	    !s->rings)
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

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void end_fds(struct session *s);

void session__delete(struct session *s)
{
	int i;

	if (!s)
		return;
	end_fds(s);
	free(s->fds);
	close_fd(&s->epfd);
	close_fd(&s->sigfd);
	close_fd(&s->intfd);
	close_fd(&s->durfd);
	close_fd(&s->pidfd);
	if (s->mask_saved)
		sigprocmask(SIG_SETMASK, &s->old_mask, NULL);
	for (i = 0; s->rings && i < s->nr_rings; i++)
		order_ring__exit(&s->order, &s->rings[i]);
	order__exit(&s->order);
	keymap__exit(&s->evsel_index);
	free(s->samples);
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

static void count_lost(struct session *s, struct order_ring *r, struct psc_evsel *evsel,
		       uint64_t n)
{
	s->st.lost_records += n;
	if (s->lost_fmt) {
		/*
		 * The per-fd counts are read instead (refresh_lost), later; the hook hears now, with
		 * n = 0, where in this ring's stream the loss is (two-event profilers must not pair
		 * across it, and the count comes too late for that). Unless the counts, read before
		 * a round (lost_early), told this ring's loss already: heard twice, the second
		 * barrier would invalidate the starts that came after the loss.
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

static void hook_result(struct session *s, int ret)
{
	if (!ret)
		return;
	s->stop = true;
	if (ret < 0) {
		if (!s->err)
			s->err = ret;
		s->end = SESSION_ERROR;
	} else if (s->end == SESSION_RUNNING) {
		s->end = SESSION_HOOK;
	}
}

/* Delivers the decoded head of r (peek filled it). */
static void check_signals(struct session *s);

static void deliver(struct session *s, struct order_ring *r)
{
	const struct psc_record *rec = &r->rec;
	struct psc_evsel *evsel = r->evsel;
	int idx;

	if (!(++s->deliveries & 63))
		check_signals(s);
	if (s->draining)
		s->drain_delivered++;
	switch (rec->type) {
	case PERF_RECORD_SAMPLE:
		idx = evsel_idx(s, evsel);
		s->samples[idx]++;
		s->seen[(size_t)idx * s->nr_rings + r->idx]++;
		if (rec->sample.sample_type & PERF_SAMPLE_PERIOD) {
			s->period_ns[(size_t)idx * s->nr_rings + r->idx] += rec->sample.period;
			if (rec->sample.period != 1)
				s->weighted[idx] = true;
		}
		s->st.samples++;
		if (s->hooks.sample)
			hook_result(s, s->hooks.sample(s->hooks.ctx, evsel, r->cpu, rec));
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
			hook_result(s, s->hooks.record(s->hooks.ctx, evsel, r->cpu, rec));
		break;
	default:
		s->st.records++;
		if (s->hooks.record)
			hook_result(s, s->hooks.record(s->hooks.ctx, evsel, r->cpu, rec));
	}
}

/* Reads the record at the front of r's source (backlog, then ring) into r->rec; false at its
 * end. */
/* hdr decoded into r (evsel, rec, time); false when the decoder refuses it (counted). */
static bool decode(struct session *s, struct order_ring *r, const struct perf_event_header *hdr)
{
	const struct perf_event_attr *attr;

	r->evsel = psc_evlist__evsel_for_record(s->evlist, hdr);
	attr = psc_evsel__attr(r->evsel ? r->evsel : psc_evlist__at(s->evlist, 0));
	if (psc_record__parse(hdr, attr, &r->rec)) {
		s->st.undecodable++;
		return false;
	}
	if (r->rec.type == PERF_RECORD_SAMPLE)
		r->time = (r->rec.sample.sample_type & PERF_SAMPLE_TIME) ? r->rec.sample.time : 0;
	else
		r->time = (r->rec.sid.present & PERF_SAMPLE_TIME) ? r->rec.sid.time : 0;
	return true;
}

static bool peek(void *ctx, struct order_ring *r)
{
	struct session *s = ctx;
	const struct perf_event_header *hdr;

	/* Records before this one are delivered: let the kernel reuse their space already. */
	psc_ring__release(r->ring);
	for (;;) {
		errno = 0;
		hdr = order_ring__next(r);
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
				struct snap_rec *g = realloc(recs, (cap = cap ? 2 * cap : 1024) *
									   sizeof(*recs));
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

static bool order_peek(void *ctx, struct order_ring *r)
{
	return peek(ctx, r);
}

static bool order_deliver(void *ctx, struct order_ring *r)
{
	struct session *s = ctx;

	deliver(s, r);
	return !s->stop;
}

/*
 * k-way merge up to the watermark. The clock is read before any ring head: see session.h.
 * Returns true when records newer than the watermark were left in the rings.
 */
static bool round_ordered(struct session *s, uint64_t wm)
{
	const struct order_ops ops = { .peek = order_peek, .deliver = order_deliver, .ctx = s };
	bool pending;

	pending = order__merge(&s->order, s->rings, s->nr_rings, wm, &ops);
	s->st.out_of_order = s->order.out_of_order;
	s->st.corrupt += s->order.corrupt;
	s->order.corrupt = 0;
	return pending;
}

/* Records still waiting in a backlog, or bytes unread in a ring. */
static bool pending_records(const struct session *s)
{
	int i;

	for (i = 0; i < s->nr_rings; i++)
		if (s->rings[i].backlog.records || psc_ring__pending(s->rings[i].ring))
			return true;
	return false;
}

static void refresh_lost(struct session *s, const bool *only);

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
		refresh_lost(s, s->loss_maybe);
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
		hook_result(s, s->hooks.round_end(s->hooks.ctx));
	return pending;
}

/* ---- statistics ---- */

static int ring_for_fd(const struct session *s, int cpu, pid_t tid)
{
	int r;

	for (r = 0; r < s->nr_rings; r++) {
		struct psc_ring *ring = s->rings[r].ring;

		if (cpu >= 0 ? psc_ring__cpu(ring) == cpu : psc_ring__tid(ring) == tid)
			return r;
	}
	return -1;
}

/* Reads the groups' fds of the rings only[] marks: the leaders', through which members come. */
static void read_rings(struct session *s, const bool *only)
{
	struct psc_evsel *evsel;
	int i, c, t, r;

	psc_evlist__for_each(s->evlist, i, evsel)
	{
		struct psc_cpumap *cpus = psc_evsel__cpus(evsel);
		struct psc_threadmap *threads = psc_evsel__threads(evsel);

		if (!psc_evsel__is_open(evsel) || !psc_evsel__is_leader(evsel))
			continue;
		for (c = 0; c < psc_cpumap__nr(cpus); c++) {
			for (t = 0; t < psc_threadmap__nr(threads); t++) {
				r = ring_for_fd(s, psc_cpumap__cpu(cpus, c),
						psc_threadmap__tid(threads, t));
				if (r >= 0 && only[r])
					psc_evsel__read_group(evsel, c, t);
			}
		}
	}
}

/*
 * The kernel's per-fd lost counts (PERF_FORMAT_LOST) into the evsel x ring matrix: of every ring,
 * or of those only[] marks. The lost hook hears what is new.
 */
static void refresh_lost(struct session *s, const bool *only)
{
	struct psc_evsel *evsel;
	struct psc_counts counts;
	uint64_t total = 0;
	int i, c, t, r;

	if (!s->lost_fmt)
		return;
	/* one read per fd, or per group through its leader; a failed one keeps its last counts */
	if (only)
		read_rings(s, only);
	else
		psc_evlist__read(s->evlist);
	psc_evlist__for_each(s->evlist, i, evsel)
	{
		struct psc_cpumap *cpus = psc_evsel__cpus(evsel);
		struct psc_threadmap *threads = psc_evsel__threads(evsel);
		uint64_t *row = s->lost + (size_t)i * s->nr_rings;
		uint64_t *crow = s->counted + (size_t)i * s->nr_rings;

		if (!psc_evsel__is_open(evsel))
			continue;
		for (r = 0; r < s->nr_rings; r++)
			if (!only || only[r])
				row[r] = crow[r] = 0;
		for (c = 0; c < psc_cpumap__nr(cpus); c++) {
			for (t = 0; t < psc_threadmap__nr(threads); t++) {
				r = ring_for_fd(s, psc_cpumap__cpu(cpus, c),
						psc_threadmap__tid(threads, t));
				if (r < 0 || (only && !only[r]) ||
				    psc_evsel__counts(evsel, c, t, &counts))
					continue;
				row[r] += counts.lost; /* threads on one CPU add up */
				crow[r] += counts.val;
			}
		}
	}
	for (i = 0; i < s->nr_evsels; i++) {
		for (r = 0; r < s->nr_rings; r++) {
			uint64_t now = s->lost[(size_t)i * s->nr_rings + r];
			uint64_t seen = s->lost_seen[(size_t)i * s->nr_rings + r];

			total += now;
			if (now > seen && s->hooks.lost)
				s->hooks.lost(s->hooks.ctx, psc_evlist__at(s->evlist, i),
					      s->rings[r].cpu, now - seen);
			s->lost_seen[(size_t)i * s->nr_rings + r] = now;
		}
	}
	s->st.lost = total;
}

/* How many of evsel's fds write to ring r (one per thread there: -p with per-CPU rings). */
static int fds_on_ring(const struct session *s, struct psc_evsel *evsel, int r)
{
	struct psc_cpumap *cpus = psc_evsel__cpus(evsel);
	struct psc_threadmap *threads = psc_evsel__threads(evsel);
	int c, t, n = 0;

	for (c = 0; c < psc_cpumap__nr(cpus); c++)
		for (t = 0; t < psc_threadmap__nr(threads); t++)
			n += ring_for_fd(s, psc_cpumap__cpu(cpus, c),
					 psc_threadmap__tid(threads, t)) == r;
	return n;
}

/*
 * After the last records were delivered and the counts read: the hits each event's count has
 * that neither reached its ring nor were reported lost (kdrop.h).
 */
static void check_kdrop(struct session *s)
{
	struct psc_evsel *evsel;
	int i, r;

	/* not exact, records left unread, or records perfscope itself skipped: none can be told */
	if (!s->lost_fmt || s->opts.overwrite || pending_records(s) || s->st.corrupt ||
	    s->st.undecodable)
		return;
	psc_evlist__for_each(s->evlist, i, evsel)
	{
		size_t row = (size_t)i * s->nr_rings;
		const struct perf_event_attr *attr = psc_evsel__attr(evsel);

		if (psc_evsel__is_open(evsel) && !s->throttled[i] &&
		    kdrop__clock_applies(attr, psc_evsel__nr_bpf(evsel))) {
			for (r = 0; r < s->nr_rings; r++) {
				s->kdropped[row + r] = kdrop__clock_shortfall(
					s->counted[row + r], s->period_ns[row + r], s->seen[row + r],
					s->lost[row + r], kdrop__nominal_ns(attr),
					fds_on_ring(s, evsel, r));
				s->st.kernel_dropped += s->kdropped[row + r];
			}
			continue;
		}
		/*
		 * A tracepoint whose hits weigh more than one (sched_stat_runtime's __perf_count:
		 * its count is nanoseconds) has a count that is not its hits: not compared. Its
		 * samples say so (a period other than 1), and so does its name when none came.
		 */
		if (!psc_evsel__is_open(evsel) || s->weighted[i] ||
		    !kdrop__applies(psc_evsel__attr(evsel), psc_evsel__nr_bpf(evsel)) ||
		    kdrop__weighs(psc_evsel__name(evsel)))
			continue;
		for (r = 0; r < s->nr_rings; r++) {
			s->kdropped[row + r] = kdrop__shortfall(s->counted[row + r],
								s->seen[row + r], s->lost[row + r]);
			s->st.kernel_dropped += s->kdropped[row + r];
		}
	}
}

void session__stats(const struct session *s, struct session_stats *out)
{
	*out = s->st;
	out->backlog_records = s->order.copied_records;
	out->backlog_bytes = s->order.copied_bytes;
	out->backlog_peak = s->order.held_peak;
	out->backlog_mem_peak = s->order.mem_peak;
	out->backlog_full = s->order.full;
}

uint64_t session__evsel_samples(const struct session *s, int idx)
{
	return idx >= 0 && idx <= s->nr_evsels ? s->samples[idx] : 0;
}

uint64_t session__evsel_lost(const struct session *s, int idx)
{
	uint64_t n = 0;
	int r;

	if (idx < 0 || idx > s->nr_evsels)
		return 0;
	for (r = 0; r < s->nr_rings; r++)
		n += s->lost[(size_t)idx * s->nr_rings + r];
	return n;
}

uint64_t session__evsel_kdropped(const struct session *s, int idx)
{
	uint64_t n = 0;
	int r;

	if (idx < 0 || idx >= s->nr_evsels)
		return 0;
	for (r = 0; r < s->nr_rings; r++)
		n += s->kdropped[(size_t)idx * s->nr_rings + r];
	return n;
}

static int max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

/* After losses: what would have kept those events. */
static void print_loss_advice(struct session *s, FILE *f)
{
	const char *p = s->opts.prof;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t pages = s->nr_rings ? psc_ring__data_size(s->rings[0].ring) / page : 0;
	uint64_t bound = s->opts.backlog_max ? s->opts.backlog_max : SESSION_BACKLOG_DEFAULT;

	if (s->order.full)
		fprintf(f,
			"perfscope %s: events waited in memory up to the bound of %.0f MiB %llu "
			"times, and the kernel lost events while they waited in the ring\n",
			p, mib(bound), (unsigned long long)s->order.full);
	fprintf(f,
		"perfscope %s: to lose fewer: a bigger ring, e.g. -m %llu (now %llu pages, %.1f MiB "
		"per CPU%s); a kernel filter, so that only the events wanted are recorded "
		"(-e 'sys:name/FIELD==VALUE/')%s\n",
		p, (unsigned long long)(pages ? pages * 4 : 1024), (unsigned long long)pages,
		mib(pages * page), has_ipc_lock() ? "" : "; over perf_event_mlock_kb as root only",
		s->opts.order ? "; or --no-order, which delivers each CPU's events as they come "
				"and costs less per event"
			      : "");
}

/*
 * More events than this (a wildcard: syscalls:sys_enter_* is 344) and the ones that lost nothing
 * are summed up in two lines, the events seen and the names of those that saw nothing, rather
 * than a line each; events that lost some, or that the kernel dropped or throttled, keep theirs.
 */
#define STATS_BRIEF_MIN 4

struct stats_brief {
	int events; /* event lines there would be */
	int busy; /* of them, without loss and with events: summed in one line */
	uint64_t seen;
	struct namelist idle; /* without loss nor events */
};

/* Whether event i has more to say at the end than its counts (kernel drops, throttling). */
static bool stats_has_notes(const struct session *s, int i)
{
	if (s->throttled[i])
		return true;
	for (int r = 0; r < s->nr_rings; r++)
		if (s->kdropped[(size_t)i * s->nr_rings + r])
			return true;
	return false;
}

static void brief_init(const struct session *s, struct stats_brief *b)
{
	memset(b, 0, sizeof(*b));
	namelist__init(&b->idle, NAMELIST_SHORT);
	for (int i = 0; i < s->nr_evsels; i++) {
		struct psc_evsel *evsel = psc_evlist__at(s->evlist, i);

		if (psc_evsel__is_open(evsel) && !session_is_sideband(evsel))
			b->events++;
	}
}

static void brief_print(const struct stats_brief *b, FILE *f, const char *p, const char *when)
{
	if (b->busy)
		fprintf(f, "perfscope %s: %d events: %llu seen, 0 lost%s (-v: a line for each)\n",
			p, b->busy, (unsigned long long)b->seen, when);
	if (!b->idle.nr)
		return;
	fprintf(f, "perfscope %s: %d of %d events saw nothing%s: ", p, b->idle.nr, b->events, when);
	namelist__print(&b->idle, f);
	fprintf(f, " (-v lists them)\n");
}

void session__print_stats(struct session *s, FILE *f, bool interval)
{
	struct psc_evsel *evsel;
	const char *p = s->opts.prof;
	char when[48] = "";
	uint64_t all_lost = 0;
	struct stats_brief brief;
	int i, r;

	/* an interval's lines say so: they must not be mistaken for the totals printed at exit */
	if (interval)
		snprintf(when, sizeof(when), " in the last %ld ms", (long)s->opts.interval_ms);
	brief_init(s, &brief);
	for (i = 0; i <= s->nr_evsels; i++) {
		uint64_t seen = s->samples[i], lost = 0, l;
		const char *name;

		evsel = i < s->nr_evsels ? psc_evlist__at(s->evlist, i) : NULL;
		if (evsel && !psc_evsel__is_open(evsel))
			continue;
		name = evsel ? psc_evsel__name(evsel) : "(unknown event)";
		if (evsel && session_is_sideband(evsel))
			name = "side-band records (task names, mmaps)";
		if (interval)
			seen -= s->samples_prev[i];
		for (r = 0; r < s->nr_rings; r++) {
			l = s->lost[(size_t)i * s->nr_rings + r];
			lost += interval ? l - s->lost_prev[(size_t)i * s->nr_rings + r] : l;
		}
		all_lost += lost;
		if ((!evsel || session_is_sideband(evsel)) && !seen && !lost)
			continue;
		if (!lost && !s->opts.verbose && brief.events > STATS_BRIEF_MIN &&
		    !(evsel && !interval && stats_has_notes(s, i))) {
			/* one of many without loss: summed up below, -v shows its line */
			if (seen) {
				brief.busy++;
				brief.seen += seen;
			} else {
				namelist__add(&brief.idle, name);
			}
			continue;
		}
		fprintf(f, "perfscope %s: %s: %llu events, %llu lost%s\n", p, name,
			(unsigned long long)seen, (unsigned long long)lost, when);
		for (r = 0; r < s->nr_rings && lost; r++) {
			size_t k = (size_t)i * s->nr_rings + r;

			l = interval ? s->lost[k] - s->lost_prev[k] : s->lost[k];
			if (l)
				fprintf(f, "perfscope %s: %s: lost %llu events on cpu %d%s\n", p,
					name, (unsigned long long)l, s->rings[r].cpu, when);
		}
		for (r = 0; r < s->nr_rings && !interval && i < s->nr_evsels; r++) {
			uint64_t n = s->kdropped[(size_t)i * s->nr_rings + r];

			if (n && kdrop__clock_applies(psc_evsel__attr(evsel), psc_evsel__nr_bpf(evsel)))
				kdrop__print_clock(f, p, name, s->rings[r].cpu,
						   psc_ring__tid(s->rings[r].ring), n);
			else if (n)
				kdrop__print(f, p, name, s->rings[r].cpu,
					     psc_ring__tid(s->rings[r].ring), n);
		}
		if (!interval && s->throttled[i])
			fprintf(f,
				"perfscope %s: %s: throttled %llu times: each time the kernel took no "
				"samples of it for the rest of a tick (over "
				"kernel.perf_event_max_sample_rate=%d per second); use a larger period= "
				"or a lower freq=\n",
				p, name, (unsigned long long)s->throttled[i], max_sample_rate());
	}
	brief_print(&brief, f, p, when);
	if (!interval) {
		if (s->st.out_of_order)
			fprintf(f,
				"perfscope %s: %llu events reached their ring more than %llu ms after "
				"they happened, after later ones had been shown: they were shown as they "
				"came, out of time order\n",
				p, (unsigned long long)s->st.out_of_order,
				(unsigned long long)(s->opts.slack_ns / 1000000));
		if (s->opts.overwrite)
			fprintf(f,
				"perfscope %s: flight recorder: the rings held the last %llu records "
				"when the run ended; older ones were overwritten as it went%s\n",
				p, (unsigned long long)s->st.overwrite_kept,
				s->st.nomem ? " (out of memory: the rest of them were not read)" : "");
		if (s->st.corrupt || s->st.undecodable)
			fprintf(f,
				"perfscope %s: %llu corrupt and %llu undecodable records skipped\n",
				p, (unsigned long long)s->st.corrupt,
				(unsigned long long)s->st.undecodable);
		if (all_lost)
			print_loss_advice(s, f);
		if (s->opts.verbose)
			fprintf(f,
				"perfscope %s: rings of %zu pages (%.1f MiB) per CPU; backlog: %llu "
				"records (%.1f MiB) waited in memory for their turn; at most %.1f MiB of "
				"records at once (%.1f MiB held, bound %.0f MiB), bound reached %llu "
				"times\n",
				p,
				s->nr_rings ? psc_ring__data_size(s->rings[0].ring) /
						      (size_t)sysconf(_SC_PAGESIZE)
					    : 0,
				mib(s->nr_rings ? psc_ring__data_size(s->rings[0].ring) : 0),
				(unsigned long long)s->order.copied_records,
				mib(s->order.copied_bytes), mib(s->order.held_peak),
				mib(s->order.mem_peak),
				mib(s->opts.backlog_max ? s->opts.backlog_max
							: SESSION_BACKLOG_DEFAULT),
				(unsigned long long)s->order.full);
		if (s->opts.verbose && s->opts.order && s->opts.lost_early && s->lost_fmt)
			fprintf(f,
				"perfscope %s: %llu of %llu rounds read the kernel's lost counts first "
				"(rings near full: a loss they had is heard before what followed it)\n",
				p, (unsigned long long)s->st.loss_reads,
				(unsigned long long)s->st.rounds);
		else if (s->opts.verbose && s->opts.order && s->opts.lost_early)
			fprintf(f,
				"perfscope %s: no per-event lost counts on this kernel (Linux 6.0+): a "
				"loss is heard from its ring's LOST record, written at that ring's next "
				"event\n",
				p);
	}
	if (interval) {
		memcpy(s->samples_prev, s->samples, (s->nr_evsels + 1) * sizeof(uint64_t));
		memcpy(s->lost_prev, s->lost,
		       (size_t)(s->nr_evsels + 1) * s->nr_rings * sizeof(uint64_t));
	}
	fflush(f);
}

/* ---- the loop ---- */

static uint64_t tag_data(int tag, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint32_t)tag;
}

static int epoll_add(struct session *s, int fd, int tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag_data(tag, 0) };

	return epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* ---- extra file descriptors ---- */

static struct session_fd *find_fd(struct session *s, int fd)
{
	int i;

	for (i = 0; i < s->nr_fds; i++)
		if (s->fds[i].fd == fd && fd >= 0)
			return &s->fds[i];
	return NULL;
}

/* Puts f's epoll registration in line with events (0: out of epoll). */
static int poll_fd(struct session *s, struct session_fd *f, uint32_t events)
{
	struct epoll_event ev = {
		.events = events,
		.data.u64 = tag_data(TAG_EXTRA - (int)(f - s->fds), f->gen),
	};
	int op;

	if (events == f->events)
		return 0;
	op = !f->events ? EPOLL_CTL_ADD : !events ? EPOLL_CTL_DEL : EPOLL_CTL_MOD;
	if (epoll_ctl(s->epfd, op, f->fd, &ev))
		return -errno;
	f->events = events;
	return 0;
}

int session__add_fd(struct session *s, int fd, uint32_t epoll_events,
		    int (*cb)(void *ctx, int fd, uint32_t revents), void *ctx)
{
	struct session_fd *f = NULL;
	int i, err;

	if (fd < 0 || !cb)
		return -EINVAL;
	if (find_fd(s, fd))
		return -EEXIST;
	for (i = 0; i < s->nr_fds && !f; i++)
		if (s->fds[i].fd < 0)
			f = &s->fds[i];
	if (!f) {
		struct session_fd *n = realloc(s->fds, (s->nr_fds + 1) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->fds = n;
		f = &s->fds[s->nr_fds++];
	}
	*f = (struct session_fd){ .fd = fd, .gen = ++s->fd_gen, .cb = cb, .ctx = ctx };
	err = poll_fd(s, f, epoll_events);
	if (err)
		f->fd = -1;
	return err;
}

int session__mod_fd(struct session *s, int fd, uint32_t epoll_events)
{
	struct session_fd *f = find_fd(s, fd);

	return f ? poll_fd(s, f, epoll_events) : -ENOENT;
}

int session__remove_fd(struct session *s, int fd)
{
	struct session_fd *f = find_fd(s, fd);

	if (!f)
		return -ENOENT;
	poll_fd(s, f, 0);
	f->fd = -1;
	return 0;
}

static void on_extra_fd(struct session *s, int slot, uint32_t gen, uint32_t revents)
{
	struct session_fd *f;

	if (slot < 0 || slot >= s->nr_fds)
		return;
	f = &s->fds[slot];
	if (f->fd < 0 || f->gen != gen)
		return; /* removed (and maybe reused) since epoll_wait */
	hook_result(s, f->cb(f->ctx, f->fd, revents));
}

/* The run is over: every fd still registered finishes (SESSION_FD_END) and is unregistered. */
static void end_fds(struct session *s)
{
	int i, fd;

	for (i = 0; i < s->nr_fds; i++) {
		struct session_fd *f = &s->fds[i];

		if (f->fd < 0)
			continue;
		fd = f->fd;
		if (s->epfd >= 0)
			poll_fd(s, f, 0);
		f->fd = -1;
		f->cb(f->ctx, fd, SESSION_FD_END);
	}
}

static int timer_fd(uint64_t first_ns, uint64_t period_ns)
{
	struct itimerspec its = {
		.it_value = { first_ns / 1000000000ull, first_ns % 1000000000ull },
		.it_interval = { period_ns / 1000000000ull, period_ns % 1000000000ull },
	};
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (timerfd_settime(fd, 0, &its, NULL)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

static int open_pidfd(pid_t pid, bool thread)
{
#ifdef SYS_pidfd_open
	long fd = -1;

	if (thread)
		fd = syscall(SYS_pidfd_open, pid, O_EXCL); /* PIDFD_THREAD, Linux 6.9 */
	if (fd < 0)
		fd = syscall(SYS_pidfd_open, pid, 0);
	return fd < 0 ? -errno : (int)fd;
#else
	return -ENOSYS;
#endif
}

static int setup_fds(struct session *s)
{
	sigset_t mask;
	int i, fd, err;

	/* overwrite rings are read once, at the end: their wakeups would only cost */
	for (i = 0; i < s->nr_rings && !s->opts.overwrite; i++) {
		fd = psc_ring__fd(s->rings[i].ring);
		if (fd >= 0 && (err = epoll_add(s, fd, i)))
			return err;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGUSR1);
	if (sigprocmask(SIG_BLOCK, &mask, &s->old_mask))
		return -errno;
	s->mask_saved = true;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0 || (err = epoll_add(s, s->sigfd, TAG_SIGNAL)))
		return s->sigfd < 0 ? -errno : err;
	if (s->opts.interval_ms > 0) {
		uint64_t ns = (uint64_t)s->opts.interval_ms * 1000000ull;

		s->intfd = timer_fd(ns, ns);
		if (s->intfd < 0 || (err = epoll_add(s, s->intfd, TAG_INTERVAL)))
			return s->intfd < 0 ? s->intfd : err;
	}
	if (s->opts.duration_s > 0) {
		uint64_t ns = (uint64_t)(s->opts.duration_s * 1e9);

		s->durfd = timer_fd(ns ? ns : 1, 0);
		if (s->durfd < 0 || (err = epoll_add(s, s->durfd, TAG_DURATION)))
			return s->durfd < 0 ? s->durfd : err;
	}
	return 0;
}

/* One of several -p/-t tasks exited: the run ends with the last. */
static int on_watched_exit(void *ctx, int fd, uint32_t revents)
{
	struct session *s = ctx;

	session__remove_fd(s, fd);
	close(fd);
	if (revents != SESSION_FD_END && --s->nr_watching == 0 && s->end == SESSION_RUNNING) {
		s->end = SESSION_PROCESS;
		return 1;
	}
	return 0;
}

static void watch_tasks(struct session *s)
{
	for (int i = 0; i < s->opts.nr_watch; i++) {
		int fd = open_pidfd(s->opts.watch_pids[i], s->opts.watch_is_thread);

		if (fd == -ESRCH)
			continue; /* gone between setup and now */
		if (fd < 0 || session__add_fd(s, fd, EPOLLIN, on_watched_exit, s)) {
			if (fd >= 0)
				close(fd);
			s->nr_watching++; /* cannot be watched: never counted as gone */
			continue;
		}
		s->nr_watching++;
	}
	if (!s->nr_watching) {
		s->end = SESSION_PROCESS;
		s->stop = true;
	}
}

/* After the target started: a pidfd for the command or the -p/-t process. */
static void watch_target(struct session *s)
{
	struct target *t = s->opts.target;

	if (!(t && t->launched) && s->opts.nr_watch > 0) {
		watch_tasks(s);
		return;
	}
	if (t && t->launched) {
		s->pidfd = launch_pidfd(&t->launch);
		s->watch_is_command = true;
	} else if (s->opts.watch_pid > 0) {
		s->pidfd = open_pidfd(s->opts.watch_pid, s->opts.watch_is_thread);
		if (s->pidfd == -ESRCH) {
			/* gone between setup and now */
			s->end = SESSION_PROCESS;
			s->stop = true;
		}
	}
	if (s->pidfd >= 0 && epoll_add(s, s->pidfd, TAG_PIDFD))
		close_fd(&s->pidfd);
}

static void on_target_exit(struct session *s)
{
	struct target *t = s->opts.target;
	int status;

	if (s->watch_is_command) {
		if (target_reap(t, &status) > 0)
			s->command_exit = wait_status_to_exit_code(status);
		else
			return; /* not really gone yet */
		if (s->end == SESSION_RUNNING)
			s->end = SESSION_COMMAND;
	} else if (s->end == SESSION_RUNNING) {
		s->end = SESSION_PROCESS;
	}
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->pidfd, NULL);
	close_fd(&s->pidfd);
	s->stop = true;
}

/* SIGUSR1: the counts so far, and the profiler's own report, running or draining. */
static void on_sigusr1(struct session *s)
{
	refresh_lost(s, NULL);
	if (!s->opts.quiet_stats)
		session__print_stats(s, stderr, false);
	if (s->hooks.sigusr1)
		s->hooks.sigusr1(s->hooks.ctx);
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			on_sigusr1(s);
			continue;
		}
		/*
		 * A terminal sends SIGINT to the command too; a kill(1) of perfscope does not. A
		 * command still running is given the signal and watched until it ends, so that
		 * what it does while it stops is still seen and its status is ours; one that
		 * ignores it is killed at the second signal rather than waited for forever.
		 */
		if (s->watch_is_command && s->pidfd >= 0) {
			target_forward_signal(s->opts.target,
					      s->signalled ? SIGKILL : (int)si.ssi_signo);
			s->signalled = true;
			continue;
		}
		if (s->hooks.stop_signal && !s->stop_deferred &&
		    s->hooks.stop_signal(s->hooks.ctx, (int)si.ssi_signo) == 1) {
			s->stop_deferred = true;
			continue;
		}
		if (s->end == SESSION_RUNNING)
			s->end = SESSION_SIGNAL;
		s->stop = true;
		if (s->opts.target)
			target_forward_signal(s->opts.target, (int)si.ssi_signo);
	}
}

#define SIG_CHECK_NS 50000000ull /* how often a long round looks at the signalfd */
#define DRAIN_SAY_NS 1000000000ull /* a drain this long says how to cut it short */

/*
 * From inside a round, every SIG_CHECK_NS: a stop signal ends the round (the drain of what was
 * read before it follows); during that drain, a second one ends the drain.
 */
static void check_signals(struct session *s)
{
	struct signalfd_siginfo si;
	uint64_t now = mono_ns();

	if (now < s->next_sig_check_ns || s->sigfd < 0)
		return;
	s->next_sig_check_ns = now + SIG_CHECK_NS;
	if (!s->draining) {
		if (!s->stop)
			on_signal(s);
		return;
	}
	if (!s->drain_said && now - s->drain_start_ns > DRAIN_SAY_NS) {
		fprintf(stderr,
			"perfscope %s: stopping: delivering the events read before the stop (%llu so "
			"far); SIGINT or SIGTERM again ends now without the rest\n",
			s->opts.prof ? s->opts.prof : "session",
			(unsigned long long)s->drain_delivered);
		s->drain_said = true;
	}
	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGUSR1) {
			on_sigusr1(s);
			continue;
		}
		if (s->watch_is_command && s->pidfd >= 0)
			target_forward_signal(s->opts.target, SIGKILL);
		s->drain_cut = true;
		s->stop = true;
	}
}

static void on_timer(struct session *s, int fd, bool interval)
{
	uint64_t ticks;

	if (read(fd, &ticks, sizeof(ticks)) != (ssize_t)sizeof(ticks))
		return;
	if (!interval) {
		if (s->end == SESSION_RUNNING)
			s->end = SESSION_DURATION;
		s->stop = true;
		return;
	}
	refresh_lost(s, NULL);
	/* a flight recorder reads nothing before the end: an interval would say "0 events" */
	if (!s->opts.quiet_stats && !s->opts.overwrite)
		session__print_stats(s, stderr, true);
	if (s->hooks.interval)
		s->hooks.interval(s->hooks.ctx);
}

/* A drain ended by a second stop signal: what it left is said, never silently dropped. */
static void report_cut_drain(struct session *s)
{
	uint64_t records = 0, bytes = 0;

	for (int i = 0; i < s->nr_rings; i++) {
		records += s->rings[i].backlog.records;
		bytes += psc_ring__pending(s->rings[i].ring);
	}
	fprintf(stderr,
		"perfscope %s: stopped by a second signal: %llu events waiting in memory%s were not "
		"delivered (%llu delivered after the first)\n",
		s->opts.prof ? s->opts.prof : "session", (unsigned long long)records,
		bytes ? " and the unread rest of the rings" : "",
		(unsigned long long)s->drain_delivered);
}

/* A command still running when we stop (signal, duration): ask it to end, then insist. */
static void finish_command(struct session *s)
{
	int status;

	if (!s->opts.target || s->command_exit >= 0)
		return;
	if (target_stop_command(s->opts.target, &status) > 0)
		s->command_exit = wait_status_to_exit_code(status);
}

int session__run(struct session *s)
{
	struct epoll_event evs[16];
	bool pending = false;
	int i, n, err, timeout;

	err = setup_fds(s);
	if (err)
		return err;
	if (s->opts.target) {
		err = target_start(s->opts.target, s->evlist, s->opts.prof);
		if (err)
			return err; /* already reported; 127/126 or 1 */
	} else if ((err = psc_evlist__enable(s->evlist))) {
		return err;
	}
	watch_target(s);
	/* a script waits for this line before it starts its workload or its stop timer */
	if (s->opts.verbose)
		fprintf(stderr,
			"perfscope %s: running (%d event%s, %d ring%s); SIGINT or SIGTERM ends the run\n",
			s->opts.prof ? s->opts.prof : "session", s->nr_evsels,
			s->nr_evsels == 1 ? "" : "s", s->nr_rings, s->nr_rings == 1 ? "" : "s");

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
				on_extra_fd(s, TAG_EXTRA - tag, (uint32_t)(evs[i].data.u64 >> 32),
					    evs[i].events);
			else if (tag == TAG_SIGNAL)
				on_signal(s);
			else if (tag == TAG_INTERVAL)
				on_timer(s, s->intfd, true);
			else if (tag == TAG_DURATION)
				on_timer(s, s->durfd, false);
			else if (tag == TAG_PIDFD)
				on_target_exit(s);
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
			if (!do_round(s, true) && !pending_records(s))
				break;
		s->draining = false;
		if (s->drain_cut)
			report_cut_drain(s);
	}
	refresh_lost(s, NULL);
	if (s->end != SESSION_ERROR && s->end != SESSION_HOOK)
		check_kdrop(s);
	finish_command(s);
	/* an output still holding events writes them now, SIGINT/SIGTERM still watched */
	end_fds(s);
	/*
	 * A stop signal that came after the loop ended for another reason (a full pipe given up
	 * on, --duration, a second Ctrl-C while the command is finished) is taken here: restoring
	 * the mask with it pending would kill perfscope before the profiler's report.
	 */
	on_signal(s);
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
