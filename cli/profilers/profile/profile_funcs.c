/* perfscope profile's stacks symbolized: their frames, folded text, and the functions' samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "profile.h"
#include "stack.h"

/* Resolves e into pf->frames; returns their number; counts it as truncated when it is. */
int profile_resolve(struct prof *p, struct profile *pf, const struct stack_ent *e)
{
	int n = callchain__frames(prof__callchain(p), (pid_t)e->pid, e->ips, e->nr, pf->frames,
				  MAX_FRAMES);
	bool user = false, rooted = false;

	for (int i = 0; i < n; i++) {
		if (pf->frames[i].kernel)
			continue;
		user = true;
		rooted = rooted || frame__is_root(pf->frames[i].sym);
	}
	/* only a stack with a user part can fall short of main; -g off has no stack at all */
	if (user && !rooted && p->opts.callchain && p->opts.user_callchain != 0)
		pf->truncated += e->count;
	return n;
}

/* "comm;outer;...;leaf" (kernel frames "_[k]" with ksuffix) into pf->fold; its length. */
size_t profile_fold(struct profile *pf, const struct stack_ent *e, int n, bool ksuffix)
{
	char root[64];
	int len;

	/* --per-pid, --per-thread: "comm-PID", "comm-PID/TID" as the root frame */
	if (pf->per_thread)
		snprintf(root, sizeof(root), "%s-%u/%u", frame__root(e->comm), e->pid, e->tid);
	else if (pf->per_pid)
		snprintf(root, sizeof(root), "%s-%u", frame__root(e->comm), e->pid);
	else
		snprintf(root, sizeof(root), "%s", frame__root(e->comm));
	len = stack__fold(pf->frames, n, root, ksuffix ? FOLD_KERNEL_SUFFIX : 0, pf->fold,
			  sizeof(pf->fold));
	if (len < 0)
		return 0;
	return (size_t)len < sizeof(pf->fold) ? (size_t)len : sizeof(pf->fold) - 1;
}

static struct func *func_get(struct profile *pf, const char *name, const char *dso)
{
	uint64_t key = hash__mix(hash__str(name, SIZE_MAX), (uint64_t)(uintptr_t)dso);
	size_t *idx = keymap__find(&pf->func_idx, key);

	/* a hash shared by two functions: the next key along, as open addressing would */
	while (idx) {
		struct func *f = &pf->funcs[*idx];

		if (!strcmp(f->name, name) && f->dso == dso)
			return f;
		key++;
		idx = keymap__find(&pf->func_idx, key);
	}
	if (pf->nr_funcs == pf->cap_funcs) {
		size_t cap = pf->cap_funcs ? pf->cap_funcs * 2 : 256;
		struct func *n = realloc(pf->funcs, cap * sizeof(*n));

		if (!n)
			return NULL;
		pf->funcs = n;
		pf->cap_funcs = cap;
	}
	idx = keymap__insert(&pf->func_idx, key, NULL);
	if (!idx)
		return NULL;
	*idx = pf->nr_funcs;
	pf->funcs[pf->nr_funcs] = (struct func){ .name = strdup(name), .dso = dso, .last = 0 };
	if (!pf->funcs[pf->nr_funcs].name) {
		keymap__remove(&pf->func_idx, key);
		return NULL;
	}
	return &pf->funcs[pf->nr_funcs++];
}

void profile_funcs_clear(struct profile *pf)
{
	for (size_t i = 0; i < pf->nr_funcs; i++)
		free(pf->funcs[i].name);
	pf->nr_funcs = 0;
	keymap__clear(&pf->func_idx);
}

/* Self and total samples of every function of the stack just resolved (seq: its number). */
void profile_funcs_count(struct profile *pf, const struct stack_ent *e, int n, uint64_t seq)
{
	char name[FRAME_NAME_MAX];

	for (int i = 0; i < n; i++) {
		struct func *f;

		frame__name(&pf->frames[i], false, name, sizeof(name));
		f = func_get(pf, name, pf->frames[i].dso);
		if (!f)
			continue;
		if (!i)
			f->self += e->count;
		if (f->last != seq) {
			f->total += e->count;
			f->last = seq;
		}
	}
}

static int by_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The functions, most self samples first. */
void profile_funcs_sort(struct profile *pf)
{
	if (pf->nr_funcs) /* funcs is NULL before the first function: qsort wants an array */
		qsort(pf->funcs, pf->nr_funcs, sizeof(*pf->funcs), by_self);
}
