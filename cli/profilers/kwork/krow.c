/* krow: named rows of one or two latency measures, sorted by total time, as text or JSON. */
#include "krow.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int krows__init(struct krows *rs, unsigned int meas)
{
	memset(rs, 0, sizeof(*rs));
	rs->meas = meas;
	return keymap__init(&rs->map, sizeof(struct krow *), 0);
}

static void krow__delete(struct krow *r)
{
	if (!r)
		return;
	for (int m = 0; m < KROW_MEAS; m++)
		lat_row__delete(r->lat[m]);
	free(r->name);
	free(r->sample);
	free(r);
}

void krows__exit(struct krows *rs)
{
	struct keymap_iter it;
	struct krow **v;
	uint64_t key;

	if (!rs->map.slots)
		return; /* never set up (--help, a usage error): nothing held */
	keymap__for_each(&rs->map, &it, key, v) krow__delete(*v);
	keymap__exit(&rs->map);
}

static struct krow *krow__new(unsigned int meas, uint64_t key)
{
	struct krow *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->key = key;
	for (int m = 0; m < KROW_MEAS; m++) {
		if (!(meas & (1u << m)))
			continue;
		r->lat[m] = lat_row__new(key);
		if (!r->lat[m]) {
			krow__delete(r);
			return NULL;
		}
	}
	return r;
}

struct krow *krows__get(struct krows *rs, uint64_t key, bool *created)
{
	struct krow **slot;

	*created = false;
	if (rs->last && rs->last->key == key)
		return rs->last;
	slot = keymap__insert(&rs->map, key, created);
	if (!slot) {
		rs->nomem++;
		return NULL;
	}
	if (*created) {
		*slot = krow__new(rs->meas, key);
		if (!*slot) {
			keymap__remove(&rs->map, key);
			rs->nomem++;
			*created = false;
			return NULL;
		}
	}
	rs->last = *slot;
	return *slot;
}

void krow__add(struct krows *rs, struct krow *r, int m, uint64_t v, bool over, bool ival)
{
	if (r->lat[m])
		lat_row__add(r->lat[m], v, over, false, ival);
	else
		rs->nomem++; /* a measure the rows were not made for: a caller's bug, counted */
}

void krows__reset_ival(struct krows *rs)
{
	struct keymap_iter it;
	struct krow **v;
	uint64_t key;

	keymap__for_each(&rs->map, &it, key, v) for (int m = 0; m < KROW_MEAS;
						     m++) if ((*v)->lat[m])
		lat_row__reset_ival((*v)->lat[m]);
}

static const struct hist *row_hist(const struct krow *r, const struct krows_print *kp)
{
	const struct lat_row *l = r->lat[kp->meas];

	return l ? (kp->final ? &l->total : &l->ival) : NULL;
}

static int sort_meas;
static bool sort_final;

/* Most total time first, then most values, then by key: the same order every run. */
static int cmp_total(const void *a, const void *b)
{
	const struct krow *x = *(const struct krow *const *)a, *y = *(const struct krow *const *)b;
	const struct lat_row *lx = x->lat[sort_meas], *ly = y->lat[sort_meas];
	const struct hist *hx = sort_final ? &lx->total : &lx->ival;
	const struct hist *hy = sort_final ? &ly->total : &ly->ival;

	if (hist__sum(hx) != hist__sum(hy))
		return hist__sum(hx) < hist__sum(hy) ? 1 : -1;
	if (hist__count(hx) != hist__count(hy))
		return hist__count(hx) < hist__count(hy) ? 1 : -1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* The rows with values in kp's measure, sorted; free() it. NULL: none or no memory. */
static struct krow **sorted(struct krows *rs, const struct krows_print *kp, size_t *nr)
{
	struct krow **arr = calloc(keymap__nr(&rs->map) + 1, sizeof(*arr));
	struct keymap_iter it;
	struct krow **v;
	uint64_t key;
	size_t n = 0;

	*nr = 0;
	if (!arr)
		return NULL;
	keymap__for_each(&rs->map, &it, key, v)
	{
		const struct hist *h = row_hist(*v, kp);

		if (h && hist__count(h))
			arr[n++] = *v;
	}
	sort_meas = kp->meas;
	sort_final = kp->final;
	qsort(arr, n, sizeof(*arr), cmp_total);
	*nr = n;
	return arr;
}

static uint64_t row_over(const struct krow *r, const struct krows_print *kp)
{
	const struct lat_row *l = r->lat[kp->meas];

	return kp->final ? l->over : l->ival_over;
}

static void print_json(struct prof *p, struct krow **rows, size_t nr, const struct krows_print *kp)
{
	for (size_t i = 0; i < nr; i++) {
		const struct krow *r = rows[i];

		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "table");
		json__str(&p->json, kp->table);
		JSON_KEY(&p->json, "name");
		json__str(&p->json, r->name ? r->name : "?");
		if (kp->json)
			kp->json(p, r, kp->arg);
		lat_row__json(&p->json, row_hist(r, kp), row_over(r, kp), NULL);
		if (kp->stacks) {
			JSON_KEY(&p->json, "stack");
			if (r->sample)
				prof__stack_json(p, &r->sample->s);
			else
				json__null(&p->json);
		}
		if (kp->final) {
			JSON_KEY(&p->json, "final");
			json__bool(&p->json, true);
		} else {
			JSON_KEY(&p->json, "interval_s");
			json__dbl(&p->json, prof__elapsed(p));
		}
		json__end_line(&p->json);
	}
}

void krows__print(struct prof *p, struct krows *rs, const struct krows_print *kp)
{
	size_t nr, shown;
	struct krow **rows = sorted(rs, kp, &nr);
	struct lat_cols cols = { .width = (int)strlen(kp->title),
				 .total_width = 10,
				 .over = kp->over };

	if (!rows)
		return;
	shown = kp->top > 0 && (size_t)kp->top < nr ? (size_t)kp->top : nr;
	if (p->json_fmt) {
		print_json(p, rows, shown, kp);
		free(rows);
		return;
	}
	for (size_t i = 0; i < shown; i++) {
		size_t l = rows[i]->name ? strlen(rows[i]->name) + 2 : 3;

		if (l > (size_t)cols.width)
			cols.width = l > 60 ? 60 : (int)l;
	}
	lat_cols__header(&cols, p->out, kp->title);
	for (size_t i = 0; i < shown; i++) {
		char label[256];

		snprintf(label, sizeof(label), "  %s", rows[i]->name ? rows[i]->name : "?");
		lat_cols__row(&cols, p->out, label, row_hist(rows[i], kp), row_over(rows[i], kp),
			      0);
		if (kp->stacks && rows[i]->sample)
			prof__stack_text(p, &rows[i]->sample->s);
	}
	if (shown < nr)
		out__printf(p->out, "  (%zu more rows; --top 0 shows all)\n", nr - shown);
	free(rows);
}

void krows__interval_head(struct prof *p)
{
	time_t t = time(NULL);
	struct tm tm;
	char buf[32];

	if (p->json_fmt)
		return;
	localtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	out__printf(p->out, "%s\n", buf);
}
