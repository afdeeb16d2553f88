/* perfscope profile's file formats: folded, SVG and pprof, written whole, one file per -i slice. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "flame_svg.h"
#include "pprof_frames.h"
#include "profile.h"

/*
 * The stack just resolved (its n frames in pf->frames) into the folded set, kernel frames "_[k]"
 * for the colors, and into the pprof with every frame's mapping and build-id (pid and comm
 * labels), each when given. A stack neither could keep is counted as dropped.
 */
void profile_stack_add(struct profile *pf, const struct stack_ent *e, int n, struct flame *fl,
		       struct pprof *pp)
{
	bool dropped = false;

	if (fl) {
		size_t len = profile_fold(pf, e, n, true);

		dropped = flame__add(fl, pf->fold, len, e->count) != 0;
	}
	if (pp) {
		char pid[16], tid[16];
		struct pprof_label labels[3] = {
			{ "comm", e->comm },
			{ "pid", pid },
			{ "tid", tid },
		};
		int64_t values[2] = { (int64_t)e->count, (int64_t)e->period };

		snprintf(pid, sizeof(pid), "%u", e->pid);
		snprintf(tid, sizeof(tid), "%u", e->tid);
		if (pprof__add_frames(pp, pf->frames, (size_t)n, values, labels,
				      pf->per_thread ? 3 : 2))
			dropped = true;
	}
	if (dropped)
		pf->dropped += e->count;
}

/* An empty pprof: samples/count and cpu/nanoseconds (or the event's count). NULL: no memory. */
struct pprof *profile_pprof_new(struct profile *pf, double secs)
{
	struct pprof_value_type types[2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
	int64_t period = pf->use_freq ? 1000000000ll / pf->freq_used : pf->period_used;
	struct pprof *pp;

	/* a period in events, not time: the second value is the event's count */
	if (!profile_time_event(pf->event)) {
		types[1].type = pf->event ? pf->event : "events";
		types[1].unit = "count";
		if (pf->use_freq)
			period = 1;
	}
	pp = pprof__new(types, 2, &types[1], period);
	if (pp)
		pprof__set_time(pp, pf->slice_wall_ns, (int64_t)(secs * 1e9));
	return pp;
}

/* The pprof's comments, once its stacks are in: what was sampled, what was lost or cut short. */
void profile_pprof_comments(struct prof *p, struct profile *pf, struct pprof *pp)
{
	char what[300], comment[600];

	profile_describe(p, pf, what, sizeof(what));
	snprintf(comment, sizeof(comment), "perfscope profile: %s, %s", what, p->title);
	pprof__add_comment(pp, comment);
	if (pf->lost) {
		snprintf(comment, sizeof(comment), "%" PRIu64 " samples lost", pf->lost);
		pprof__add_comment(pp, comment);
	}
	if (!p->opts.interval_ms && prof__kernel_dropped(p)) {
		snprintf(comment, sizeof(comment),
			 "about %" PRIu64 " samples dropped silently by the kernel",
			 prof__kernel_dropped(p));
		pprof__add_comment(pp, comment);
	}
	if (pf->truncated) {
		snprintf(comment, sizeof(comment),
			 "%" PRIu64 " samples with a user stack that stops before main",
			 pf->truncated);
		pprof__add_comment(pp, comment);
	}
}

/* The formats written whole to a file of their own (one per -i slice), not into a stream. */
bool profile_file_format(enum pf_format f)
{
	return f == PF_FOLDED || f == PF_SVG || f == PF_PPROF;
}

/*
 * The profile in a file format into f, which is closed: fl (folded, svg) or pp (pprof) as the
 * pass over the stacks filled them, NULL when out of memory. 0 or -errno.
 */
int profile_write_file(struct prof *p, struct profile *pf, enum pf_format fmt,
		       const struct flame *fl, struct pprof *pp, size_t nr, FILE *f,
		       const char *what)
{
	char title[300], sub[300];
	struct flame_svg_opts o = { .title = title, .subtitle = sub };
	int err;

	if (fmt == PF_SVG) {
		snprintf(title, sizeof(title), "perfscope profile: %s", p->title);
		profile_describe(p, pf, sub, sizeof(sub));
	}
	err = prof__stackfile_write(p,
				    fmt == PF_PPROF ? PROF_STACKFILE_PPROF
				    : fmt == PF_SVG ? PROF_STACKFILE_SVG
						    : PROF_STACKFILE_FOLDED,
				    fl, pp, &o, f, what);
	if (!err && !p->opts.quiet && strcmp(what, "standard output"))
		fprintf(stderr, "perfscope %s: %" PRIu64 " samples in %zu stacks written to %s\n",
			p->name, pf->samples, nr, what);
	return err;
}
