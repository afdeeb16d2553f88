/* cpuprof: the always-on sampler: cpu-clock on every CPU, stacks counted into 1 s buckets. */
#include "cpuprof.h"

#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <linux/perf_event.h>

#include <perfscope/cpumap.h>
#include <perfscope/evlist.h>
#include <perfscope/evsel.h>
#include <perfscope/record.h>
#include <perfscope/ring.h>
#include <perfscope/threadmap.h>

#include "bpf_stacks.h"
#include "callchain.h"
#include "clock.h"
#include "exporter_log.h"

/*
 * Ring pages per CPU: at 19 Hz a stack sample is about 1 KiB, so 128 KiB hold several seconds
 * and the thread reads them every POLL_MS. With BPF they carry only the side-band records.
 */
#define RING_PAGES 32
#define POLL_MS 200
#define TRIM_EVERY_S 10 /* the BPF stack-trace map let go of this often */

static int64_t now_sec(void)
{
	return (int64_t)(mono_ns() / 1000000000ull);
}

static struct cpuprof_bucket *bucket_of(struct cpuprof *cp, int64_t sec)
{
	return &cp->buckets[sec % cp->nr_buckets];
}

/* One stack into the second being counted; idle (pid 0) is not a process's CPU time. */
static void count(struct cpuprof *cp, uint32_t pid, uint32_t tid, const char *comm,
		  const uint64_t *ips, uint32_t nr, uint64_t n, uint64_t period)
{
	struct cpuprof_bucket *b = bucket_of(cp, cp->cur);
	size_t before = b->stacks.nr;

	if (!pid)
		return;
	if (cp->st.stacks >= cp->cfg.max_stacks ||
	    !stack_table__count(&b->stacks, pid, tid, comm, ips, nr, n, period)) {
		cp->st.dropped_full += n;
		return;
	}
	cp->st.stacks += b->stacks.nr - before;
	cp->st.samples += n;
	b->samples += n;
}

static int pull_one(void *ctx, const struct bpf_stacks_ent *e)
{
	struct cpuprof *cp = ctx;
	uint64_t ips[2 * 128 + 2];
	int nr = bpf_stacks_ent__callchain(e, ips, (int)(sizeof(ips) / sizeof(ips[0])));

	if (e->pid)
		callchain__see(cp->cc, (pid_t)e->pid);
	count(cp, e->pid, 0, *e->comm ? e->comm : "[unknown]", ips, (uint32_t)nr, e->count,
	      e->period);
	return 0;
}

/* What the kernel counted since the last pull, into the second ending now. */
static void pull_bpf(struct cpuprof *cp)
{
	struct bpf_stacks_drops d;
	uint64_t drops;

	bpf_stacks__for_each(cp->bs, true, pull_one, cp);
	bpf_stacks__drops(cp->bs, &d);
	drops = d.kcollisions + d.ucollisions + d.kfull + d.ufull + d.keys_full;
	cp->st.bpf_dropped += drops - cp->bpf_seen_drops;
	cp->bpf_seen_drops = drops;
}

/* The second in progress is now: the buckets in between start empty, requests done are woken. */
static void rotate(struct cpuprof *cp, int64_t now)
{
	struct cpuprof_req **pr = &cp->waiting, *done = NULL;

	if (now <= cp->cur)
		return;
	if (cp->bs)
		pull_bpf(cp);
	for (int64_t s = now - cp->cur > cp->nr_buckets ? now - cp->nr_buckets + 1 : cp->cur + 1;
	     s <= now; s++) {
		struct cpuprof_bucket *b = bucket_of(cp, s);

		if (b->sec >= 0) {
			cp->st.evicted += b->samples;
			cp->st.stacks -= b->stacks.nr;
		}
		stack_table__clear(&b->stacks);
		b->samples = 0;
		b->sec = s;
	}
	cp->cur = now;
	callchain__round_end(cp->cc);
	/* maps of processes that exited are kept while their samples may still be asked for */
	if (now - cp->exits_at > cp->nr_buckets) {
		callchain__exits_done(cp->cc);
		cpuprof_cgroup_sweep(cp);
		cp->exits_at = now;
	}
	while (*pr) {
		struct cpuprof_req *r = *pr;

		if (r->end <= now) {
			*pr = r->next;
			r->ready = true;
			r->next = done;
			done = r;
		} else {
			pr = &r->next;
		}
	}
	pthread_mutex_unlock(&cp->lock);
	/* woken without the lock: the server's resume may wait for its own */
	while (done) {
		struct cpuprof_req *r = done;

		done = r->next;
		r->wake(r->arg);
	}
	pthread_mutex_lock(&cp->lock);
}

static void handle(struct cpuprof *cp, const struct perf_event_attr *attr,
		   const struct perf_event_header *hdr)
{
	struct psc_record rec;

	if (psc_record__parse(hdr, attr, &rec))
		return;
	if (rec.type == PERF_RECORD_SAMPLE) {
		const struct psc_sample *s = &rec.sample;
		const struct cpuprof_cg *cg;
		uint64_t one[2];
		const uint64_t *ips = s->callchain.ips;
		uint32_t nr = (uint32_t)s->callchain.nr;

		if (!s->pid)
			return;
		callchain__see(cp->cc, (pid_t)s->pid);
		if (!nr) {
			one[0] =
				(s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL
					? (uint64_t)PERF_CONTEXT_KERNEL
					: (uint64_t)PERF_CONTEXT_USER;
			one[1] = s->ip;
			ips = one;
			nr = 2;
		}
		cg = cpuprof_cgroup(cp, s->pid);
		count(cp, s->pid, 0, cg && cg->comm[0] ? cg->comm : "[unknown]", ips,
		      nr > 4096 ? 4096 : nr, 1, s->period);
		return;
	}
	callchain__record(cp->cc, &rec);
	/* a new program: its name and cgroup are read again */
	if ((rec.type == PERF_RECORD_COMM && rec.comm.exec) || rec.type == PERF_RECORD_EXIT)
		cpuprof_cgroup_forget(cp,
				      rec.type == PERF_RECORD_COMM ? rec.comm.pid : rec.fork.pid);
}

static void drain(struct cpuprof *cp)
{
	const struct perf_event_attr *attr = psc_evsel__attr(psc_evlist__at(cp->evlist, 0));

	for (int i = 0; i < psc_evlist__nr_rings(cp->evlist); i++) {
		struct psc_ring *ring = psc_evlist__ring(cp->evlist, i);
		const struct perf_event_header *hdr;

		if (psc_ring__read_init(ring))
			continue;
		while ((hdr = psc_ring__next(ring))) {
			handle(cp, attr, hdr);
			psc_ring__consume(ring);
		}
		psc_ring__read_done(ring);
	}
	cp->st.lost = psc_evlist__lost(cp->evlist, NULL);
}

static void *run(void *arg)
{
	struct cpuprof *cp = arg;
	struct pollfd pfd = { .fd = cp->wake_fd, .events = POLLIN };

	pthread_mutex_lock(&cp->lock);
	while (!cp->stop) {
		int64_t now;

		pthread_mutex_unlock(&cp->lock);
		poll(&pfd, 1, POLL_MS);
		pthread_mutex_lock(&cp->lock);
		if (cp->stop)
			break;
		/* what came before the second turned is counted in the second it came in */
		drain(cp);
		now = now_sec();
		if (cp->bs && now - cp->trimmed_at >= TRIM_EVERY_S && now > cp->cur) {
			pull_bpf(cp);
			bpf_stacks__trim(cp->bs);
			cp->trimmed_at = now;
		}
		rotate(cp, now);
	}
	pthread_mutex_unlock(&cp->lock);
	return NULL;
}

/* cpu-clock on every CPU with its callchain, and the side-band that names user frames. */
static int open_events(struct cpuprof *cp, char *err, size_t errlen)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = cp->cfg.hz,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.sample_id_all = 1,
		.disabled = 1,
		.watermark = 1,
		.wakeup_watermark = RING_PAGES * 4096 / 4,
		.sample_max_stack = 127,
	};
	struct psc_mmap_opts mo = { .sz = sizeof(mo), .pages = RING_PAGES };
	struct psc_threadmap *any = psc_threadmap__new_any();
	struct psc_evsel *ev = psc_evsel__new(&a, "cpu-clock");
	int ret;

	cp->evlist = psc_evlist__new();
	if (!any || !ev || !cp->evlist) {
		psc_threadmap__put(any);
		psc_evsel__delete(ev);
		snprintf(err, errlen, "--collector.profile: out of memory");
		return -ENOMEM;
	}
	psc_evlist__add(cp->evlist, ev);
	ret = psc_evlist__set_maps(cp->evlist, cp->cfg.cpus, any);
	psc_threadmap__put(any);
	if (!ret)
		ret = psc_evlist__open(cp->evlist, NULL);
	if (ret) {
		char why[512];

		snprintf(err, errlen, "--collector.profile: cannot open cpu-clock sampling: %s",
			 psc_strerror_open(ret, "cpu-clock", why, sizeof(why)));
		return ret;
	}
	ret = psc_evlist__mmap(cp->evlist, &mo);
	if (ret)
		snprintf(err, errlen, "--collector.profile: cannot map the sampling rings: %s",
			 strerror(-ret));
	return ret;
}

/* The BPF stack-counting path when it loads here; else the ring path, said in mode. */
static void try_bpf(struct cpuprof *cp)
{
	struct bpf_stacks_opts o = {
		.kernel = true, .user = true, .max_stacks = 16384, .max_keys = 16384
	};
	char why[512];

	snprintf(cp->mode, sizeof(cp->mode), "ring");
	if (cp->cfg.no_bpf)
		return;
	cp->bs = bpf_stacks__new(&o, why, sizeof(why));
	if (cp->bs && bpf_stacks__attach(cp->bs, psc_evlist__at(cp->evlist, 0), why, sizeof(why))) {
		bpf_stacks__delete(cp->bs);
		cp->bs = NULL;
	}
	if (cp->bs)
		snprintf(cp->mode, sizeof(cp->mode), "bpf");
}

struct cpuprof *cpuprof_new(const struct cpuprof_config *cfg, char *err, size_t errlen)
{
	struct cpuprof *cp = calloc(1, sizeof(*cp));
	int ret;

	if (!cp) {
		snprintf(err, errlen, "--collector.profile: out of memory");
		return NULL;
	}
	cp->cfg = *cfg;
	psc_cpumap__get(cfg->cpus);
	pthread_mutex_init(&cp->lock, NULL);
	cp->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	cp->nr_buckets = (int)cfg->max_seconds + 2;
	cp->buckets = calloc((size_t)cp->nr_buckets, sizeof(*cp->buckets));
	cp->cc = callchain__new(NULL);
	if (cp->wake_fd < 0 || !cp->buckets || !cp->cc ||
	    keymap__init(&cp->cgroups, sizeof(void *), 256)) {
		snprintf(err, errlen, "--collector.profile: out of memory");
		cpuprof_delete(cp);
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < cp->nr_buckets; i++) {
		cp->buckets[i].sec = -1;
		if (stack_table__init(&cp->buckets[i].stacks, false)) {
			snprintf(err, errlen, "--collector.profile: out of memory");
			cpuprof_delete(cp);
			errno = ENOMEM;
			return NULL;
		}
	}
	ret = open_events(cp, err, errlen);
	if (ret) {
		cpuprof_delete(cp);
		errno = -ret;
		return NULL;
	}
	try_bpf(cp);
	callchain__hold_exits(cp->cc, true);
	callchain__prepare(cp->cc);
	return cp;
}

int cpuprof_start(struct cpuprof *cp)
{
	int ret;

	cp->cur = now_sec();
	cp->wall_off_ns = realtime_ns() - (int64_t)mono_ns();
	cp->exits_at = cp->trimmed_at = cp->cg_swept_at = cp->cur;
	bucket_of(cp, cp->cur)->sec = cp->cur;
	/* what loading the BPF program (the kernel's BTF) and kallsyms freed, given back */
	malloc_trim(0);
	ret = psc_evlist__enable(cp->evlist);
	if (ret)
		return ret;
	ret = -pthread_create(&cp->thread, NULL, run, cp);
	cp->running = !ret;
	return ret;
}

void cpuprof_cancel_all(struct cpuprof *cp)
{
	struct cpuprof_req *r;

	if (!cp)
		return;
	pthread_mutex_lock(&cp->lock);
	r = cp->waiting;
	cp->waiting = NULL;
	for (struct cpuprof_req *x = r; x; x = x->next)
		x->cancelled = x->ready = true;
	pthread_mutex_unlock(&cp->lock);
	while (r) {
		struct cpuprof_req *n = r->next;

		r->wake(r->arg);
		r = n;
	}
}

void cpuprof_delete(struct cpuprof *cp)
{
	if (!cp)
		return;
	cpuprof_cancel_all(cp);
	if (cp->running) {
		uint64_t one = 1;

		pthread_mutex_lock(&cp->lock);
		cp->stop = true;
		pthread_mutex_unlock(&cp->lock);
		/* failing, the poll times out anyway */
		if (write(cp->wake_fd, &one, sizeof(one)) < 0)
			xlog(XLOG_DEBUG, "waking the profile sampler: %s", strerror(errno));
		pthread_join(cp->thread, NULL);
	}
	bpf_stacks__delete(cp->bs);
	psc_evlist__delete(cp->evlist);
	for (int i = 0; cp->buckets && i < cp->nr_buckets; i++)
		stack_table__exit(&cp->buckets[i].stacks);
	free(cp->buckets);
	callchain__delete(cp->cc);
	cpuprof_cgroup_exit(cp);
	if (cp->wake_fd >= 0)
		close(cp->wake_fd);
	psc_cpumap__put(cp->cfg.cpus);
	pthread_mutex_destroy(&cp->lock);
	free(cp);
}

struct cpuprof_req *cpuprof_req_new(struct cpuprof *cp, long seconds, void (*wake)(void *),
				    void *arg, char *why, size_t whylen)
{
	struct cpuprof_req *r;

	if (seconds < 1 || seconds > (long)cp->cfg.max_seconds) {
		snprintf(why, whylen,
			 "profile duration %ld s exceeds the exporter's maximum of %u s "
			 "(--collector.profile.max-seconds)\n",
			 seconds, cp->cfg.max_seconds);
		pthread_mutex_lock(&cp->lock);
		cp->st.refused++;
		pthread_mutex_unlock(&cp->lock);
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		snprintf(why, whylen, "out of memory\n");
		return NULL;
	}
	r->wake = wake;
	r->arg = arg;
	pthread_mutex_lock(&cp->lock);
	r->first = cp->cur;
	r->end = cp->cur + seconds;
	r->next = cp->waiting;
	cp->waiting = r;
	cp->st.requests++;
	pthread_mutex_unlock(&cp->lock);
	return r;
}

void cpuprof_refused(struct cpuprof *cp)
{
	pthread_mutex_lock(&cp->lock);
	cp->st.refused++;
	pthread_mutex_unlock(&cp->lock);
}

void cpuprof_req_free(struct cpuprof *cp, struct cpuprof_req *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&cp->lock);
	for (struct cpuprof_req **pr = &cp->waiting; *pr; pr = &(*pr)->next) {
		if (*pr == r) {
			*pr = r->next;
			break;
		}
	}
	pthread_mutex_unlock(&cp->lock);
	free(r);
}
