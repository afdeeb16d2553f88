/* The profiler engine's own parts, shared by prof.c, prof_events.c, prof_opts.c, prof_help.c. */
#ifndef PERFSCOPE_COMMON_PROF_INTERNAL_H
#define PERFSCOPE_COMMON_PROF_INTERNAL_H

#include <stddef.h>

#include "prof.h"

/* "stack, max-stack=N, ..., key=FIELD": the ATTRs decl takes, for error messages. */
void prof_attrs_list(const struct profiler *decl, char *buf, size_t len);

/* The --help text (malloc'd), NULL when out of memory. */
char *prof_help_text(const struct profiler *decl);

/* Parses argv into p->opts and the profiler's own options (in p->priv). 0, 1 (--help), 2. */
int prof_opts__parse(struct prof *p, int argc, char **argv);

/*
 * One prof_event per parsed spec: filters checked against the format, ATTRs checked and bound,
 * evsels created (sampled for PROF_RINGS, perf's groups kept for counting) and the event hook
 * run. 0, 2 (usage, printed), or 1 (runtime, printed).
 */
int prof_events__setup(struct prof *p);
void prof_events__free(struct prof *p);

#endif
