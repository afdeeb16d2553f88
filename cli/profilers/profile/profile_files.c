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

/* The profile's stacks folded (kernel frames "_[k]" for the colors). NULL: no memory. */
struct flame *profile_build_flame(struct prof *p, struct profile *pf, struct stack_ent **arr,
				  size_t nr)
{
	struct flame *fl = flame__new();

	if (!fl)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		int n = profile_resolve(p, pf, arr[i]);
		size_t len = profile_fold(pf, arr[i], n, true);

		if (flame__add(fl, pf->fold, len, arr[i]->count))
			pf->dropped += arr[i]->count;
	}
	return fl;
}

/* The profile as pprof: samples/count and cpu/nanoseconds (or the event's count), pid and comm
 * labels, every frame with its mapping and build-id. */
static struct pprof *build_pprof(struct prof *p, struct profile *pf, struct stack_ent **arr,
				 size_t nr, double secs)
{
	struct pprof_value_type types[2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
	int64_t period = pf->use_freq ? 1000000000ll / pf->freq_used : pf->period_used;
	struct pprof *pp;
	char what[300], comment[600];

	/* a period in events, not time: the second value is the event's count */
	if (!profile_time_event(pf->event)) {
		types[1].type = pf->event ? pf->event : "events";
		types[1].unit = "count";
		if (pf->use_freq)
			period = 1;
	}
	pp = pprof__new(types, 2, &types[1], period);
	if (!pp)
		return NULL;
	pprof__set_time(pp, pf->slice_wall_ns, (int64_t)(secs * 1e9));
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
	for (size_t i = 0; i < nr; i++) {
		const struct stack_ent *e = arr[i];
		int n = profile_resolve(p, pf, e);
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
			pf->dropped += e->count;
	}
	return pp;
}

/* The formats written whole to a file of their own (one per -i slice), not into a stream. */
bool profile_file_format(enum pf_format f)
{
	return f == PF_FOLDED || f == PF_SVG || f == PF_PPROF;
}

/* The profile in a file format (folded, svg, pprof) into f, which is closed. 0 or -errno. */
int profile_write_file(struct prof *p, struct profile *pf, enum pf_format fmt,
		       struct stack_ent **arr, size_t nr, double secs, FILE *f, const char *what)
{
	struct flame *fl = NULL;
	struct pprof *pp = NULL;
	int err = -ENOMEM;

	if (fmt == PF_PPROF) {
		pp = build_pprof(p, pf, arr, nr, secs);
		if (pp)
			err = pprof__write(pp, f);
		if (fclose(f) && !err)
			err = -errno;
	} else if (fmt == PF_SVG) {
		char title[300], sub[300];
		struct flame_svg_opts o = { .title = title, .subtitle = sub };

		fl = profile_build_flame(p, pf, arr, nr);
		snprintf(title, sizeof(title), "perfscope profile: %s", p->title);
		profile_describe(p, pf, sub, sizeof(sub));
		if (fl)
			err = flame_svg__write(fl, &o, f, NULL);
		if (fclose(f) && !err)
			err = -errno;
	} else {
		fl = profile_build_flame(p, pf, arr, nr);
		err = fl ? flame__write_file(fl, f) : (fclose(f), -ENOMEM);
	}
	if (err)
		fprintf(stderr, "perfscope %s: cannot write the %s profile to %s: %s\n", p->name,
			profile_format_names[fmt], what, strerror(-err));
	else if (!p->opts.quiet && strcmp(what, "standard output"))
		fprintf(stderr, "perfscope %s: %" PRIu64 " samples in %zu stacks written to %s\n",
			p->name, pf->samples, nr, what);
	flame__delete(fl);
	pprof__delete(pp);
	return err;
}

/* Whether s ends with suffix (-o's name says the format). */
bool profile_ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* "out.svg" -> "out.0001.svg": one file per -i slice. */
char *profile_slice_name(const char *path, uint64_t seq)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	char *name;

	if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1))
		dot = path + strlen(path);
	/* pprof's double extension stays whole: cpu.pb.gz -> cpu.0001.pb.gz */
	if (profile_ends_with(path, ".pb.gz"))
		dot = path + strlen(path) - 6;
	if (asprintf(&name, "%.*s.%04" PRIu64 "%s", (int)(dot - path), path, seq, dot) < 0)
		return NULL;
	return name;
}

/* path (its slice seq's name when sliced) opened for writing; *name its name, to free. */
FILE *profile_fopen_slice(struct prof *p, const char *path, uint64_t seq, bool sliced, char **name)
{
	FILE *f;

	*name = sliced ? profile_slice_name(path, seq) : strdup(path);
	if (!*name)
		return NULL;
	f = fopen(*name, "we");
	if (!f)
		fprintf(stderr, "perfscope %s: cannot write to '%s': %s\n", p->name, *name,
			strerror(errno));
	return f;
}
