/* capwrite: folded, SVG and pprof files of one set of stacks, each written whatever the others do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capwrite.h"
#include "flame.h"
#include "flame_svg.h"
#include "pprof_frames.h"

#define MAX_FRAMES CALLCHAIN_MAX_FRAMES

/* The stacks symbolized once, into both the folded set and the pprof; scratch for one stack. */
struct capbuild {
	struct flame *fl; /* NULL: out of memory (folded and SVG not written) */
	struct pprof *pp; /* NULL: out of memory or pprof__new's errno */
	int fl_err, pp_err;
	int64_t period; /* ns a sample stands for */
	struct frame *frames;
	char *fold;
};

static void add_stack(struct capbuild *b, struct callchain *cc, const struct stack_ent *e)
{
	const char *comm = frame__root(e->comm);
	struct pprof_label label = { "comm", comm };
	int64_t values[2] = { (int64_t)e->count, (int64_t)e->count * b->period };
	int n = callchain__frames(cc, (pid_t)e->pid, e->ips, e->nr, b->frames, MAX_FRAMES);
	int err;

	if (b->fl && !b->fl_err) {
		int len = stack__fold(b->frames, n, comm, FOLD_KERNEL_SUFFIX, b->fold,
				      STACK_FOLD_MAX);

		if (len >= STACK_FOLD_MAX)
			len = STACK_FOLD_MAX - 1; /* cut at the leaf end: still one stack */
		b->fl_err = flame__add(b->fl, b->fold, (size_t)len, e->count);
	}
	if (b->pp && !b->pp_err) {
		err = pprof__add_frames(b->pp, b->frames, (size_t)n, values, &label, 1);
		if (err)
			b->pp_err = err;
	}
}

static struct pprof *new_pprof(const struct capwrite_opts *o, int64_t period)
{
	const struct pprof_value_type types[] = { { "samples", "count" },
						  { "cpu", "nanoseconds" } };
	struct pprof *pp = pprof__new(types, 2, &types[1], period);

	if (!pp)
		return NULL;
	pprof__set_time(pp, (int64_t)o->start_real_ns, (int64_t)o->duration_ns);
	if (o->title)
		pprof__add_comment(pp, o->title);
	return pp;
}

/* Every stack of st, most samples first (the pprof's order), symbolized once. */
static void build(struct capbuild *b, struct callchain *cc, const struct stack_table *st,
		  const struct capwrite_opts *o)
{
	struct stack_ent **arr;
	size_t nr;

	b->period = o->freq > 0 ? 1000000000 / o->freq : 1;
	b->fl = flame__new();
	b->pp = new_pprof(o, b->period);
	b->pp_err = b->pp ? 0 : (errno ? -errno : -ENOMEM);
	b->frames = malloc(MAX_FRAMES * sizeof(*b->frames));
	b->fold = malloc(STACK_FOLD_MAX);
	arr = stack_table__sorted(st, &nr);
	if (!b->frames || !b->fold || (!arr && st->nr)) {
		b->fl_err = b->pp_err = -ENOMEM;
		nr = 0;
	}
	if (!b->fl)
		b->fl_err = -ENOMEM;
	for (size_t i = 0; i < nr; i++)
		add_stack(b, cc, arr[i]);
	free(arr);
}

static void done(struct capwrite_result *res, const char *path, int err)
{
	if (!err) {
		snprintf(res->files[res->nr++], CAPWRITE_PATH, "%s", path);
		return;
	}
	unlink(path);
	if (!res->err) {
		res->err = err;
		res->failed = strrchr(path, '.');
	}
}

static int write_svg(const struct flame *f, const char *path, const struct capwrite_opts *o)
{
	struct flame_svg_opts so = { .title = o->title, .subtitle = o->subtitle };
	FILE *out = fopen(path, "we");
	int err;

	if (!out)
		return -errno;
	err = flame_svg__write(f, &so, out, NULL);
	if (fclose(out) && !err)
		err = -errno;
	return err;
}

int capwrite__all(struct callchain *cc, const struct stack_table *st, const char *stem,
		  const struct capwrite_opts *o, struct capwrite_result *res)
{
	struct capbuild b = { 0 };
	char path[CAPWRITE_PATH];

	memset(res, 0, sizeof(*res));
	build(&b, cc, st, o);
	res->stacks = b.fl ? flame__nr_stacks(b.fl) : 0;
	snprintf(path, sizeof(path), "%s.folded", stem);
	done(res, path, b.fl_err ? b.fl_err : flame__write(b.fl, path));
	snprintf(path, sizeof(path), "%s.svg", stem);
	done(res, path, b.fl_err ? b.fl_err : write_svg(b.fl, path, o));
	snprintf(path, sizeof(path), "%s.pb.gz", stem);
	done(res, path, b.pp_err ? b.pp_err : pprof__write_path(b.pp, path));
	flame__delete(b.fl);
	pprof__delete(b.pp);
	free(b.frames);
	free(b.fold);
	return res->err;
}
