/* evprint: one event as a text line (its print format) or a typed JSON object, as trace shows it.
 */
#ifndef PERFSCOPE_COMMON_EVPRINT_H
#define PERFSCOPE_COMMON_EVPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * The string arguments of system calls (ustr.h: `const char *` arguments of syscalls:sys_enter_*)
 * are shown as the strings they point to, when a source was set with evprint__set_user_strings
 * and it can read them: quoted and escaped as C does, "..." after one cut at its bound, in place
 * of the pointer (text; the line is otherwise the kernel's print fmt of system calls,
 * "name: 0x%08lx" per argument), and in JSON as "strings":{"filename":"/etc/hostname"} beside
 * "fields" (which keeps the pointer).
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
	bool *user_str; /* per field: a pointer to a user string (ustr__fields) */
	int nr_user_str;
};

/*
 * Reads the user string that ptr pointed to in thread tid of process pid at time_ns into buf (len
 * bytes); its length, or -1 when it cannot. *cut: it went on past what was read. (ustr__read.)
 */
typedef int (*evprint_str_fn)(void *ctx, uint32_t pid, uint32_t tid, uint64_t ptr,
			      uint64_t time_ns, char *buf, size_t len, bool *cut);

/* kallsyms: NULL for /proc/kallsyms (tests give a file). NULL + errno. */
struct evprint *evprint__new(const char *kallsyms);
/* NULL is a no-op. Delete after the formats bound to it are no longer printed. */
void evprint__delete(struct evprint *p);
/* System calls' string arguments are read through fn (NULL, the default: printed as pointers). */
void evprint__set_user_strings(struct evprint *p, evprint_str_fn fn, void *ctx);
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

/* The text line of sample s of ev seen on cpu by comm (see comm.h), without its stack. */
void evprint__text_line(struct evprint *p, struct out *o, const struct evprint_event *ev, int cpu,
			const char *comm, const struct psc_sample *s);
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
