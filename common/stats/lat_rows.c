/* Latency rows by key: created on first use, sorted for printing, summed, reset per interval. */
#include "keymap_sorted.h"
#include "lat_row.h"

#include <stdlib.h>

int lat_rows__init(struct lat_rows *rs)
{
	return keymap__init(&rs->map, sizeof(struct lat_row *), 0);
}

void lat_rows__exit(struct lat_rows *rs)
{
	struct keymap_iter it;
	struct lat_row **v;
	uint64_t key;

	keymap__for_each(&rs->map, &it, key, v) lat_row__delete(*v);
	keymap__exit(&rs->map);
}

struct lat_row *lat_rows__get(struct lat_rows *rs, uint64_t key)
{
	bool created;
	struct lat_row **slot = keymap__insert(&rs->map, key, &created);

	if (!slot)
		return NULL;
	if (created) {
		*slot = lat_row__new(key);
		if (!*slot) {
			keymap__remove(&rs->map, key);
			return NULL;
		}
	}
	return *slot;
}

/* qsort's order over struct lat_row ** applied to keymap entries, whose values are those slots. */
struct row_order {
	int (*cmp)(const void *, const void *);
};

static int by_row(const void *a, const void *b, void *ctx)
{
	const struct row_order *o = ctx;

	return o->cmp(((const struct keymap_entry *)a)->value,
		      ((const struct keymap_entry *)b)->value);
}

struct lat_row **lat_rows__sorted(struct lat_rows *rs, int (*cmp)(const void *, const void *),
				  size_t *nr)
{
	struct row_order o = { cmp };
	size_t n;
	struct keymap_entry *e = keymap__sorted(&rs->map, by_row, &o, &n);
	struct lat_row **arr = e ? calloc(n + 1, sizeof(*arr)) : NULL;

	if (arr) {
		for (size_t i = 0; i < n; i++)
			arr[i] = *(struct lat_row **)e[i].value;
		*nr = n;
	}
	free(e);
	return arr;
}

void lat_rows__reset_ival(struct lat_rows *rs)
{
	struct keymap_iter it;
	struct lat_row **v;
	uint64_t key;

	keymap__for_each(&rs->map, &it, key, v) lat_row__reset_ival(*v);
}

uint64_t lat_rows__sum(struct lat_rows *rs, struct lat_row *into)
{
	struct keymap_iter it;
	struct lat_row **v;
	uint64_t key, failed = 0;

	hist__reset(&into->total);
	hist__reset(&into->ival);
	into->over = into->ival_over = into->errors = into->ival_errors = 0;
	keymap__for_each(&rs->map, &it, key, v)
	{
		if (hist__merge(&into->total, &(*v)->total) ||
		    hist__merge(&into->ival, &(*v)->ival))
			failed++;
		into->over += (*v)->over;
		into->ival_over += (*v)->ival_over;
		into->errors += (*v)->errors;
		into->ival_errors += (*v)->ival_errors;
	}
	return failed;
}

int lat_row__cmp_id(const void *a, const void *b)
{
	const struct lat_row *x = *(const struct lat_row *const *)a;
	const struct lat_row *y = *(const struct lat_row *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int lat_row__cmp_count(const void *a, const void *b)
{
	const struct lat_row *x = *(const struct lat_row *const *)a;
	const struct lat_row *y = *(const struct lat_row *const *)b;

	if (hist__count(&x->total) != hist__count(&y->total))
		return hist__count(&x->total) < hist__count(&y->total) ? 1 : -1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int lat_row__cmp_total(const void *a, const void *b)
{
	const struct lat_row *x = *(const struct lat_row *const *)a;
	const struct lat_row *y = *(const struct lat_row *const *)b;
	hist_u128 sx = hist__count(&x->total) ? hist__sum(&x->total) : 0;
	hist_u128 sy = hist__count(&y->total) ? hist__sum(&y->total) : 0;

	if (sx != sy)
		return sx < sy ? 1 : -1;
	return lat_row__cmp_count(a, b);
}
