/* evsel: one perf_event_attr opened over cpus x threads; group reads and multiplexing scaling. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

int psc_sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

/*
 * The maps are read directly here rather than through psc_cpumap__nr()/psc_threadmap__nr():
 * those are exported, so calls to them from inside the shared library go through the PLT, and
 * reads and ioctls are the hot path of every counting tool.
 */
static inline int nr_slots(const struct psc_evsel *evsel)
{
	return evsel->cpus->nr * evsel->threads->nr;
}

static inline int slot_of(const struct psc_evsel *evsel, int cpu_idx, int thread_idx)
{
	return cpu_idx * evsel->threads->nr + thread_idx;
}

#define READ_FORMAT_COUNTING \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)

int psc_attr__probe(const struct perf_event_attr *attr)
{
	struct perf_event_attr a = *attr;
	int fd;

	a.size = sizeof(a);
	a.disabled = 1;
	fd = psc_sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EACCES && !a.exclude_kernel) {
		/* Unprivileged: the event may still exist for user space only. */
		a.exclude_kernel = a.exclude_hv = 1;
		fd = psc_sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

double psc_counts__scaled(const struct psc_counts *c)
{
	if (!c->run)
		return 0.0;
	if (c->run >= c->ena)
		return (double)c->val;
	return (double)c->val * (double)c->ena / (double)c->run;
}

double psc_counts__running_pct(const struct psc_counts *c)
{
	if (!c->ena)
		return c->run ? 100.0 : 0.0;
	return c->run >= c->ena ? 100.0 : 100.0 * (double)c->run / (double)c->ena;
}

struct psc_evsel *psc_evsel__new(const struct perf_event_attr *attr, const char *name)
{
	struct psc_evsel *evsel = calloc(1, sizeof(*evsel));

	if (!evsel)
		return NULL;
	evsel->attr = *attr;
	evsel->attr.size = sizeof(evsel->attr);
	evsel->attr.read_format |= READ_FORMAT_COUNTING;
	/* Opened stopped, started with psc_evsel__enable: counts cover exactly what the caller
	 * wants. */
	evsel->attr.disabled = 1;
	evsel->leader = evsel;
	evsel->nr_members = 1;
	evsel->scale = 1.0;
	evsel->evlist_idx = -1;
	if (name && !(evsel->name = strdup(name))) {
		free(evsel);
		return NULL;
	}
	return evsel;
}

struct psc_evsel *psc_evsel__new_spec(const struct psc_event_spec *spec)
{
	struct psc_evsel *evsel =
		psc_evsel__new(&spec->attr, spec->alias ? spec->alias : spec->name);

	if (!evsel)
		return NULL;
	evsel->scale = spec->scale > 0 ? spec->scale : 1.0;
	if ((spec->filter && !(evsel->filter = strdup(spec->filter))) ||
	    (spec->unit && !(evsel->unit = strdup(spec->unit))) ||
	    (spec->cpus && !(evsel->own_cpus = psc_cpumap__parse(spec->cpus, NULL)))) {
		psc_evsel__delete(evsel);
		return NULL;
	}
	return evsel;
}

static void evsel_free_slots(struct psc_evsel *evsel)
{
	free(evsel->fds);
	free(evsel->ids);
	free(evsel->counts);
	evsel->fds = NULL;
	evsel->ids = NULL;
	evsel->counts = NULL;
	psc_cpumap__put(evsel->cpus);
	psc_threadmap__put(evsel->threads);
	evsel->cpus = NULL;
	evsel->threads = NULL;
}

void psc_evsel__close(struct psc_evsel *evsel)
{
	int n;

	if (!evsel || !evsel->fds)
		return;
	psc_evsel__bpf_close(evsel);
	n = nr_slots(evsel);
	for (int i = 0; i < n; i++)
		if (evsel->fds[i] >= 0)
			close(evsel->fds[i]);
	evsel_free_slots(evsel);
}

void psc_evsel__delete(struct psc_evsel *evsel)
{
	if (!evsel)
		return;
	psc_evsel__close(evsel);
	free(evsel->name);
	free(evsel->filter);
	free(evsel->unit);
	free(evsel->members);
	psc_cpumap__put(evsel->own_cpus);
	free(evsel);
}

struct psc_cpumap *psc_evsel__own_cpus(const struct psc_evsel *evsel)
{
	return evsel ? evsel->own_cpus : NULL;
}

int psc_evsel__set_leader(struct psc_evsel *evsel, struct psc_evsel *leader)
{
	if (!evsel || !leader || evsel->fds || leader->fds)
		return -EINVAL;
	if (leader->leader != leader)
		return -EINVAL; /* groups do not nest */
	if (evsel == leader)
		return 0;
	if (evsel->leader != evsel || evsel->nr_members > 1)
		return -EINVAL; /* already in a group, or leads one */
	if (!leader->members) {
		leader->members = malloc(sizeof(*leader->members));
		if (!leader->members)
			return -ENOMEM;
		leader->members[0] = leader;
	}
	struct psc_evsel **grown =
		realloc(leader->members, (leader->nr_members + 1) * sizeof(*leader->members));

	if (!grown)
		return -ENOMEM;
	leader->members = grown;
	leader->members[leader->nr_members++] = evsel;
	evsel->leader = leader;
	return 0;
}

struct psc_evsel *psc_evsel__leader(const struct psc_evsel *evsel)
{
	return evsel->leader;
}

bool psc_evsel__is_leader(const struct psc_evsel *evsel)
{
	return evsel->leader == evsel;
}

static int apply_filter_fds(struct psc_evsel *evsel, const char *filter)
{
	int n = nr_slots(evsel);

	for (int i = 0; i < n; i++) {
		if (evsel->fds[i] < 0)
			continue;
		if (ioctl(evsel->fds[i], PERF_EVENT_IOC_SET_FILTER, filter) < 0)
			return -errno;
	}
	return 0;
}

int psc_evsel__apply_filter(struct psc_evsel *evsel, const char *filter)
{
	if (!evsel->fds)
		return -EBADF;
	if (evsel->attr.type != PERF_TYPE_TRACEPOINT)
		return -EINVAL;
	return apply_filter_fds(evsel, filter);
}

int psc_evsel__open(struct psc_evsel *evsel, struct psc_cpumap *cpus, struct psc_threadmap *threads,
		    const struct psc_evsel_open_opts *opts)
{
	int cgroup_fd, nr_cpus, nr_threads, err = 0, opened = 0, missing = 0;
	struct perf_event_attr attr;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;

	if (!OPTS_VALID(opts, psc_evsel_open_opts) || !cpus || !threads)
		return -EINVAL;
	if (evsel->fds)
		return -EBUSY;
	cgroup_fd = OPTS_GET(opts, cgroup_fd, 0);
	nr_cpus = psc_cpumap__nr(cpus);
	nr_threads = psc_threadmap__nr(threads);
	if (nr_cpus < 1 || nr_threads < 1)
		return -EINVAL; /* nowhere to open it (cpus= with none of the evlist's CPUs) */
	if (cgroup_fd > 0) {
		if (psc_cpumap__cpu(cpus, 0) < 0 || psc_threadmap__tid(threads, 0) != -1)
			return -EINVAL; /* the kernel counts cgroups per CPU only */
		flags |= PERF_FLAG_PID_CGROUP;
	}
	if (evsel->leader != evsel && !evsel->leader->fds)
		return -EINVAL; /* open the leader first */

	evsel->fds = malloc(sizeof(int) * nr_cpus * nr_threads);
	evsel->ids = calloc(nr_cpus * nr_threads, sizeof(uint64_t));
	evsel->counts = calloc(nr_cpus * nr_threads, sizeof(struct psc_counts));
	evsel->cpus = psc_cpumap__get(cpus);
	evsel->threads = psc_threadmap__get(threads);
	if (!evsel->fds || !evsel->ids || !evsel->counts) {
		evsel_free_slots(evsel);
		return -ENOMEM;
	}
	for (int i = 0; i < nr_cpus * nr_threads; i++)
		evsel->fds[i] = -1;

	attr = evsel->attr;
	if (evsel->leader != evsel) {
		attr.disabled = 0; /* members follow their leader */
		attr.enable_on_exec = 0;
	} else {
		attr.enable_on_exec = OPTS_GET(opts, enable_on_exec, false);
	}
	attr.inherit = OPTS_GET(opts, inherit, false);
	if (evsel->leader->nr_members > 1) {
		attr.read_format |= PERF_FORMAT_GROUP;
		/* Inherited counters cannot be read as a group before 6.x kernels; keep per-fd
		 * reads. */
		if (attr.inherit)
			attr.read_format &= ~PERF_FORMAT_GROUP;
	}
	evsel->attr.read_format = attr.read_format;

	for (int c = 0; c < nr_cpus && !err; c++) {
		for (int t = 0; t < nr_threads; t++) {
			int slot = c * nr_threads + t;
			int group_fd = -1;
			pid_t pid = cgroup_fd > 0 ? cgroup_fd : psc_threadmap__tid(threads, t);
			int fd;

			if (evsel->leader != evsel) {
				group_fd = evsel->leader->fds[slot];
				if (group_fd < 0)
					continue; /* its thread was gone for the leader already */
			}
			fd = psc_sys_perf_event_open(&attr, pid, psc_cpumap__cpu(cpus, c), group_fd,
						     flags);
			if (fd < 0 && errno == ESRCH && pid > 0 && cgroup_fd <= 0) {
				/*
				 * The thread exited after the thread map was read (a process whose
				 * threads come and go): nothing of it to count, the slot stays
				 * closed. Only a map whose every thread is gone fails (below).
				 */
				missing++;
				continue;
			}
			if (fd < 0) {
				err = -errno;
				pr_debug("perf_event_open %s cpu %d tid %d: %s\n",
					 evsel->name ? evsel->name : "?", psc_cpumap__cpu(cpus, c),
					 (int)pid, strerror(errno));
				break;
			}
			/* ids are fetched when first needed (slot_id): an ioctl each costs as much
			 * as a read */
			evsel->fds[slot] = fd;
			opened++;
		}
	}
	if (!err && !opened && missing)
		err = -ESRCH;
	if (!err && evsel->filter) {
		err = apply_filter_fds(evsel, evsel->filter);
		if (err)
			pr_warn("the kernel rejected filter '%s' on %s: %s\n", evsel->filter,
				evsel->name ? evsel->name : "event", strerror(-err));
	}
	if (err) {
		psc_evsel__close(evsel);
		evsel->open_errno = -err;
		return err;
	}
	evsel->open_errno = 0;
	return 0;
}

int psc_evsel__ioctl_all(struct psc_evsel *evsel, unsigned long req, unsigned long arg)
{
	int n;

	if (!evsel->fds)
		return -EBADF;
	n = nr_slots(evsel);
	for (int i = 0; i < n; i++)
		if (evsel->fds[i] >= 0 && ioctl(evsel->fds[i], req, arg) < 0)
			return -errno;
	return 0;
}

int psc_evsel__enable(struct psc_evsel *evsel)
{
	return psc_evsel__ioctl_all(evsel, PERF_EVENT_IOC_ENABLE, 0);
}

int psc_evsel__disable(struct psc_evsel *evsel)
{
	return psc_evsel__ioctl_all(evsel, PERF_EVENT_IOC_DISABLE, 0);
}

/* req on every thread's fd of the CPU at cpu_idx. */
static int ioctl_cpu(struct psc_evsel *evsel, int cpu_idx, unsigned long req, unsigned long arg)
{
	if (!evsel->fds)
		return -EBADF;
	if (cpu_idx < 0 || cpu_idx >= evsel->cpus->nr)
		return -EINVAL;
	for (int t = 0; t < evsel->threads->nr; t++) {
		int fd = evsel->fds[EVSEL_SLOT(evsel, cpu_idx, t)];

		if (fd >= 0 && ioctl(fd, req, arg) < 0)
			return -errno;
	}
	return 0;
}

int psc_evsel__enable_cpu(struct psc_evsel *evsel, int cpu_idx)
{
	return ioctl_cpu(evsel, cpu_idx, PERF_EVENT_IOC_ENABLE, 0);
}

int psc_evsel__disable_cpu(struct psc_evsel *evsel, int cpu_idx)
{
	return ioctl_cpu(evsel, cpu_idx, PERF_EVENT_IOC_DISABLE, 0);
}

int psc_evsel__reset(struct psc_evsel *evsel)
{
	return psc_evsel__ioctl_all(evsel, PERF_EVENT_IOC_RESET, 0);
}

/* The kernel id of a slot's fd, asked once (PERF_EVENT_IOC_ID) and cached; 0 when closed. */
static uint64_t slot_id(const struct psc_evsel *evsel, int slot)
{
	if (!evsel->ids[slot] && evsel->fds[slot] >= 0 &&
	    ioctl(evsel->fds[slot], PERF_EVENT_IOC_ID, &evsel->ids[slot]) < 0)
		evsel->ids[slot] = 0;
	return evsel->ids[slot];
}

static bool slot_ok(const struct psc_evsel *evsel, int cpu_idx, int thread_idx)
{
	return evsel->fds && cpu_idx >= 0 && cpu_idx < evsel->cpus->nr && thread_idx >= 0 &&
	       thread_idx < evsel->threads->nr;
}

/*
 * Words of one value in a read(2) without PERF_FORMAT_GROUP: value, enabled, running, id, lost,
 * each there when its bit is. The caller may have added PERF_FORMAT_LOST (a sampling session
 * does), and a buffer short of what the format needs makes the kernel refuse the read.
 */
static inline int value_words(uint64_t fmt)
{
	return 1 + __builtin_popcountll(fmt & (READ_FORMAT_COUNTING | PERF_FORMAT_LOST));
}

int psc_evsel__read(struct psc_evsel *evsel, int cpu_idx, int thread_idx, struct psc_counts *out)
{
	uint64_t fmt = evsel->attr.read_format, buf[5];
	struct psc_counts *c;
	int slot, i = 1;
	ssize_t n;

	if (!slot_ok(evsel, cpu_idx, thread_idx))
		return -EINVAL;
	if (fmt & PERF_FORMAT_GROUP)
		return -EINVAL; /* use psc_evsel__read_group on the leader */
	slot = slot_of(evsel, cpu_idx, thread_idx);
	if (evsel->fds[slot] < 0)
		return -EBADF; /* its thread was gone at open (psc_evsel__open) */
	n = read(evsel->fds[slot], buf, sizeof(buf));
	if (n < 0)
		return -errno;
	if (n != (ssize_t)sizeof(uint64_t) * value_words(fmt))
		return -EIO;
	c = &evsel->counts[slot];
	c->val = buf[0];
	c->ena = fmt & PERF_FORMAT_TOTAL_TIME_ENABLED ? buf[i++] : 0;
	c->run = fmt & PERF_FORMAT_TOTAL_TIME_RUNNING ? buf[i++] : 0;
	if (fmt & PERF_FORMAT_ID)
		evsel->ids[slot] = buf[i++];
	c->id = evsel->ids[slot];
	c->lost = fmt & PERF_FORMAT_LOST ? buf[i] : 0;
	if (out)
		*out = *c;
	return 0;
}

int psc_evsel__read_group(struct psc_evsel *leader, int cpu_idx, int thread_idx)
{
	/* nr, enabled, running, then {value, id, lost} per member (lost: PERF_FORMAT_LOST) */
	uint64_t stackbuf[3 + 3 * 16], *buf = stackbuf;
	uint64_t fmt = leader->attr.read_format, stride, hw, ena, run;
	struct psc_evsel *const *members;
	int slot, err = 0;
	size_t want;
	ssize_t n;

	if (!slot_ok(leader, cpu_idx, thread_idx) || leader->leader != leader)
		return -EINVAL;
	if (!(leader->attr.read_format & PERF_FORMAT_GROUP)) {
		/* a lone event, or an inherited group (opened without GROUP, see open): each fd */
		if (!leader->members)
			return psc_evsel__read(leader, cpu_idx, thread_idx, NULL);
		for (int k = 0; k < leader->nr_members; k++) {
			if (!leader->members[k]->fds ||
			    leader->members[k]->fds[slot_of(leader, cpu_idx, thread_idx)] < 0)
				continue;
			err = psc_evsel__read(leader->members[k], cpu_idx, thread_idx, NULL);
			if (err)
				return err;
		}
		return 0;
	}
	/* The members were opened with the leader's read_format (evsel__open copies it). */
	hw = 1 + !!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) +
	     !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);
	stride = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
	want = sizeof(uint64_t) * (hw + stride * (size_t)leader->nr_members);
	if (want > sizeof(stackbuf) && !(buf = malloc(want)))
		return -ENOMEM;
	slot = slot_of(leader, cpu_idx, thread_idx);
	if (leader->fds[slot] < 0) {
		err = -EBADF; /* its thread was gone at open (psc_evsel__open) */
		goto out;
	}
	n = read(leader->fds[slot], buf, want);
	if (n < 0) {
		err = -errno;
		goto out;
	}
	if (n < (ssize_t)(hw * sizeof(uint64_t)) || buf[0] > (uint64_t)leader->nr_members ||
	    (size_t)n < sizeof(uint64_t) * (hw + stride * buf[0])) {
		err = -EIO;
		goto out;
	}
	/*
	 * The kernel lists the leader, then its members in the order they were opened (members
	 * that could not be opened are simply absent): walk both in step. An id seen for the first
	 * time is learnt from the read; a known one that does not match means the order is not
	 * what we think, and the member is looked up by id instead.
	 */
	/* a lone evsel whose attr asked for PERF_FORMAT_GROUP has no member list: a group of one */
	members = leader->members ? leader->members : &leader;
	ena = fmt & PERF_FORMAT_TOTAL_TIME_ENABLED ? buf[1] : 0;
	run = fmt & PERF_FORMAT_TOTAL_TIME_RUNNING ? buf[hw - 1] : 0;
	for (uint64_t i = 0, m = 0; i < buf[0]; i++) {
		const uint64_t *e = buf + hw + stride * i;
		uint64_t val = e[0], id = fmt & PERF_FORMAT_ID ? e[1] : 0;
		uint64_t lost = fmt & PERF_FORMAT_LOST ? e[stride - 1] : 0;
		struct psc_evsel *member = NULL;

		while (m < (uint64_t)leader->nr_members && !members[m]->fds)
			m++;
		if (m < (uint64_t)leader->nr_members) {
			member = members[m++];
			if (!member->ids[slot])
				member->ids[slot] = id;
			else if (id && member->ids[slot] != id)
				member = NULL;
		}
		for (int k = 0; !member && k < leader->nr_members; k++)
			if (members[k]->fds && slot_id(members[k], slot) == id)
				member = members[k];
		if (member)
			member->counts[slot] = (struct psc_counts){ val, ena, run, id, lost };
	}
out:
	if (buf != stackbuf)
		free(buf);
	return err;
}

int psc_evsel__counts(const struct psc_evsel *evsel, int cpu_idx, int thread_idx,
		      struct psc_counts *out)
{
	if (cpu_idx == -1 && thread_idx == -1) {
		int n;

		if (!evsel->counts)
			return -EBADF;
		n = nr_slots(evsel);
		*out = (struct psc_counts){ 0 };
		for (int i = 0; i < n; i++) {
			out->val += evsel->counts[i].val;
			out->ena += evsel->counts[i].ena;
			out->run += evsel->counts[i].run;
			out->lost += evsel->counts[i].lost;
		}
		return 0;
	}
	if (!slot_ok(evsel, cpu_idx, thread_idx))
		return -EINVAL;
	*out = evsel->counts[slot_of(evsel, cpu_idx, thread_idx)];
	return 0;
}

const char *psc_evsel__name(const struct psc_evsel *evsel)
{
	return evsel->name ? evsel->name : "event";
}

const struct perf_event_attr *psc_evsel__attr(const struct psc_evsel *evsel)
{
	return &evsel->attr;
}

struct perf_event_attr *psc_evsel__attr_mut(struct psc_evsel *evsel)
{
	return evsel->fds ? NULL : &evsel->attr;
}

int psc_evsel__fd(const struct psc_evsel *evsel, int cpu_idx, int thread_idx)
{
	if (!slot_ok(evsel, cpu_idx, thread_idx))
		return -1;
	return evsel->fds[slot_of(evsel, cpu_idx, thread_idx)];
}

uint64_t psc_evsel__id(const struct psc_evsel *evsel, int cpu_idx, int thread_idx)
{
	if (!slot_ok(evsel, cpu_idx, thread_idx))
		return 0;
	return slot_id(evsel, slot_of(evsel, cpu_idx, thread_idx));
}

struct psc_cpumap *psc_evsel__cpus(const struct psc_evsel *evsel)
{
	return evsel->cpus;
}

struct psc_threadmap *psc_evsel__threads(const struct psc_evsel *evsel)
{
	return evsel->threads;
}

bool psc_evsel__is_open(const struct psc_evsel *evsel)
{
	return evsel->fds != NULL;
}

double psc_evsel__scale(const struct psc_evsel *evsel)
{
	return evsel->scale;
}

const char *psc_evsel__unit(const struct psc_evsel *evsel)
{
	return evsel->unit;
}

int psc_evsel__open_errno(const struct psc_evsel *evsel)
{
	return evsel->open_errno;
}

void psc_evsel__set_priv(struct psc_evsel *evsel, void *priv)
{
	evsel->priv = priv;
}

void *psc_evsel__priv(const struct psc_evsel *evsel)
{
	return evsel->priv;
}

int psc_evsel__idx(const struct psc_evsel *evsel)
{
	return evsel->evlist_idx;
}
