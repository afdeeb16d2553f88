/* perfscope trace: callchains through the shared symbolizer (common/symcache, common/stack). */
#include "trace_stack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack.h"
#include "symcache.h"

#define MAX_FRAMES 256

/* Processes that exited: their maps are dropped a round later (see trace_stack__round_end). */
struct pid_list {
	pid_t *pids;
	size_t nr, cap;
};

struct trace_stack {
	struct symcache *sc;
	bool problem_said;
	struct pid_list exited, ripe;
	struct frame frames[MAX_FRAMES];
	char line[512];
};

struct trace_stack *trace_stack__new(void)
{
	struct trace_stack *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->sc = symcache__new(NULL);
	if (!ts->sc) {
		free(ts);
		return NULL;
	}
	return ts;
}

void trace_stack__delete(struct trace_stack *ts)
{
	if (!ts)
		return;
	symcache__delete(ts->sc);
	free(ts->exited.pids);
	free(ts->ripe.pids);
	free(ts);
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

void trace_stack__record(struct trace_stack *ts, const struct psc_record *rec)
{
	struct usyms *u = symcache__usyms(ts->sc);

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
			pid_list_del(&ts->exited, (pid_t)rec->fork.pid);
			pid_list_del(&ts->ripe, (pid_t)rec->fork.pid);
			usyms__fork(u, (pid_t)rec->fork.ppid, (pid_t)rec->fork.pid);
		}
		break;
	case PERF_RECORD_EXIT:
		/* the process's main thread: the maps go once its last samples are out */
		if (rec->fork.pid == rec->fork.tid)
			pid_list_add(&ts->exited, (pid_t)rec->fork.pid);
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
void trace_stack__round_end(struct trace_stack *ts)
{
	struct usyms *u = symcache__usyms(ts->sc);
	struct pid_list t;

	for (size_t i = 0; i < ts->ripe.nr; i++)
		usyms__exit(u, ts->ripe.pids[i]);
	ts->ripe.nr = 0;
	t = ts->ripe;
	ts->ripe = ts->exited;
	ts->exited = t;
}

void trace_stack__print_stats(struct trace_stack *ts, FILE *f)
{
	struct symcache_stats st;

	symcache__stats(ts->sc, &st);
	fprintf(f,
		"perfscope trace: symbols: %zu processes and %zu binaries held, %zu kernel "
		"symbols; %llu of %llu frame lookups answered from the cache, %llu unknown\n",
		st.procs, st.dsos, st.ksyms, (unsigned long long)st.hits,
		(unsigned long long)st.lookups, (unsigned long long)st.unknown);
}

static int resolve(struct trace_stack *ts, const struct psc_sample *s)
{
	const char *problem;
	int n = stack__resolve(ts->sc, (pid_t)s->pid, s->callchain.ips, s->callchain.nr, 0,
				   ts->frames, MAX_FRAMES);

	if (!ts->problem_said && (problem = symcache__problem(ts->sc))) {
		fprintf(stderr, "perfscope trace: %s\n", problem);
		ts->problem_said = true;
	}
	return n;
}

void trace_stack__text(struct trace_stack *ts, struct out *out, const struct psc_sample *s)
{
	int i, n = resolve(ts, s);

	for (i = 0; i < n; i++) {
		int len = frame__snprint(&ts->frames[i], ts->line, sizeof(ts->line));

		out__puts(out, "\t    ");
		out__printf(out, "%16llx ", (unsigned long long)ts->frames[i].ip);
		if (len > 0)
			out__write(out, ts->line, strnlen(ts->line, sizeof(ts->line)));
		out__putc(out, '\n');
	}
}

void trace_stack__json(struct trace_stack *ts, struct json *j, const struct psc_sample *s)
{
	int i, n = resolve(ts, s);

	json__arr(j);
	for (i = 0; i < n; i++) {
		const struct frame *f = &ts->frames[i];

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
