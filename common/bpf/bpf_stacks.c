/* bpf_stacks: loads bpf/stacks.bpf.c, attaches it to a sampling event and reads its maps. */
#include "bpf_stacks.h"
#include "filter.h" /* bpf/ */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/bpf.h>
#include <perfscope/evsel.h>

#include <linux/perf_event.h>

int bpf_stacks_ent__callchain(const struct bpf_stacks_ent *e, uint64_t *ips, int max)
{
	int n = 0;

	if (e->nr_kips > 0 && n < max) {
		ips[n++] = (uint64_t)PERF_CONTEXT_KERNEL;
		for (int i = 0; i < e->nr_kips && n < max; i++)
			ips[n++] = e->kips[i];
	}
	if (e->nr_uips > 0 && n < max) {
		ips[n++] = (uint64_t)PERF_CONTEXT_USER;
		for (int i = 0; i < e->nr_uips && n < max; i++)
			ips[n++] = e->uips[i];
	}
	return n;
}

#ifdef HAVE_BPF_SKEL
#include <bpf/bpf.h>

#include "keymap.h"
#include <bpf/libbpf.h>

#include "stacks.h"
#include "stacks.skel.h"

struct bpf_stacks {
	struct stacks_bpf *skel;
	uint64_t kips[STACKS_DEPTH], uips[STACKS_DEPTH];
};

bool bpf_stacks__built(void)
{
	return true;
}

/* libbpf's messages go nowhere: each failure here is explained through why instead. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

struct bpf_stacks *bpf_stacks__new(const struct bpf_stacks_opts *opts, char *why, size_t whylen)
{
	struct bpf_stacks_opts def = { .kernel = true, .user = true };
	struct bpf_stacks *s;
	libbpf_print_fn_t old;
	int err;

	if (!opts)
		opts = &def;
	if (!opts->kernel && !opts->user) {
		snprintf(why, whylen, "neither kernel nor user stacks asked for");
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	old = libbpf_set_print(quiet);
	s->skel = stacks_bpf__open();
	err = s->skel ? 0 : -errno;
	if (!err) {
		s->skel->rodata->want_kernel = opts->kernel;
		s->skel->rodata->want_user = opts->user;
		s->skel->rodata->per_thread = opts->per_thread;
		if (opts->filter)
			memcpy((void *)&s->skel->rodata->filter_cfg, opts->filter,
			       sizeof(*opts->filter));
		if (opts->max_stacks)
			err = bpf_map__set_max_entries(s->skel->maps.stack_traces,
						       opts->max_stacks);
		if (!err && opts->max_keys)
			err = bpf_map__set_max_entries(s->skel->maps.counts, opts->max_keys);
		if (!err)
			err = stacks_bpf__load(s->skel);
	}
	libbpf_set_print(old);
	if (err) {
		char buf[512];

		snprintf(why, whylen, "cannot load the stack-counting BPF program: %s",
			 psc_strerror_bpf(err, "profile --bpf", buf, sizeof(buf)));
		bpf_stacks__delete(s);
		errno = -err;
		return NULL;
	}
	return s;
}

void bpf_stacks__delete(struct bpf_stacks *s)
{
	if (!s)
		return;
	stacks_bpf__destroy(s->skel);
	free(s);
}

int bpf_stacks__attach(struct bpf_stacks *s, struct psc_evsel *evsel, char *why, size_t whylen)
{
	int err = psc_evsel__attach_bpf(evsel, bpf_program__fd(s->skel->progs.count_stack), NULL);

	if (err)
		psc_strerror_bpf(err, psc_evsel__name(evsel), why, whylen);
	return err;
}

/* A stack's frames from the stack-trace map: up to the first 0. */
static int frames(int map_fd, int32_t id, uint64_t *ips)
{
	int n = 0;

	if (id < 0 || bpf_map_lookup_elem(map_fd, &id, ips))
		return 0;
	while (n < STACKS_DEPTH && ips[n])
		n++;
	return n;
}

/*
 * Every key of the counts map now, walked from one to the next (O(1) each). Walking while
 * deleting would restart from the first bucket after each deletion (the deleted key is not
 * there to go on from): quadratic in the keys, 0.2-0.5 s of system time per profile at 2000.
 */
static struct stacks_key *all_keys(int counts, size_t *nr)
{
	struct stacks_key *keys = NULL, *prev = NULL, next;
	size_t n = 0, cap = 0;

	while (!bpf_map_get_next_key(counts, prev, &next)) {
		if (n == cap) {
			struct stacks_key *k =
				realloc(keys, sizeof(*k) * (cap = cap ? 2 * cap : 1024));

			if (!k) {
				free(keys);
				errno = ENOMEM;
				return NULL;
			}
			keys = k;
		}
		keys[n] = next;
		prev = &keys[n++];
	}
	if (errno != ENOENT) {
		free(keys);
		return NULL;
	}
	*nr = n;
	return keys ? keys : calloc(1, sizeof(*keys));
}

int bpf_stacks__for_each(struct bpf_stacks *s, bool clear, bpf_stacks_fn fn, void *ctx)
{
	int counts = bpf_map__fd(s->skel->maps.counts);
	int traces = bpf_map__fd(s->skel->maps.stack_traces);
	struct stacks_key *keys;
	struct stacks_val val;
	size_t nr;
	int ret = 0;

	keys = all_keys(counts, &nr);
	if (!keys)
		return -errno;
	for (size_t i = 0; i < nr && !ret; i++) {
		const struct stacks_key *key = &keys[i];
		struct bpf_stacks_ent e;

		/* with clear, a sample counted after this read makes a new key for the next walk */
		if (clear ? bpf_map_lookup_and_delete_elem(counts, key, &val)
			  : bpf_map_lookup_elem(counts, key, &val))
			continue; /* removed meanwhile */
		val.comm[sizeof(val.comm) - 1] = '\0';
		e = (struct bpf_stacks_ent){
			.pid = key->pid,
			.tid = key->tid,
			.comm = val.comm,
			.count = val.count,
			.period = val.period,
			.kips = s->kips,
			.uips = s->uips,
			.nr_kips = frames(traces, key->kstack, s->kips),
			.nr_uips = frames(traces, key->ustack, s->uips),
			.klost = key->kstack == STACKS_LOST,
			.ulost = key->ustack == STACKS_LOST,
		};
		ret = fn(ctx, &e);
	}
	free(keys);
	return ret;
}

/*
 * Deletes every stack of the stack-trace map that no key of the counts map refers to: for an
 * always-on reader that pulls with clear, the map would otherwise fill with stacks seen once.
 */
int bpf_stacks__trim(struct bpf_stacks *s)
{
	int counts = bpf_map__fd(s->skel->maps.counts);
	int traces = bpf_map__fd(s->skel->maps.stack_traces);
	struct stacks_key *keys;
	struct keymap used;
	int32_t id, next, *ids = NULL;
	size_t nr, nr_ids = 0, cap = 0;
	int ret = 0;

	keys = all_keys(counts, &nr);
	if (!keys)
		return -errno;
	if (keymap__init(&used, 0, nr * 2 + 16)) {
		free(keys);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nr; i++) {
		if (!keymap__insert(&used, (uint64_t)(uint32_t)keys[i].kstack, NULL) ||
		    !keymap__insert(&used, (uint64_t)(uint32_t)keys[i].ustack, NULL))
			ret = -ENOMEM;
	}
	free(keys);
	/* the ids first, then the deletions: deleting while walking restarts the walk */
	for (int32_t *prev = NULL; !ret && !bpf_map_get_next_key(traces, prev, &next);
	     prev = &id) {
		id = next;
		if (keymap__find(&used, (uint64_t)(uint32_t)id))
			continue;
		if (nr_ids == cap) {
			int32_t *n = realloc(ids, (cap = cap ? cap * 2 : 256) * sizeof(*ids));

			if (!n) {
				ret = -ENOMEM;
				break;
			}
			ids = n;
		}
		ids[nr_ids++] = id;
	}
	for (size_t i = 0; !ret && i < nr_ids; i++)
		bpf_map_delete_elem(traces, &ids[i]);
	free(ids);
	keymap__exit(&used);
	return ret;
}

void bpf_stacks__filter_counts(const struct bpf_stacks *s, struct filter_counts *out)
{
	*out = s->skel->bss->filter_counts;
}

int bpf_stacks__prog_fd(const struct bpf_stacks *s)
{
	return bpf_program__fd(s->skel->progs.count_stack);
}

void bpf_stacks__drops(const struct bpf_stacks *s, struct bpf_stacks_drops *out)
{
	const struct stacks_drops *d = &s->skel->bss->drops;

	*out = (struct bpf_stacks_drops){
		.samples = d->samples,
		.kcollisions = d->kcollisions,
		.ucollisions = d->ucollisions,
		.kfull = d->kfull,
		.ufull = d->ufull,
		.kother = d->kother,
		.uother = d->uother,
		.keys_full = d->keys_full,
	};
}

#else /* built with -Dbpf=disabled: every call says so */

struct bpf_stacks {
	int unused;
};

bool bpf_stacks__built(void)
{
	return false;
}

struct bpf_stacks *bpf_stacks__new(const struct bpf_stacks_opts *opts, char *why, size_t whylen)
{
	snprintf(why, whylen,
		 "this perfscope was built without its BPF programs (meson -Dbpf=disabled, or no "
		 "clang and bpftool when it was built)");
	errno = ENOTSUP;
	return NULL;
}

void bpf_stacks__delete(struct bpf_stacks *s)
{
	free(s);
}

int bpf_stacks__attach(struct bpf_stacks *s, struct psc_evsel *evsel, char *why, size_t whylen)
{
	return -ENOTSUP;
}

int bpf_stacks__for_each(struct bpf_stacks *s, bool clear, bpf_stacks_fn fn, void *ctx)
{
	return -ENOTSUP;
}

int bpf_stacks__trim(struct bpf_stacks *s)
{
	return -ENOTSUP;
}

void bpf_stacks__filter_counts(const struct bpf_stacks *s, struct filter_counts *out)
{
	memset(out, 0, sizeof(*out));
}

int bpf_stacks__prog_fd(const struct bpf_stacks *s)
{
	return -1;
}

void bpf_stacks__drops(const struct bpf_stacks *s, struct bpf_stacks_drops *out)
{
	memset(out, 0, sizeof(*out));
}
#endif
