/* toptable's rows and columns (toptable.h): summed per key, sorted by the chosen columns. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toptable.h"

int toptable__add_col(struct toptable *t, const char *title, bool by)
{
	struct toptable_col *c;

	if (t->nr_cols == t->cap_cols) {
		int cap = t->cap_cols ? 2 * t->cap_cols : 8;

		c = realloc(t->cols, (size_t)cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		t->cols = c;
		t->cap_cols = cap;
	}
	c = &t->cols[t->nr_cols];
	memset(c, 0, sizeof(*c));
	snprintf(c->title, sizeof(c->title), "%s", title);
	c->by = by;
	return t->nr_cols++;
}

int toptable__start(struct toptable *t)
{
	int n = 0;

	if (keymap__init(&t->map,
			 sizeof(struct toptable_row) + (size_t)t->nr_cols * sizeof(uint64_t), 1024))
		return -ENOMEM;
	t->order = calloc((size_t)t->nr_cols, sizeof(int));
	if (!t->order)
		return -ENOMEM;
	/* by columns first, in the order given; then the others */
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < t->nr_cols; i++)
			if (t->cols[i].by == !pass)
				t->order[n++] = i;
	for (int i = 0; i < t->nr_cols; i++) {
		int w = (int)strlen(t->cols[i].title);

		t->cols[i].width = w > 12 ? w : 12;
	}
	return 0;
}

void toptable__exit(struct toptable *t)
{
	keymap__exit(&t->map);
	free(t->cols);
	free(t->order);
	t->cols = NULL;
	t->order = NULL;
	t->nr_cols = t->cap_cols = 0;
}

struct toptable_row *toptable__row(struct toptable *t, uint64_t key, bool *created)
{
	struct toptable_row *r = keymap__insert(&t->map, key, created);

	if (!r)
		t->dropped++;
	return r;
}

void toptable_row__set_name(struct toptable_row *r, const char *s, size_t len)
{
	if (len >= sizeof(r->name))
		len = sizeof(r->name) - 1;
	memcpy(r->name, s, len);
	r->name[len] = '\0';
}

void toptable__clear(struct toptable *t)
{
	keymap__clear(&t->map);
}

/* Rows by the columns in sort order, then events, then key (qsort_r: no global state). */
static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct keymap_entry *x = a, *y = b;
	const struct toptable_row *rx = x->value, *ry = y->value;
	const struct toptable *t = ctx;

	for (int i = 0; i < t->nr_cols; i++) {
		int c = t->order[i];

		if (rx->vals[c] != ry->vals[c])
			return rx->vals[c] < ry->vals[c] ? 1 : -1;
	}
	if (rx->events != ry->events)
		return rx->events < ry->events ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

struct keymap_entry *toptable__sorted(const struct toptable *t, size_t *nr)
{
	return keymap__sorted(&t->map, cmp_rows, (void *)t, nr);
}
