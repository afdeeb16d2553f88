/* pair: the two-event engine: starts kept by key until their end, every outcome counted. */
#ifndef PERFSCOPE_COMMON_PAIR_H
#define PERFSCOPE_COMMON_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfscope/record.h>

/*
 * One engine matches one pair of event roles: a start and an end with the same u64 key (the
 * value of key=EXPR, by default the thread id). multi-trace builds one engine per consecutive
 * pair of -e groups (A -> B -> C is A->B and B->C; --cycle adds C->A), kmemleak one for
 * alloc -> free keyed by the pointer, the presets one or two. What a pair means is the impl's
 * business (struct pair_impl): latency statistics (delay, syscalls), what never paired (pair,
 * kmemleak: the starts still open), bytes by stack (kmemprof).
 *
 * Pending starts live in a table bounded by max_pending entries (memory stays bounded under any
 * key churn: a key that never ends is evicted, oldest first, and counted). Each entry carries
 * the start's key, time, cpu, pid/tid and event index, and data_size bytes of the impl's own
 * (a stack id and a size for a leak finder, a pointer to a copy of the raw event for --detail:
 * the impl frees what it points to in its release hook).
 *
 * Every event ends up in exactly one outcome, counted, never silent:
 *
 *   paired     an end met its start: impl->paired(start, end, delta)
 *   replaced   a start was pending when a newer start with the same key came: the older one
 *              leaves (impl->unpaired), the newer one waits
 *   no_start   an end found no start (its start came before the run, was filtered, lost...)
 *   open       a start still pending when the run ended (pair__finish); for a leak finder these
 *              are the leaks
 *   evicted    the table held max_pending starts: the oldest one left to make room
 *   lost       a start invalidated by a lost window (pair__lost): the kernel dropped events
 *              after it, maybe its end, so its latency is never computed
 *   reversed   an end earlier than its start (events delivered out of time order): no latency
 *   nomem      a start that could not be stored (no memory)
 *   unwound    a start the caller gave up on (pair__cancel): nested calls, whose inner call's
 *              end never came while an outer call ended
 *
 * Lost windows. A ring loss tells that events were dropped before the moment it is noticed, not
 * exactly when. pair__lost(pr, barrier) therefore invalidates every start older than barrier
 * (the events' clock at the time the loss was noticed), and any start older than the barrier
 * that is delivered later (it waited in the time-order backlog) is invalidated on arrival. So a
 * pair whose start precedes a loss is never measured: no latency is ever computed across lost
 * events (bcc's runqlat once printed a 1.3e9 us latency from such a pair). The price is that
 * pairs entirely before the loss are dropped too; they are counted as lost.
 *
 * Not thread-safe. Entry pointers are valid until the next pair__start.
 */

/* The default bound of pending starts per engine (about 64 bytes plus data_size each). */
#define PAIR_DEFAULT_MAX_PENDING (256 * 1024)

enum pair_outcome {
	PAIR_PAIRED,
	PAIR_REPLACED,
	PAIR_NO_START,
	PAIR_OPEN,
	PAIR_EVICTED,
	PAIR_LOST,
	PAIR_REVERSED,
	PAIR_NOMEM,
	PAIR_UNWOUND,
	PAIR_NR_OUTCOMES,
};

/* "paired", "replaced", "no_start", "open", "evicted", "lost", "reversed", "nomem", "unwound":
 * JSON keys. */
const char *pair_outcome__name(enum pair_outcome o);
/* One line for people: "starts replaced by a newer start of the same key". */
const char *pair_outcome__help(enum pair_outcome o);

/* One event as the engine sees it. */
struct pair_event {
	uint64_t key;
	uint64_t time; /* ns, the events' clock (perf sample time) */
	int cpu;
	uint32_t pid, tid;
	int idx; /* the caller's event index (which -e event) */
	const struct psc_sample *sample; /* NULL for synthetic events (tests) */
	void *ctx; /* the caller's, passed through to the impl */
};

/* A pending start. The impl's data_size bytes follow it (pair_entry__data). */
struct pair_entry {
	uint64_t key;
	uint64_t time;
	int cpu;
	uint32_t pid, tid;
	int idx;
	uint32_t prev, next; /* the engine's age list */
};

static inline void *pair_entry__data(struct pair_entry *e)
{
	return e + 1;
}

static inline const void *pair_entry__cdata(const struct pair_entry *e)
{
	return e + 1;
}

/*
 * What an engine does with its outcomes: a small vtable, all hooks optional. ctx is
 * pair_opts.ctx. data is the entry's data_size bytes (zeroed before start).
 */
struct pair_impl {
	const char *name; /* "delay", "pair", "kmemprof", "syscalls", "call", "call-delay" */
	size_t data_size;
	/*
	 * A start is stored: fill data from ev (copy what must outlive the sample). 0, or -errno:
	 * the start is then not kept and counted as nomem.
	 */
	int (*start)(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev);
	/* An end met its start; delta = end time - start time, >= 0. The entry leaves after. */
	void (*paired)(void *ctx, const struct pair_entry *start, void *data,
		       const struct pair_event *end, uint64_t delta);
	/* A start leaves without its end: why is replaced, open, evicted, lost or reversed. */
	void (*unpaired)(void *ctx, const struct pair_entry *start, void *data,
			 enum pair_outcome why);
	/* An end with no start. */
	void (*no_start)(void *ctx, const struct pair_event *end);
	/* The entry's data is going away (after paired or unpaired): free what it points to. */
	void (*release)(void *ctx, void *data);
};

struct pair_opts {
	const struct pair_impl *impl; /* NULL: count outcomes only */
	void *ctx; /* for the impl's hooks */
	size_t max_pending; /* 0: PAIR_DEFAULT_MAX_PENDING */
	/*
	 * Starts may come out of time order (--no-order): pair__lost then walks every entry
	 * instead of stopping at the first one newer than the barrier.
	 */
	bool unordered;
};

struct pair;

/* NULL + errno on failure. */
struct pair *pair__new(const struct pair_opts *opts);
/* Releases pending entries (impl->release, no outcome counted: call pair__finish first). */
void pair__delete(struct pair *pr);

/*
 * A start: stored under ev->key (replacing, and counting, an older one with the same key;
 * evicting the oldest when full). Returns 0, or 1 when the start was not kept (older than the
 * last lost window: counted lost; no memory or impl->start failed: counted nomem).
 */
int pair__start(struct pair *pr, const struct pair_event *ev);
/*
 * An end: pairs with the start of ev->key. Returns 1 when paired, 0 otherwise (no_start,
 * reversed).
 */
int pair__end(struct pair *pr, const struct pair_event *ev);
/*
 * The pending start of key leaves without its end, counted as unwound (impl->unpaired(...,
 * PAIR_UNWOUND)). Returns 1 when there was one, 0 otherwise.
 */
int pair__cancel(struct pair *pr, uint64_t key);
/* The pending start of key, NULL when none. */
struct pair_entry *pair__find(struct pair *pr, uint64_t key);
/*
 * A lost window noticed at barrier (the events' clock; UINT64_MAX: now, everything pending):
 * every start older than barrier is invalidated (outcome lost), and so is any start older than
 * it that comes later.
 */
void pair__lost(struct pair *pr, uint64_t barrier);
/* The run ends: every pending start leaves as open (impl->unpaired(..., PAIR_OPEN)). */
void pair__finish(struct pair *pr);

/* Calls fn for each pending start, oldest first (leak reports at -i), without removing any. */
void pair__for_each_pending(struct pair *pr,
			    void (*fn)(void *arg, const struct pair_entry *e, const void *data),
			    void *arg);

uint64_t pair__count(const struct pair *pr, enum pair_outcome o);
/* All outcome counters at once (PAIR_NR_OUTCOMES entries). */
const uint64_t *pair__counts(const struct pair *pr);
size_t pair__nr_pending(const struct pair *pr);
size_t pair__max_pending(const struct pair *pr);
/* The largest number of starts pending at once so far. */
size_t pair__peak_pending(const struct pair *pr);
/* Bytes of memory the engine holds (the table and the entries). */
size_t pair__memory(const struct pair *pr);

#endif
