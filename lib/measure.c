/* Meters: a group of counters on the calling thread, read with one read(2) or rdpmc; psc_measure(). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

struct psc_meter {
	struct psc_event_list *specs;
	struct psc_evlist *evlist;
	struct psc_evsel **by_spec;	/* [spec idx] -> its evsel (always present) */
	struct perf_event_mmap_page **pages; /* [spec idx] self-monitoring page, NULL if none */
	bool rdpmc;
	pid_t tid;
};

void psc_meter__delete(struct psc_meter *m)
{
	if (!m)
		return;
	for (int i = 0; m->pages && i < m->specs->nr; i++)
		if (m->pages[i])
			munmap(m->pages[i], (size_t)sysconf(_SC_PAGESIZE));
	free(m->pages);
	free(m->by_spec);
	psc_evlist__delete(m->evlist);
	psc_event_list__delete(m->specs);
	free(m);
}

/*
 * rdpmc is usable when every open counter is on the CPU's PMU and the kernel lets user space
 * read it (cap_user_rdpmc): then a reading needs no system call at all.
 */
static void setup_rdpmc(struct psc_meter *m)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int usable = 0;

	m->pages = calloc(m->specs->nr, sizeof(*m->pages));
	if (!m->pages)
		return;
	for (int i = 0; i < m->specs->nr; i++) {
		struct psc_evsel *evsel = m->by_spec[i];
		uint32_t type = evsel->attr.type;
		void *p;

		if (!evsel->fds)
			continue;
		if (type != PERF_TYPE_HARDWARE && type != PERF_TYPE_HW_CACHE && type != PERF_TYPE_RAW)
			return;
		p = mmap(NULL, page, PROT_READ, MAP_SHARED, evsel->fds[0], 0);
		if (p == MAP_FAILED)
			return;
		m->pages[i] = p;
		if (!m->pages[i]->cap_user_rdpmc)
			return;
		usable++;
	}
	m->rdpmc = usable > 0;
}

struct psc_meter *psc_meter__new(const char *events, const struct psc_meter_opts *opts,
				 struct psc_parse_error *err)
{
	struct psc_parse_error local_err;
	struct psc_evsel *leader = NULL;
	struct psc_cpumap *cpus = NULL;
	struct psc_threadmap *threads = NULL;
	struct psc_meter *m;
	int ret;

	if (!OPTS_VALID(opts, psc_meter_opts))
		return psc_errno_null(EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->tid = gettid();
	ret = psc_parse_events(events, NULL, &m->specs, err ? err : &local_err);
	if (ret)
		goto fail;
	m->evlist = psc_evlist__new();
	m->by_spec = calloc(m->specs->nr, sizeof(*m->by_spec));
	cpus = psc_cpumap__new_any();
	threads = psc_threadmap__new_tid(m->tid);
	if (!m->evlist || !m->by_spec || !cpus || !threads) {
		ret = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < m->specs->nr; i++) {
		struct psc_evsel *evsel = psc_evsel__new_spec(&m->specs->specs[i]);

		if (!evsel || (ret = psc_evlist__add(m->evlist, evsel))) {
			psc_evsel__delete(evsel);
			ret = -ENOMEM;
			goto fail;
		}
		m->by_spec[i] = evsel;
		if (OPTS_GET(opts, exclude_kernel, false))
			evsel->attr.exclude_kernel = evsel->attr.exclude_hv = 1;
		/*
		 * Group only what this machine can count: a group is all-or-nothing, and an event
		 * it lacks must not take the others down with it.
		 */
		evsel->open_errno = -psc_attr__probe(&evsel->attr);
		if (evsel->open_errno || OPTS_GET(opts, no_group, false))
			continue;
		if (!leader)
			leader = evsel;
		else if ((ret = psc_evsel__set_leader(evsel, leader)))
			goto fail;
	}
	psc_evlist__set_maps(m->evlist, cpus, threads);
	for (int i = 0; i < m->specs->nr; i++) {
		struct psc_evsel *evsel = m->by_spec[i];
		int probe_errno = evsel->open_errno;

		if (probe_errno)
			continue; /* stays unsupported; reported through its value */
		PSC_OPTS(psc_evsel_open_opts, eo);
		ret = psc_evsel__open(evsel, cpus, threads, &eo);
		if (ret)
			goto fail;
	}
	if (psc_evlist__nr_open(m->evlist) == 0) {
		ret = -m->by_spec[0]->open_errno;
		if (err)
			psc_strerror_open(ret, m->specs->specs[0].name, err->msg, sizeof(err->msg));
		goto fail;
	}
	setup_rdpmc(m);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return m;
fail:
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	psc_meter__delete(m);
	return psc_errno_null(ret ? ret : -EINVAL);
}

int psc_meter__start(struct psc_meter *m)
{
	int err = psc_evlist__reset(m->evlist);

	return err ? err : psc_evlist__enable(m->evlist);
}

int psc_meter__stop(struct psc_meter *m)
{
	return psc_evlist__disable(m->evlist);
}

int psc_meter__reset(struct psc_meter *m)
{
	return psc_evlist__reset(m->evlist);
}

int psc_meter__nr(const struct psc_meter *m)
{
	return m->specs->nr;
}

bool psc_meter__uses_rdpmc(const struct psc_meter *m)
{
	return m->rdpmc;
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdpmc(uint32_t counter)
{
	uint32_t low, high;

	__asm__ volatile("rdpmc" : "=a"(low), "=d"(high) : "c"(counter));
	return low | ((uint64_t)high) << 32;
}
#define HAVE_RDPMC 1
#endif

/* The self-monitoring protocol of perf_event_mmap_page: retry while the kernel updates it. */
static int read_rdpmc(const struct perf_event_mmap_page *pc, struct psc_counts *c)
{
#ifdef HAVE_RDPMC
	uint32_t seq, idx;
	uint64_t count;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		c->ena = pc->time_enabled;
		c->run = pc->time_running;
		idx = pc->index;
		count = pc->offset;
		if (pc->cap_user_rdpmc && idx) {
			uint64_t pmc = rdpmc(idx - 1);
			unsigned int width = pc->pmc_width;

			pmc <<= 64 - width;
			count += (uint64_t)((int64_t)pmc >> (64 - width));
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE) != seq);
	if (!idx)
		return -EAGAIN; /* not on the PMU right now: fall back to read(2) */
	c->val = count;
	/* Times are as of the last schedule-in; a running counter has run as long as enabled. */
	c->run = c->ena;
	return 0;
#else
	(void)pc;
	(void)c;
	return -EOPNOTSUPP;
#endif
}

int psc_meter__read(struct psc_meter *m, struct psc_meter_value *values, int n)
{
	bool via_syscall = !m->rdpmc;

	for (int i = 0; m->rdpmc && i < m->specs->nr; i++) {
		struct psc_evsel *evsel = m->by_spec[i];

		if (evsel->fds && read_rdpmc(m->pages[i], &evsel->counts[0]))
			via_syscall = true;
	}
	if (via_syscall) {
		int err = psc_evlist__read(m->evlist);

		if (err)
			return err;
	}
	for (int i = 0; i < m->specs->nr && i < n; i++) {
		struct psc_evsel *evsel = m->by_spec[i];
		struct psc_meter_value *v = &values[i];

		memset(v, 0, sizeof(*v));
		snprintf(v->name, sizeof(v->name), "%s", psc_evsel__name(evsel));
		v->supported = evsel->fds != NULL;
		v->open_errno = evsel->open_errno;
		if (!v->supported)
			continue;
		v->raw = evsel->counts[0].val;
		v->ena = evsel->counts[0].ena;
		v->run = evsel->counts[0].run;
		v->scaled = psc_counts__scaled(&evsel->counts[0]);
	}
	return m->specs->nr;
}

int psc_measure(void (*fn)(void *arg), void *arg, const char *events,
		struct psc_meter_value *values, int n, struct psc_parse_error *err)
{
	struct psc_meter *m = psc_meter__new(events, NULL, err);
	int ret;

	if (!m)
		return -errno;
	ret = psc_meter__start(m);
	if (!ret) {
		fn(arg);
		ret = psc_meter__stop(m);
	}
	if (!ret)
		ret = psc_meter__read(m, values, n);
	psc_meter__delete(m);
	return ret;
}
