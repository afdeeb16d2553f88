/* Meters: a group of counters on the calling thread, read with one read(2) or rdpmc; psc_measure().
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"
#include "selfmon.h"

struct psc_meter {
	struct psc_event_list *specs;
	struct psc_evlist *evlist;
	struct psc_evsel **by_spec; /* [spec idx] -> its evsel (always present) */
	struct perf_event_mmap_page **pages; /* [spec idx] self-monitoring page, NULL if none */
	bool rdpmc;
	/* What a reading needs, worked out once: the open leaders, and each name and its length. */
	struct psc_evsel **leaders;
	int nr_leaders;
	size_t *name_len;
};

/*
 * The calling thread as perf_event_open's pid 0: no gettid() and no /proc lookup, two system
 * calls that psc_measure would pay on every call. Meters are used on the thread that made them.
 */
static struct psc_threadmap *self_threadmap(void)
{
	struct psc_threadmap *map = calloc(1, sizeof(*map) + sizeof(pid_t));

	if (map) {
		map->refcnt = 1;
		map->nr = 1;
		map->tids[0] = 0;
	}
	return map;
}

void psc_meter__delete(struct psc_meter *m)
{
	if (!m)
		return;
	for (int i = 0; m->pages && i < m->specs->nr; i++)
		if (m->pages[i])
			munmap(m->pages[i], (size_t)sysconf(_SC_PAGESIZE));
	free(m->pages);
	free(m->leaders);
	free(m->name_len);
	free(m->by_spec);
	psc_evlist__delete(m->evlist);
	psc_event_list__delete(m->specs);
	free(m);
}

#if defined(__x86_64__) || defined(__i386__)
static inline uint64_t rdpmc(uint32_t counter)
{
	uint32_t low, high;

	__asm__ volatile("rdpmc" : "=a"(low), "=d"(high) : "c"(counter));
	return low | ((uint64_t)high) << 32;
}

static inline uint64_t rdtsc(void)
{
	uint32_t low, high;

	__asm__ volatile("rdtsc" : "=a"(low), "=d"(high));
	return low | ((uint64_t)high) << 32;
}
#define HAVE_RDPMC 1
#endif

/* One counter from its page without a system call (selfmon.h); -EAGAIN: use read(2). */
static int read_rdpmc(const struct perf_event_mmap_page *pc, struct psc_counts *c)
{
#ifdef HAVE_RDPMC
	return psc_selfmon_read(pc, c, rdpmc, rdtsc);
#else
	return -EOPNOTSUPP;
#endif
}

/*
 * rdpmc is usable when every open counter is on the CPU's PMU and the kernel lets user space
 * read it (cap_user_rdpmc): then a reading needs no system call at all.
 */
static void setup_rdpmc(struct psc_meter *m)
{
#ifdef HAVE_RDPMC
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
		if (type != PERF_TYPE_HARDWARE && type != PERF_TYPE_HW_CACHE &&
		    type != PERF_TYPE_RAW)
			return;
		p = mmap(NULL, page, PROT_READ, MAP_SHARED, evsel->fds[0], 0);
		if (p == MAP_FAILED)
			return;
		m->pages[i] = p;
		/* without cap_user_time the page's times cannot be brought up to date */
		if (!m->pages[i]->cap_user_rdpmc || !m->pages[i]->cap_user_time)
			return;
		usable++;
	}
	m->rdpmc = usable > 0;
#else
	(void)m; /* no user-space counter read on this architecture here: read(2) */
#endif
}

/*
 * Builds the evsels of m->specs into m->evlist: one group of every event (unless no_group). With
 * probe, each event is first opened alone and closed, and only those this machine can count are
 * grouped (a group is all-or-nothing on the PMU: an event it lacks must not take the others down
 * with it); the rest keep their errno and are reported unsupported.
 */
static int meter_build(struct psc_meter *m, const struct psc_meter_opts *opts, bool probe)
{
	struct psc_evsel *leader = NULL;

	m->evlist = psc_evlist__new();
	if (!m->evlist)
		return -ENOMEM;
	for (int i = 0; i < m->specs->nr; i++) {
		struct psc_evsel *evsel = psc_evsel__new_spec(&m->specs->specs[i]);
		int ret;

		if (!evsel || psc_evlist__add(m->evlist, evsel)) {
			psc_evsel__delete(evsel);
			return -ENOMEM;
		}
		m->by_spec[i] = evsel;
		if (OPTS_GET(opts, exclude_kernel, false))
			evsel->attr.exclude_kernel = evsel->attr.exclude_hv = 1;
		if (probe)
			evsel->open_errno = -psc_attr__probe(&evsel->attr);
		if (evsel->open_errno || OPTS_GET(opts, no_group, false))
			continue;
		if (!leader)
			leader = evsel;
		else if ((ret = psc_evsel__set_leader(evsel, leader)))
			return ret;
	}
	return 0;
}

/* Opens what meter_build kept; with stop_at_first, any failure closes all and is returned. */
static int meter_open(struct psc_meter *m, struct psc_cpumap *cpus, struct psc_threadmap *threads,
		      bool stop_at_first)
{
	psc_evlist__set_maps(m->evlist, cpus, threads);
	for (int i = 0; i < m->specs->nr; i++) {
		struct psc_evsel *evsel = m->by_spec[i];
		int ret;

		if (evsel->open_errno)
			continue; /* stays unsupported; reported through its value */
		ret = psc_evsel__open(evsel, cpus, threads, NULL);
		if (ret && stop_at_first) {
			psc_evlist__close(m->evlist);
			return ret;
		}
		if (ret)
			return ret;
	}
	return 0;
}

static int meter_index(struct psc_meter *m)
{
	m->leaders = calloc(m->specs->nr, sizeof(*m->leaders));
	m->name_len = calloc(m->specs->nr, sizeof(*m->name_len));
	if (!m->leaders || !m->name_len)
		return -ENOMEM;
	for (int i = 0; i < m->specs->nr; i++) {
		struct psc_evsel *evsel = m->by_spec[i];

		if (evsel->fds && evsel->leader == evsel)
			m->leaders[m->nr_leaders++] = evsel;
		m->name_len[i] = strnlen(psc_evsel__name(evsel),
					 sizeof(((struct psc_meter_value *)0)->name) - 1);
	}
	return 0;
}

struct psc_meter *psc_meter__new(const char *events, const struct psc_meter_opts *opts,
				 struct psc_parse_error *err)
{
	struct psc_parse_error local_err;
	struct psc_cpumap *cpus = NULL;
	struct psc_threadmap *threads = NULL;
	struct psc_meter *m;
	int ret;

	if (!OPTS_VALID(opts, psc_meter_opts))
		return psc_errno_null(EINVAL);
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	ret = psc_parse_events(events, NULL, &m->specs, err ? err : &local_err);
	if (ret)
		goto fail;
	m->by_spec = calloc(m->specs->nr, sizeof(*m->by_spec));
	cpus = psc_cpumap__new_any();
	threads = self_threadmap();
	if (!m->by_spec || !cpus || !threads) {
		ret = -ENOMEM;
		goto fail;
	}
	/*
	 * Fast path: open the whole group straight away; on a machine that has every event this
	 * is all it takes. Only when something fails is each event probed on its own, which costs
	 * an extra open and close per event (and, on a thread with no other counter, the creation
	 * and teardown of its perf context each time).
	 */
	ret = meter_build(m, opts, false);
	if (!ret && meter_open(m, cpus, threads, true)) {
		psc_evlist__delete(m->evlist);
		m->evlist = NULL;
		memset(m->by_spec, 0, m->specs->nr * sizeof(*m->by_spec));
		ret = meter_build(m, opts, true);
		if (!ret)
			ret = meter_open(m, cpus, threads, false);
	}
	if (ret)
		goto fail;
	if (psc_evlist__nr_open(m->evlist) == 0) {
		ret = -m->by_spec[0]->open_errno;
		if (err)
			psc_strerror_open(ret, m->specs->specs[0].name, err->msg, sizeof(err->msg));
		goto fail;
	}
	ret = meter_index(m);
	if (ret)
		goto fail;
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

int psc_meter__read(struct psc_meter *m, struct psc_meter_value *values, int n)
{
	bool via_syscall;

	if (!m || n < 0 || (n > 0 && !values))
		return -EINVAL;
	via_syscall = !m->rdpmc;

	/* Any counter that cannot be read from user space right now sends them all to read(2). */
	for (int i = 0; !via_syscall && i < m->specs->nr; i++) {
		struct psc_evsel *evsel = m->by_spec[i];

		if (evsel->fds && read_rdpmc(m->pages[i], &evsel->counts[0]))
			via_syscall = true;
	}
	/* One read(2) per group (a meter has one unless no_group or events were missing). */
	for (int i = 0; via_syscall && i < m->nr_leaders; i++) {
		int err = psc_evsel__read_group(m->leaders[i], 0, 0);

		if (err)
			return err;
	}
	for (int i = 0; i < m->specs->nr && i < n; i++) {
		struct psc_evsel *evsel = m->by_spec[i];
		struct psc_meter_value *v = &values[i];
		size_t len = m->name_len[i];

		/* Field by field, not memset + snprintf: this runs on every reading. */
		memcpy(v->name, psc_evsel__name(evsel), len);
		v->name[len] = '\0';
		v->supported = evsel->fds != NULL;
		v->open_errno = evsel->open_errno;
		if (!v->supported) {
			v->raw = v->ena = v->run = 0;
			v->scaled = 0;
			continue;
		}
		v->raw = evsel->counts[0].val;
		v->ena = evsel->counts[0].ena;
		v->run = evsel->counts[0].run;
		v->scaled = psc_counts__scaled(&evsel->counts[0]);
	}
	return m->specs->nr;
}

/* psc_measure's one-shot path handles up to this many events with everything on the stack. */
#define MEASURE_FAST_MAX 16

/*
 * The one-shot path: the parsed events opened as one group straight on the calling thread, with
 * no evlist, evsel or map objects. A measured call then costs the same system calls as doing it
 * by hand (open, enable, disable, one read, close) and a handful of allocations for the parse;
 * the general meter costs a dozen more allocations, which showed as ~15% over the bare calls.
 * Returns -EAGAIN, having called nothing, when the events need the general path: one that this
 * machine cannot open (to be probed and reported unsupported), a filter, or too many events.
 */
static int measure_fast(const struct psc_event_list *specs, void (*fn)(void *arg), void *arg,
			struct psc_meter_value *values, int n)
{
	uint64_t buf[3 + 2 * MEASURE_FAST_MAX];
	int fds[MEASURE_FAST_MAX], nr = specs->nr, opened = 0, ret = 0;
	bool group = nr > 1;
	ssize_t got;

	if (nr > MEASURE_FAST_MAX)
		return -EAGAIN;
	for (int i = 0; i < nr; i++) {
		struct perf_event_attr attr = specs->specs[i].attr;

		if (specs->specs[i].filter) {
			ret = -EAGAIN;
			goto out;
		}
		attr.size = sizeof(attr);
		attr.read_format |= PERF_FORMAT_TOTAL_TIME_ENABLED |
				    PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID |
				    (group ? PERF_FORMAT_GROUP : 0);
		attr.disabled = i == 0; /* members follow the leader */
		fds[i] = psc_sys_perf_event_open(&attr, 0, -1, i ? fds[0] : -1,
						 PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0) {
			ret = -EAGAIN;
			goto out;
		}
		opened++;
	}
	if (ioctl(fds[0], PERF_EVENT_IOC_ENABLE, 0) < 0) {
		ret = -errno;
		goto out;
	}
	fn(arg);
	if (ioctl(fds[0], PERF_EVENT_IOC_DISABLE, 0) < 0) {
		ret = -errno;
		goto out;
	}
	got = read(fds[0], buf, sizeof(uint64_t) * (group ? 3 + 2 * (size_t)nr : 4));
	if (got < 0) {
		ret = -errno;
		goto out;
	}
	if ((size_t)got != sizeof(uint64_t) * (group ? 3 + 2 * (size_t)nr : 4) ||
	    (group && buf[0] != (uint64_t)nr)) {
		ret = -EIO;
		goto out;
	}
	for (int i = 0; i < nr && i < n; i++) {
		const struct psc_event_spec *spec = &specs->specs[i];
		struct psc_meter_value *v = &values[i];
		/* both layouts carry time enabled and running in words 1 and 2 */
		struct psc_counts c = { group ? buf[3 + 2 * i] : buf[0], buf[1], buf[2], 0 };
		const char *name = spec->alias ? spec->alias : spec->name;
		size_t len = strnlen(name, sizeof(v->name) - 1);

		memcpy(v->name, name, len);
		v->name[len] = '\0';
		v->supported = true;
		v->open_errno = 0;
		v->raw = c.val;
		v->ena = c.ena;
		v->run = c.run;
		v->scaled = psc_counts__scaled(&c);
	}
	ret = nr;
out:
	/* members before their leader */
	while (opened > 0)
		close(fds[--opened]);
	return ret;
}

int psc_measure(void (*fn)(void *arg), void *arg, const char *events,
		struct psc_meter_value *values, int n, struct psc_parse_error *err)
{
	struct psc_parse_error local_err;
	struct psc_event_list *specs = NULL;
	struct psc_meter *m;
	int ret;

	/* a NULL fn would crash between enable and disable, with counters open */
	if (!fn || n < 0 || (n > 0 && !values))
		return -EINVAL;
	ret = psc_parse_events(events, NULL, &specs, err ? err : &local_err);
	if (ret)
		return ret;
	ret = measure_fast(specs, fn, arg, values, n);
	psc_event_list__delete(specs);
	if (ret != -EAGAIN)
		return ret;

	/* The general path: probes each event and reports those this machine lacks. */
	m = psc_meter__new(events, NULL, err);
	if (!m)
		return -errno;
	/* Fresh counters start at zero: enable only, no reset. */
	ret = psc_evlist__enable(m->evlist);
	if (!ret) {
		fn(arg);
		ret = psc_meter__stop(m);
	}
	if (!ret)
		ret = psc_meter__read(m, values, n);
	psc_meter__delete(m);
	return ret;
}
