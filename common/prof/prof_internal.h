/* The profiler engine's own parts, shared by prof.c, prof_events.c, prof_opts.c, prof_help.c. */
#ifndef PERFSCOPE_COMMON_PROF_INTERNAL_H
#define PERFSCOPE_COMMON_PROF_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "prof.h"

/* "stack, max-stack=N, ..., key=FIELD": the ATTRs decl takes, for error messages. */
void prof_attrs_list(const struct profiler *decl, char *buf, size_t len);

/* A caret at POS of p->events under the -e text as typed (prof_embed.c rewrites some). */
void prof_events_caret(const struct prof *p, int pos);

/* The --help text (malloc'd), NULL when out of memory. */
char *prof_help_text(const struct profiler *decl);

/* Parses argv into p->opts and the profiler's own options (in p->priv). 0, 1 (--help), 2. */
int prof_opts__parse(struct prof *p, int argc, char **argv);

/*
 * One prof_event per parsed spec: filters checked against the format, ATTRs checked and bound,
 * evsels created (sampled for PROF_RINGS, perf's groups kept for counting) and the event hook
 * run. 0, 2 (usage, printed), 1 (runtime, printed), or PROF_SETUP_DONE (the event hook asked
 * to end there: exit 0).
 */
/* Where the previous note counted from: an interval's note tells that interval's losses. */
struct prof_incomplete {
	uint64_t samples, lost;
};
/*
 * Under a PROF_SUMMARY table (an interval's, or the run's when final): a footer line, or a JSON
 * {"incomplete": {"lost", "kernel_dropped", "seen", "share", "final",
 * "worst": {"event", "missing", "of"}}} line, when events were missing.
 */
void prof_incomplete__note(struct prof *p, struct prof_incomplete *at, bool final);

#define PROF_SETUP_DONE 3
int prof_events__setup(struct prof *p);
void prof_events__free(struct prof *p);

/*
 * Expressions on events (prof_expr.c). bind: an EXPR ATTR compiled against ev's format, 0 or 2
 * (printed, with a caret in the event list). filter: spec->filter, which the kernel refused
 * (perr says why), compiled to run in user space instead; 0 (ev->filter set, said once) or 2
 * (neither takes it: both reasons printed). pass: false when ev->filter drops the sample.
 */
int prof_expr__bind(struct prof *p, struct prof_event *ev, const struct psc_event_attr *in,
		    struct prof_attr_val *out);
int prof_expr__filter(struct prof *p, struct prof_event *ev, const struct psc_parse_error *perr);
bool prof_expr__pass(struct prof_event *ev, const struct psc_sample *s);
/* What the user-space filters dropped, at the end (stderr). */
void prof_expr__report(struct prof *p);
void prof_expr__free(struct prof *p);


#endif
