/* evlist rings: one mmap per CPU (or thread), other fds redirected into it, lost accounting. */
#include <stdlib.h>
#include <sys/ioctl.h>

#include "ring_internal.h"

#define DEFAULT_PAGES 128

static bool is_any_cpu(const struct psc_cpumap *cpus)
{
	return psc_cpumap__nr(cpus) == 1 && psc_cpumap__cpu(cpus, 0) == -1;
}

static int thread_idx(const struct psc_threadmap *threads, pid_t tid)
{
	for (int i = 0; i < psc_threadmap__nr(threads); i++)
		if (psc_threadmap__tid(threads, i) == tid)
			return i;
	return -1;
}

/* Attributes what a LOST / LOST_SAMPLES record says to its evsel, or to `unattributed`. */
static void evlist_on_lost(void *ctx, const struct perf_event_header *hdr, uint64_t lost)
{
	struct psc_evlist *evlist = ctx;
	struct psc_evsel *evsel = evlist->only_evsel;
	uint64_t id;

	evlist->lost += lost;
	/*
	 * The trailer's IDENTIFIER is the primary id (the one we indexed) even for inherited
	 * children, whose LOST record carries their own id.
	 */
	if (!evsel && evlist->ids_all && psc_record__identifier(hdr, &id))
		evsel = psc_evlist__evsel_by_id(evlist, id);
	if (!evsel && hdr->type == PERF_RECORD_LOST && hdr->size >= sizeof(*hdr) + 16) {
		memcpy(&id, hdr + 1, sizeof(id));
		evsel = psc_evlist__evsel_by_id(evlist, id);
	}
	if (evsel)
		evsel->lost += lost;
	else
		evlist->lost_unattributed += lost;
}

int psc_evlist__config_sampling(struct psc_evlist *evlist)
{
	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];

		if (evsel->fds)
			return -EBUSY;
		evsel->attr.sample_type |= PERF_SAMPLE_IDENTIFIER;
		evsel->attr.sample_id_all = 1;
	}
	return 0;
}

/* Checks that the open evsels can share rings; fills only_evsel and ids_all. */
static int check_evsels(struct psc_evlist *evlist, bool overwrite)
{
	int nr_open = 0;

	evlist->only_evsel = NULL;
	evlist->ids_all = true;
	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];
		const struct perf_event_attr *attr = &evsel->attr;

		if (!evsel->fds)
			continue;
		nr_open++;
		evlist->only_evsel = evsel;
		if (!(attr->sample_type & PERF_SAMPLE_IDENTIFIER) || !attr->sample_id_all)
			evlist->ids_all = false;
		if (!!attr->write_backward != overwrite) {
			pr_warn("mmap: event %s has write_backward=%d but the rings are %s; set attr.write_backward on every event for overwrite rings, on none otherwise\n",
				psc_evsel__name(evsel), attr->write_backward,
				overwrite ? "overwrite" : "forward");
			return -EINVAL;
		}
	}
	if (!nr_open) {
		pr_warn("mmap: no open event to map; open the evlist first\n");
		return -EINVAL;
	}
	if (nr_open == 1)
		return 0;
	evlist->only_evsel = NULL;
	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];

		if (evsel->fds && !(evsel->attr.sample_type & PERF_SAMPLE_IDENTIFIER)) {
			pr_warn("mmap: event %s lacks PERF_SAMPLE_IDENTIFIER, so its records could not be told from the other events' in a shared ring; call psc_evlist__config_sampling before opening\n",
				psc_evsel__name(evsel));
			return -EINVAL;
		}
	}
	if (!evlist->ids_all)
		pr_info("mmap: without sample_id_all, LOST_SAMPLES and side-band records cannot be attributed to an event\n");
	return 0;
}

/* The fd of evsel that belongs in ring (cpu, tid), or -1 when it has none there. */
static int evsel_fd_for(const struct psc_evsel *evsel, bool per_thread, int cpu, pid_t tid)
{
	int c, t;

	if (per_thread) {
		c = 0;
		t = thread_idx(evsel->threads, tid);
	} else {
		c = psc_cpumap__idx(evsel->cpus, cpu);
		t = thread_idx(evsel->threads, tid);
	}
	if (c < 0 || t < 0)
		return -1;
	return evsel->fds[EVSEL_SLOT(evsel, c, t)];
}

/* Maps the first fd of ring (cpu, tid..) and redirects every other fd there into it. */
static int mmap_one(struct psc_evlist *evlist, int r, bool per_thread, size_t pages, bool overwrite)
{
	int cpu = per_thread ? -1 : psc_cpumap__cpu(evlist->cpus, r);
	struct psc_ring *ring = NULL;
	int nr_threads = per_thread ? 1 : psc_threadmap__nr(evlist->threads);

	for (int t = 0; t < nr_threads; t++) {
		pid_t tid = psc_threadmap__tid(evlist->threads, per_thread ? r : t);

		for (int i = 0; i < evlist->nr; i++) {
			struct psc_evsel *evsel = evlist->entries[i];
			int fd;

			if (!evsel->fds || (fd = evsel_fd_for(evsel, per_thread, cpu, tid)) < 0)
				continue;
			if (!ring) {
				PSC_OPTS(psc_ring_opts, ro, .overwrite = overwrite, .cpu = cpu,
					 .tid = per_thread ? tid : -1);

				ring = psc_ring__new_fd(fd, pages, &ro);
				if (!ring)
					return -errno;
				ring->on_lost = evlist_on_lost;
				ring->lost_ctx = evlist;
				evlist->rings[evlist->nr_rings++] = ring;
				continue;
			}
			if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0) {
				int err = -errno;

				pr_warn("mmap: redirecting %s on cpu %d into the ring failed: %s\n",
					psc_evsel__name(evsel), cpu, strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

int psc_evlist__mmap(struct psc_evlist *evlist, const struct psc_mmap_opts *opts)
{
	size_t pages = OPTS_GET(opts, pages, 0);
	bool overwrite = OPTS_GET(opts, overwrite, false);
	bool per_thread;
	int nr, err;

	if (!evlist || !OPTS_VALID(opts, psc_mmap_opts))
		return -EINVAL;
	if (evlist->rings)
		return -EBUSY;
	if (!pages)
		pages = DEFAULT_PAGES;
	if (pages & (pages - 1)) {
		pr_warn("mmap: %zu pages per ring is not a power of two; use e.g. %zu or %zu\n",
			pages, (size_t)1 << (63 - __builtin_clzll(pages)),
			(size_t)1 << (64 - __builtin_clzll(pages)));
		return -EINVAL;
	}
	if (!evlist->cpus || !evlist->threads)
		return -EINVAL;
	err = check_evsels(evlist, overwrite);
	if (err)
		return err;
	per_thread = is_any_cpu(evlist->cpus);
	nr = per_thread ? psc_threadmap__nr(evlist->threads) : psc_cpumap__nr(evlist->cpus);
	evlist->rings = calloc(nr ? nr : 1, sizeof(*evlist->rings));
	if (!evlist->rings)
		return -ENOMEM;
	evlist->nr_rings = 0;
	for (int r = 0; r < nr; r++) {
		err = mmap_one(evlist, r, per_thread, pages, overwrite);
		if (err) {
			psc_evlist__munmap(evlist);
			return err;
		}
	}
	return 0;
}

void psc_evlist__munmap(struct psc_evlist *evlist)
{
	if (!evlist || !evlist->rings)
		return;
	for (int i = 0; i < evlist->nr_rings; i++)
		psc_ring__delete(evlist->rings[i]);
	free(evlist->rings);
	evlist->rings = NULL;
	evlist->nr_rings = 0;
}

int psc_evlist__nr_rings(const struct psc_evlist *evlist)
{
	return evlist ? evlist->nr_rings : 0;
}

struct psc_ring *psc_evlist__ring(const struct psc_evlist *evlist, int idx)
{
	if (!evlist || idx < 0 || idx >= evlist->nr_rings)
		return NULL;
	return evlist->rings[idx];
}

struct psc_evsel *psc_evlist__evsel_for_record(const struct psc_evlist *evlist,
					       const struct perf_event_header *hdr)
{
	uint64_t id;

	if (evlist->only_evsel)
		return evlist->only_evsel;
	if (hdr->type != PERF_RECORD_SAMPLE && !evlist->ids_all)
		return NULL;
	if (!psc_record__identifier(hdr, &id))
		return NULL;
	return psc_evlist__evsel_by_id(evlist, id);
}

uint64_t psc_evsel__lost(const struct psc_evsel *evsel)
{
	return evsel ? evsel->lost : 0;
}

uint64_t psc_evlist__lost(const struct psc_evlist *evlist, uint64_t *unattributed)
{
	if (unattributed)
		*unattributed = evlist ? evlist->lost_unattributed : 0;
	return evlist ? evlist->lost : 0;
}
