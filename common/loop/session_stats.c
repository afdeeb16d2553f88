/* session_stats: what the session counted (events, losses, kernel drops) and its statistics lines. */
#include "session_internal.h"

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
void session_refresh_lost(struct session *s, const bool *only)
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
void session_check_kdrop(struct session *s)
{
	struct psc_evsel *evsel;
	int i, r;

	/* not exact, records left unread, or records perfscope itself skipped: none can be told */
	if (!s->lost_fmt || s->opts.overwrite || session_pending_records(s) || s->st.corrupt ||
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

uint64_t session_evsel_seen(const struct session *s, int idx)
{
	uint64_t n = 0;

	for (int r = 0; r < s->nr_rings; r++)
		n += s->seen[(size_t)idx * s->nr_rings + r];
	return n;
}

void session__stats(const struct session *s, struct session_stats *out)
{
	*out = s->st;
	out->samples = 0;
	for (int i = 0; i <= s->nr_evsels; i++)
		out->samples += session_evsel_seen(s, i);
	out->backlog_records = s->order.copied_records;
	out->backlog_bytes = s->order.copied_bytes;
	out->backlog_peak = s->order.held_peak;
	out->backlog_mem_peak = s->order.mem_peak;
	out->backlog_full = s->order.full;
}

uint64_t session__evsel_samples(const struct session *s, int idx)
{
	return idx >= 0 && idx <= s->nr_evsels ? session_evsel_seen(s, idx) : 0;
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

static double mib(uint64_t bytes)
{
	return (double)bytes / (1 << 20);
}

/* After losses: what would have kept those events. */
static void say_loss_advice(struct session *s)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t pages = s->nr_rings ? psc_ring__data_size(s->rings[0].ring) / page : 0;
	uint64_t bound = s->opts.backlog_max ? s->opts.backlog_max : SESSION_BACKLOG_DEFAULT;

	if (s->order.full)
		say(&s->say,
			"events waited in memory up to the bound of %.0f MiB %llu "
			"times, and the kernel lost events while they waited in the ring",
			mib(bound), (unsigned long long)s->order.full);
	say(&s->say,
		"to lose fewer: a bigger ring, e.g. -m %llu (now %llu pages, %.1f MiB "
		"per CPU%s); a kernel filter, so that only the events wanted are recorded "
		"(-e 'sys:name/FIELD==VALUE/')%s",
		(unsigned long long)(pages ? pages * 4 : 1024), (unsigned long long)pages,
		mib(pages * page),
		psc_kernel__has_cap(CAP_IPC_LOCK) ? "" : "; over perf_event_mlock_kb as root only",
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

static void brief_say(struct session *s, const struct stats_brief *b, const char *when)
{
	char names[sizeof(b->idle.buf) + 32];

	if (b->busy)
		say(&s->say, "%d events: %llu seen, 0 lost%s (-v: a line for each)",
			b->busy, (unsigned long long)b->seen, when);
	if (!b->idle.nr)
		return;
	say(&s->say, "%d of %d events saw nothing%s: %s (-v lists them)", b->idle.nr, b->events,
	    when, namelist__str(&b->idle, names, sizeof(names)));
}

void session__say_stats(struct session *s, bool interval)
{
	struct psc_evsel *evsel;
	char when[48] = "";
	uint64_t all_lost = 0;
	struct stats_brief brief;
	int i, r;

	/* an interval's lines say so: they must not be mistaken for the totals printed at exit */
	if (interval)
		snprintf(when, sizeof(when), " in the last %ld ms", (long)s->opts.interval_ms);
	brief_init(s, &brief);
	for (i = 0; i <= s->nr_evsels; i++) {
		uint64_t seen = session_evsel_seen(s, i), lost = 0, l;
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
		say(&s->say, "%s: %llu events, %llu lost%s", name,
			(unsigned long long)seen, (unsigned long long)lost, when);
		for (r = 0; r < s->nr_rings && lost; r++) {
			size_t k = (size_t)i * s->nr_rings + r;

			l = interval ? s->lost[k] - s->lost_prev[k] : s->lost[k];
			if (l)
				say(&s->say, "%s: lost %llu events on cpu %d%s", name,
				    (unsigned long long)l, s->rings[r].cpu, when);
		}
		for (r = 0; r < s->nr_rings && !interval && i < s->nr_evsels; r++) {
			uint64_t n = s->kdropped[(size_t)i * s->nr_rings + r];

			if (n && kdrop__clock_applies(psc_evsel__attr(evsel), psc_evsel__nr_bpf(evsel)))
				kdrop__say_clock(&s->say, name, s->rings[r].cpu,
						 psc_ring__tid(s->rings[r].ring), n);
			else if (n)
				kdrop__say(&s->say, name, s->rings[r].cpu,
					   psc_ring__tid(s->rings[r].ring), n);
		}
		if (!interval && s->throttled[i])
			say(&s->say,
				"%s: throttled %llu times: each time the kernel took no "
				"samples of it for the rest of a tick (over "
				"kernel.perf_event_max_sample_rate=%d per second); use a larger period= "
				"or a lower freq=",
				name, (unsigned long long)s->throttled[i], (int)psc_kernel__sysctl("perf_event_max_sample_rate", -1));
	}
	brief_say(s, &brief, when);
	if (!interval) {
		if (s->st.out_of_order)
			say(&s->say,
				"%llu events reached their ring more than %llu ms after "
				"they happened, after later ones had been shown: they were shown as they "
				"came, out of time order",
				(unsigned long long)s->st.out_of_order,
				(unsigned long long)(s->opts.slack_ns / 1000000));
		if (s->opts.overwrite)
			say(&s->say,
				"flight recorder: the rings held the last %llu records "
				"when the run ended; older ones were overwritten as it went%s",
				(unsigned long long)s->st.overwrite_kept,
				s->st.nomem ? " (out of memory: the rest of them were not read)" : "");
		if (s->st.corrupt || s->st.undecodable)
			say(&s->say,
				"%llu corrupt and %llu undecodable records skipped",
				(unsigned long long)s->st.corrupt,
				(unsigned long long)s->st.undecodable);
		if (all_lost)
			say_loss_advice(s);
		if (s->opts.verbose)
			say(&s->say,
				"rings of %zu pages (%.1f MiB) per CPU; backlog: %llu "
				"records (%.1f MiB) waited in memory for their turn; at most %.1f MiB of "
				"records at once (%.1f MiB held, bound %.0f MiB), bound reached %llu "
				"times",
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
			say(&s->say,
				"%llu of %llu rounds read the kernel's lost counts first "
				"(rings near full: a loss they had is heard before what followed it)",
				(unsigned long long)s->st.loss_reads,
				(unsigned long long)s->st.rounds);
		else if (s->opts.verbose && s->opts.order && s->opts.lost_early)
			say(&s->say,
				"no per-event lost counts on this kernel (Linux 6.0+): a "
				"loss is heard from its ring's LOST record, written at that ring's next "
				"event");
	}
	if (interval) {
		for (i = 0; i <= s->nr_evsels; i++)
			s->samples_prev[i] = session_evsel_seen(s, i);
		memcpy(s->lost_prev, s->lost,
		       (size_t)(s->nr_evsels + 1) * s->nr_rings * sizeof(uint64_t));
	}
}

