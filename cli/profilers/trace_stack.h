/* perfscope trace: stacks of events, symbolized, as text lines or a JSON array. */
#ifndef PERFSCOPE_CLI_TRACE_STACK_H
#define PERFSCOPE_CLI_TRACE_STACK_H

#include <stdio.h>

#include <perfscope/evlist.h>
#include <perfscope/record.h>

#include "output.h"

struct trace_stack;

/* NULL + errno. */
struct trace_stack *trace_stack__new(void);
void trace_stack__delete(struct trace_stack *ts);
/* Feeds MMAP2/FORK/EXIT/COMM-exec records to the process maps. */
void trace_stack__record(struct trace_stack *ts, const struct psc_record *rec);
/* After each round of reading: drops the maps of processes that exited a round ago. */
void trace_stack__round_end(struct trace_stack *ts);
/* "perfscope trace: symbols: ..." (processes and binaries held, cache hits) for -v. */
void trace_stack__print_stats(struct trace_stack *ts, FILE *f);
/* One line per frame, innermost first: "\t    ffffffff81234567 func+0x1a (module)". */
void trace_stack__text(struct trace_stack *ts, struct out *out, const struct psc_sample *s);
/* [{"ip":"0x...","sym":"func","off":26,"dso":"module","kernel":true}, ...] */
void trace_stack__json(struct trace_stack *ts, struct json *j, const struct psc_sample *s);

#endif
