/* keymap: the u64-keyed hash table (linear probing, backward-shift removal); see keymap.h. */
#include "keymap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SLOTS 8

/* Past 70% load, linear probing's misses grow quickly (about 6 slots read at 70%, 50 at 90%). */
static bool over_load(size_t nr, size_t slots)
{
	return nr * 10 > slots * 7;
}

static int alloc_slots(struct keymap *m, size_t nr_slots)
{
	unsigned int bits = 0;

	while (((size_t)1 << bits) < nr_slots)
		bits++;
	m->slots = calloc(nr_slots, m->stride);
	if (!m->slots)
		return -ENOMEM;
	m->mask = nr_slots - 1;
	m->shift = 64 - bits;
	return 0;
}

int keymap__init(struct keymap *m, size_t value_size, size_t initial)
{
	size_t nr_slots = MIN_SLOTS;

	memset(m, 0, sizeof(*m));
	m->value_size = value_size;
	m->stride = sizeof(uint64_t) + ((value_size + 7) & ~(size_t)7);
	while (over_load(initial, nr_slots))
		nr_slots *= 2;
	m->zero = malloc(value_size ? value_size : 1);
	if (!m->zero || alloc_slots(m, nr_slots)) {
		free(m->zero);
		m->zero = NULL;
		return -ENOMEM;
	}
	return 0;
}

void keymap__exit(struct keymap *m)
{
	free(m->slots);
	free(m->zero);
	memset(m, 0, sizeof(*m));
}

void keymap__clear(struct keymap *m)
{
	if (!m->slots)
		return; /* never initialized (or exited): nothing to clear, as keymap__exit allows */
	memset(m->slots, 0, (m->mask + 1) * m->stride);
	m->has_zero = false;
	m->nr = 0;
}

/* The empty slot where key goes (key absent, a free slot guaranteed by the load bound). */
static uint64_t *free_slot(const struct keymap *m, uint64_t key)
{
	size_t i;

	for (i = keymap__home(m, key); *keymap__slot(m, i); i = (i + 1) & m->mask)
		;
	return keymap__slot(m, i);
}

static int grow(struct keymap *m)
{
	struct keymap old = *m;
	size_t i;

	if (alloc_slots(m, (old.mask + 1) * 2)) {
		*m = old;
		return -ENOMEM;
	}
	for (i = 0; i <= old.mask; i++) {
		uint64_t *slot = keymap__slot(&old, i);

		if (*slot)
			memcpy(free_slot(m, *slot), slot, m->stride);
	}
	free(old.slots);
	return 0;
}

void *keymap__insert(struct keymap *m, uint64_t key, bool *created)
{
	bool dummy;
	uint64_t *slot;
	size_t i;

	if (!created)
		created = &dummy;
	*created = false;
	if (!key) {
		if (!m->has_zero) {
			memset(m->zero, 0, m->value_size);
			m->has_zero = true;
			m->nr++;
			*created = true;
		}
		return m->zero;
	}
	for (i = keymap__home(m, key);; i = (i + 1) & m->mask) {
		slot = keymap__slot(m, i);
		if (*slot == key)
			return slot + 1;
		if (!*slot)
			break;
	}
	if (over_load(m->nr + 1, m->mask + 1)) {
		if (grow(m))
			return NULL;
		slot = free_slot(m, key);
	}
	*slot = key;
	memset(slot + 1, 0, m->stride - sizeof(uint64_t));
	m->nr++;
	*created = true;
	return slot + 1;
}

/*
 * Empties slot i and moves back each following entry of its run that may sit there, i.e. whose
 * home is not cyclically within (i, j]: lookups, which stop at the first empty slot, still find
 * every entry (Knuth's algorithm R).
 */
static void remove_at(struct keymap *m, size_t i)
{
	size_t j = i;

	for (;;) {
		uint64_t *slot;
		size_t home;

		j = (j + 1) & m->mask;
		slot = keymap__slot(m, j);
		if (!*slot)
			break;
		home = keymap__home(m, *slot);
		if (((j - home) & m->mask) >= ((j - i) & m->mask)) {
			memcpy(keymap__slot(m, i), slot, m->stride);
			i = j;
		}
	}
	*keymap__slot(m, i) = 0;
	m->nr--;
}

bool keymap__remove(struct keymap *m, uint64_t key)
{
	size_t i;

	if (!key) {
		if (!m->has_zero)
			return false;
		m->has_zero = false;
		m->nr--;
		return true;
	}
	for (i = keymap__home(m, key);; i = (i + 1) & m->mask) {
		uint64_t *slot = keymap__slot(m, i);

		if (*slot == key) {
			remove_at(m, i);
			return true;
		}
		if (!*slot)
			return false;
	}
}

void keymap__remove_value(struct keymap *m, uint64_t key, void *value)
{
	uintptr_t off = (uintptr_t)value - sizeof(uint64_t) - (uintptr_t)m->slots;
	size_t i = off / m->stride;

	/* off wraps to a huge value for a pointer below the slots (key 0's value) */
	if (key && off % m->stride == 0 && i <= m->mask && *keymap__slot(m, i) == key)
		remove_at(m, i);
	else
		keymap__remove(m, key);
}

void *keymap__next(const struct keymap *m, struct keymap_iter *it, uint64_t *key)
{
	it->has_cur = true;
	it->at_zero = false;
	if (it->phase == 0) {
		it->phase = 1;
		if (m->has_zero) {
			it->at_zero = true;
			*key = 0;
			return m->zero;
		}
	}
	if (it->phase == 1) {
		for (it->start = 0; *keymap__slot(m, it->start); it->start++)
			;
		it->step = 0;
		it->phase = 2;
	}
	if (it->phase == 2) {
		while (it->step <= m->mask) {
			uint64_t *slot = keymap__slot(m, (it->start + 1 + it->step) & m->mask);

			it->step++;
			if (*slot) {
				*key = *slot;
				return slot + 1;
			}
		}
		it->phase = 3;
	}
	it->has_cur = false;
	return NULL;
}

/*
 * The shifts of a removal move entries from later in the run into the emptied slot, never across
 * the empty start slot, so the walk looks at that slot again and misses nothing.
 */
void keymap__iter_remove(struct keymap *m, struct keymap_iter *it)
{
	if (!it->has_cur)
		return;
	it->has_cur = false;
	if (it->at_zero) {
		keymap__remove(m, 0);
		return;
	}
	it->step--;
	remove_at(m, (it->start + 1 + it->step) & m->mask);
}
