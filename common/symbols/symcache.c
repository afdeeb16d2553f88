/* The symbolizer: a direct-mapped (maps generation, ip) -> symbol cache over kallsyms and ELF
 * symbols. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perfmap.h"
#include "symcache.h"

#define KERNEL_GEN 0 /* user generations start at 1 (usyms.c) */
#define KERNEL_NAME "[kernel.kallsyms]"

struct cache_ent {
	uint64_t gen;
	uint64_t ip;
	const char *name;
	const char *dso;
	uint64_t start;
	uint64_t map_base;
	bool mapped;
	bool valid;
	bool found;
	bool kernel;
};

struct symcache {
	struct ksyms *ksyms;
	bool ksyms_tried;
	int ksyms_errno;
	char *kallsyms_path;
	struct dsos *dsos;
	struct usyms *usyms;
	struct perfmaps *perfmaps; /* JIT code's /tmp/perf-PID.map */
	struct cache_ent *cache;
	uint64_t mask;
	unsigned int shift;
	struct symcache_stats st;
	char problem[600];
};

struct symcache *symcache__new(const struct symcache_opts *opts)
{
	struct dso_opts dopts = { 0 };
	unsigned int bits = 16;
	struct symcache *sc;

	if (opts && opts->sz < sizeof(size_t)) {
		errno = EINVAL;
		return NULL;
	}
	if (opts && opts->cache_bits) {
		if (opts->cache_bits > 24) {
			errno = EINVAL;
			return NULL;
		}
		bits = opts->cache_bits;
	}
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return NULL;
	if (opts) {
		dopts.debug_dir = opts->debug_dir;
		dopts.no_demangle = opts->no_demangle;
		if (opts->kallsyms && !(sc->kallsyms_path = strdup(opts->kallsyms)))
			goto fail;
	}
	sc->mask = (1ull << bits) - 1;
	sc->shift = 64 - bits;
	sc->cache = calloc((size_t)sc->mask + 1, sizeof(*sc->cache));
	sc->dsos = dsos__new(&dopts);
	if (!sc->cache || !sc->dsos)
		goto fail;
	sc->usyms = usyms__new(sc->dsos);
	sc->perfmaps = perfmaps__new(NULL);
	if (!sc->usyms || !sc->perfmaps)
		goto fail;
	return sc;
fail:
	symcache__delete(sc);
	errno = ENOMEM;
	return NULL;
}

void symcache__delete(struct symcache *sc)
{
	if (!sc)
		return;
	usyms__delete(sc->usyms);
	perfmaps__delete(sc->perfmaps);
	dsos__delete(sc->dsos);
	ksyms__delete(sc->ksyms);
	free(sc->cache);
	free(sc->kallsyms_path);
	free(sc);
}

struct usyms *symcache__usyms(struct symcache *sc)
{
	return sc->usyms;
}

const struct ksyms *symcache__ksyms(struct symcache *sc)
{
	if (!sc->ksyms_tried) {
		const char *path = sc->kallsyms_path ? sc->kallsyms_path : "/proc/kallsyms";

		sc->ksyms_tried = true;
		sc->ksyms = ksyms__load(sc->kallsyms_path);
		if (!sc->ksyms) {
			sc->ksyms_errno = errno;
			snprintf(sc->problem, sizeof(sc->problem),
				 "cannot read %s (%s): kernel frames show raw addresses", path,
				 strerror(errno));
		} else if (ksyms__problem(sc->ksyms)) {
			snprintf(sc->problem, sizeof(sc->problem), "%s",
				 ksyms__problem(sc->ksyms));
		}
	}
	if (!sc->ksyms)
		errno = sc->ksyms_errno;
	return sc->ksyms;
}

const char *symcache__problem(struct symcache *sc)
{
	return sc->problem[0] ? sc->problem : NULL;
}

void symcache__forget(struct symcache *sc, pid_t pid)
{
	perfmaps__forget(sc->perfmaps, pid);
}

void symcache__stats(const struct symcache *sc, struct symcache_stats *st)
{
	*st = sc->st;
	st->dsos = dsos__nr(sc->dsos);
	st->procs = usyms__nr_procs(sc->usyms);
	st->ksyms = ksyms__nr(sc->ksyms);
}

static void resolve_kernel(struct symcache *sc, uint64_t ip, struct cache_ent *e)
{
	const struct ksyms *ks = symcache__ksyms(sc);
	const struct ksym *s = ks ? ksyms__find(ks, ip, NULL) : NULL;

	e->kernel = true;
	if (s) {
		e->name = s->name;
		e->dso = s->module;
		e->start = s->addr;
		e->found = true;
	} else {
		e->dso = KERNEL_NAME;
	}
}

/*
 * An address in no binary (anonymous executable memory, or a mapping not known yet): JIT code,
 * named by the runtime's perf map. A miss in a map that exists is not remembered: the runtime
 * may append the line later.
 */
static void resolve_jit(struct symcache *sc, pid_t pid, uint64_t ip, struct cache_ent *e)
{
	const char *name, *dso;
	uint64_t start;
	int err = perfmaps__find(sc->perfmaps, pid, ip, &name, &start, &dso);

	if (err) {
		e->valid = err != -ENODATA;
		return;
	}
	e->name = name;
	e->start = start;
	e->dso = dso;
	e->found = true;
}

static void resolve_user(struct symcache *sc, pid_t pid, uint64_t ip, struct cache_ent *e)
{
	struct uaddr hit;
	const struct usym *s;
	int err = usyms__find(sc->usyms, pid, ip, &hit);

	if (err) {
		if (err == -ENOENT)
			resolve_jit(sc, pid, ip, e);
		return;
	}
	e->dso = hit.dso ? hit.dso->short_name : hit.map_name;
	/* anonymous executable memory ("//anon" from MMAP2, named [anon:...]) or a memfd */
	if (!strcmp(hit.map_name, "//anon") || !strncmp(hit.map_name, "[anon", 5) ||
	    !strncmp(hit.map_name, "/memfd:", 7) || (!hit.dso && !hit.map_name[0])) {
		resolve_jit(sc, pid, ip, e);
		if (e->found)
			return;
		e->dso = hit.dso ? hit.dso->short_name : hit.map_name; /* unnamed, as before */
	}
	if (!hit.dso)
		return;
	e->mapped = true;
	e->map_base = hit.map_start - hit.map_pgoff;
	s = dso__find(hit.dso, hit.vaddr);
	if (!s)
		return;
	e->name = dso__sym_name(hit.dso, s);
	/* the symbol's start in the process: ip minus its offset into the symbol */
	e->start = ip - (hit.vaddr - s->addr);
	e->found = true;
}

int symcache__resolve(struct symcache *sc, pid_t pid, uint64_t ip, bool kernel,
			  struct sym *out)
{
	uint64_t gen = KERNEL_GEN;
	struct cache_ent *e;

	sc->st.lookups++;
	if (!kernel && usyms__gen(sc->usyms, pid, &gen)) {
		sc->st.unknown++;
		*out = (struct sym){ 0 };
		return -ENOENT;
	}
	e = &sc->cache[((ip ^ (gen * 0x9E3779B97F4A7C15ull)) * 0xff51afd7ed558ccdull) >> sc->shift];
	if (e->valid && e->ip == ip && e->gen == gen && e->kernel == kernel) {
		sc->st.hits++;
	} else {
		*e = (struct cache_ent){ .gen = gen, .ip = ip, .valid = true };
		if (kernel)
			resolve_kernel(sc, ip, e);
		else
			resolve_user(sc, pid, ip, e);
	}
	out->name = e->name;
	out->start = e->start;
	out->dso = e->dso;
	out->map_base = e->map_base;
	out->mapped = e->mapped;
	out->kernel = kernel;
	if (!e->found) {
		sc->st.unknown++;
		return -ENOENT;
	}
	return 0;
}
