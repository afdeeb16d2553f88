/* libperfscope: a list of evsels opened, enabled, read and mmapped together. Not thread-safe. */
#ifndef PERFSCOPE_EVLIST_H
#define PERFSCOPE_EVLIST_H

#include <stdbool.h>
#include <perfscope/common.h>
#include <perfscope/evsel.h>

#ifdef __cplusplus
extern "C" {
#endif

struct psc_evlist;
struct psc_event_list;

PSC_API struct psc_evlist *psc_evlist__new(void);
/* Closes and deletes every evsel it holds. NULL is a no-op. */
PSC_API void psc_evlist__delete(struct psc_evlist *evlist);
/* The evlist takes ownership of evsel. */
PSC_API int psc_evlist__add(struct psc_evlist *evlist, struct psc_evsel *evsel);
/* One evsel per parsed spec; group=true makes the first the leader of the rest, false keeps the
 * groups the list wrote ("{a,b},c": a leads b, c alone). */
PSC_API int psc_evlist__add_specs(struct psc_evlist *evlist, const struct psc_event_list *specs,
				  bool group);
PSC_API int psc_evlist__nr(const struct psc_evlist *evlist);
PSC_API struct psc_evsel *psc_evlist__at(const struct psc_evlist *evlist, int idx);
#define psc_evlist__for_each(evlist, i, evsel) \
	for ((i) = 0; (i) < psc_evlist__nr(evlist) && ((evsel) = psc_evlist__at(evlist, i)); (i)++)

/* The maps every evsel is opened on (references taken). */
PSC_API int psc_evlist__set_maps(struct psc_evlist *evlist, struct psc_cpumap *cpus,
				 struct psc_threadmap *threads);
PSC_API struct psc_cpumap *psc_evlist__cpus(const struct psc_evlist *evlist);
PSC_API struct psc_threadmap *psc_evlist__threads(const struct psc_evlist *evlist);

struct psc_evlist_open_opts {
	size_t sz;
	int cgroup_fd; /* > 0: count only tasks of this cgroup */
	bool inherit; /* follow children (a launched command) */
	bool enable_on_exec;
	/*
	 * true: an evsel the machine cannot count (ENOENT, EOPNOTSUPP, ...) is left closed with
	 * psc_evsel__open_errno() set and logged at PSC_LOG_INFO (expected on machines without a
	 * PMU: the caller says so once, from psc_evsel__open_errno()); the rest open. A group whose leader fails this
	 * way is skipped whole. false: the first failure closes everything and is returned.
	 */
	bool skip_unsupported;
};
/* The last field of psc_evlist_open_opts; a newer caller's bytes after it must be 0 (PSC_OPTS). */
#define psc_evlist_open_opts__last_field skip_unsupported
/* Opens every evsel on the evlist's maps. Rolls back on failure. */
PSC_API int psc_evlist__open(struct psc_evlist *evlist, const struct psc_evlist_open_opts *opts);
PSC_API void psc_evlist__close(struct psc_evlist *evlist);
/* Number of evsels open after psc_evlist__open (the rest were unsupported). */
PSC_API int psc_evlist__nr_open(const struct psc_evlist *evlist);

PSC_API int psc_evlist__enable(struct psc_evlist *evlist);
PSC_API int psc_evlist__disable(struct psc_evlist *evlist);
PSC_API int psc_evlist__reset(struct psc_evlist *evlist);
/*
 * The same on CPU number cpu only, for every open evsel that counts there (whole groups
 * through their leaders). -ENOENT when no open evsel has that CPU.
 */
PSC_API int psc_evlist__enable_cpu(struct psc_evlist *evlist, int cpu);
PSC_API int psc_evlist__disable_cpu(struct psc_evlist *evlist, int cpu);

/*
 * Reads every open counter: one read(2) per group leader (or lone evsel) per cpu x thread. A read
 * that fails leaves that slot's previous counts and the others are still read; returns 0 or the
 * first error.
 */
PSC_API int psc_evlist__read(struct psc_evlist *evlist);

/* The evsel whose fd has this kernel id (from PERF_SAMPLE_ID/IDENTIFIER), or NULL. */
PSC_API struct psc_evsel *psc_evlist__evsel_by_id(const struct psc_evlist *evlist, uint64_t id);

#ifdef __cplusplus
}
#endif
#endif
