/* callchain: the stacks of samples, symbolized (symcache, stack), as text lines or JSON. */
#include "callchain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include "stack.h"
#include "symcache.h"

#define MAX_FRAMES 256

/* Processes that exited: their maps are dropped a round later (see callchain__round_end). */
struct pid_list {
	pid_t *pids;
	size_t nr, cap;
};

struct callchain {
	const char *prof; /* for messages: "perfscope PROF: ..." */
	struct symcache *sc;
	bool problem_said;
	bool hold_exits; /* callchain__hold_exits */
	struct pid_list exited, ripe;
	struct frame frames[MAX_FRAMES];
	char line[512];
};

struct callchain *callchain__new(const char *prof)
{
	struct callchain *cc = calloc(1, sizeof(*cc));

	if (!cc)
		return NULL;
	cc->prof = prof;
	cc->sc = symcache__new(NULL);
	if (!cc->sc) {
		free(cc);
		return NULL;
	}
	return cc;
}

void callchain__delete(struct callchain *cc)
{
	if (!cc)
		return;
	symcache__delete(cc->sc);
	free(cc->exited.pids);
	free(cc->ripe.pids);
	free(cc);
}

static void pid_list_add(struct pid_list *l, pid_t pid)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		pid_t *n = realloc(l->pids, cap * sizeof(*n));

		if (!n)
			return; /* its maps stay until the end: memory, not correctness */
		l->pids = n;
		l->cap = cap;
	}
	l->pids[l->nr++] = pid;
}

/* A pid reused by a new process must not lose its new maps to the old one's exit. */
static void pid_list_del(struct pid_list *l, pid_t pid)
{
	for (size_t i = 0; i < l->nr; i++)
		if (l->pids[i] == pid)
			l->pids[i--] = l->pids[--l->nr];
}

void callchain__record(struct callchain *cc, const struct psc_record *rec)
{
	struct usyms *u = symcache__usyms(cc->sc);

	switch (rec->type) {
	case PERF_RECORD_MMAP2: {
		struct umap_file f = {
			.path = rec->mmap2.filename,
			.prot = rec->mmap2.prot,
		};

		if (rec->mmap2.has_build_id) {
			f.build_id = rec->mmap2.build_id;
			f.build_id_size = rec->mmap2.build_id_size;
		} else {
			f.maj = rec->mmap2.maj;
			f.min = rec->mmap2.min;
			f.ino = rec->mmap2.ino;
		}
		usyms__mmap(u, (pid_t)rec->mmap2.pid, rec->mmap2.start, rec->mmap2.len,
			    rec->mmap2.pgoff, &f);
		break;
	}
	case PERF_RECORD_FORK:
		/* New processes only; a new thread shares its process's maps. */
		if (rec->fork.pid != rec->fork.ppid) {
			pid_list_del(&cc->exited, (pid_t)rec->fork.pid);
			pid_list_del(&cc->ripe, (pid_t)rec->fork.pid);
			usyms__fork(u, (pid_t)rec->fork.ppid, (pid_t)rec->fork.pid);
		}
		break;
	case PERF_RECORD_EXIT:
		/* the process's main thread: the maps go once its last samples are out */
		if (rec->fork.pid == rec->fork.tid)
			pid_list_add(&cc->exited, (pid_t)rec->fork.pid);
		break;
	case PERF_RECORD_COMM:
		if (rec->comm.exec)
			usyms__exec(u, (pid_t)rec->comm.pid);
		break;
	default:
		break;
	}
}

/*
 * Samples of an exited process may still sit in other CPUs' rings when its EXIT is delivered
 * (without time order); a full round later every ring has been read past them. Without this, a
 * long system-wide trace would keep the maps of every process it ever saw.
 */
static void rotate_exits(struct callchain *cc)
{
	struct usyms *u = symcache__usyms(cc->sc);
	struct pid_list t;

	for (size_t i = 0; i < cc->ripe.nr; i++)
		usyms__exit(u, cc->ripe.pids[i]);
	cc->ripe.nr = 0;
	t = cc->ripe;
	cc->ripe = cc->exited;
	cc->exited = t;
}

void callchain__round_end(struct callchain *cc)
{
	if (!cc->hold_exits)
		rotate_exits(cc);
}

void callchain__hold_exits(struct callchain *cc, bool hold)
{
	cc->hold_exits = hold;
}

void callchain__exits_done(struct callchain *cc)
{
	rotate_exits(cc);
}

void callchain__print_stats(struct callchain *cc, FILE *f)
{
	struct symcache_stats st;

	symcache__stats(cc->sc, &st);
	fprintf(f,
		"perfscope %s: symbols: %zu processes and %zu binaries held, %zu kernel "
		"symbols; %llu of %llu frame lookups answered from the cache, %llu unknown\n",
		cc->prof, st.procs, st.dsos, st.ksyms, (unsigned long long)st.hits,
		(unsigned long long)st.lookups, (unsigned long long)st.unknown);
}

static int resolve(struct callchain *cc, const struct psc_sample *s)
{
	const char *problem;
	int n = stack__resolve(cc->sc, (pid_t)s->pid, s->callchain.ips, s->callchain.nr, 0,
			       cc->frames, MAX_FRAMES);

	if (!cc->problem_said && (problem = symcache__problem(cc->sc))) {
		fprintf(stderr, "perfscope %s: %s\n", cc->prof, problem);
		cc->problem_said = true;
	}
	return n;
}

void callchain__text(struct callchain *cc, struct out *out, const struct psc_sample *s)
{
	int i, n = resolve(cc, s);

	for (i = 0; i < n; i++) {
		int len = frame__snprint(&cc->frames[i], cc->line, sizeof(cc->line));

		out__puts(out, "\t    ");
		out__printf(out, "%16llx ", (unsigned long long)cc->frames[i].ip);
		if (len > 0)
			out__write(out, cc->line, strnlen(cc->line, sizeof(cc->line)));
		out__putc(out, '\n');
	}
}

void callchain__json(struct callchain *cc, struct json *j, const struct psc_sample *s)
{
	int i, n = resolve(cc, s);

	json__arr(j);
	for (i = 0; i < n; i++) {
		const struct frame *f = &cc->frames[i];

		json__obj(j);
		json__key(j, "ip");
		json__hex(j, f->ip);
		json__key(j, "sym");
		json__str(j, f->sym);
		if (f->sym) {
			json__key(j, "off");
			json__u64(j, f->off);
		}
		json__key(j, "dso");
		json__str(j, f->dso);
		json__key(j, "kernel");
		json__bool(j, f->kernel);
		json__end(j);
	}
	json__end(j);
}

int callchain__fold(struct callchain *cc, const struct psc_sample *s, const char *prefix, char *buf,
		    size_t len)
{
	return stack__fold(cc->frames, resolve(cc, s), prefix, FOLD_WITH_DSO, buf, len);
}

void callchain__prepare(struct callchain *cc)
{
	symcache__ksyms(cc->sc);
}

int callchain__frame(struct callchain *cc, pid_t pid, uint64_t ip, bool kernel, bool caller,
		     struct cc_frame *f)
{
	uint64_t lookup = caller && ip ? ip - 1 : ip;
	const char *problem;
	struct sym sym;
	struct uaddr hit;
	int err;

	err = symcache__resolve(cc->sc, pid, lookup, kernel, &sym);
	if (!cc->problem_said && (problem = symcache__problem(cc->sc))) {
		fprintf(stderr, "perfscope %s: %s\n", cc->prof, problem);
		cc->problem_said = true;
	}
	*f = (struct cc_frame){
		.ip = ip,
		.sym = sym.name,
		.off = sym.name ? ip - sym.start : 0,
		.dso = sym.dso,
		.path = sym.dso,
		.kernel = kernel,
	};
	/* the mapping: a second lookup, but a profile resolves each distinct address once */
	if (!kernel && !usyms__find(symcache__usyms(cc->sc), pid, lookup, &hit)) {
		f->path = hit.dso ? hit.dso->path : hit.map_name;
		f->map_start = hit.map_start;
		f->map_limit = hit.map_end;
		f->map_pgoff = hit.pgoff;
		f->file_off = ip - hit.map_start + hit.pgoff;
		if (hit.dso && hit.dso->build_id_size) {
			f->build_id = hit.dso->build_id;
			f->build_id_size = hit.dso->build_id_size;
		}
		if (!f->dso)
			f->dso = hit.dso ? hit.dso->short_name : hit.map_name;
	}
	return err;
}

int callchain__frames(struct callchain *cc, pid_t pid, const uint64_t *ips, uint64_t nr,
		      struct cc_frame *frames, int max)
{
	enum { NONE, KERNEL, USER, SKIP } ctx = NONE;
	bool first_in_ctx = true;
	int n = 0;

	for (uint64_t i = 0; i < nr && n < max; i++) {
		uint64_t ip = ips[i];
		bool kernel;

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip == (uint64_t)PERF_CONTEXT_KERNEL ? KERNEL
			      : ip == (uint64_t)PERF_CONTEXT_USER ? USER
								   : SKIP;
			first_in_ctx = true;
			continue;
		}
		if (ctx == SKIP)
			continue;
		kernel = ctx == KERNEL || (ctx == NONE && ksyms__is_kernel_addr(ip));
		/* the first frame of a context is where it was interrupted, not a return address */
		callchain__frame(cc, pid, ip, kernel, !first_in_ctx, &frames[n++]);
		first_in_ctx = false;
	}
	return n;
}
