/* session_config: an evlist set up for the session loop: the side-band event, ring sizes, wakeups. */
#include "session_internal.h"

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
	if (psc_kernel__has_cap(CAP_IPC_LOCK) || psc_kernel__sysctl("perf_event_paranoid", 2) < 0) {
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
		uint64_t budget = (uint64_t)psc_kernel__sysctl("perf_event_mlock_kb", 516) *
				  1024 * (uint64_t)online;

		bytes = budget / (uint64_t)nr_cpus;
		bytes = bytes > page ? bytes - page : page;
	}
	bytes = rounddown_pow2(bytes / page);
	return bytes ? (size_t)bytes : 1;
}

int session_config_evlist(struct psc_evlist *evlist, size_t pages, unsigned int sideband)
{
	bool lost_fmt = psc_kernel__has_format_lost();
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
