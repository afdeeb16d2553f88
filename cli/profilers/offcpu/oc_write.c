/* perfscope offcpu written: each stack symbolized once into the folded, SVG, pprof or text form. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "flame.h"
#include "flame_svg.h"
#include "pprof.h"
#include "pprof_frames.h"
#include "offcpu.h"

static const char *const row_frames[] = {
	[OC_ROW_PREEMPT] = "[off-cpu R+]",
	[OC_ROW_UNKNOWN] = "[off-cpu ?]",
	[OC_ROW_RUNQ] = "[off-cpu R]",
};

/* A frame that is no function: the state, the waker's separator, its comm. */
static struct frame oc_pseudo(const char *name)
{
	return (struct frame){ .sym = name };
}

/* Whether the user part of frames reaches main or a thread's start (*user: it has one). */
bool oc_user_rooted(const struct frame *frames, int n, bool *user)
{
	bool rooted = false;

	*user = false;
	for (int i = 0; i < n; i++) {
		if (frames[i].kernel)
			continue;
		*user = true;
		rooted = rooted || frame__is_root(frames[i].sym);
	}
	return rooted;
}

/*
 * e symbolized: oc->tframes (the task's, innermost first), oc->wframes (its waker's), and
 * oc->frames as folded and pprof take them, innermost first: the waker's comm, its stack from
 * its root, "--", the state, then the task's stack (bcc offwaketime's layout). Returns nframes.
 */
int oc_resolve(struct prof *p, struct offcpu *oc, const struct stack_ent *e)
{
	struct callchain *cc = prof__callchain(p);
	uint64_t tag = e->ips[0];
	uint32_t sep = e->nr;
	int row = OC_TAG_ROW(tag), n = 0;

	oc->nw = 0;
	if (OC_TAG_WAKER(tag))
		for (sep = 1; sep < e->nr && e->ips[sep] != OC_SEP; sep++)
			;
	oc->nt = callchain__frames(cc, (pid_t)e->pid, e->ips + 1, sep - 1, oc->tframes,
				   CALLCHAIN_MAX_FRAMES);
	if (sep + 5 <= e->nr) {
		oc->wpid = (uint32_t)e->ips[sep + 1];
		memcpy(oc->wcomm, &e->ips[sep + 3], 16);
		oc->wcomm[16] = 0;
		oc->nw = callchain__frames(cc, (pid_t)oc->wpid, e->ips + sep + 5, e->nr - sep - 5,
					   oc->wframes, CALLCHAIN_MAX_FRAMES);
		oc->frames[n++] = oc_pseudo(frame__root(oc->wcomm));
		for (int i = oc->nw - 1; i >= 0; i--)
			oc->frames[n++] = oc->wframes[i];
		oc->frames[n++] = oc_pseudo("--");
	}
	if (row != OC_ROW_ONCPU) {
		const char *name =
			row < (int)(sizeof(row_frames) / sizeof(*row_frames)) && row_frames[row]
				? row_frames[row]
				: NULL;

		if (!name) {
			snprintf(oc->sname, sizeof(oc->sname), "[off-cpu %s]",
				 oc_row_name(oc, row));
			name = oc->sname;
		}
		oc->frames[n++] = oc_pseudo(name);
	}
	memcpy(oc->frames + n, oc->tframes, (size_t)oc->nt * sizeof(*oc->frames));
	n += oc->nt;
	oc->nframes = n;
	return n;
}

/* The stack just resolved as "comm;outer;...;leaf" into buf; its length. */
static size_t oc_fold(struct offcpu *oc, const struct stack_ent *e, char *buf, size_t len)
{
	char root[64];
	int n;

	if (oc->per_thread)
		snprintf(root, sizeof(root), "%s-%u/%u", frame__root(e->comm), e->pid, e->tid);
	else
		snprintf(root, sizeof(root), "%s", frame__root(e->comm));
	n = stack__fold(oc->frames, oc->nframes, root, FOLD_KERNEL_SUFFIX, buf, len);
	if (n < 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

static struct pprof *oc_pprof_new(struct prof *p, struct offcpu *oc, double secs)
{
	struct pprof_value_type types[2] = { { oc->wall ? "events" : "switches", "count" },
					     { oc->wall ? "wall" : "off-cpu", "nanoseconds" } };
	struct pprof *pp = pprof__new(types, 2, &types[1], 1);
	char c[300];

	if (!pp)
		return NULL;
	pprof__set_time(pp, oc->slice_wall_ns, (int64_t)(secs * 1e9));
	snprintf(c, sizeof(c), "perfscope offcpu%s: %s", oc->wall ? " --wall" : "", p->title);
	pprof__add_comment(pp, c);
	return pp;
}

static void oc_pprof_add(struct offcpu *oc, struct pprof *pp, const struct stack_ent *e)
{
	char pid[16], tid[16];
	struct pprof_label labels[4] = {
		{ "comm", e->comm },
		{ "state", oc_row_name(oc, OC_TAG_ROW(e->ips[0])) },
		{ "pid", pid },
		{ "tid", tid },
	};
	int64_t values[2] = { (int64_t)e->count, (int64_t)e->period };

	snprintf(pid, sizeof(pid), "%u", e->pid);
	snprintf(tid, sizeof(tid), "%u", e->tid);
	if (pprof__add_frames(pp, oc->frames, (size_t)oc->nframes, values, labels,
			      oc->per_thread ? 4 : 3))
		oc->loss.dropped += e->count;
}

static void oc_pprof_losses(struct prof *p, struct offcpu *oc, struct pprof *pp)
{
	struct oc_losses l;
	uint64_t c[PAIR_NR_OUTCOMES];
	char line[300];

	oc_losses(p, oc, &l, c);
	snprintf(line, sizeof(line),
		 "lost: %" PRIu64 " ring records, %" PRIu64 " switch-ins without their "
		 "switch-out, %" PRIu64 " switch-outs invalidated by a loss, %" PRIu64
		 " replaced; %" PRIu64 " stacks cut short",
		 l.ring_lost, c[PAIR_NO_START], c[PAIR_LOST], c[PAIR_REPLACED], l.truncated);
	pprof__add_comment(pp, line);
}

/* The file formats (folded, svg, pprof) into f (closed). 0 or -errno, said. */
static int oc_write_file(struct prof *p, struct offcpu *oc, const struct flame *fl,
			 struct pprof *pp, FILE *f, const char *what)
{
	char title[300];
	struct flame_svg_opts o = { .title = title, .count_name = "ns" };
	int err;

	snprintf(title, sizeof(title), "perfscope offcpu%s: %s", oc->wall ? " --wall" : "",
		 p->title);
	err = prof__stackfile_write(p,
				    oc->fmt == OC_PPROF ? PROF_STACKFILE_PPROF
				    : oc->fmt == OC_SVG ? PROF_STACKFILE_SVG
							: PROF_STACKFILE_FOLDED,
				    fl, pp, &o, f, what);
	if (!err && !p->opts.quiet && strcmp(what, "standard output"))
		fprintf(stderr, "perfscope %s: %.3f s %s in %zu stacks written to %s\n", p->name,
			(double)oc->total_ns / 1e9, oc->wall ? "of wall-clock time" : "off-CPU",
			fl ? flame__nr_stacks(fl) : 0, what);
	return err;
}

/* The file a file format goes to: -o (one per -i slice after the first), else standard output. */
static FILE *oc_open(struct prof *p, struct offcpu *oc, char **name, const char **what)
{
	FILE *f;

	*name = NULL;
	*what = "standard output";
	if (!oc->output) {
		out__flush(p->out);
		return fdopen(dup(STDOUT_FILENO), "w");
	}
	f = prof__fopen_slice(p, oc->output, oc->seq, p->opts.interval_ms > 0, name);
	*what = *name ? *name : oc->output;
	return f;
}

/* Every stack of this profile symbolized once: its rows, functions, folded and pprof. */
static void oc_pass(struct prof *p, struct offcpu *oc, struct stack_ent **arr, size_t nr,
		    struct flame *fl, struct pprof *pp)
{
	for (size_t i = 0; i < nr; i++) {
		const struct stack_ent *e = arr[i];
		int row = OC_TAG_ROW(e->ips[0]);
		bool user;

		if (!e->count && !e->period)
			continue;
		oc_resolve(p, oc, e);
		oc->rows[row].count += e->count;
		oc->rows[row].ns += e->period;
		oc->total_ns += e->period;
		if (!oc_user_rooted(oc->tframes, oc->nt, &user) && user &&
		    p->opts.user_callchain != 0) {
			oc->loss.truncated += e->count;
			oc->loss.truncated_ns += e->period;
		}
		if (user)
			oc->user_ns += e->period;
		oc_funcs_count(oc, oc->nt, e->period, i + 1);
		if (fl &&
		    flame__add(fl, oc->fold, oc_fold(oc, e, oc->fold, sizeof(oc->fold)), e->period))
			oc->loss.dropped += e->count;
		if (pp)
			oc_pprof_add(oc, pp, e);
	}
}

/* Writes the profile counted up to now, then starts a new one. 0 or -errno. */
int oc_write(struct prof *p, struct offcpu *oc)
{
	uint64_t now = mono_ns();
	double secs =
		(double)(now - (oc->slice_start_mono ? oc->slice_start_mono : p->start_ns)) / 1e9;
	struct out *o = oc->file ? oc->file : p->out;
	struct flame *fl = NULL;
	struct pprof *pp = NULL;
	struct stack_ent **arr;
	size_t nr;
	int err = 0;

	oc->seq++;
	/*
	 * Tasks still off-CPU count up to now; not with -C: one that came back in on a CPU not
	 * watched would count until the end (only whole stays count then)
	 */
	if (!p->opts.cpus) {
		oc_charge_pending(oc, oc->last_time);
		oc_charge_running(oc, oc->last_time);
	}
	arr = stack_table__sorted(&oc->stacks, &nr);
	if (!arr)
		return -ENOMEM;
	memset(oc->rows, 0, sizeof(oc->rows));
	oc->user_ns = oc->total_ns = 0;
	oc_funcs_clear(oc);
	if (oc->flame_graph || oc->fmt == OC_FOLDED || oc->fmt == OC_SVG)
		fl = flame__new();
	if (oc->fmt == OC_PPROF)
		pp = oc_pprof_new(p, oc, secs);
	oc_pass(p, oc, arr, nr, fl, pp);
	if (pp)
		oc_pprof_losses(p, oc, pp);
	if (oc->fmt == OC_FOLDED || oc->fmt == OC_SVG || oc->fmt == OC_PPROF) {
		const char *what;
		char *name;
		FILE *f = oc_open(p, oc, &name, &what);

		err = f ? oc_write_file(p, oc, fl, pp, f, what) : -EIO;
		free(name);
	} else if (oc->fmt == OC_JSON) {
		oc_write_json(p, oc, o, secs, arr, nr);
	} else {
		oc_write_text(p, oc, o, secs);
	}
	if (oc->flame_graph &&
	    prof__flame_write_arg(p, oc->flame_graph, p->opts.interval_ms ? oc->seq : 0, fl, "ns"))
		err = err ? err : -EIO;
	if (o)
		out__flush(o);
	flame__delete(fl);
	pprof__delete(pp);
	/* the next profile: counts start again; stacks stay (pending switch-outs point at them) */
	for (size_t i = 0; i < nr; i++)
		arr[i]->count = arr[i]->period = 0;
	free(arr);
	oc->oncpu_ns = 0;
	oc->slice_start_mono = now;
	oc->slice_wall_ns = realtime_ns();
	callchain__exits_done(prof__callchain(p));
	return err;
}
