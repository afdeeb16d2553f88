/* libperfscope: thread maps, the list of threads an event follows. Refcounted; not thread-safe. */
#ifndef PERFSCOPE_THREADMAP_H
#define PERFSCOPE_THREADMAP_H

#include <sys/types.h>
#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct psc_threadmap;

/* One entry, tid -1: "every thread", used for system-wide (per-CPU) counting. */
PSC_API struct psc_threadmap *psc_threadmap__new_any(void);
/* Every thread of process pid, from /proc/PID/task. NULL + errno=ESRCH when it does not exist. */
PSC_API struct psc_threadmap *psc_threadmap__new_pid(pid_t pid);
/* Exactly one thread. NULL + errno=ESRCH when it does not exist. */
PSC_API struct psc_threadmap *psc_threadmap__new_tid(pid_t tid);
/*
 * The threads of a and of b, each once, sorted (-p 1,2: the maps of two processes). Neither may
 * be an "any" map (EINVAL). NULL + errno.
 */
PSC_API struct psc_threadmap *psc_threadmap__merge(const struct psc_threadmap *a,
						   const struct psc_threadmap *b);
PSC_API struct psc_threadmap *psc_threadmap__get(struct psc_threadmap *map);
PSC_API void psc_threadmap__put(struct psc_threadmap *map);
PSC_API int psc_threadmap__nr(const struct psc_threadmap *map);
PSC_API pid_t psc_threadmap__tid(const struct psc_threadmap *map, int idx);

#ifdef __cplusplus
}
#endif
#endif
