/* comm: thread names (tid -> comm) from COMM and FORK records and /proc. */
#ifndef PERFSCOPE_COMMON_COMM_H
#define PERFSCOPE_COMMON_COMM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <perfscope/record.h>

#include "keymap.h"

/*
 * A thread is named by the COMM records of its exec and prctl(PR_SET_NAME), a new one after its
 * parent until it execs (FORK records), and otherwise by /proc/PID/task/TID/comm the first time
 * it is asked for. A thread already gone then is remembered as "<...>" rather than looked up
 * again for each of its events. tid 0, the idle task, is "swapper".
 *
 * Names are at most 15 bytes, as the kernel's. A returned name is valid until the next call that
 * adds or changes a name (set, record, get of a new tid, preload). Not thread-safe.
 */
struct comm_cache {
	struct keymap map; /* tid -> struct comm_entry (comm.c): the name, and when it was taken */
	char scratch[16]; /* a name read when no memory was left to remember it */
};

/* Returns 0 or -ENOMEM. */
int comm_cache__init(struct comm_cache *c);
/* Frees; safe on a zeroed struct. */
void comm_cache__exit(struct comm_cache *c);

/* Names tid (len bytes of comm, cut to 15); tid 0 is ignored. Returns 0 or -ENOMEM. */
int comm_cache__set(struct comm_cache *c, uint32_t tid, const char *comm, size_t len);
/* The name known for tid, or NULL: never reads /proc. */
const char *comm_cache__find(const struct comm_cache *c, uint32_t tid);
/* The name of tid of process pid: known, else read from /proc and remembered; never NULL. */
const char *comm_cache__get(struct comm_cache *c, uint32_t pid, uint32_t tid);
/* Takes what names threads from a side-band record (COMM, FORK); ignores other records. */
void comm_cache__record(struct comm_cache *c, const struct psc_record *rec);
/*
 * Names threads that exist now from /proc, as perf record does before it starts: one that exits
 * during a trace is gone from /proc by the time its last events (its exit, say) are printed.
 * tid > 0: that thread; else pid > 0: every thread of that process; else every thread.
 */
void comm_cache__preload(struct comm_cache *c, pid_t pid, pid_t tid);

#endif
