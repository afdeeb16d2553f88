/* multi-trace --impl call and call-delay: nested enter/exit events as a call tree per thread. */
#include "multi_trace.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"

/*
 * Each -e group is one function: its first traced event enters it, its second leaves it
 * (perf-prof's nested-trace: -e E,E_ret). Per key (the thread by default) a stack of the calls
 * in progress says which call an enter is nested in; the call tree's nodes are call paths
 * (main -> f -> g), each with its calls and, for call-delay, the latency of each call.
 *
 * The pairing itself is the pair engine's (one per function): an enter is a start under a
 * key of its own (a sequence number kept in its stack frame), an exit its end under its frame's
 * number, so outcomes, bounds and lost
 * windows are the engine's: no latency is computed across lost events. An exit whose call is
 * not on top of the stack ends the calls above it, whose exits never came: they leave as
 * unwound (pair__cancel).
 */

#define MT_CALL_MAX_DEPTH 64

struct mt_cframe {
	int fn; /* the group */
	uint32_t node;
	uint64_t seq; /* its start's key in the pair engine */
};

struct mt_cstack {
	int depth;
	struct mt_cframe f[MT_CALL_MAX_DEPTH];
};

struct mt_cnode {
	int fn;
	uint32_t parent, first_child, last_child, next; /* NONE: none */
	uint64_t entered;
	struct lat_row *st; /* call-delay: latencies of the calls that paired */
};

#define NONE UINT32_MAX

struct mt_call {
	struct keymap stacks; /* key -> struct mt_cstack * */
	struct keymap children; /* (parent + 1) << 16 | fn -> node index */
	struct mt_cnode *nodes;
	uint32_t nr, cap;
	uint64_t too_deep, nomem;
	uint64_t seq; /* the last frame's number */
	uint32_t cur_node; /* of the start being stored */
	uint64_t cur_key;
	char names[MT_MAX_GROUPS][80];
};

static uint32_t node_get(struct mt_call *c, uint32_t parent, int fn)
{
	uint64_t ck = ((uint64_t)(parent == NONE ? 0 : parent + 1) << 16) | (uint32_t)fn;
	bool created;
	uint32_t *slot = keymap__insert(&c->children, ck, &created);
	struct mt_cnode *n;

	if (!slot)
		return NONE;
	if (!created)
		return *slot;
	if (c->nr == c->cap) {
		uint32_t ncap = c->cap ? c->cap * 2 : 64;
		struct mt_cnode *nn = realloc(c->nodes, ncap * sizeof(*nn));

		if (!nn) {
			keymap__remove(&c->children, ck);
			return NONE;
		}
		c->nodes = nn;
		c->cap = ncap;
	}
	n = &c->nodes[c->nr];
	memset(n, 0, sizeof(*n));
	n->fn = fn;
	n->parent = parent;
	n->first_child = n->last_child = n->next = NONE;
	n->st = lat_row__new(c->nr);
	if (!n->st) {
		keymap__remove(&c->children, ck);
		return NONE;
	}
	if (parent != NONE) {
		struct mt_cnode *pn = &c->nodes[parent];

		if (pn->last_child != NONE)
			c->nodes[pn->last_child].next = c->nr;
		else
			pn->first_child = c->nr;
		pn->last_child = c->nr;
	}
	*slot = c->nr;
	return c->nr++;
}

/* ---- the pair impl: a call's latency to its node ---- */

static int call_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct mt_link *lk = ctx;
	struct mt_data *d = data;

	d->size = lk->mt->call->cur_node;
	d->call_key = lk->mt->call->cur_key;
	if (!lk->mt->print_outliers || !ev->sample)
		return 0;
	d->copy = pair_copy__new(ev->sample, ev->idx, ev->cpu, ev->key);
	return d->copy ? 0 : -ENOMEM;
}

static void call_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct mt_link *lk = ctx;
	struct mt *mt = lk->mt;
	struct mt_data *d = data;
	struct mt_cnode *n = &mt->call->nodes[d->size];
	bool over = (mt->than && delta > mt->than) || (mt->lower && delta < mt->lower);

	lat_row__add(n->st, delta, over, false, mt->ival);
	lat_row__add(lk->all, delta, over, false, mt->ival);
	if (lk->hm)
		heatmap__add(lk->hm, end->time, delta);
	if (over) {
		/* the outlier shows the stack's key, not the frame's number */
		struct pair_entry e = *start;
		struct pair_event en = *end;

		e.key = en.key = d->call_key;
		mt->outliers++;
		mt_outlier(lk, &e, d, &en, delta);
	}
}

static void call_release(void *ctx, void *data)
{
	struct mt_data *d = data;

	if (d->copy) { /* no free(NULL) per call: see impl_release */
		free(d->copy);
		d->copy = NULL;
	}
}

static const struct pair_impl mt_call_impl = {
	.name = "call",
	.data_size = sizeof(struct mt_data),
	.start = call_start,
	.paired = call_paired,
	.release = call_release,
};

/* ---- setup ---- */

int mt_call__start(struct prof *p, struct mt *mt, int *nr_traced)
{
	struct mt_call *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	mt->call = c;
	if (keymap__init(&c->stacks, sizeof(struct mt_cstack *), 0) ||
	    keymap__init(&c->children, sizeof(uint32_t), 0))
		return -ENOMEM;
	for (int g = 0; g < mt->nr_groups; g++)
		if (nr_traced[g] != 2)
			return prof_usage(p,
					  "--impl %s: -e group %d has %d traced events: each -e "
					  "is one function, its entry then its exit "
					  "(-e ENTER,EXIT)",
					  mt->impl_text, g + 1, nr_traced[g]);
	for (int i = 0, seen[MT_MAX_GROUPS] = { 0 }; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct mt_ev *me = ev->priv;

		if (me->untraced)
			continue;
		me->call_exit = seen[me->group]++ == 1;
		if (!me->call_exit)
			snprintf(c->names[me->group], sizeof(c->names[0]), "%s", mt_short_name(ev));
	}
	mt->nr_links = mt->nr_groups;
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		int ret;

		lk->from = lk->to = l;
		snprintf(lk->name, sizeof(lk->name), "%s", c->names[l]);
		if ((ret = mt_link__init(p, mt, lk, &mt_call_impl)))
			return ret;
	}
	return 0;
}

void mt_call__delete(struct mt_call *c)
{
	struct keymap_iter it;
	struct mt_cstack **v;
	uint64_t key;

	if (!c)
		return;
	keymap__for_each(&c->stacks, &it, key, v) free(*v);
	keymap__exit(&c->stacks);
	keymap__exit(&c->children);
	for (uint32_t i = 0; i < c->nr; i++)
		lat_row__delete(c->nodes[i].st);
	free(c->nodes);
	free(c);
}

/* ---- events ---- */

static void call_enter(struct mt *mt, struct mt_call *c, int g, struct pair_event *pe)
{
	uint64_t key = pe->key;
	bool created;
	struct mt_cstack **slot = keymap__insert(&c->stacks, key, &created), *st;
	uint32_t node;

	if (!slot) {
		c->nomem++;
		return;
	}
	if (created) {
		*slot = calloc(1, sizeof(**slot));
		if (!*slot) {
			keymap__remove(&c->stacks, key);
			c->nomem++;
			return;
		}
	}
	st = *slot;
	if (st->depth == MT_CALL_MAX_DEPTH) {
		c->too_deep++;
		return;
	}
	node = node_get(c, st->depth ? st->f[st->depth - 1].node : NONE, g);
	if (node == NONE) {
		c->nomem++;
		return;
	}
	c->nodes[node].entered++;
	st->f[st->depth].fn = g;
	st->f[st->depth].node = node;
	/* one pending start per call in progress, whatever the key: its own number */
	st->f[st->depth].seq = pe->key = ++c->seq;
	st->depth++;
	c->cur_node = node;
	c->cur_key = key;
	pair__start(mt->links[g].pr, pe);
}

static void call_exit(struct mt *mt, struct mt_call *c, int g, struct pair_event *pe)
{
	uint64_t key = pe->key;
	struct mt_cstack **slot = keymap__find(&c->stacks, key), *st = slot ? *slot : NULL;
	int i = -1;

	if (st)
		for (i = st->depth - 1; i >= 0 && st->f[i].fn != g; i--)
			;
	if (i < 0) {
		/* not in progress: its enter came before the run, or was filtered or lost */
		pe->key = UINT64_MAX; /* no frame has it: counted no_start */
		pair__end(mt->links[g].pr, pe);
		return;
	}
	/* the calls above it never saw their exit */
	for (int j = st->depth - 1; j > i; j--)
		pair__cancel(mt->links[st->f[j].fn].pr, st->f[j].seq);
	pe->key = st->f[i].seq;
	pair__end(mt->links[g].pr, pe);
	st->depth = i;
	if (!st->depth) {
		free(st);
		keymap__remove(&c->stacks, key);
	}
}

void mt_call__sample(struct mt *mt, struct mt_ev *me, struct pair_event *pe)
{
	if (me->call_exit)
		call_exit(mt, mt->call, me->group, pe);
	else
		call_enter(mt, mt->call, me->group, pe);
}

/* ---- the tree ---- */

static void print_node(struct prof *p, struct mt *mt, uint32_t i, int depth, bool final)
{
	struct mt_call *c = mt->call;
	struct mt_cnode *n = &c->nodes[i];
	const struct hist *h = final ? &n->st->total : &n->st->ival;
	struct lat_cols cols = mt_cols(mt);
	char label[256];

	if (p->json_fmt) {
		uint32_t path[MT_CALL_MAX_DEPTH + 1];
		int np = 0;

		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "call");
		json__str(&p->json, c->names[n->fn]);
		JSON_KEY(&p->json, "depth");
		json__u64(&p->json, (uint64_t)depth);
		JSON_KEY(&p->json, "path");
		json__arr(&p->json);
		for (uint32_t k = i; k != NONE && np <= MT_CALL_MAX_DEPTH; k = c->nodes[k].parent)
			path[np++] = k;
		while (np--)
			json__str(&p->json, c->names[c->nodes[path[np]].fn]);
		json__end(&p->json);
		JSON_KEY(&p->json, "entered");
		json__u64(&p->json, n->entered);
		if (mt->impl == MT_CALL_DELAY) {
			lat_row__json(&p->json, h, final ? n->st->over : n->st->ival_over, NULL);
		} else {
			JSON_KEY(&p->json, "count");
			json__u64(&p->json, hist__count(h));
		}
		if (final) {
			JSON_KEY(&p->json, "final");
			json__bool(&p->json, true);
		}
		json__end_line(&p->json);
	} else {
		snprintf(label, sizeof(label), "%*s%s%s", depth * 2, "", depth ? "|- " : "",
			 c->names[n->fn]);
		if (mt->impl == MT_CALL_DELAY)
			lat_cols__row(&cols, p->out, label, h,
				      final ? n->st->over : n->st->ival_over, 0);
		else
			out__printf(p->out, "%-*s %10llu\n", mt->label_width, label,
				    (unsigned long long)hist__count(h));
	}
	for (uint32_t k = n->first_child; k != NONE; k = c->nodes[k].next)
		print_node(p, mt, k, depth + 1, final);
}

void mt_call__print(struct prof *p, struct mt *mt, bool final)
{
	struct mt_call *c = mt->call;
	struct lat_cols cols;

	mt->label_width = 28;
	cols = mt_cols(mt);
	if (!p->json_fmt) {
		if (mt->impl == MT_CALL_DELAY)
			lat_cols__header(&cols, p->out, "call");
		else
			out__printf(p->out, "%-*s %10s\n", mt->label_width, "call", "calls");
	}
	for (uint32_t i = 0; i < c->nr; i++)
		if (c->nodes[i].parent == NONE)
			print_node(p, mt, i, 0, final);
	if (final && (c->too_deep || c->nomem))
		fprintf(stderr,
			"perfscope %s: %llu calls deeper than %d and %llu without memory "
			"were not counted\n",
			p->name, (unsigned long long)c->too_deep, MT_CALL_MAX_DEPTH,
			(unsigned long long)c->nomem);
}
