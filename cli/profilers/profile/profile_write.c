/* perfscope profile's writers: the stacks table symbolized as text, JSON, folded, SVG or pprof. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "flame.h"
#include "flame_svg.h"
#include "pprof.h"
#include "profile.h"
#include "stack.h"

/* ---- symbolizing ---- */

/* Returns that a stack's user part reaches a known root: main, _start, a thread's start. */
static bool is_root(const char *sym)
{
	static const char *const roots[] = {
		"main",
		"_start",
		"__libc_start_main",
		"__libc_start_call_main",
		"start_thread",
		"clone",
		"clone3",
		"__clone",
		"__clone3",
		"thread_start",
		"_dl_start",
		"_dl_start_user",
	};

	if (!sym)
		return false;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(sym, roots[i]))
			return true;
	return false;
}

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
		rooted = rooted || is_root(pf->frames[i].sym);
	}
	/* only a stack with a user part can fall short of main; -g off has no stack at all */
	if (user && !rooted && p->opts.callchain && p->opts.user_callchain != 0)
		pf->truncated += e->count;
	return n;
}

static void put_name(char **o, char *end, const char *s)
{
	for (; *s && *o < end; s++)
		*(*o)++ = (*s == ';' || (unsigned char)*s < 0x20 || *s == 0x7f) ? '_' : *s;
}

/* "comm;outer;...;leaf" into pf->fold; its length. */
size_t profile_fold(struct profile *pf, const struct stack_ent *e, int n, bool ksuffix)
{
	char *o = pf->fold, *end = pf->fold + sizeof(pf->fold) - 1, name[512];

	put_name(&o, end, frame__root(e->comm));
	if (pf->per_pid || pf->per_thread) {
		if (pf->per_thread)
			snprintf(name, sizeof(name), "-%u/%u", e->pid, e->tid);
		else
			snprintf(name, sizeof(name), "-%u", e->pid);
		put_name(&o, end, name);
	}
	for (int i = n - 1; i >= 0; i--) {
		if (o < end)
			*o++ = ';';
		/* kernel frames "_[k]": flamegraph.pl's and our SVG's colors (the SVG hides it) */
		cc_frame__name(&pf->frames[i], ksuffix, name, sizeof(name));
		put_name(&o, end, name);
	}
	*o = '\0';
	return (size_t)(o - pf->fold);
}

static struct func *func_get(struct profile *pf, const char *name, const char *dso)
{
	uint64_t key = profile_mix(profile_str_hash(name, SIZE_MAX), (uint64_t)(uintptr_t)dso);
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
static void count_funcs(struct profile *pf, const struct stack_ent *e, int n, uint64_t seq)
{
	char name[512];

	for (int i = 0; i < n; i++) {
		struct func *f;

		cc_frame__name(&pf->frames[i], false, name, sizeof(name));
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

static int by_count(const void *a, const void *b)
{
	const struct stack_ent *x = *(const struct stack_ent *const *)a;
	const struct stack_ent *y = *(const struct stack_ent *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Every stack of the profile, most samples first. NULL + *nr 0 when none or out of memory. */
static struct stack_ent **sorted_stacks(struct profile *pf, size_t *nr)
{
	struct stack_ent **arr = malloc((pf->nr_stacks ? pf->nr_stacks : 1) * sizeof(*arr));
	struct keymap_iter it;
	struct stack_ent **head;
	uint64_t key;
	size_t n = 0;

	*nr = 0;
	if (!arr)
		return NULL;
	keymap__for_each(&pf->stacks, &it, key, head) for (struct stack_ent *e = *head;
							   e && n < pf->nr_stacks; e = e->next)
		arr[n++] = e;
	qsort(arr, n, sizeof(*arr), by_count);
	*nr = n;
	return arr;
}

/* ---- writing ---- */

static bool time_event(const char *ev)
{
	return ev && (!strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock"));
}

double profile_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void describe(struct prof *p, struct profile *pf, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s", pf->event ? pf->event : "?");

	if (pf->use_freq)
		n += snprintf(buf + n, len - (size_t)n, " at %ld Hz", pf->freq_used);
	else if (pf->period_used == 1)
		n += snprintf(buf + n, len - (size_t)n, " (every event)");
	else
		n += snprintf(buf + n, len - (size_t)n, " every %ld %s", pf->period_used,
			      time_event(pf->event) ? "ns" : "events");
	if (pf->why_event)
		n += snprintf(buf + n, len - (size_t)n, " (%s)", pf->why_event);
	if (pf->user_only)
		n += snprintf(buf + n, len - (size_t)n,
			      ", user space only (the kernel may not be sampled by this user)");
	if (pf->bpf)
		snprintf(buf + n, len - (size_t)n, ", counted in the kernel (BPF)");
}

static void write_text(struct prof *p, struct profile *pf, struct out *o, double secs)
{
	char what[256];
	long rows = pf->top;

	describe(p, pf, what, sizeof(what));
	out__printf(o, "# perfscope profile: %" PRIu64 " samples of %s, %s, %.2f s", pf->samples,
		    what, p->title, secs);
	if (p->opts.interval_ms)
		out__printf(o, ", profile %" PRIu64, pf->seq);
	out__puts(o, "\n");
	if (pf->lost)
		out__printf(o, "# %" PRIu64 " samples lost (rings full): raise -m\n", pf->lost);
	if (!p->opts.interval_ms && prof__kernel_dropped(p))
		out__printf(o,
			    "# about %" PRIu64 " samples dropped silently by the kernel (an idle "
			    "CPU of some VMs): they are not in this profile\n",
			    prof__kernel_dropped(p));
	if (pf->bpf_keys_full)
		out__printf(o, "# %" PRIu64 " samples lost: the BPF counts map was full\n",
			    pf->bpf_keys_full);
	if (pf->filt.on) {
		out__printf(o, "# filters: %" PRIu64 " samples passed, dropped:",
			    (uint64_t)pf->filt_now.passed);
		for (int r = 0; r < FILTER_NR; r++)
			if (pf->filt.on & (1u << r))
				out__printf(o, " %s %" PRIu64, bpf_filter__name(r),
					    (uint64_t)pf->filt_now.dropped[r]);
		out__puts(o, "\n");
	}
	if (pf->bpf_kstack_lost || pf->bpf_ustack_lost)
		out__printf(o,
			    "# %" PRIu64 " samples counted without their kernel stack and %" PRIu64
			    " without their user stack: the BPF stack map held another stack in "
			    "its slot, or was full (raise --bpf-stacks)\n",
			    pf->bpf_kstack_lost, pf->bpf_ustack_lost);
	if (pf->truncated)
		out__printf(o,
			    "# %" PRIu64 " samples (%.1f%%) have a user stack that stops before "
			    "main, _start or a thread's start (code without frame pointers): "
			    "try --call-graph dwarf\n",
			    pf->truncated, profile_pct(pf->truncated, pf->samples));
	out__printf(o, "#\n# %8s %8s  %-40s %s\n", "Total", "Self", "Function", "Module");
	if (pf->nr_funcs) /* funcs is NULL before the first function: qsort wants an array */
		qsort(pf->funcs, pf->nr_funcs, sizeof(*pf->funcs), by_self);
	for (size_t i = 0; i < pf->nr_funcs && (rows <= 0 || (long)i < rows); i++) {
		const struct func *f = &pf->funcs[i];

		out__printf(o, "  %7.2f%% %7.2f%%  %-40s %s\n", profile_pct(f->total, pf->samples),
			    profile_pct(f->self, pf->samples), f->name,
			    f->dso ? f->dso : "[unknown]");
	}
	if (rows > 0 && pf->nr_funcs > (size_t)rows)
		out__printf(o, "# ... %zu more functions (--top 0 lists all)\n",
			    pf->nr_funcs - (size_t)rows);
	out__puts(o, "\n");
}

static void json_frame(struct json *j, const struct cc_frame *f)
{
	char name[512];

	json__obj(j);
	json__key(j, "ip");
	json__hex(j, f->ip);
	cc_frame__name(f, false, name, sizeof(name));
	json__key(j, "name");
	json__str(j, name);
	json__key(j, "sym");
	json__str(j, f->sym);
	if (f->sym) {
		json__key(j, "off");
		json__u64(j, f->off);
	}
	json__key(j, "dso");
	json__str(j, f->dso);
	if (!f->kernel && f->map_limit) {
		json__key(j, "path");
		json__str(j, f->path);
		json__key(j, "file_off");
		json__hex(j, f->file_off);
	}
	json__key(j, "kernel");
	json__bool(j, f->kernel);
	json__end(j);
}

/* One JSON object for the whole profile: header, stacks (frames innermost first), functions. */
static void write_json(struct prof *p, struct profile *pf, struct out *o, double secs,
		       struct stack_ent **arr, size_t nr)
{
	struct json j;

	json__begin(&j, o);
	json__key(&j, "event");
	json__str(&j, pf->event);
	if (pf->use_freq) {
		json__key(&j, "freq");
		json__u64(&j, (uint64_t)pf->freq_used);
	} else {
		json__key(&j, "period");
		json__u64(&j, (uint64_t)pf->period_used);
	}
	if (pf->why_event) {
		json__key(&j, "note");
		json__str(&j, pf->why_event);
	}
	json__key(&j, "target");
	json__str(&j, p->title);
	if (pf->user_only) {
		json__key(&j, "user_only");
		json__bool(&j, true);
	}
	if (p->opts.interval_ms) {
		json__key(&j, "profile");
		json__u64(&j, pf->seq);
	}
	json__key(&j, "seconds");
	json__dbl(&j, secs);
	json__key(&j, "samples");
	json__u64(&j, pf->samples);
	json__key(&j, "lost");
	json__u64(&j, pf->lost);
	if (!p->opts.interval_ms) { /* measured when the run ends */
		json__key(&j, "kernel_dropped");
		json__u64(&j, prof__kernel_dropped(p));
	}
	json__key(&j, "truncated");
	json__u64(&j, pf->truncated);
	if (pf->bpf) {
		json__key(&j, "bpf_keys_full");
		json__u64(&j, pf->bpf_keys_full);
		json__key(&j, "bpf_kstack_lost");
		json__u64(&j, pf->bpf_kstack_lost);
		json__key(&j, "bpf_ustack_lost");
		json__u64(&j, pf->bpf_ustack_lost);
	}
	if (pf->filt.on) {
		json__key(&j, "filter_passed");
		json__u64(&j, pf->filt_now.passed);
		json__key(&j, "filter_dropped");
		json__obj(&j);
		for (int r = 0; r < FILTER_NR; r++)
			if (pf->filt.on & (1u << r)) {
				json__key(&j, r == FILTER_NR_RUNNING ? "nr_running"
								     : bpf_filter__name(r));
				json__u64(&j, (uint64_t)pf->filt_now.dropped[r]);
			}
		json__end(&j);
	}
	json__key(&j, "stacks");
	json__arr(&j);
	for (size_t i = 0; i < nr; i++) {
		const struct stack_ent *e = arr[i];
		int n = profile_resolve(p, pf, e);

		json__obj(&j);
		json__key(&j, "comm");
		json__str(&j, e->comm);
		json__key(&j, "pid");
		json__u64(&j, e->pid);
		if (pf->per_thread) {
			json__key(&j, "tid");
			json__u64(&j, e->tid);
		}
		json__key(&j, "count");
		json__u64(&j, e->count);
		json__key(&j, "period");
		json__u64(&j, e->period);
		json__key(&j, "frames");
		json__arr(&j);
		for (int k = 0; k < n; k++)
			json_frame(&j, &pf->frames[k]);
		json__end(&j);
		json__end(&j);
	}
	json__end(&j);
	json__key(&j, "functions");
	json__arr(&j);
	if (pf->nr_funcs) /* funcs is NULL before the first function: qsort wants an array */
		qsort(pf->funcs, pf->nr_funcs, sizeof(*pf->funcs), by_self);
	for (size_t i = 0; i < pf->nr_funcs; i++) {
		json__obj(&j);
		json__key(&j, "name");
		json__str(&j, pf->funcs[i].name);
		json__key(&j, "dso");
		json__str(&j, pf->funcs[i].dso);
		json__key(&j, "self");
		json__u64(&j, pf->funcs[i].self);
		json__key(&j, "total");
		json__u64(&j, pf->funcs[i].total);
		json__end(&j);
	}
	json__end(&j);
	json__end_line(&j);
}

/* The profile's stacks folded (kernel frames "_[k]" for the colors). NULL: no memory. */
static struct flame *build_flame(struct prof *p, struct profile *pf, struct stack_ent **arr,
				 size_t nr, bool ksuffix)
{
	struct flame *fl = flame__new();

	if (!fl)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		int n = profile_resolve(p, pf, arr[i]);
		size_t len = profile_fold(pf, arr[i], n, ksuffix);

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
	struct pprof_frame *pfr = calloc(MAX_FRAMES, sizeof(*pfr));
	char(*bid)[2 * 20 + 1] = calloc(MAX_FRAMES, sizeof(*bid));
	char(*names)[512] = calloc(MAX_FRAMES, sizeof(*names));
	int64_t period = pf->use_freq ? 1000000000ll / pf->freq_used : pf->period_used;
	struct pprof *pp = NULL;
	char what[300], comment[600];

	if (!pfr || !bid || !names)
		goto out;
	/* a period in events, not time: the second value is the event's count */
	if (!time_event(pf->event)) {
		types[1].type = pf->event ? pf->event : "events";
		types[1].unit = "count";
		if (pf->use_freq)
			period = 1;
	}
	pp = pprof__new(types, 2, &types[1], period);
	if (!pp)
		goto out;
	pprof__set_time(pp, pf->slice_wall_ns, (int64_t)(secs * 1e9));
	describe(p, pf, what, sizeof(what));
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
		for (int k = 0; k < n; k++) {
			const struct cc_frame *f = &pf->frames[k];

			/* named as in folded and text ("[libc.so.6+0x1234]", "[unknown]"), so the
			 * same code in two processes is one function */
			cc_frame__name(f, false, names[k], sizeof(names[k]));
			pfr[k] = (struct pprof_frame){
				.addr = f->ip,
				.function = names[k],
				.module = f->kernel ? f->dso : f->path,
				.map_start = f->map_start,
				.map_limit = f->map_limit,
				.map_offset = f->map_pgoff,
			};
			if (f->build_id_size) {
				for (int b = 0; b < f->build_id_size && b < 20; b++)
					snprintf(bid[k] + 2 * b, 3, "%02x", f->build_id[b]);
				pfr[k].build_id = bid[k];
			}
		}
		if (pprof__add_sample(pp, pfr, (size_t)n, values, labels, pf->per_thread ? 3 : 2))
			pf->dropped += e->count;
	}
out:
	free(pfr);
	free(bid);
	free(names);
	return pp;
}

/* The formats written whole to a file of their own (one per -i slice), not into a stream. */
bool profile_file_format(enum pf_format f)
{
	return f == PF_FOLDED || f == PF_SVG || f == PF_PPROF;
}

/* The profile in a file format (folded, svg, pprof) into f, which is closed. 0 or -errno. */
static int write_file_format(struct prof *p, struct profile *pf, enum pf_format fmt,
			     struct stack_ent **arr, size_t nr, double secs, FILE *f,
			     const char *what)
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

		fl = build_flame(p, pf, arr, nr, true);
		snprintf(title, sizeof(title), "perfscope profile: %s", p->title);
		describe(p, pf, sub, sizeof(sub));
		if (fl)
			err = flame_svg__write(fl, &o, f, NULL);
		if (fclose(f) && !err)
			err = -errno;
	} else {
		fl = build_flame(p, pf, arr, nr, true);
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

static FILE *fopen_slice(struct prof *p, const char *path, uint64_t seq, bool sliced, char **name)
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

int64_t profile_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Writes the profile counted so far, then starts a new one. 0 or -errno. */
int profile_write(struct prof *p, struct profile *pf)
{
	bool sliced = p->opts.interval_ms > 0;
	uint64_t now = mono_ns();
	double secs = (double)(now - (pf->slice_start_ns ? pf->slice_start_ns : p->start_ns)) / 1e9;
	struct out *o = pf->file ? pf->file : p->out;
	struct stack_ent **arr;
	size_t nr;
	int err = 0;

	if (pf->bs && (err = profile_pull_bpf(p, pf)))
		return err;
	profile_pull_filter(pf);
	/* the windows --than has not judged yet: their stacks go with this profile */
	if (pf->than)
		profile_than_flush(p, pf, now);
	pf->seq++;
	pf->truncated = 0;
	profile_funcs_clear(pf);
	arr = sorted_stacks(pf, &nr);
	if (!arr)
		return -ENOMEM;
	/* functions (and the truncated count) first: every format's header says them */
	for (size_t i = 0; i < nr; i++)
		count_funcs(pf, arr[i], profile_resolve(p, pf, arr[i]), i + 1);
	pf->truncated_total += pf->truncated;
	if (profile_file_format(pf->fmt)) {
		char *name = NULL;
		const char *what = "standard output";
		FILE *f;

		if (pf->output && pf->seq > 1) {
			f = fopen_slice(p, pf->output, pf->seq, true, &name);
			what = name;
		} else if (pf->output) {
			/* the first file was opened by check (an unwritable -o said at once) */
			int fd = dup(pf->file->fd);

			f = fd >= 0 ? fdopen(fd, "w") : NULL;
			name = sliced ? profile_slice_name(pf->output, 1) : NULL;
			what = name ? name : pf->output;
		} else {
			out__flush(p->out);
			f = fdopen(dup(STDOUT_FILENO), "w");
		}
		err = f ? write_file_format(p, pf, pf->fmt, arr, nr, secs, f, what) : -errno;
		free(name);
	} else if (pf->fmt == PF_JSON) {
		write_json(p, pf, o, secs, arr, nr);
	} else {
		write_text(p, pf, o, secs);
	}
	if (pf->flame_graph) {
		char *name = NULL;
		const char *base = pf->flame_graph;
		char *path = NULL;
		FILE *f;

		/* perf-prof's name: FILE.folded */
		if (asprintf(&path, "%s%s", base,
			     profile_ends_with(base, ".folded") ? "" : ".folded") < 0)
			path = NULL;
		f = path ? fopen_slice(p, path, pf->seq, sliced, &name) : NULL;
		if (f) {
			int e2 = write_file_format(p, pf, PF_FOLDED, arr, nr, secs, f, name);

			err = err ? err : e2;
		} else {
			err = err ? err : -EIO;
		}
		free(name);
		free(path);
	}
	if (o)
		out__flush(o);
	free(arr);
	profile_free_stacks(pf);
	pf->samples = pf->period_sum = pf->lost = 0;
	pf->bpf_kstack_lost = pf->bpf_ustack_lost = pf->bpf_keys_full = 0;
	pf->slice_start_ns = now;
	pf->slice_wall_ns = profile_wall_ns();
	callchain__exits_done(prof__callchain(p));
	return err;
}
