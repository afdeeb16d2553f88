/* leak: live allocations kept by the pair engine (alloc starts, free ends, by pointer), their
 * stacks symbolized once and folded, grouped by stack for kmemleak and memleak. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callchain.h"
#include "hash.h"
#include "keymap.h"
#include "leak.h"

/* What a live allocation carries in its pair entry. */
struct leak_data {
	uint64_t size;
	uint32_t stack;
};

struct leak {
	struct pair *pr;
	struct keymap raw; /* hash of pid + raw ips -> stack id (u32) */
	struct keymap by_fold; /* hash of the folded text -> stack id */
	char **folded; /* by stack id; [0] unused */
	uint32_t nr_stacks, cap_stacks;
	uint64_t stack_nomem; /* stacks that could not be kept: counted under "[no stack]" */
};

static const struct pair_impl leak_impl = {
	.name = "leak",
	.data_size = sizeof(struct leak_data),
};

struct leak *leak__new(size_t max_pending)
{
	struct pair_opts po = { .impl = &leak_impl, .max_pending = max_pending };
	struct leak *lk = calloc(1, sizeof(*lk));

	if (!lk)
		return NULL;
	lk->pr = pair__new(&po);
	if (!lk->pr || keymap__init(&lk->raw, sizeof(uint32_t), 1024) ||
	    keymap__init(&lk->by_fold, sizeof(uint32_t), 1024)) {
		leak__delete(lk);
		errno = ENOMEM;
		return NULL;
	}
	return lk;
}

void leak__delete(struct leak *lk)
{
	if (!lk)
		return;
	pair__delete(lk->pr);
	keymap__exit(&lk->raw);
	keymap__exit(&lk->by_fold);
	for (uint32_t i = 1; i < lk->nr_stacks; i++)
		free(lk->folded[i]);
	free(lk->folded);
	free(lk);
}

static uint32_t intern(struct leak *lk, const char *text, size_t len)
{
	uint64_t h = hash__fnv(HASH_FNV_BASIS, text, len);
	bool created;
	uint32_t *id = keymap__insert(&lk->by_fold, h, &created);

	if (!id)
		return 0;
	if (!created)
		return *id;
	if (!lk->nr_stacks)
		lk->nr_stacks = 1; /* id 0: no stack */
	if (lk->nr_stacks >= lk->cap_stacks) {
		uint32_t cap = lk->cap_stacks ? 2 * lk->cap_stacks : 256;
		char **n = realloc(lk->folded, cap * sizeof(*n));

		if (!n)
			goto fail;
		lk->folded = n;
		lk->cap_stacks = cap;
	}
	lk->folded[lk->nr_stacks] = strndup(text, len);
	if (!lk->folded[lk->nr_stacks])
		goto fail;
	*id = lk->nr_stacks++;
	return *id;
fail:
	keymap__remove(&lk->by_fold, h);
	return 0;
}

uint32_t leak__stack(struct leak *lk, struct callchain *cc, const struct psc_sample *s,
		     const char *comm)
{
	uint64_t h = HASH_FNV_BASIS; /* a collision would merge two stacks */
	char buf[STACK_FOLD_MAX];
	bool created;
	uint32_t *slot, id;
	int n;

	const uint64_t *ips;
	uint64_t nr;

	if (!cc || !(s->sample_type & PERF_SAMPLE_CALLCHAIN))
		return 0;
	/*
	 * The stack as it will be folded: with --call-graph dwarf the user part is not in
	 * PERF_SAMPLE_CALLCHAIN but unwound from the sample's copy of the stack, and two different
	 * user stacks under one kernel part must not share a group.
	 */
	nr = callchain__sample_ips(cc, s, &ips);
	if (!nr)
		return 0;
	h = hash__fnv(h, &s->pid, sizeof(s->pid));
	h = hash__fnv(h, ips, nr * sizeof(uint64_t));
	slot = keymap__find(&lk->raw, h);
	if (slot)
		return *slot;
	n = callchain__fold(cc, s, comm ? comm : "?", buf, sizeof(buf));
	if (n <= 0)
		return 0;
	id = intern(lk, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	if (!id) {
		lk->stack_nomem++;
		return 0;
	}
	slot = keymap__insert(&lk->raw, h, &created);
	if (slot)
		*slot = id;
	return id;
}

int leak__alloc(struct leak *lk, uint64_t ptr, uint64_t size, uint32_t stack, uint64_t time,
		int cpu, uint32_t pid, uint32_t tid)
{
	struct pair_event ev = {
		.key = ptr,
		.time = time,
		.cpu = cpu,
		.pid = pid,
		.tid = tid,
	};
	struct pair_entry *e;

	if (pair__start(lk->pr, &ev))
		return 1;
	e = pair__find(lk->pr, ptr);
	if (e) {
		struct leak_data *d = pair_entry__data(e);

		d->size = size;
		d->stack = stack;
	}
	return 0;
}

int leak__free(struct leak *lk, uint64_t ptr, uint64_t time, int cpu, uint32_t pid, uint32_t tid)
{
	struct pair_event ev = {
		.key = ptr,
		.time = time,
		.cpu = cpu,
		.pid = pid,
		.tid = tid,
	};

	return pair__end(lk->pr, &ev);
}

void leak__lost(struct leak *lk, uint64_t barrier)
{
	pair__lost(lk->pr, barrier);
}

struct gather {
	struct keymap by_stack; /* stack id -> struct leak_group (folded set later) */
	uint64_t now, than;
	bool oom;
};

static void gather_one(void *arg, const struct pair_entry *e, const void *data)
{
	struct gather *g = arg;
	const struct leak_data *d = data;
	struct leak_group *grp;
	bool created;

	if (g->than && (g->now < e->time || g->now - e->time < g->than))
		return;
	grp = keymap__insert(&g->by_stack, d->stack, &created);
	if (!grp) {
		g->oom = true;
		return;
	}
	if (created) {
		memset(grp, 0, sizeof(*grp));
		grp->oldest = e->time;
	}
	grp->count++;
	grp->bytes += d->size;
	if (e->time < grp->oldest)
		grp->oldest = e->time;
}

static int by_bytes(const void *a, const void *b)
{
	const struct leak_group *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->folded, y->folded);
}

int leak__groups(struct leak *lk, uint64_t now, uint64_t than, struct leak_group **out, size_t *nr)
{
	struct gather g = { .now = now, .than = than };
	struct keymap_iter it = { 0 };
	struct leak_group *v, *grp;
	uint64_t id;
	size_t n = 0;

	*out = NULL;
	*nr = 0;
	if (keymap__init(&g.by_stack, sizeof(struct leak_group), 256))
		return -ENOMEM;
	pair__for_each_pending(lk->pr, gather_one, &g);
	v = calloc(keymap__nr(&g.by_stack) + 1, sizeof(*v));
	if (!v || g.oom) {
		free(v);
		keymap__exit(&g.by_stack);
		return -ENOMEM;
	}
	while ((grp = keymap__next(&g.by_stack, &it, &id))) {
		v[n] = *grp;
		v[n].folded = id && id < lk->nr_stacks ? lk->folded[id] : "[no stack]";
		n++;
	}
	keymap__exit(&g.by_stack);
	qsort(v, n, sizeof(*v), by_bytes);
	*out = v;
	*nr = n;
	return 0;
}

/* The frames of a folded stack, innermost first, after its root (the comm). */
static void frames(const char *folded, void (*fn)(void *ctx, const char *f, size_t n), void *ctx)
{
	const char *end = folded + strlen(folded), *root_end = strchr(folded, ';');

	if (!root_end)
		return;
	while (end > root_end) {
		const char *start = end - 1;

		while (start > root_end && *start != ';')
			start--;
		fn(ctx, start + 1, (size_t)(end - start - 1));
		end = start;
	}
}

static void frame_text(void *ctx, const char *f, size_t n)
{
	out__printf(ctx, "\t%.*s\n", (int)n, f);
}

static void frame_json(void *ctx, const char *f, size_t n)
{
	json__strn(ctx, f, n);
}

size_t leak__print(const struct leak_group *g, size_t nr, struct out *out, bool json, size_t max,
		   uint64_t dropped)
{
	for (size_t i = 0; i < nr && (!max || i < max); i++) {
		const char *semi = strchr(g[i].folded, ';');
		size_t comm_len = semi ? (size_t)(semi - g[i].folded) : strlen(g[i].folded);

		if (json) {
			struct json j;

			json__begin(&j, out);
			json__key(&j, "count");
			json__u64(&j, g[i].count);
			json__key(&j, "bytes");
			json__u64(&j, g[i].bytes);
			json__key(&j, "oldest_ns");
			json__u64(&j, g[i].oldest);
			json__key(&j, "comm");
			json__strn(&j, g[i].folded, semi ? comm_len : 0);
			json__key(&j, "stack");
			json__arr(&j);
			frames(g[i].folded, frame_json, &j);
			json__end(&j);
			if (dropped) {
				json__key(&j, "free_maybe_lost");
				json__u64(&j, dropped);
			}
			json__end_line(&j);
			continue;
		}
		out__printf(out, "%llu allocation%s, %llu bytes not freed, by %.*s, from",
			    (unsigned long long)g[i].count, g[i].count == 1 ? "" : "s",
			    (unsigned long long)g[i].bytes, (int)comm_len, g[i].folded);
		if (dropped)
			out__printf(out, " (may be freed: %llu events dropped by the kernel)",
				    (unsigned long long)dropped);
		out__printf(out, ":\n");
		if (semi)
			frames(g[i].folded, frame_text, out);
		else
			out__printf(out, "\t[no stack]\n");
		out__printf(out, "\n");
	}
	return nr;
}

const uint64_t *leak__counts(const struct leak *lk)
{
	return pair__counts(lk->pr);
}

size_t leak__nr_live(const struct leak *lk)
{
	return pair__nr_pending(lk->pr);
}

void leak__say_outcomes(const struct leak *lk, const struct say *to)
{
	const uint64_t *c = pair__counts(lk->pr);
	char line[512];
	size_t n = 0;

#define ADD(...)                                                                         \
	do {                                                                             \
		if (n < sizeof(line))                                                    \
			n += (size_t)snprintf(line + n, sizeof(line) - n, __VA_ARGS__); \
	} while (0)
	ADD("%zu allocations not freed; %llu freed; %llu frees of memory allocated before the run",
	    pair__nr_pending(lk->pr), (unsigned long long)c[PAIR_PAIRED],
	    (unsigned long long)c[PAIR_NO_START]);
	if (c[PAIR_REPLACED])
		ADD("; %llu allocated again at a live address (their free was not seen)",
		    (unsigned long long)c[PAIR_REPLACED]);
	if (c[PAIR_EVICTED])
		ADD("; %llu dropped, the table was full (--max-pending)",
		    (unsigned long long)c[PAIR_EVICTED]);
	if (c[PAIR_LOST])
		ADD("; %llu left out after lost events (their free may be what was lost)",
		    (unsigned long long)c[PAIR_LOST]);
	if (c[PAIR_NOMEM] || lk->stack_nomem)
		ADD("; %llu not kept: out of memory",
		    (unsigned long long)(c[PAIR_NOMEM] + lk->stack_nomem));
#undef ADD
	say(to, "%s", line);
}

int leak__report(struct leak *lk, struct out *out, struct json *js, const struct leak_report *r,
		 struct leak_group **groups, size_t *nr_groups)
{
	struct leak_group *g;
	uint64_t count = 0, bytes = 0;
	size_t nr;
	int err = leak__groups(lk, r->now, r->than, &g, &nr);

	if (err)
		return err;
	for (size_t i = 0; i < nr; i++) {
		count += g[i].count;
		bytes += g[i].bytes;
	}
	if (r->json) {
		leak__print(g, nr, out, true, r->top, r->dropped);
		json__begin(js, out);
		json__key(js, "summary");
		json__bool(js, true);
		json__key(js, "final");
		json__bool(js, r->final);
		json__key(js, "count");
		json__u64(js, count);
		json__key(js, "bytes");
		json__u64(js, bytes);
		json__key(js, "stacks");
		json__u64(js, nr);
		json__end_line(js);
	} else {
		out__printf(out,
			    "%s%llu allocations, %llu bytes not freed%s%s, from %zu stacks%s\n",
			    r->final ? "" : "-- ", (unsigned long long)count,
			    (unsigned long long)bytes, r->than ? " for more than " : "",
			    r->than ? r->than_text : "", nr, nr ? ":\n" : "");
		leak__print(g, nr, out, false, r->top, r->dropped);
		if (r->top && nr > r->top)
			out__printf(out, "(%zu more stacks: --top)\n", nr - r->top);
	}
	if (groups) {
		*groups = g;
		*nr_groups = nr;
	} else {
		free(g);
	}
	return 0;
}
