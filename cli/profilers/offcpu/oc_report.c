/* perfscope offcpu's text and JSON: time by state, by function, and what was lost or cut short. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "offcpu.h"

static struct oc_func *func_get(struct offcpu *oc, const char *name)
{
	uint64_t key = hash__str(name, SIZE_MAX);
	size_t *idx = keymap__find(&oc->func_idx, key);

	/* a hash shared by two names: the next key along */
	while (idx) {
		if (!strcmp(oc->funcs[*idx].name, name))
			return &oc->funcs[*idx];
		idx = keymap__find(&oc->func_idx, ++key);
	}
	if (oc->nr_funcs == oc->cap_funcs) {
		size_t cap = oc->cap_funcs ? oc->cap_funcs * 2 : 256;
		struct oc_func *n = realloc(oc->funcs, cap * sizeof(*n));

		if (!n)
			return NULL;
		oc->funcs = n;
		oc->cap_funcs = cap;
	}
	idx = keymap__insert(&oc->func_idx, key, NULL);
	if (!idx)
		return NULL;
	*idx = oc->nr_funcs;
	oc->funcs[oc->nr_funcs] = (struct oc_func){ .name = strdup(name) };
	if (!oc->funcs[oc->nr_funcs].name) {
		keymap__remove(&oc->func_idx, key);
		return NULL;
	}
	return &oc->funcs[oc->nr_funcs++];
}

void oc_funcs_clear(struct offcpu *oc)
{
	for (size_t i = 0; i < oc->nr_funcs; i++)
		free(oc->funcs[i].name);
	oc->nr_funcs = 0;
	keymap__clear(&oc->func_idx);
}

/* The time of the task's stack just resolved to each of its functions (seq: the stack's). */
void oc_funcs_count(struct offcpu *oc, int n, uint64_t ns, uint64_t seq)
{
	char name[FRAME_NAME_MAX];

	for (int i = 0; i < n; i++) {
		struct oc_func *f;

		frame__name(&oc->tframes[i], false, name, sizeof(name));
		f = func_get(oc, name);
		if (!f)
			continue;
		if (!i)
			f->self += ns;
		if (f->last != seq) { /* recursion counts once */
			f->total += ns;
			f->last = seq;
		}
	}
}

static int by_total(const void *a, const void *b)
{
	const struct oc_func *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void funcs_sort(struct offcpu *oc)
{
	if (oc->nr_funcs)
		qsort(oc->funcs, oc->nr_funcs, sizeof(*oc->funcs), by_total);
}

/* The run's losses so far, and the pair engine's outcomes. */
void oc_losses(struct prof *p, struct offcpu *oc, struct oc_losses *l, uint64_t *counts)
{
	*l = oc->loss;
	for (int i = 0; i < PAIR_NR_OUTCOMES; i++)
		counts[i] = oc->pr ? pair__count(oc->pr, i) : 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void text_losses(struct prof *p, struct offcpu *oc, struct out *o)
{
	struct oc_losses l;
	uint64_t c[PAIR_NR_OUTCOMES];

	oc_losses(p, oc, &l, c);
	out__printf(o,
		    "lost: %" PRIu64 " ring records (%" PRIu64 " loss windows: %" PRIu64
		    " switch-outs before them not measured); %" PRIu64
		    " switch-ins without their switch-out; %" PRIu64 " switch-outs replaced (their "
		    "switch-in missed); %" PRIu64 " evicted; %" PRIu64 " stacks not kept\n",
		    l.ring_lost, l.lost_windows, c[PAIR_LOST], c[PAIR_NO_START], c[PAIR_REPLACED],
		    c[PAIR_EVICTED], l.dropped + c[PAIR_NOMEM]);
	out__printf(o,
		    "cut short: %" PRIu64 " stacks (%.3f s) with a user stack stopping before main "
		    "(frame pointers missing: try --call-graph dwarf); %" PRIu64
		    " fields unreadable\n",
		    l.truncated, (double)l.truncated_ns / 1e9, l.field_errors);
	if (oc->waker)
		out__printf(o, "no waker: %" PRIu64 " sleeps whose wakeup was not seen\n",
			    l.no_wakeup);
}

void oc_write_text(struct prof *p, struct offcpu *oc, struct out *o, double secs)
{
	long top = oc->top ? oc->top : (long)oc->nr_funcs;

	out__printf(o, "offcpu%s: %s, %.2f s: %.3f s %s, %.1f%% of it with a user stack\n",
		    oc->wall ? " --wall" : "", p->title, secs, (double)oc->total_ns / 1e9,
		    oc->wall ? "of wall-clock time" : "off-CPU", pct(oc->user_ns, oc->total_ns));
	if (oc->wall)
		out__printf(o,
			    "on-CPU: %.3f s sampled, %.3f s measured (switch-in to switch-out)\n",
			    (double)oc->rows[OC_ROW_ONCPU].ns / 1e9, (double)oc->oncpu_ns / 1e9);
	out__printf(o, "%-8s %12s %14s %7s\n", "STATE", "COUNT", "TIME(ms)", "%");
	for (int r = 0; r < OC_NR_ROWS; r++)
		if (oc->rows[r].count || oc->rows[r].ns)
			out__printf(o, "%-8s %12" PRIu64 " %14.3f %7.2f\n", oc_row_name(oc, r),
				    oc->rows[r].count, (double)oc->rows[r].ns / 1e6,
				    pct(oc->rows[r].ns, oc->total_ns));
	out__printf(o, "%14s %7s  %s\n", "TOTAL(ms)", "%", "FUNCTION");
	funcs_sort(oc);
	for (size_t i = 0; i < oc->nr_funcs && (long)i < top; i++)
		out__printf(o, "%14.3f %7.2f  %s\n", (double)oc->funcs[i].total / 1e6,
			    pct(oc->funcs[i].total, oc->total_ns), oc->funcs[i].name);
	text_losses(p, oc, o);
}

static void json_frames(struct json *j, const struct frame *f, int n)
{
	json__arr(j);
	for (int k = 0; k < n; k++)
		frame__json(j, &f[k]);
	json__end(j);
}

static void json_losses(struct prof *p, struct offcpu *oc, struct json *j)
{
	struct oc_losses l;
	uint64_t c[PAIR_NR_OUTCOMES];

	oc_losses(p, oc, &l, c);
	JSON_KEY(j, "lost");
	json__obj(j);
	JSON_KEY(j, "ring_lost");
	json__u64(j, l.ring_lost);
	JSON_KEY(j, "lost_windows");
	json__u64(j, l.lost_windows);
	JSON_KEY(j, "kernel_dropped");
	json__u64(j, prof__kernel_dropped(p));
	for (int i = 0; i < PAIR_NR_OUTCOMES; i++) {
		json__key(j, pair_outcome__name(i));
		json__u64(j, c[i]);
	}
	JSON_KEY(j, "not_kept");
	json__u64(j, l.dropped);
	JSON_KEY(j, "truncated");
	json__u64(j, l.truncated);
	JSON_KEY(j, "truncated_ns");
	json__u64(j, l.truncated_ns);
	JSON_KEY(j, "field_errors");
	json__u64(j, l.field_errors);
	JSON_KEY(j, "exits");
	json__u64(j, l.exits);
	if (oc->waker) {
		JSON_KEY(j, "no_wakeup");
		json__u64(j, l.no_wakeup);
	}
	json__end(j);
}

void oc_write_json(struct prof *p, struct offcpu *oc, struct out *o, double secs,
		   struct stack_ent **arr, size_t nr)
{
	struct json j;

	json__begin(&j, o);
	JSON_KEY(&j, "offcpu");
	json__str(&j, oc->wall ? "wall" : "off-cpu");
	JSON_KEY(&j, "target");
	json__str(&j, p->title);
	if (p->opts.interval_ms) {
		JSON_KEY(&j, "profile");
		json__u64(&j, oc->seq);
	}
	JSON_KEY(&j, "seconds");
	json__dbl(&j, secs);
	JSON_KEY(&j, "total_ns");
	json__u64(&j, oc->total_ns);
	JSON_KEY(&j, "user_stack_ns");
	json__u64(&j, oc->user_ns);
	if (oc->wall) { /* what the on-CPU samples estimate, measured */
		JSON_KEY(&j, "oncpu_measured_ns");
		json__u64(&j, oc->oncpu_ns);
	}
	JSON_KEY(&j, "states");
	json__arr(&j);
	for (int r = 0; r < OC_NR_ROWS; r++) {
		if (!oc->rows[r].count && !oc->rows[r].ns)
			continue;
		json__obj(&j);
		JSON_KEY(&j, "state");
		json__str(&j, oc_row_name(oc, r));
		JSON_KEY(&j, "count");
		json__u64(&j, oc->rows[r].count);
		JSON_KEY(&j, "total_ns");
		json__u64(&j, oc->rows[r].ns);
		json__end(&j);
	}
	json__end(&j);
	JSON_KEY(&j, "functions");
	json__arr(&j);
	funcs_sort(oc);
	for (size_t i = 0; i < oc->nr_funcs; i++) {
		json__obj(&j);
		JSON_KEY(&j, "name");
		json__str(&j, oc->funcs[i].name);
		JSON_KEY(&j, "total_ns");
		json__u64(&j, oc->funcs[i].total);
		json__end(&j);
	}
	json__end(&j);
	JSON_KEY(&j, "stacks");
	json__arr(&j);
	for (size_t i = 0; i < nr; i++) {
		const struct stack_ent *e = arr[i];

		if (!e->count && !e->period)
			continue;
		oc_resolve(p, oc, e);
		json__obj(&j);
		JSON_KEY(&j, "comm");
		json__str(&j, e->comm);
		JSON_KEY(&j, "pid");
		json__u64(&j, e->pid);
		JSON_KEY(&j, "tid");
		json__u64(&j, e->tid);
		JSON_KEY(&j, "state");
		json__str(&j, oc_row_name(oc, OC_TAG_ROW(e->ips[0])));
		JSON_KEY(&j, "count");
		json__u64(&j, e->count);
		JSON_KEY(&j, "total_ns");
		json__u64(&j, e->period);
		JSON_KEY(&j, "frames");
		json_frames(&j, oc->tframes, oc->nt);
		if (OC_TAG_WAKER(e->ips[0])) {
			JSON_KEY(&j, "waker_comm");
			json__str(&j, oc->wcomm);
			JSON_KEY(&j, "waker_pid");
			json__u64(&j, oc->wpid);
			JSON_KEY(&j, "waker_frames");
			json_frames(&j, oc->wframes, oc->nw);
		}
		json__end(&j);
	}
	json__end(&j);
	json_losses(p, oc, &j);
	json__end_line(&j);
}

/* At the end, on standard error whatever the format: what was lost or cut short, by name. */
void oc_say_losses(struct prof *p, struct offcpu *oc)
{
	struct oc_losses l;
	uint64_t c[PAIR_NR_OUTCOMES];

	oc_losses(p, oc, &l, c);
	if (l.ring_lost || c[PAIR_LOST] || c[PAIR_REPLACED] || c[PAIR_EVICTED] || l.dropped ||
	    c[PAIR_NOMEM] || l.field_errors)
		fprintf(stderr,
			"perfscope %s: lost: %" PRIu64 " ring records, %" PRIu64
			" switch-outs not measured across a loss, %" PRIu64
			" replaced (their switch-in missed), %" PRIu64 " evicted, %" PRIu64
			" stacks not kept, %" PRIu64 " fields unreadable\n",
			p->name, l.ring_lost, c[PAIR_LOST], c[PAIR_REPLACED], c[PAIR_EVICTED],
			l.dropped + c[PAIR_NOMEM], l.field_errors);
	if (!p->opts.quiet)
		fprintf(stderr,
			"perfscope %s: %" PRIu64 " switch-ins without their switch-out (tasks "
			"off-CPU since before the run, or lost)\n",
			p->name, c[PAIR_NO_START]);
	if (l.no_wakeup)
		fprintf(stderr,
			"perfscope %s: --waker: %" PRIu64
			" sleeps without their wakeup seen (lost, "
			"or dropped by the kernel): counted without a waker's stack\n",
			p->name, l.no_wakeup);
	if (l.truncated)
		fprintf(stderr,
			"perfscope %s: %" PRIu64 " stacks (%.3f s) have a user stack that stops "
			"before main, _start or a thread's start (frame pointers missing): try "
			"--call-graph dwarf\n",
			p->name, l.truncated, (double)l.truncated_ns / 1e9);
}
