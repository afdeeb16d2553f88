/* cpuprof_build: a request's seconds of the window merged, symbolized, written as gzipped pprof. */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/cpumap.h>

#include "callchain.h"
#include "clock.h"
#include "cpuprof.h"
#include "expo.h"
#include "pprof.h"
#include "pprof_frames.h"

/* The seconds [r->first, r->end) that are still in the window, summed; *missing: those not. */
static int merge(struct cpuprof *cp, const struct cpuprof_req *r, struct stack_table *out,
		 int64_t *missing, uint64_t *samples)
{
	for (int64_t s = r->first; s < r->end; s++) {
		const struct cpuprof_bucket *b = &cp->buckets[s % cp->nr_buckets];
		struct keymap_iter it;
		struct stack_ent **head;
		uint64_t key;

		if (b->sec != s) {
			(*missing)++;
			continue;
		}
		keymap__for_each(&b->stacks.map, &it, key, head)
		{
			for (const struct stack_ent *e = *head; e; e = e->next) {
				if (!stack_table__count(out, e->pid, e->tid, e->comm, e->ips, e->nr,
							e->count, e->period))
					return -ENOMEM;
				*samples += e->count;
			}
		}
	}
	return 0;
}

/* Each stack symbolized with its labels: comm, pid, cgroup, container_id (strings, for Pyroscope).
 */
static int add_stacks(struct cpuprof *cp, struct pprof *pp, struct stack_table *t,
		      struct frame *frames)
{
	struct keymap_iter it;
	struct stack_ent **head;
	uint64_t key;

	keymap__for_each(&t->map, &it, key, head)
	{
		for (const struct stack_ent *e = *head; e; e = e->next) {
			const struct cpuprof_cg *cg = cpuprof_cgroup(cp, e->pid);
			int64_t values[2] = { (int64_t)e->count, (int64_t)e->period };
			char pid[16];
			struct pprof_label labels[4] = { { "comm", e->comm }, { "pid", pid } };
			size_t nl = 2;
			int n = callchain__frames(cp->cc, (pid_t)e->pid, e->ips, e->nr, frames,
						  CALLCHAIN_MAX_FRAMES);

			snprintf(pid, sizeof(pid), "%u", e->pid);
			if (cg && cg->cgroup[0])
				labels[nl++] = (struct pprof_label){ "cgroup", cg->cgroup };
			if (cg && cg->container[0])
				labels[nl++] =
					(struct pprof_label){ "container_id", cg->container };
			if (pprof__add_frames(pp, frames, (size_t)n, values, labels, nl))
				return -ENOMEM;
		}
	}
	return 0;
}

/* The pprof of r's seconds, with what was sampled and what is missing said in its comments. */
static struct pprof *build(struct cpuprof *cp, const struct cpuprof_req *r, struct frame *frames)
{
	struct pprof_value_type types[2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
	int64_t secs = r->end - r->first, missing = 0;
	/* from the clocks' offset taken once: requests of the same seconds get the same bytes */
	int64_t wall = cp->wall_off_ns + r->first * 1000000000ll;
	struct stack_table t = { 0 };
	uint64_t samples = 0;
	struct pprof *pp;
	char c[256];
	int err;

	pp = pprof__new(types, 2, &types[1], 1000000000ll / cp->cfg.hz);
	if (!pp || stack_table__init(&t, false)) {
		pprof__delete(pp);
		return NULL;
	}
	pprof__set_time(pp, wall, secs * 1000000000ll);
	err = merge(cp, r, &t, &missing, &samples);
	if (!err)
		err = add_stacks(cp, pp, &t, frames);
	stack_table__exit(&t);
	snprintf(c, sizeof(c),
		 "perfscope exporter: cpu-clock at %u Hz on %d CPUs (%s path), %" PRId64
		 " s, %" PRIu64 " samples",
		 cp->cfg.hz, psc_cpumap__nr(cp->cfg.cpus), cp->mode, secs, samples);
	if (!err)
		err = pprof__add_comment(pp, c);
	if (!err && missing) {
		snprintf(c, sizeof(c), "%" PRId64 " s of the window had aged out", missing);
		err = pprof__add_comment(pp, c);
	}
	if (!err && (cp->st.lost || cp->st.dropped_full || cp->st.bpf_dropped)) {
		snprintf(c, sizeof(c),
			 "since start: %" PRIu64 " samples lost by the kernel, %" PRIu64
			 " dropped with --collector.profile.max-stacks reached, %" PRIu64
			 " dropped by the BPF maps",
			 cp->st.lost, cp->st.dropped_full, cp->st.bpf_dropped);
		err = pprof__add_comment(pp, c);
	}
	if (err) {
		pprof__delete(pp);
		return NULL;
	}
	return pp;
}

int cpuprof_req_build(struct cpuprof *cp, const struct cpuprof_req *r, char **buf, size_t *len)
{
	struct frame *frames = malloc(CALLCHAIN_MAX_FRAMES * sizeof(*frames));
	uint64_t t0 = mono_ns();
	struct pprof *pp;
	FILE *f;
	int err;

	*buf = NULL;
	*len = 0;
	if (r->cancelled) {
		free(frames);
		return -ECANCELED;
	}
	if (!frames)
		return -ENOMEM;
	pthread_mutex_lock(&cp->lock);
	pp = build(cp, r, frames);
	pthread_mutex_unlock(&cp->lock);
	free(frames);
	if (!pp)
		return -ENOMEM;
	f = open_memstream(buf, len);
	if (!f) {
		pprof__delete(pp);
		return -ENOMEM;
	}
	err = pprof__write(pp, f);
	if (fclose(f) && !err)
		err = -ENOMEM;
	pprof__delete(pp);
	/*
	 * A profile's tables are freed in the server thread's malloc arena, where glibc keeps them:
	 * given back, so that RSS stays what the window needs between scrapes.
	 */
	malloc_trim(0);
	pthread_mutex_lock(&cp->lock);
	cp->st.build_ns += mono_ns() - t0;
	if (!err) {
		cp->st.served++;
		cp->st.bytes += *len;
	}
	pthread_mutex_unlock(&cp->lock);
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

void cpuprof_metrics(struct cpuprof *cp, struct expo *e)
{
	struct expo_label mode = { "path", cp->mode };
	struct cpuprof_stats st;

	pthread_mutex_lock(&cp->lock);
	st = cp->st;
	pthread_mutex_unlock(&cp->lock);
	expo_family(e, "perfscope_exporter_profile_samples", EXPO_COUNTER,
		    "CPU samples counted into the profile window (idle excluded), by path "
		    "(bpf: counted in the kernel, ring: read from the perf rings).");
	expo_u64(e, &mode, 1, st.samples);
	expo_family(e, "perfscope_exporter_profile_samples_lost", EXPO_COUNTER,
		    "CPU samples the kernel had no ring space for.");
	expo_u64(e, NULL, 0, st.lost);
	expo_family(e, "perfscope_exporter_profile_samples_dropped", EXPO_COUNTER,
		    "CPU samples not counted: the window held --collector.profile.max-stacks "
		    "entries (max_stacks), or the BPF maps had no room (bpf_maps).");
	{
		struct expo_label why[2] = { { "reason", "max_stacks" }, { "reason", "bpf_maps" } };

		expo_u64(e, &why[0], 1, st.dropped_full);
		expo_u64(e, &why[1], 1, st.bpf_dropped);
	}
	expo_family(e, "perfscope_exporter_profile_samples_evicted", EXPO_COUNTER,
		    "CPU samples that aged out of the window (--collector.profile.max-seconds).");
	expo_u64(e, NULL, 0, st.evicted);
	expo_family(
		e, "perfscope_exporter_profile_stacks", EXPO_GAUGE,
		"Distinct (stack, process) entries held in the window, summed over its seconds.");
	expo_u64(e, NULL, 0, st.stacks);
	expo_family(e, "perfscope_exporter_profile_requests", EXPO_COUNTER,
		    "Profile requests: accepted, refused (too long), served.");
	{
		struct expo_label what[3] = { { "result", "accepted" },
					      { "result", "refused" },
					      { "result", "served" } };

		expo_u64(e, &what[0], 1, st.requests);
		expo_u64(e, &what[1], 1, st.refused);
		expo_u64(e, &what[2], 1, st.served);
	}
	expo_family(e, "perfscope_exporter_profile_build_seconds", EXPO_COUNTER,
		    "Time spent merging, symbolizing and writing profiles.");
	expo_ns_as_seconds(e, NULL, 0, st.build_ns);
	expo_family(e, "perfscope_exporter_profile_bytes", EXPO_COUNTER,
		    "Bytes of gzipped pprof served.");
	expo_u64(e, NULL, 0, st.bytes);
}
