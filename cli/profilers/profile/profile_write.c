/* perfscope profile written: a profile in its format (and --flame-graph's), then the next begun. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "flame.h"
#include "pprof.h"
#include "profile.h"

/* A new profile begins: the stacks written are let go of, the counts start again. */
static void profile_next(struct prof *p, struct profile *pf, uint64_t now)
{
	stack_table__clear(&pf->stacks);
	for (int i = 0; i < pf->nr_wins; i++)
		keymap__clear(&pf->wins[i].stacks);
	pf->samples = pf->period_sum = pf->lost = 0;
	pf->bpf_kstack_lost = pf->bpf_ustack_lost = pf->bpf_keys_full = 0;
	pf->slice_start_ns = now;
	pf->slice_wall_ns = realtime_ns();
	callchain__exits_done(prof__callchain(p));
}

/* Writes the profile counted up to now, then starts a new one. 0 or -errno. */
int profile_write(struct prof *p, struct profile *pf, uint64_t now)
{
	bool sliced = p->opts.interval_ms > 0;
	double secs = (double)(now - (pf->slice_start_ns ? pf->slice_start_ns : p->start_ns)) / 1e9;
	struct out *o = pf->file ? pf->file : p->out;
	struct flame *fl = NULL;
	struct pprof *pp = NULL;
	struct stack_ent **arr;
	size_t nr;
	int err = 0;

	pf->seq++;
	pf->truncated = 0;
	profile_funcs_clear(pf);
	arr = stack_table__sorted(&pf->stacks, &nr);
	if (!arr)
		return -ENOMEM;
	if (pf->flame_graph || pf->fmt == PF_FOLDED || pf->fmt == PF_SVG)
		fl = flame__new();
	if (pf->fmt == PF_PPROF)
		pp = profile_pprof_new(pf, secs);
	/*
	 * Each stack symbolized once: its functions counted (and the truncated ones: every
	 * format's header says them), folded, added to the pprof. JSON, a stream, walks them again.
	 */
	for (size_t i = 0; i < nr; i++) {
		int n = profile_resolve(p, pf, arr[i]);

		profile_funcs_count(pf, arr[i], n, i + 1);
		profile_stack_add(pf, arr[i], n, fl, pp);
	}
	pf->truncated_total += pf->truncated;
	if (pp)
		profile_pprof_comments(p, pf, pp);
	if (profile_file_format(pf->fmt)) {
		char *name = NULL;
		const char *what = "standard output";
		FILE *f;

		if (pf->output && pf->seq > 1) {
			f = prof__fopen_slice(p, pf->output, pf->seq, true, &name);
			what = name;
		} else if (pf->output) {
			/* the first file was opened by check (an unwritable -o said at once) */
			int fd = dup(pf->file->fd);

			f = fd >= 0 ? fdopen(fd, "w") : NULL;
			name = sliced ? prof__slice_name(pf->output, 1) : NULL;
			what = name ? name : pf->output;
		} else {
			out__flush(p->out);
			f = fdopen(dup(STDOUT_FILENO), "w");
		}
		err = f ? profile_write_file(p, pf, pf->fmt, fl, pp, nr, f, what) : -errno;
		free(name);
	} else if (pf->fmt == PF_JSON) {
		profile_write_json(p, pf, o, secs, arr, nr);
	} else {
		profile_write_text(p, pf, o, secs);
	}
	/* --flame-graph as every profiler writes it (prof_flame.c): one file per -i slice */
	if (pf->flame_graph &&
	    prof__flame_write_arg(p, pf->flame_graph, sliced ? pf->seq : 0, fl, "samples"))
		err = err ? err : -EIO;
	if (o)
		out__flush(o);
	flame__delete(fl);
	pprof__delete(pp);
	free(arr);
	profile_next(p, pf, now);
	return err;
}
