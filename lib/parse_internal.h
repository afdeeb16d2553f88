/* Event-list parser internals shared by parse*.c: parser state, name tables, PMU and tracepoint
 * lookups. */
#ifndef PERFSCOPE_PARSE_INTERNAL_H
#define PERFSCOPE_PARSE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <perfscope/suggest.h>

#include "internal.h"

/* One parse: the input, where errors go, and where tracefs and the PMUs live. */
struct psc_evparse {
	const char *str;
	struct psc_parse_error *err;
	const char *pmu_dir;
	int (*usdt_find)(const char *path, const char *provider, const char *name,
			 struct psc_probe_spec *probe, char *msg, size_t msg_len, void *ctx);
	void *usdt_ctx;
	const char *tracefs_dir; /* resolved on first use when the caller gave none */
	int tracefs_errno; /* why tracefs_dir could not be resolved, 0 until tried */
};

/* One call of psc_parse_events: the shared state, the input and the list being built. */
struct parser {
	struct psc_evparse p;
	const char *s;
	struct psc_event_list *list;
	int alloc;
};

/* parse.c: the list and its groups. */
/* Frees what spec owns and zeroes it. */
void psc_event_spec__free(struct psc_event_spec *spec);
/* Where an event ends: the end, ',', '}' or whitespace. */
bool psc_evparse__is_event_end(char c);

/* parse_event.c: parses the event at *pos, appends it (or a tracepoint glob's expansions) to
 * ps->list and moves *pos past it. */
int psc_evparse__event(struct parser *ps, int *pos);

/* parse_mods.c: reads ":MODS" at *pos (which is at ':'), applies them and appends ":MODS" to
 * spec->name. */
int psc_evparse__modifiers(struct parser *ps, int *pos, struct psc_event_spec *spec);

/* parse_attrs.c: the tail "/FILTER/ATTR/.../" at *pos (which is at the first '/'); a filter
 * only when is_tp. */
int psc_evparse__slash(struct parser *ps, int *pos, struct psc_event_spec *spec, bool is_tp);

/* Fills p->err (position pos, printf message) and returns ret, so callers can `return
 * psc_evparse_fail(...)`. */
int psc_evparse_fail(struct psc_evparse *p, int ret, int pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* snprintf for paths and names: 0, or -ENAMETOOLONG when buf was too small (buf still terminated).
 */
int psc_pathf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The tracefs root for this parse, or NULL with *errp set (-ENODEV: not mounted). Never mounts. */
const char *psc_evparse_tracefs(struct psc_evparse *p, int *errp);

/*
 * A word in the filter's place close to an ATTR name (stak, max-stak=4): "; if the ATTR 'stack'
 * was meant, it goes after the filter: sys:name//stack/", or "" when none is close. word[len]
 * is read: an '=' there brings the value along (kye=pid: sys:name//key=pid/).
 */
void psc_attr_name__hint(const char *word, size_t len, char *buf, size_t buflen);

/* parse_names.c: perf's software, hardware and cache names. NULL when name is none of them. */
const struct psc_named_event *psc_named_event__find(const char *name, size_t len);
void psc_named_event__suggest(struct psc_suggest *s);

/* parse_pmu.c: PMUs under p->pmu_dir. */
bool psc_evparse_pmu_exists(struct psc_evparse *p, const char *pmu, size_t len);
/*
 * Encodes the term list terms[0..len) (at byte offset pos of the input) of PMU `pmu` into
 * spec->attr, spec->unit/scale, and spec->event when one alias was used.
 */
int psc_evparse_pmu_terms(struct psc_evparse *p, const char *pmu, const char *terms, size_t len,
			  int pos, struct psc_event_spec *spec);
/* Adds every PMU name and "pmu/alias/" to s. */
void psc_evparse_pmu_suggest(struct psc_evparse *p, struct psc_suggest *s);

/* parse_tp.c: tracepoints under <tracefs>/events. */
struct psc_tp_match {
	char *sys, *name;
	uint64_t id;
};
/*
 * Every tracepoint matching sys:name (fnmatch globs allowed in both), sorted by sys then name.
 * sys_pos/name_pos locate the two parts in the input for errors. Caller frees with
 * psc_tp_matches_free.
 */
int psc_evparse_tracepoints(struct psc_evparse *p, const char *sys, int sys_pos, const char *name,
			    int name_pos, struct psc_tp_match **out, int *nr);
void psc_tp_matches_free(struct psc_tp_match *m, int nr);
/* True when <tracefs>/events/<sys> is a directory (no globs). */
bool psc_evparse_tp_system_exists(struct psc_evparse *p, const char *sys);
/* Adds "sys:name" for every tracepoint whose name is close to the word in s (for bare names). */
void psc_evparse_tp_suggest_all(struct psc_evparse *p, struct psc_suggest *s);

#endif
