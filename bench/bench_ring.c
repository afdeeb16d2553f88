/* Benchmark consumer: one tracepoint system wide through a bare mmap loop, the library ring
 * path or the session loop, no formatting. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include <perfscope/perfscope.h>
#include <perfscope/record.h>
#include <perfscope/ring.h>
#include <perfscope/tracefs.h>

#include "session.h"

/*
 * usage: bench_ring [-m PAGES] [-o] [-f FILTER] bare|ring|session SYS:NAME
 *
 * Traces SYS:NAME on every online CPU until SIGINT/SIGTERM, drains the rings, then prints
 * "MODE events N lost L cpu_s S user_s U" (S: this process's user + system CPU seconds, U: user
 * only; the system part is mostly the wakeups, which every mode pays alike).
 *   bare     perf_event_open + mmap + a hand-written head/tail loop counting records: the floor
 *            any ring consumer pays (no library, no decoding)
 *   ring     libperfscope: psc_evlist, psc_ring read_init/next/consume/read_done, the evsel of
 *            each record by id, psc_record__parse_sample (typed decoding), no formatting
 *   session  common/loop/session.c (what perfscope trace runs) with a hook that only counts;
 *            -o adds cross-CPU time order (the k-way merge of --order)
 * All three sample IDENTIFIER|TID|TIME|CPU|RAW with CLOCK_MONOTONIC time and wake up every
 * quarter buffer, as perfscope trace does, so they differ only in the reading. -f applies a
 * kernel filter (comm == "NAME": only the benchmark's workload on a machine shared with others).
 */

#define MAX_CPUS 1024

static volatile sig_atomic_t stop;
static const char *filter;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* This process's CPU seconds: user + system, or user only. */
static double cpu_seconds(bool user_only)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	if (user_only)
		return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int tracepoint_id(const char *event)
{
	const char *dir = psc_tracefs__mount(), *colon = strchr(event, ':');
	char path[512];
	int fd, n;
	char buf[32];

	if (!dir || !colon)
		return -1;
	snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", dir, (int)(colon - event), event,
		 colon + 1);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	return atoi(buf);
}

static void attr_init(struct perf_event_attr *a, int id, size_t pages)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_TRACEPOINT;
	a->config = (uint64_t)id;
	a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_RAW;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(pages * (size_t)sysconf(_SC_PAGESIZE) / 4);
	a->disabled = 1;
}

static void watch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* ---- bare: the floor ---- */

struct bare_ring {
	struct perf_event_mmap_page *meta;
	char *data;
	uint64_t mask;
	int fd;
};

static void bare_drain(struct bare_ring *r, uint64_t *events, uint64_t *lost)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;

	while (tail < head) {
		/* records are 8-byte aligned and the data size a power of two: the header never
		 * wraps */
		const struct perf_event_header *h = (const void *)(r->data + (tail & r->mask));

		if (h->type == PERF_RECORD_SAMPLE) {
			(*events)++;
		} else if (h->type == PERF_RECORD_LOST) {
			uint64_t n;
			uint64_t off = (tail + sizeof(*h) + 8) & r->mask;

			memcpy(&n, r->data + off, sizeof(n)); /* { id, lost } after the header */
			*lost += n;
		}
		if (h->size < sizeof(*h))
			break;
		tail += h->size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static int run_bare(int id, size_t pages, uint64_t *events, uint64_t *lost)
{
	static struct bare_ring rings[MAX_CPUS];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	size_t psz = (size_t)sysconf(_SC_PAGESIZE), len = (pages + 1) * psz;
	struct perf_event_attr a;
	struct epoll_event ev, evs[64];
	int ep = epoll_create1(EPOLL_CLOEXEC), i, n;

	if (ncpu > MAX_CPUS || ep < 0)
		return -1;
	attr_init(&a, id, pages);
	for (i = 0; i < ncpu; i++) {
		rings[i].fd =
			(int)syscall(SYS_perf_event_open, &a, -1, i, -1, PERF_FLAG_FD_CLOEXEC);
		if (rings[i].fd < 0) {
			perror("bench_ring: perf_event_open");
			return -1;
		}
		if (filter && ioctl(rings[i].fd, PERF_EVENT_IOC_SET_FILTER, filter)) {
			perror("bench_ring: filter");
			return -1;
		}
		rings[i].meta = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, rings[i].fd, 0);
		if (rings[i].meta == MAP_FAILED) {
			perror("bench_ring: mmap");
			return -1;
		}
		rings[i].data = (char *)rings[i].meta + psz;
		rings[i].mask = pages * psz - 1;
		ev.events = EPOLLIN;
		ev.data.ptr = &rings[i];
		epoll_ctl(ep, EPOLL_CTL_ADD, rings[i].fd, &ev);
	}
	for (i = 0; i < ncpu; i++)
		ioctl(rings[i].fd, PERF_EVENT_IOC_ENABLE, 0);
	while (!stop) {
		n = epoll_wait(ep, evs, 64, 100);
		for (i = 0; i < n; i++)
			bare_drain(evs[i].data.ptr, events, lost);
	}
	for (i = 0; i < ncpu; i++) {
		ioctl(rings[i].fd, PERF_EVENT_IOC_DISABLE, 0);
		bare_drain(&rings[i], events, lost);
		munmap(rings[i].meta, len);
		close(rings[i].fd);
	}
	close(ep);
	return 0;
}

/* ---- ring: the library path ---- */

static struct psc_evlist *lib_evlist(int id, size_t pages, const char *name, bool session)
{
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	PSC_OPTS(psc_evlist_open_opts, oo, .inherit = false);
	PSC_OPTS(psc_mmap_opts, mo, .pages = pages);
	struct perf_event_attr a;
	int err;

	attr_init(&a, id, pages);
	if (!evlist || !cpus || !threads || psc_evlist__add(evlist, psc_evsel__new(&a, name)))
		goto fail;
	err = session ? session_config_evlist(evlist, pages, 0)
		      : psc_evlist__config_sampling(evlist);
	if (err || psc_evlist__set_maps(evlist, cpus, threads) || psc_evlist__open(evlist, &oo) ||
	    (filter && psc_evsel__apply_filter(psc_evlist__at(evlist, 0), filter)) ||
	    psc_evlist__mmap(evlist, &mo))
		goto fail;
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return evlist;
fail:
	fprintf(stderr, "bench_ring: cannot open and map %s\n", name);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	psc_evlist__delete(evlist);
	return NULL;
}

static void ring_drain(struct psc_evlist *evlist, struct psc_ring *r, uint64_t *events)
{
	const struct perf_event_header *h;
	struct psc_sample s;

	if (psc_ring__read_init(r))
		return;
	while ((h = psc_ring__next(r))) {
		if (h->type == PERF_RECORD_SAMPLE) {
			struct psc_evsel *evsel = psc_evlist__evsel_for_record(evlist, h);

			if (evsel && !psc_record__parse_sample(h, psc_evsel__attr(evsel), &s))
				(*events)++;
		}
		psc_ring__consume(r);
	}
	psc_ring__read_done(r);
}

static int run_ring(int id, size_t pages, const char *name, uint64_t *events, uint64_t *lost)
{
	struct psc_evlist *evlist = lib_evlist(id, pages, name, false);
	struct epoll_event ev, evs[64];
	int ep = epoll_create1(EPOLL_CLOEXEC), i, n, nr;

	if (!evlist || ep < 0)
		return -1;
	nr = psc_evlist__nr_rings(evlist);
	for (i = 0; i < nr; i++) {
		ev.events = EPOLLIN;
		ev.data.ptr = psc_evlist__ring(evlist, i);
		epoll_ctl(ep, EPOLL_CTL_ADD, psc_ring__fd(ev.data.ptr), &ev);
	}
	psc_evlist__enable(evlist);
	while (!stop) {
		n = epoll_wait(ep, evs, 64, 100);
		for (i = 0; i < n; i++)
			ring_drain(evlist, evs[i].data.ptr, events);
	}
	psc_evlist__disable(evlist);
	for (i = 0; i < nr; i++)
		ring_drain(evlist, psc_evlist__ring(evlist, i), events);
	*lost = psc_evlist__lost(evlist, NULL);
	close(ep);
	psc_evlist__delete(evlist);
	return 0;
}

/* ---- session: what perfscope trace runs, minus formatting ---- */

static int count_sample(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	(void)evsel;
	(void)cpu;
	(void)rec;
	(*(uint64_t *)ctx)++;
	return 0;
}

static int run_session(int id, size_t pages, const char *name, bool order, uint64_t *events,
		       uint64_t *lost)
{
	struct psc_evlist *evlist = lib_evlist(id, pages, name, true);
	PSC_OPTS(session_opts, so, .order = order, .quiet_stats = true);
	const struct session_hooks hooks = { .ctx = events, .sample = count_sample };
	struct session_stats st;
	struct session *s;
	int err;

	if (!evlist)
		return -1;
	s = session__new(evlist, &so, &hooks);
	if (!s) {
		psc_evlist__delete(evlist);
		return -1;
	}
	err = session__run(s);
	session__stats(s, &st);
	*lost = st.lost;
	session__delete(s);
	psc_evlist__delete(evlist);
	return err ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint64_t events = 0, lost = 0;
	size_t pages = 128;
	bool order = false;
	const char *mode, *name;
	int opt, id, err;

	while ((opt = getopt(argc, argv, "m:of:")) != -1) {
		switch (opt) {
		case 'f':
			filter = optarg;
			break;
		case 'm':
			pages = strtoul(optarg, NULL, 10);
			break;
		case 'o':
			order = true;
			break;
		default:
			goto usage;
		}
	}
	if (argc - optind != 2 || !pages || (pages & (pages - 1)))
		goto usage;
	mode = argv[optind];
	name = argv[optind + 1];
	id = tracepoint_id(name);
	if (id < 0) {
		fprintf(stderr, "bench_ring: no tracepoint %s (tracefs mounted? root?)\n", name);
		return 1;
	}
	watch_signals();
	if (!strcmp(mode, "bare"))
		err = run_bare(id, pages, &events, &lost);
	else if (!strcmp(mode, "ring"))
		err = run_ring(id, pages, name, &events, &lost);
	else if (!strcmp(mode, "session"))
		err = run_session(id, pages, name, order, &events, &lost);
	else
		goto usage;
	if (err)
		return 1;
	printf("%s%s events %llu lost %llu cpu_s %.3f user_s %.3f\n", mode, order ? "+order" : "",
	       (unsigned long long)events, (unsigned long long)lost, cpu_seconds(false),
	       cpu_seconds(true));
	return 0;
usage:
	fprintf(stderr,
		"usage: bench_ring [-m PAGES] [-o] [-f FILTER] bare|ring|session SYS:NAME\n");
	return 2;
}
