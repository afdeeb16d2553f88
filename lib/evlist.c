/* evlist: evsels opened, enabled and read together; the id -> evsel index used to route samples. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

struct psc_evlist *psc_evlist__new(void)
{
	return calloc(1, sizeof(struct psc_evlist));
}

void psc_evlist__delete(struct psc_evlist *evlist)
{
	if (!evlist)
		return;
	psc_evlist__close(evlist);
	for (int i = 0; i < evlist->nr; i++)
		psc_evsel__delete(evlist->entries[i]);
	free(evlist->entries);
	free(evlist->id_table);
	psc_cpumap__put(evlist->cpus);
	psc_threadmap__put(evlist->threads);
	free(evlist);
}

int psc_evlist__add(struct psc_evlist *evlist, struct psc_evsel *evsel)
{
	if (!evlist || !evsel)
		return -EINVAL;
	if (evlist->nr == evlist->alloc) {
		int alloc = evlist->alloc ? evlist->alloc * 2 : 8;
		struct psc_evsel **grown = realloc(evlist->entries, alloc * sizeof(*grown));

		if (!grown)
			return -ENOMEM;
		evlist->entries = grown;
		evlist->alloc = alloc;
	}
	evsel->evlist_idx = evlist->nr;
	evlist->entries[evlist->nr++] = evsel;
	return 0;
}

int psc_evlist__add_specs(struct psc_evlist *evlist, const struct psc_event_list *specs, bool group)
{
	struct psc_evsel *leader = NULL;
	int base = evlist->nr;

	for (int i = 0; i < specs->nr; i++) {
		const struct psc_event_spec *spec = &specs->specs[i];
		struct psc_evsel *evsel = psc_evsel__new_spec(spec);
		int err;

		if (!evsel)
			return -errno;
		/* the groups the list wrote, "{a,b}": the parser names each member's leader */
		if (!group && spec->leader >= 0 && spec->leader < i &&
		    (err = psc_evsel__set_leader(evsel, evlist->entries[base + spec->leader]))) {
			psc_evsel__delete(evsel);
			return err;
		}
		if (group && leader && (err = psc_evsel__set_leader(evsel, leader))) {
			psc_evsel__delete(evsel);
			return err;
		}
		if ((err = psc_evlist__add(evlist, evsel))) {
			psc_evsel__delete(evsel);
			return err;
		}
		if (group && !leader)
			leader = evsel;
	}
	return 0;
}

int psc_evlist__nr(const struct psc_evlist *evlist)
{
	return evlist ? evlist->nr : 0;
}

struct psc_evsel *psc_evlist__at(const struct psc_evlist *evlist, int idx)
{
	if (!evlist || idx < 0 || idx >= evlist->nr)
		return NULL;
	return evlist->entries[idx];
}

int psc_evlist__set_maps(struct psc_evlist *evlist, struct psc_cpumap *cpus,
			 struct psc_threadmap *threads)
{
	if (!cpus || !threads)
		return -EINVAL;
	psc_cpumap__put(evlist->cpus);
	psc_threadmap__put(evlist->threads);
	evlist->cpus = psc_cpumap__get(cpus);
	evlist->threads = psc_threadmap__get(threads);
	return 0;
}

struct psc_cpumap *psc_evlist__cpus(const struct psc_evlist *evlist)
{
	return evlist->cpus;
}

struct psc_threadmap *psc_evlist__threads(const struct psc_evlist *evlist)
{
	return evlist->threads;
}

void psc_evlist__close(struct psc_evlist *evlist)
{
	/* The rings are views of these fds: unmap them first. */
	psc_evlist__munmap(evlist);
	/* Members before leaders: closing a leader first would orphan its members' fds. */
	for (int i = evlist->nr - 1; i >= 0; i--)
		psc_evsel__close(evlist->entries[i]);
	free(evlist->id_table);
	evlist->id_table = NULL;
	evlist->id_mask = 0;
}

/*
 * The CPUs evsel opens on (a reference). System-wide, an event of a PMU that names its CPUs
 * (RAPL's power/energy-*, uncore) opens only on those of the list, as perf does: opened on every
 * CPU, a package counter would be read once per CPU and summed N times over. When the list has
 * none of them (-C 1 with the package read on CPU 0) it opens on the PMU's own: that is where its
 * counts are. Members of a group follow their leader.
 */
static struct psc_cpumap *evlist_pmu_cpus(struct psc_evlist *evlist, struct psc_evsel *evsel)
{
	struct psc_cpumap *pmu, *cpus;

	if (evlist->threads->nr != 1 || psc_threadmap__tid(evlist->threads, 0) != -1)
		return psc_cpumap__get(evlist->cpus);
	pmu = psc_pmu__cpus_of_type(evsel->attr.type);
	if (!pmu)
		return psc_cpumap__get(evlist->cpus);
	cpus = psc_cpumap__intersect(evlist->cpus, pmu);
	if (cpus && !cpus->nr) {
		psc_cpumap__put(cpus);
		return pmu;
	}
	psc_cpumap__put(pmu);
	return cpus;
}

/*
 * ... and of those, the ones its cpus=LIST names: on a per-thread evlist (cpu -1, any) the
 * threads are followed on those CPUs only. An empty result opens nothing (psc_evsel__open says
 * -EINVAL); prof checks the list against the run's CPUs first, to say it better.
 */
static struct psc_cpumap *evlist_open_cpus(struct psc_evlist *evlist, struct psc_evsel *evsel)
{
	struct psc_cpumap *cpus;

	if (evsel->leader != evsel && evsel->leader->cpus)
		return psc_cpumap__get(evsel->leader->cpus);
	cpus = evlist_pmu_cpus(evlist, evsel);
	if (cpus && evsel->own_cpus) {
		struct psc_cpumap *own = psc_cpumap__cpu(cpus, 0) == -1
						 ? psc_cpumap__get(evsel->own_cpus)
						 : psc_cpumap__intersect(cpus, evsel->own_cpus);

		psc_cpumap__put(cpus);
		cpus = own;
	}
	return cpus;
}

int psc_evlist__open(struct psc_evlist *evlist, const struct psc_evlist_open_opts *opts)
{
	bool skip = OPTS_GET(opts, skip_unsupported, false);
	int err;

	if (!OPTS_VALID(opts, psc_evlist_open_opts))
		return -EINVAL;
	if (!evlist->cpus || !evlist->threads) {
		struct psc_cpumap *cpus = psc_cpumap__new_online();
		struct psc_threadmap *threads = psc_threadmap__new_any();

		err = cpus && threads ? psc_evlist__set_maps(evlist, cpus, threads) : -ENOMEM;
		psc_cpumap__put(cpus);
		psc_threadmap__put(threads);
		if (err)
			return err;
	}
	PSC_OPTS(psc_evsel_open_opts, eo, .cgroup_fd = OPTS_GET(opts, cgroup_fd, 0),
		 .inherit = OPTS_GET(opts, inherit, false),
		 .enable_on_exec = OPTS_GET(opts, enable_on_exec, false));

	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];
		struct psc_cpumap *cpus;
		char msg[512];

		if (evsel->leader != evsel && !evsel->leader->fds) {
			/* Its leader could not be opened here; the whole group is unsupported. */
			evsel->open_errno = evsel->leader->open_errno;
			continue;
		}
		cpus = evlist_open_cpus(evlist, evsel);
		err = cpus ? psc_evsel__open(evsel, cpus, evlist->threads, &eo) : -ENOMEM;
		psc_cpumap__put(cpus);
		if (!err)
			continue;
		if (skip && psc_errno_is_unsupported(err)) {
			/* expected (no PMU in most VMs): the caller sums them up, the detail is info */
			pr_info("%s\n",
				psc_strerror_open(err, psc_evsel__name(evsel), msg, sizeof(msg)));
			continue;
		}
		psc_evlist__close(evlist);
		return err;
	}
	err = psc_evlist__index_ids(evlist);
	if (err)
		psc_evlist__close(evlist);
	return err;
}

int psc_evlist__nr_open(const struct psc_evlist *evlist)
{
	int n = 0;

	for (int i = 0; i < evlist->nr; i++)
		n += evlist->entries[i]->fds != NULL;
	return n;
}

/*
 * Groups are driven through their leaders only: members were opened enabled and follow the
 * leader on and off the PMU. Disabling a member as well would leave it OFF, and re-enabling it
 * on its own after the leader makes the kernel restart software clocks (task-clock) from a stale
 * context time, so a grouped task-clock read 0 from the second start on. One ioctl per group
 * and fd is also the cheapest way.
 */
static int evlist_ioctl(struct psc_evlist *evlist, unsigned long req, unsigned long group_arg)
{
	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];
		int err;

		if (!evsel->fds || evsel->leader != evsel)
			continue;
		err = psc_evsel__ioctl_all(evsel, req, evsel->nr_members > 1 ? group_arg : 0);
		if (err)
			return err;
	}
	return 0;
}

int psc_evlist__enable(struct psc_evlist *evlist)
{
	return evlist_ioctl(evlist, PERF_EVENT_IOC_ENABLE, 0);
}

int psc_evlist__disable(struct psc_evlist *evlist)
{
	return evlist_ioctl(evlist, PERF_EVENT_IOC_DISABLE, 0);
}

static int evlist_ioctl_cpu(struct psc_evlist *evlist, int cpu, bool enable)
{
	bool found = false;

	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];
		int idx, err;

		if (!evsel->fds || evsel->leader != evsel)
			continue;
		idx = psc_cpumap__idx(evsel->cpus, cpu);
		if (idx < 0)
			continue;
		found = true;
		err = enable ? psc_evsel__enable_cpu(evsel, idx) : psc_evsel__disable_cpu(evsel, idx);
		if (err)
			return err;
	}
	return found ? 0 : -ENOENT;
}

int psc_evlist__enable_cpu(struct psc_evlist *evlist, int cpu)
{
	return evlist_ioctl_cpu(evlist, cpu, true);
}

int psc_evlist__disable_cpu(struct psc_evlist *evlist, int cpu)
{
	return evlist_ioctl_cpu(evlist, cpu, false);
}

int psc_evlist__reset(struct psc_evlist *evlist)
{
	/* RESET does not change a member's state, so the whole group is reset in one call. */
	return evlist_ioctl(evlist, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
}

int psc_evlist__read(struct psc_evlist *evlist)
{
	int first_err = 0;

	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];
		int nr_cpus, nr_threads;

		/* A group is read once, through its leader. */
		if (!evsel->fds || evsel->leader != evsel)
			continue;
		nr_cpus = evsel->cpus->nr; /* not the exported accessors: no PLT on the read path */
		nr_threads = evsel->threads->nr;
		for (int c = 0; c < nr_cpus; c++) {
			for (int t = 0; t < nr_threads; t++) {
				int err;

				/* a thread gone before the open: nothing counted, counts stay 0 */
				if (evsel->fds[c * nr_threads + t] < 0)
					continue;
				err = psc_evsel__read_group(evsel, c, t);

				if (err && !first_err)
					first_err = err;
			}
		}
	}
	return first_err;
}

static inline unsigned int id_hash(uint64_t id, unsigned int mask)
{
	return (unsigned int)((id * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

int psc_evlist__index_ids(struct psc_evlist *evlist)
{
	unsigned int size = 16, n = 0;

	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];

		if (evsel->fds)
			n += psc_cpumap__nr(evsel->cpus) * psc_threadmap__nr(evsel->threads);
	}
	while (size < 2 * n)
		size <<= 1;
	free(evlist->id_table);
	evlist->id_table = calloc(size, sizeof(*evlist->id_table));
	if (!evlist->id_table)
		return -ENOMEM;
	evlist->id_mask = size - 1;
	for (int i = 0; i < evlist->nr; i++) {
		struct psc_evsel *evsel = evlist->entries[i];
		int slots;

		if (!evsel->fds)
			continue;
		slots = psc_cpumap__nr(evsel->cpus) * psc_threadmap__nr(evsel->threads);
		for (int s = 0; s < slots; s++) {
			int nt = psc_threadmap__nr(evsel->threads);
			uint64_t id = psc_evsel__id(evsel, s / nt, s % nt);
			unsigned int h;

			if (!id)
				continue;
			h = id_hash(id, evlist->id_mask);
			while (evlist->id_table[h].evsel)
				h = (h + 1) & evlist->id_mask;
			evlist->id_table[h].id = id;
			evlist->id_table[h].evsel = evsel;
		}
	}
	return 0;
}

struct psc_evsel *psc_evlist__evsel_by_id(const struct psc_evlist *evlist, uint64_t id)
{
	unsigned int h;

	if (!evlist->id_table)
		return NULL;
	h = id_hash(id, evlist->id_mask);
	while (evlist->id_table[h].evsel) {
		if (evlist->id_table[h].id == id)
			return evlist->id_table[h].evsel;
		h = (h + 1) & evlist->id_mask;
	}
	return NULL;
}
