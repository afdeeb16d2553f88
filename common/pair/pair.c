/* pair: the two-event engine (pending starts by key, outcomes, lost windows); see pair.h. */
#include "pair.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "keymap.h"

#define NONE UINT32_MAX

/*
 * Entries live in one array (a slab) and are found through a keymap key -> slab index: indices
 * stay valid when the array grows, so the age list (oldest first, for eviction and lost
 * windows) links indices, and unlinking is O(1) whichever way an entry leaves.
 */
struct pair {
	struct pair_opts opts;
	const struct pair_impl *impl;
	struct keymap index; /* key -> uint32 slab index */
	char *slab;
	size_t stride; /* sizeof(struct pair_entry) + data_size, 8-aligned */
	uint32_t cap, used; /* slab slots allocated, slots ever handed out */
	uint32_t free; /* free list through next */
	uint32_t oldest, newest;
	size_t nr, peak;
	uint64_t barrier; /* starts older than this are lost */
	uint64_t counts[PAIR_NR_OUTCOMES];
};

static const char *const outcome_names[PAIR_NR_OUTCOMES] = {
	[PAIR_PAIRED] = "paired",     [PAIR_REPLACED] = "replaced", [PAIR_NO_START] = "no_start",
	[PAIR_OPEN] = "open",	      [PAIR_EVICTED] = "evicted",   [PAIR_LOST] = "lost",
	[PAIR_REVERSED] = "reversed", [PAIR_NOMEM] = "nomem",	    [PAIR_UNWOUND] = "unwound",
};

static const char *const outcome_help[PAIR_NR_OUTCOMES] = {
	[PAIR_PAIRED] = "paired",
	[PAIR_REPLACED] = "starts replaced by a newer start of the same key",
	[PAIR_NO_START] = "ends with no start",
	[PAIR_OPEN] = "starts still open at the end",
	[PAIR_EVICTED] = "starts evicted (pending table full)",
	[PAIR_LOST] = "starts invalidated by lost events",
	[PAIR_REVERSED] = "ends before their start (out of order)",
	[PAIR_NOMEM] = "starts not kept (no memory)",
	[PAIR_UNWOUND] = "nested starts whose end never came while an outer one ended",
};

const char *pair_outcome__name(enum pair_outcome o)
{
	return (unsigned int)o < PAIR_NR_OUTCOMES ? outcome_names[o] : "?";
}

const char *pair_outcome__help(enum pair_outcome o)
{
	return (unsigned int)o < PAIR_NR_OUTCOMES ? outcome_help[o] : "?";
}

static struct pair_entry *ent(const struct pair *pr, uint32_t i)
{
	return (struct pair_entry *)(void *)(pr->slab + (size_t)i * pr->stride);
}

struct pair *pair__new(const struct pair_opts *opts)
{
	static const struct pair_impl none = { .name = "count" };
	struct pair *pr = calloc(1, sizeof(*pr));
	size_t data;

	if (!pr)
		return NULL;
	if (opts)
		pr->opts = *opts;
	pr->impl = pr->opts.impl ? pr->opts.impl : &none;
	if (!pr->opts.max_pending)
		pr->opts.max_pending = PAIR_DEFAULT_MAX_PENDING;
	if (pr->opts.max_pending >= NONE)
		pr->opts.max_pending = NONE - 1;
	data = (pr->impl->data_size + 7) & ~(size_t)7;
	pr->stride = sizeof(struct pair_entry) + data;
	pr->free = pr->oldest = pr->newest = NONE;
	if (keymap__init(&pr->index, sizeof(uint32_t), 0)) {
		free(pr);
		errno = ENOMEM;
		return NULL;
	}
	return pr;
}

static void release(struct pair *pr, struct pair_entry *e)
{
	if (pr->impl->release)
		pr->impl->release(pr->opts.ctx, pair_entry__data(e));
}

void pair__delete(struct pair *pr)
{
	if (!pr)
		return;
	for (uint32_t i = pr->oldest; i != NONE; i = ent(pr, i)->next)
		release(pr, ent(pr, i));
	keymap__exit(&pr->index);
	free(pr->slab);
	free(pr);
}

/* Takes entry i out of the age list (it stays in the index and the slab). */
static void unlink_age(struct pair *pr, uint32_t i)
{
	struct pair_entry *e = ent(pr, i);

	if (e->prev != NONE)
		ent(pr, e->prev)->next = e->next;
	else
		pr->oldest = e->next;
	if (e->next != NONE)
		ent(pr, e->next)->prev = e->prev;
	else
		pr->newest = e->prev;
}

/* Frees entry i; slot: its value in the index when the caller holds it, else NULL. */
static void unlink_entry(struct pair *pr, uint32_t i, uint32_t *slot)
{
	struct pair_entry *e = ent(pr, i);

	unlink_age(pr, i);
	if (slot)
		keymap__remove_value(&pr->index, e->key, slot);
	else
		keymap__remove(&pr->index, e->key);
	e->next = pr->free;
	pr->free = i;
	pr->nr--;
}

/* Entry i leaves without its end: counted, told, released, freed. */
static void drop(struct pair *pr, uint32_t i, enum pair_outcome why)
{
	struct pair_entry *e = ent(pr, i);

	pr->counts[why]++;
	if (pr->impl->unpaired)
		pr->impl->unpaired(pr->opts.ctx, e, pair_entry__data(e), why);
	release(pr, e);
	unlink_entry(pr, i, NULL);
}

/* A free slab slot, growing the slab (never past max_pending); NONE when out of memory. */
/*
 * Zeroes an impl's data: a few u64s (the stride is 8-aligned), stored 32 and 8 bytes at
 * a time. memset with a size known only at run time is a call into the C library, whose wide
 * stores cost more per start than the whole of the rest of it.
 */
static inline void clear_data(void *data, size_t n)
{
	char *d = data;
	size_t k = 0;

	for (; k + 32 <= n; k += 32)
		memset(d + k, 0, 32);
	for (; k < n; k += 8)
		memset(d + k, 0, 8);
}

static uint32_t alloc_slot(struct pair *pr)
{
	uint32_t i;

	if (pr->free != NONE) {
		i = pr->free;
		pr->free = ent(pr, i)->next;
		return i;
	}
	if (pr->used == pr->cap) {
		size_t ncap = pr->cap ? (size_t)pr->cap * 2 : 64;
		char *n;

		if (ncap > pr->opts.max_pending)
			ncap = pr->opts.max_pending;
		if (ncap <= pr->cap)
			return NONE;
		n = realloc(pr->slab, ncap * pr->stride);
		if (!n)
			return NONE;
		pr->slab = n;
		pr->cap = (uint32_t)ncap;
	}
	return pr->used++;
}

int pair__start(struct pair *pr, const struct pair_event *ev)
{
	struct pair_entry *e;
	uint32_t *slot, i;
	bool created;

	if (ev->time < pr->barrier) {
		/* it waited in the order backlog while events after it were lost */
		pr->counts[PAIR_LOST]++;
		return 1;
	}
	/* one lookup: a key already there has its entry reused in place, as the newest */
	slot = keymap__insert(&pr->index, ev->key, &created);
	if (!slot)
		goto nomem;
	if (!created) {
		i = *slot;
		e = ent(pr, i);
		pr->counts[PAIR_REPLACED]++;
		if (pr->impl->unpaired)
			pr->impl->unpaired(pr->opts.ctx, e, pair_entry__data(e), PAIR_REPLACED);
		release(pr, e);
		unlink_age(pr, i);
	} else {
		if (pr->nr >= pr->opts.max_pending) {
			drop(pr, pr->oldest, PAIR_EVICTED);
			/* the removal may have moved our key's slot */
			slot = keymap__find(&pr->index, ev->key);
		}
		i = alloc_slot(pr);
		if (i == NONE) {
			keymap__remove(&pr->index, ev->key);
			goto nomem;
		}
		*slot = i;
		pr->nr++;
	}
	e = ent(pr, i);
	/* the header by assignment, the impl's data cleared apart: no memset call per start */
	*e = (struct pair_entry){ .key = ev->key,
				  .time = ev->time,
				  .cpu = ev->cpu,
				  .pid = ev->pid,
				  .tid = ev->tid,
				  .idx = ev->idx,
				  .prev = pr->newest,
				  .next = NONE };
	clear_data(pair_entry__data(e), pr->stride - sizeof(*e));
	if (pr->newest != NONE)
		ent(pr, pr->newest)->next = i;
	else
		pr->oldest = i;
	pr->newest = i;
	if (pr->nr > pr->peak)
		pr->peak = pr->nr;
	if (pr->impl->start && pr->impl->start(pr->opts.ctx, e, pair_entry__data(e), ev)) {
		/* nothing to release: the impl did not take the start */
		pr->counts[PAIR_NOMEM]++;
		unlink_entry(pr, i, NULL);
		return 1;
	}
	return 0;
nomem:
	pr->counts[PAIR_NOMEM]++;
	return 1;
}

int pair__end(struct pair *pr, const struct pair_event *ev)
{
	uint32_t *slot = keymap__find(&pr->index, ev->key);
	struct pair_entry *e;
	uint32_t i;

	if (!slot) {
		pr->counts[PAIR_NO_START]++;
		if (pr->impl->no_start)
			pr->impl->no_start(pr->opts.ctx, ev);
		return 0;
	}
	i = *slot;
	e = ent(pr, i);
	if (ev->time < e->time) {
		drop(pr, i, PAIR_REVERSED);
		return 0;
	}
	pr->counts[PAIR_PAIRED]++;
	if (pr->impl->paired)
		pr->impl->paired(pr->opts.ctx, e, pair_entry__data(e), ev, ev->time - e->time);
	release(pr, e);
	unlink_entry(pr, i, slot);
	return 1;
}

int pair__cancel(struct pair *pr, uint64_t key)
{
	uint32_t *slot = keymap__find(&pr->index, key);

	if (!slot)
		return 0;
	drop(pr, *slot, PAIR_UNWOUND);
	return 1;
}

struct pair_entry *pair__find(struct pair *pr, uint64_t key)
{
	uint32_t *slot = keymap__find(&pr->index, key);

	return slot ? ent(pr, *slot) : NULL;
}

void pair__lost(struct pair *pr, uint64_t barrier)
{
	uint32_t i, next;

	if (barrier > pr->barrier)
		pr->barrier = barrier;
	for (i = pr->oldest; i != NONE; i = next) {
		struct pair_entry *e = ent(pr, i);

		next = e->next;
		if (e->time < barrier || barrier == UINT64_MAX)
			drop(pr, i, PAIR_LOST);
		else if (!pr->opts.unordered)
			break; /* the list is in time order: the rest are newer */
	}
}

void pair__finish(struct pair *pr)
{
	while (pr->oldest != NONE)
		drop(pr, pr->oldest, PAIR_OPEN);
}

void pair__for_each_pending(struct pair *pr,
			    void (*fn)(void *arg, const struct pair_entry *e, const void *data),
			    void *arg)
{
	for (uint32_t i = pr->oldest; i != NONE; i = ent(pr, i)->next)
		fn(arg, ent(pr, i), pair_entry__cdata(ent(pr, i)));
}

uint64_t pair__count(const struct pair *pr, enum pair_outcome o)
{
	return (unsigned int)o < PAIR_NR_OUTCOMES ? pr->counts[o] : 0;
}

const uint64_t *pair__counts(const struct pair *pr)
{
	return pr->counts;
}

size_t pair__nr_pending(const struct pair *pr)
{
	return pr->nr;
}

size_t pair__max_pending(const struct pair *pr)
{
	return pr->opts.max_pending;
}

size_t pair__peak_pending(const struct pair *pr)
{
	return pr->peak;
}

size_t pair__memory(const struct pair *pr)
{
	return sizeof(*pr) + (size_t)pr->cap * pr->stride +
	       (pr->index.mask + 1) * pr->index.stride;
}
