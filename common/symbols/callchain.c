/* callchain: the stacks of samples, symbolized (symcache, stack), as text lines or JSON. */
#include "callchain.h"
#include "clock.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include <time.h>

#include <perfscope/threadmap.h>

#include "stack.h"
#include "symcache.h"
#include "unwind.h"

#define MAX_FRAMES CALLCHAIN_MAX_FRAMES

/* Processes that exited: their maps are dropped a round later (see callchain__round_end). */
struct pid_list {
	pid_t *pids;
	size_t nr, cap;
};

struct callchain {
	struct say say; /* its lines for the user: the first problem, the statistics */
	struct symcache *sc;
	bool problem_said;
	bool hold_exits; /* callchain__hold_exits */
	struct pid_list exited, ripe;
	struct frame frames[MAX_FRAMES];
	char line[FRAME_NAME_MAX + 512]; /* a frame: its name, offset and dso */
	/* --call-graph dwarf: samples with user registers and stack; made at the first one */
	struct unwind *uw;
	bool uw_failed;
	uint64_t ips[MAX_FRAMES]; /* kernel part of the callchain, then the unwound user part */
	uint64_t nr_ips;
	/* the sample unwound last: text, JSON and folding of one sample unwind it once */
	uint64_t last_time, last_ip;
	const void *last_stack;
	uint32_t last_tid;
	uint64_t sym_ns, sym_stacks; /* symbolizing the unwound stacks */
};

struct callchain *callchain__new(const struct say *to)
{
	struct callchain *cc = calloc(1, sizeof(*cc));

	if (!cc)
		return NULL;
	if (to)
		cc->say = *to;
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
	unwind__delete(cc->uw);
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
	/* records come per CPU, not in time order: their times put a process's back in order */
	uint64_t t = (rec->sid.present & PERF_SAMPLE_TIME) ? rec->sid.time : 0;

	switch (rec->type) {
	case PERF_RECORD_MMAP2: {
		struct umap_file f = {
			.path = rec->mmap2.filename,
			.prot = rec->mmap2.prot,
			.time = t,
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
			usyms__fork(u, (pid_t)rec->fork.ppid, (pid_t)rec->fork.pid, rec->fork.time);
		}
		break;
	case PERF_RECORD_EXIT:
		/*
		 * The process's main thread: the maps go once its last samples are out. Not those
		 * of a newer process of the same pid, whose fork was read first.
		 */
		if (rec->fork.pid == rec->fork.tid &&
		    !(rec->fork.time && usyms__born(u, (pid_t)rec->fork.pid) > rec->fork.time))
			pid_list_add(&cc->exited, (pid_t)rec->fork.pid);
		break;
	case PERF_RECORD_COMM:
		if (rec->comm.exec) {
			usyms__exec(u, (pid_t)rec->comm.pid, t);
			if (cc->uw)
				unwind__forget(cc->uw, (pid_t)rec->comm.pid);
		}
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

	for (size_t i = 0; i < cc->ripe.nr; i++) {
		usyms__exit(u, cc->ripe.pids[i]);
		symcache__forget(cc->sc, cc->ripe.pids[i]);
		if (cc->uw)
			unwind__forget(cc->uw, cc->ripe.pids[i]);
	}
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

const char *callchain__problem(struct callchain *cc)
{
	return symcache__problem(cc->sc);
}

void callchain__say_stats(struct callchain *cc)
{
	struct symcache_stats st;

	symcache__stats(cc->sc, &st);
	say(&cc->say,
	    "symbols: %zu processes and %zu binaries held, %zu kernel symbols; %llu of %llu "
	    "frame lookups answered from the cache, %llu unknown",
		st.procs, st.dsos, st.ksyms, (unsigned long long)st.hits,
		(unsigned long long)st.lookups, (unsigned long long)st.unknown);
}

static bool has_user_stack(const struct psc_sample *s)
{
	return (s->sample_type & PERF_SAMPLE_REGS_USER) &&
	       (s->sample_type & PERF_SAMPLE_STACK_USER) && s->regs_user.abi;
}

/*
 * The sample's chain with its user part unwound from the copied stack: the kernel's part as
 * PERF_SAMPLE_CALLCHAIN gave it (exclude_callchain_user), then PERF_CONTEXT_USER and the frames
 * libdw found.
 */
static void dwarf_chain(struct callchain *cc, const struct psc_sample *s)
{
	enum unwind_stop stop;
	uint64_t n = 0;

	if (s->time == cc->last_time && s->tid == cc->last_tid && s->ip == cc->last_ip &&
	    s->stack_user.data == cc->last_stack && cc->nr_ips)
		return;
	for (uint64_t i = 0; i < s->callchain.nr && n < MAX_FRAMES - 2; i++) {
		if (s->callchain.ips[i] == (uint64_t)PERF_CONTEXT_USER)
			break; /* frame pointers' user part, when the kernel gave one too */
		cc->ips[n++] = s->callchain.ips[i];
	}
	if (!cc->uw && !cc->uw_failed) {
		cc->uw = unwind__new(symcache__usyms(cc->sc));
		cc->uw_failed = !cc->uw;
	}
	if (cc->uw) {
		cc->ips[n++] = (uint64_t)PERF_CONTEXT_USER;
		n += (uint64_t)unwind__sample(cc->uw, s, cc->ips + n, (int)(MAX_FRAMES - n), &stop);
	}
	cc->nr_ips = n;
	cc->last_time = s->time;
	cc->last_tid = s->tid;
	cc->last_ip = s->ip;
	cc->last_stack = s->stack_user.data;
}

uint64_t callchain__sample_ips(struct callchain *cc, const struct psc_sample *s,
			       const uint64_t **ips)
{
	if (has_user_stack(s)) {
		dwarf_chain(cc, s);
		*ips = cc->ips;
		return cc->nr_ips;
	}
	*ips = s->callchain.ips;
	return (s->sample_type & PERF_SAMPLE_CALLCHAIN) ? s->callchain.nr : 0;
}

static int resolve(struct callchain *cc, const struct psc_sample *s)
{
	const char *problem;
	uint64_t t0 = 0;
	int n;

	if (has_user_stack(s)) {
		dwarf_chain(cc, s);
		t0 = thread_cpu_ns();
		n = stack__resolve(cc->sc, (pid_t)s->pid, cc->ips, cc->nr_ips, 0, cc->frames,
				   MAX_FRAMES);
		cc->sym_ns += thread_cpu_ns() - t0;
		cc->sym_stacks++;
	} else {
		n = stack__resolve(cc->sc, (pid_t)s->pid, s->callchain.ips, s->callchain.nr, 0,
				   cc->frames, MAX_FRAMES);
	}

	if (!cc->problem_said && (problem = symcache__problem(cc->sc))) {
		say(&cc->say, "%s", problem); /* or the caller asks callchain__problem */
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
	for (i = 0; i < n; i++)
		frame__json(j, &cc->frames[i]);
	json__end(j);
}

int callchain__fold(struct callchain *cc, const struct psc_sample *s, const char *prefix, char *buf,
		    size_t len)
{
	return stack__fold(cc->frames, resolve(cc, s), prefix, FOLD_KERNEL_SUFFIX, buf, len);
}

void callchain__prepare(struct callchain *cc)
{
	symcache__ksyms(cc->sc);
}

/* The process a thread belongs to (Tgid in /proc/TID/status), or -1 when it is gone. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

void callchain__see(struct callchain *cc, pid_t pid)
{
	uint64_t gen;

	if (pid > 0)
		usyms__gen(symcache__usyms(cc->sc), pid, &gen); /* loads its maps when unknown */
}

/* Every process there is now: a system-wide run's processes that started before it. */
static void preload_all(struct callchain *cc)
{
	DIR *d = opendir("/proc");
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (*end || pid <= 0)
			continue;
		callchain__see(cc, (pid_t)pid);
	}
	if (d)
		closedir(d);
}

void callchain__preload(struct callchain *cc, const struct psc_threadmap *threads)
{
	struct usyms *u = symcache__usyms(cc->sc);
	uint64_t gen;
	int i;

	if (!threads) {
		preload_all(cc);
		return;
	}
	for (i = 0; threads && i < psc_threadmap__nr(threads); i++) {
		pid_t tgid = tgid_of(psc_threadmap__tid(threads, i));

		if (tgid > 0)
			usyms__gen(u, tgid, &gen); /* loads its maps when not yet known */
	}
}

int callchain__frame(struct callchain *cc, pid_t pid, uint64_t ip, bool kernel, bool caller,
		     struct frame *f)
{
	uint64_t lookup = caller && ip ? ip - 1 : ip;
	const char *problem;
	struct sym sym;
	struct uaddr hit;
	int err;

	err = symcache__resolve(cc->sc, pid, lookup, kernel, &sym);
	if (!cc->problem_said && (problem = symcache__problem(cc->sc))) {
		say(&cc->say, "%s", problem); /* or the caller asks callchain__problem */
		cc->problem_said = true;
	}
	*f = (struct frame){
		.ip = ip,
		.sym = sym.name,
		.off = sym.name ? ip - sym.start : 0,
		.dso = sym.dso,
		.path = sym.dso,
		.file_off = sym.mapped ? ip - sym.map_base : 0,
		.mapped = sym.mapped,
		.kernel = kernel,
	};
	/* the mapping: a second lookup, but a profile resolves each distinct address once */
	if (!kernel && !usyms__find(symcache__usyms(cc->sc), pid, lookup, &hit)) {
		f->path = hit.dso ? hit.dso->path : hit.map_name;
		f->map_start = hit.map_start;
		f->map_limit = hit.map_end;
		f->map_pgoff = hit.map_pgoff;
		f->file_off = ip - hit.map_start + hit.map_pgoff;
		if (hit.dso && hit.dso->build_id_size) {
			f->build_id = hit.dso->build_id;
			f->build_id_size = hit.dso->build_id_size;
		}
		if (!f->dso)
			f->dso = hit.dso ? hit.dso->short_name : hit.map_name;
	}
	return err;
}

void frame__json(struct json *j, const struct frame *f)
{
	char name[FRAME_NAME_MAX];

	json__obj(j);
	json__key(j, "ip");
	json__hex(j, f->ip);
	frame__name(f, false, name, sizeof(name));
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
	/* a frame resolved with its mapping (callchain__frame): its file and offset there */
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

int callchain__frames(struct callchain *cc, pid_t pid, const uint64_t *ips, uint64_t nr,
		      struct frame *frames, int max)
{
	struct stack_walk w;
	uint64_t ip;
	bool kernel, ret;
	int n = 0;

	stack_walk__init(&w, ips, nr);
	/* the first frame of a context is where it was interrupted, not a return address */
	while (n < max && stack_walk__next(&w, &ip, &kernel, &ret))
		callchain__frame(cc, pid, ip, kernel, ret, &frames[n++]);
	return n;
}

bool callchain__unwind_stats(struct callchain *cc, struct unwind_stats *st,
			     struct callchain_sym_stats *sym)
{
	memset(st, 0, sizeof(*st));
	if (sym) {
		sym->stacks = cc->sym_stacks;
		sym->ns = cc->sym_ns;
	}
	if (!cc->uw)
		return false;
	unwind__stats(cc->uw, st);
	return st->stacks > 0;
}

static uint64_t truncated(const struct unwind_stats *st)
{
	uint64_t n = 0;

	for (int i = 0; i < UNWIND_NR_STOPS; i++)
		if (i != UNWIND_COMPLETE && i != UNWIND_NO_USER)
			n += st->stops[i];
	return n;
}

void callchain__say_unwind(struct callchain *cc, bool quiet)
{
	struct callchain_sym_stats sym;
	struct unwind_stats st;
	uint64_t trunc, user;
	const char *sep = " (";
	char *line = NULL;
	size_t len = 0;
	FILE *f;

	if (!callchain__unwind_stats(cc, &st, &sym))
		return;
	trunc = truncated(&st);
	if (quiet && !trunc)
		return;
	user = st.stacks - st.stops[UNWIND_NO_USER];
	/* a line of parts, each there when its count is not zero: made in memory, then said */
	f = open_memstream(&line, &len);
	if (!f)
		return;
	fprintf(f, "DWARF unwinding: %llu user stacks, %llu complete, %llu truncated",
		(unsigned long long)user, (unsigned long long)st.stops[UNWIND_COMPLETE],
		(unsigned long long)trunc);
	for (int i = 0; i < UNWIND_NR_STOPS; i++) {
		if (i == UNWIND_COMPLETE || i == UNWIND_NO_USER || !st.stops[i])
			continue;
		fprintf(f, "%s%llu %s", sep, (unsigned long long)st.stops[i], unwind__stop_text(i));
		if (i == UNWIND_OTHER && st.other)
			fprintf(f, ": %s", st.other);
		sep = ", ";
	}
	if (*sep == ',')
		fputc(')', f);
	if (st.stops[UNWIND_NO_USER])
		fprintf(f, "; %llu samples without a user stack (kernel threads)",
			(unsigned long long)st.stops[UNWIND_NO_USER]);
	fprintf(f,
		"; %.1f us unwinding + %.1f us symbolizing per stack, %llu frames; %llu processes "
		"(%llu libdw sessions), %llu binaries reported",
		st.stacks ? (double)st.ns / 1e3 / (double)st.stacks : 0,
		sym.stacks ? (double)sym.ns / 1e3 / (double)sym.stacks : 0,
		(unsigned long long)st.frames, (unsigned long long)st.procs_seen,
		(unsigned long long)st.dwfls, (unsigned long long)st.reports);
	if (!fclose(f))
		say(&cc->say, "%s", line);
	free(line);
	if (st.stops[UNWIND_STACK_SHORT])
		say(&cc->say,
		    "%llu stacks were deeper than the stack copied per sample; a larger SIZE "
		    "(--call-graph dwarf,SIZE, at most %d) reaches further",
		    (unsigned long long)st.stops[UNWIND_STACK_SHORT], 65528);
}

void callchain__unwind_json(struct callchain *cc, struct json *j)
{
	struct callchain_sym_stats sym;
	struct unwind_stats st;

	callchain__unwind_stats(cc, &st, &sym);
	json__obj(j);
	json__key(j, "stacks");
	json__u64(j, st.stacks - st.stops[UNWIND_NO_USER]);
	json__key(j, "truncated");
	json__u64(j, truncated(&st));
	for (int i = 0; i < UNWIND_NR_STOPS; i++) {
		json__key(j, unwind__stop_key(i));
		json__u64(j, st.stops[i]);
	}
	json__key(j, "frames");
	json__u64(j, st.frames);
	json__key(j, "unwind_ns");
	json__u64(j, st.ns);
	json__key(j, "symbolize_ns");
	json__u64(j, sym.ns);
	json__end(j);
}
