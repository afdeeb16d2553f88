/* evprint: one event as a text line (its print format) or a typed JSON object, as trace shows it.
 */
#ifndef PERFSCOPE_COMMON_EVPRINT_H
#define PERFSCOPE_COMMON_EVPRINT_H

#include <stddef.h>

#include <perfscope/record.h>
#include <perfscope/tp.h>

#include "callchain.h"
#include "output.h"

/*
 * Text, one line per event, then its stack (callchain.h) when it has one:
 *
 *             bash   12345/12345 [001] 5123.456789: sched:sched_switch: prev_comm=bash ...
 *
 * (comm right-aligned in 16, pid in 7, /tid, [cpu] in 3 digits, time as seconds.microseconds,
 * the event's name, then the tracepoint's own print fmt text, or "ip=0x... addr=0x...
 * period=N" for other events, each part there when the sample carries it.)
 *
 * JSON, one object per line:
 *
 *   {"time":NS,"cpu":N,"pid":N,"tid":N,"comm":"...","event":"...","fields":{"f":V,...},
 *    "stack":[...]}
 *
 * fields typed from the format: integers as numbers, pointers as "0x..." strings, strings
 * (invalid UTF-8 replaced), arrays as arrays; "ip", "addr", "period" in place of "fields" for
 * events that are not tracepoints.
 *
 * Kernel functions that a print fmt shows with %pS (a timer's function, a kmalloc call site) are
 * named as perf script names them, from kallsyms read at the first one printed; when kernel
 * addresses are hidden (kptr_restrict) they stay bare addresses.
 *
 * Not thread-safe: one printer per thread.
 */
struct evprint;

/* What evprint keeps per event: its format's fields and its name and keys rendered as JSON. */
struct evprint_event {
	const char *name; /* alias or canonical name; kept, not copied */
	struct psc_tp_format *fmt; /* tracepoints; NULL otherwise. Borrowed */
	int nr_fields;
	const struct psc_tp_field **fields;
	char *json_name; /* "name" as a JSON string, rendered once */
	size_t json_name_len;
	char **json_keys; /* per field: "field": */
	size_t *json_key_lens;
};

/* kallsyms: NULL for /proc/kallsyms (tests give a file). NULL + errno. */
struct evprint *evprint__new(const char *kallsyms);
/* NULL is a no-op. Delete after the formats bound to it are no longer printed. */
void evprint__delete(struct evprint *p);
/* Stacks of samples with PERF_SAMPLE_CALLCHAIN are printed through cc (NULL: not printed). */
void evprint__set_callchain(struct evprint *p, struct callchain *cc);

/*
 * Prepares ev for name and fmt (NULL when the event is not a tracepoint), and makes fmt name
 * kernel functions through p. Returns 0 or -ENOMEM (ev then holds nothing to free).
 */
int evprint_event__init(struct evprint_event *ev, struct evprint *p, const char *name,
			struct psc_tp_format *fmt);
/* Frees what init allocated (not fmt). Safe on a zeroed struct. */
void evprint_event__exit(struct evprint_event *ev);

/* The text line of sample s of ev seen on cpu by comm (see comm.h), then its stack. */
void evprint__text(struct evprint *p, struct out *o, const struct evprint_event *ev, int cpu,
		   const char *comm, const struct psc_sample *s);
/* The JSON object of the same, one line. */
void evprint__json(struct evprint *p, struct out *o, const struct evprint_event *ev, int cpu,
		   const char *comm, const struct psc_sample *s);
/* Its members ("time" to "stack") into an object the caller opened and will close. */
void evprint__json_members(struct evprint *p, struct json *j, const struct evprint_event *ev,
			   int cpu, const char *comm, const struct psc_sample *s);

#endif
