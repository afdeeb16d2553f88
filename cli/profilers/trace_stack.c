/* perfscope trace: callchains through the shared symbolizer (common/symcache, common/stack). */
#include "trace_stack.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack.h"
#include "symcache.h"

#define MAX_FRAMES 256

struct trace_stack {
	struct psc_symcache *sc;
	bool problem_said;
	struct psc_frame frames[MAX_FRAMES];
	char line[512];
};

struct trace_stack *trace_stack__new(void)
{
	struct trace_stack *ts = calloc(1, sizeof(*ts));

	if (!ts)
		return NULL;
	ts->sc = psc_symcache__new(NULL);
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
	psc_symcache__delete(ts->sc);
	free(ts);
}

void trace_stack__record(struct trace_stack *ts, const struct psc_record *rec)
{
	struct psc_usyms *u = psc_symcache__usyms(ts->sc);

	switch (rec->type) {
	case PERF_RECORD_MMAP2: {
		struct psc_umap_file f = {
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
		psc_usyms__mmap(u, (pid_t)rec->mmap2.pid, rec->mmap2.start, rec->mmap2.len,
				rec->mmap2.pgoff, &f);
		break;
	}
	case PERF_RECORD_FORK:
		/* New processes only; a new thread shares its process's maps. */
		if (rec->fork.pid != rec->fork.ppid)
			psc_usyms__fork(u, (pid_t)rec->fork.ppid, (pid_t)rec->fork.pid);
		break;
	case PERF_RECORD_COMM:
		if (rec->comm.exec)
			psc_usyms__exec(u, (pid_t)rec->comm.pid);
		break;
	default:
		/* EXIT is not fed: samples of the process may still be queued in other rings. */
		break;
	}
}

static int resolve(struct trace_stack *ts, const struct psc_sample *s)
{
	const char *problem;
	int n = psc_stack__resolve(ts->sc, (pid_t)s->pid, s->callchain.ips, s->callchain.nr, 0,
				   ts->frames, MAX_FRAMES);

	if (!ts->problem_said && (problem = psc_symcache__problem(ts->sc))) {
		fprintf(stderr, "perfscope trace: %s\n", problem);
		ts->problem_said = true;
	}
	return n;
}

void trace_stack__text(struct trace_stack *ts, struct psc_out *out, const struct psc_sample *s)
{
	int i, n = resolve(ts, s);

	for (i = 0; i < n; i++) {
		int len = psc_frame__snprint(&ts->frames[i], ts->line, sizeof(ts->line));

		psc_out__puts(out, "\t    ");
		psc_out__printf(out, "%16llx ", (unsigned long long)ts->frames[i].ip);
		if (len > 0)
			psc_out__write(out, ts->line, strnlen(ts->line, sizeof(ts->line)));
		psc_out__putc(out, '\n');
	}
}

void trace_stack__json(struct trace_stack *ts, struct psc_json *j, const struct psc_sample *s)
{
	int i, n = resolve(ts, s);

	psc_json__arr(j);
	for (i = 0; i < n; i++) {
		const struct psc_frame *f = &ts->frames[i];

		psc_json__obj(j);
		psc_json__key(j, "ip");
		psc_json__hex(j, f->ip);
		psc_json__key(j, "sym");
		psc_json__str(j, f->sym);
		if (f->sym) {
			psc_json__key(j, "off");
			psc_json__u64(j, f->off);
		}
		psc_json__key(j, "dso");
		psc_json__str(j, f->dso);
		psc_json__key(j, "kernel");
		psc_json__bool(j, f->kernel);
		psc_json__end(j);
	}
	psc_json__end(j);
}
