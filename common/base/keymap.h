/* keymap: one u64-keyed hash table with fixed-size values stored inline, for every engine. */
#ifndef PERFSCOPE_COMMON_KEYMAP_H
#define PERFSCOPE_COMMON_KEYMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Open addressing with linear probing over a power-of-two array of slots, each a u64 key followed
 * by its value (value_size rounded up to 8 bytes, so values are 8-byte aligned). Key 0 marks an
 * empty slot, so the entry of key 0 lives apart; every u64, 0 and UINT64_MAX included, is a valid
 * key. The table doubles past 70% load and never shrinks (keymap__clear empties it); removal
 * shifts the following entries back (no tombstones), so lookups stay short after many removals.
 *
 * A value pointer is valid until the next keymap__insert or keymap__remove (entries move).
 * Not thread-safe.
 */
struct keymap {
	char *slots; /* (mask + 1) * stride bytes */
	size_t stride; /* 8 + value size rounded up to 8 */
	size_t value_size;
	size_t mask;
	unsigned int shift; /* 64 - log2(mask + 1): the hash's top bits index the array */
	size_t nr; /* entries, key 0 included */
	bool has_zero;
	void *zero; /* the value of key 0 */
};

/*
 * Room for `initial` entries before the first growth (0: a small default). value_size may be 0
 * (a set). Returns 0 or -ENOMEM.
 */
int keymap__init(struct keymap *m, size_t value_size, size_t initial);
/* Frees the table; m may then be initialised again. Safe on a zeroed struct. */
void keymap__exit(struct keymap *m);
/* Removes every entry, keeping the memory. */
void keymap__clear(struct keymap *m);

/*
 * Fibonacci hashing: the multiplication carries every lower key bit into the top bits taken; the
 * xor first brings the high half down, so keys differing only there (a << 48) spread too. Both
 * steps are bijective: distinct keys never share a hash.
 */
static inline size_t keymap__home(const struct keymap *m, uint64_t key)
{
	return (size_t)(((key ^ (key >> 32)) * 0x9e3779b97f4a7c15ull) >> m->shift);
}

static inline uint64_t *keymap__slot(const struct keymap *m, size_t i)
{
	return (uint64_t *)(void *)(m->slots + i * m->stride);
}

/* The value of key, or NULL when absent. */
static inline void *keymap__find(const struct keymap *m, uint64_t key)
{
	size_t i;

	if (__builtin_expect(!key, 0))
		return m->has_zero ? m->zero : NULL;
	for (i = keymap__home(m, key);; i = (i + 1) & m->mask) {
		uint64_t *slot = keymap__slot(m, i);

		if (*slot == key)
			return slot + 1;
		if (!*slot)
			return NULL;
	}
}

/*
 * The value of key, added zero-filled when absent (*created, when not NULL, says which). NULL
 * when the table had to grow and memory ran out (the table is unchanged).
 */
void *keymap__insert(struct keymap *m, uint64_t key, bool *created);
/* Returns whether key was there. */
bool keymap__remove(struct keymap *m, uint64_t key);
/*
 * Removes key, whose value keymap__find or keymap__insert returned: no second lookup when the
 * entry is still there (no insert or remove since), else as keymap__remove.
 */
void keymap__remove_value(struct keymap *m, uint64_t key, void *value);

static inline size_t keymap__nr(const struct keymap *m)
{
	return m->nr;
}

/*
 * Iteration in no particular order:
 *
 *   struct keymap_iter it;
 *   uint64_t key;
 *   struct x *v;
 *
 *   keymap__for_each(&m, &it, key, v)
 *           if (stale(v))
 *                   keymap__iter_remove(&m, &it);
 *
 * keymap__iter_remove (the entry last returned) is the only change allowed during a walk: every
 * other entry is still visited exactly once. An insert or a plain remove ends the walk's validity.
 */
struct keymap_iter {
	int phase; /* 0: key 0 next, 1: find the start, 2: in the slots, 3: done */
	bool has_cur; /* an entry was returned and not removed yet */
	bool at_zero; /* that entry is key 0's */
	size_t start; /* an empty slot: no run of entries crosses it, so shifts never do either */
	size_t step; /* slots after start visited */
};

/* The next entry's value (its key in *key), or NULL at the end; it starts zeroed. */
void *keymap__next(const struct keymap *m, struct keymap_iter *it, uint64_t *key);
/* Removes the entry keymap__next returned last. */
void keymap__iter_remove(struct keymap *m, struct keymap_iter *it);

#define keymap__for_each(m, it, key, val) \
	for (*(it) = (struct keymap_iter){ 0 }; ((val) = keymap__next((m), (it), &(key)));)

#endif
