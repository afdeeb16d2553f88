/* multi-trace --impl kmemprof: bytes allocated, freed and not freed, by allocation stack. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "multi_trace.h"
#include "pair_out.h"

/* Stacks shown at the end, most bytes not freed first. */
#define KMEM_TOP 10

/* The allocations of one stack (one group when the alloc events carry no stack). */
struct kmem_group {
	uint64_t alloc_count, alloc_bytes;
	uint64_t free_count, free_bytes;
	struct pair_copy *sample; /* the first allocation's, to print the stack from */
};

struct mt_kmem {
	struct keymap groups; /* stack hash -> struct kmem_group * */
	struct kmem_group total;
	uint64_t size_errors, nomem;
};

int mt_kmem__new(struct mt_link *lk)
{
	lk->kmem = calloc(1, sizeof(*lk->kmem));
	if (!lk->kmem || keymap__init(&lk->kmem->groups, sizeof(struct kmem_group *), 0))
		return -ENOMEM;
	return 0;
}

void mt_kmem__delete(struct mt_kmem *k)
{
	struct keymap_iter it;
	struct kmem_group **g;
	uint64_t key;

	if (!k)
		return;
	keymap__for_each(&k->groups, &it, key, g)
	{
		free((*g)->sample);
		free(*g);
	}
	keymap__exit(&k->groups);
	free(k);
}

/* FNV-1a over the frames: the same stack, the same group. */
static uint64_t stack_hash(const struct psc_sample *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	if (!s || !(s->sample_type & PERF_SAMPLE_CALLCHAIN) || !s->callchain.ips)
		return 0;
	for (uint64_t i = 0; i < s->callchain.nr; i++) {
		h ^= s->callchain.ips[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

void mt_kmem__alloc(struct prof *p, struct mt_link *lk, struct mt_data *d,
		    const struct pair_event *ev)
{
	struct mt_kmem *k = lk->kmem;
	struct mt_ev *me = p->events_arr[ev->idx].priv;
	const struct psc_sample *s = ev->sample;
	struct kmem_group **slot;
	struct expr_val v;
	bool created;

	d->size = 0;
	if (me->size && s) {
		if (expr__eval(me->size, s->raw.data, s->raw.size, s, &v))
			k->size_errors++;
		else
			d->size = v.i;
	}
	k->total.alloc_count++;
	k->total.alloc_bytes += d->size;
	slot = keymap__insert(&k->groups, stack_hash(s), &created);
	if (slot && created) {
		*slot = calloc(1, sizeof(**slot));
		if (*slot && s)
			(*slot)->sample = pair_copy__new(s, ev->idx, ev->cpu, ev->key);
	}
	if (!slot || !*slot) {
		k->nomem++;
		d->group = NULL;
		return;
	}
	(*slot)->alloc_count++;
	(*slot)->alloc_bytes += d->size;
	d->group = *slot; /* groups live until the end: the pointer stays valid */
}

void mt_kmem__free(struct mt_link *lk, const struct mt_data *d)
{
	struct kmem_group *g = d->group;

	lk->kmem->total.free_count++;
	lk->kmem->total.free_bytes += d->size;
	if (g) {
		g->free_count++;
		g->free_bytes += d->size;
	}
}

static uint64_t unfreed(const struct kmem_group *g)
{
	return g->alloc_bytes - g->free_bytes;
}

static int cmp_group(const void *a, const void *b)
{
	const struct kmem_group *x = *(const struct kmem_group *const *)a;
	const struct kmem_group *y = *(const struct kmem_group *const *)b;

	if (unfreed(x) != unfreed(y))
		return unfreed(x) < unfreed(y) ? 1 : -1;
	return x->alloc_bytes < y->alloc_bytes ? 1 : x->alloc_bytes > y->alloc_bytes ? -1 : 0;
}

static void group_json(struct prof *p, struct mt_link *lk, const struct kmem_group *g, bool stack)
{
	JSON_KEY(&p->json, "alloc_count");
	json__u64(&p->json, g->alloc_count);
	JSON_KEY(&p->json, "alloc_bytes");
	json__u64(&p->json, g->alloc_bytes);
	JSON_KEY(&p->json, "free_count");
	json__u64(&p->json, g->free_count);
	JSON_KEY(&p->json, "free_bytes");
	json__u64(&p->json, g->free_bytes);
	/* what a leak finder reports: not freed */
	JSON_KEY(&p->json, "count");
	json__u64(&p->json, g->alloc_count - g->free_count);
	JSON_KEY(&p->json, "bytes");
	json__u64(&p->json, unfreed(g));
	if (stack) {
		JSON_KEY(&p->json, "stack");
		if (g->sample)
			prof__stack_json(p, &g->sample->s);
		else
			json__null(&p->json);
	}
}

void mt_kmem__print(struct prof *p, struct mt_link *lk)
{
	struct mt_kmem *k = lk->kmem;
	const uint64_t *c = pair__counts(lk->pr);
	struct kmem_group **arr, **g;
	struct keymap_iter it;
	size_t n = 0;
	uint64_t key;
	bool stacks = false;
	char b[3][32];

	arr = calloc(keymap__nr(&k->groups) + 1, sizeof(*arr));
	if (arr) {
		keymap__for_each(&k->groups, &it, key, g)
		{
			arr[n++] = *g;
			stacks |= key != 0;
		}
		qsort(arr, n, sizeof(*arr), cmp_group);
	}
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "pair");
		json__str(&p->json, lk->name);
		JSON_KEY(&p->json, "final");
		json__bool(&p->json, true);
		group_json(p, lk, &k->total, false);
		pair_out__json(&p->json, c);
		json__end_line(&p->json);
		for (size_t i = 0; stacks && i < n; i++) {
			json__begin(&p->json, p->out);
			JSON_KEY(&p->json, "pair");
			json__str(&p->json, lk->name);
			JSON_KEY(&p->json, "final");
			json__bool(&p->json, true);
			group_json(p, lk, arr[i], true);
			json__end_line(&p->json);
		}
		free(arr);
		return;
	}
	out__printf(p->out, "%s (kmemprof)\n", lk->name);
	hist_fmt(b[0], sizeof(b[0]), k->total.alloc_bytes, "bytes");
	hist_fmt(b[1], sizeof(b[1]), k->total.free_bytes, "bytes");
	hist_fmt(b[2], sizeof(b[2]), unfreed(&k->total), "bytes");
	out__printf(p->out, "  allocated %llu objects, %s; freed %llu, %s; not freed %llu, %s\n",
		    (unsigned long long)k->total.alloc_count, b[0],
		    (unsigned long long)k->total.free_count, b[1],
		    (unsigned long long)(k->total.alloc_count - k->total.free_count), b[2]);
	for (size_t i = 0; stacks && i < n && i < KMEM_TOP; i++) {
		hist_fmt(b[0], sizeof(b[0]), arr[i]->alloc_bytes, "bytes");
		hist_fmt(b[2], sizeof(b[2]), unfreed(arr[i]), "bytes");
		out__printf(p->out, "  %llu objects, %s allocated; %llu, %s not freed:\n",
			    (unsigned long long)arr[i]->alloc_count, b[0],
			    (unsigned long long)(arr[i]->alloc_count - arr[i]->free_count), b[2]);
		if (arr[i]->sample)
			prof__stack_text(p, &arr[i]->sample->s);
	}
	if (stacks && n > KMEM_TOP)
		out__printf(p->out, "  ... %zu more stacks (--format json has them all)\n",
			    n - KMEM_TOP);
	if (k->size_errors || k->nomem)
		out__printf(p->out,
			    "  %llu sizes not computed, %llu allocations not grouped (no "
			    "memory)\n",
			    (unsigned long long)k->size_errors, (unsigned long long)k->nomem);
	free(arr);
}
