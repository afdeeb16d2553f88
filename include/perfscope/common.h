/* libperfscope: export macros, option-struct helpers, logging and error reporting shared by every
 * header. */
#ifndef PERFSCOPE_COMMON_H
#define PERFSCOPE_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PSC_API __attribute__((visibility("default")))

#define PSC_VERSION_MAJOR 0
#define PSC_VERSION_MINOR 1
#define PSC_VERSION_PATCH 0

/* "0.1.0": the version of the library actually loaded, which may differ from the header's. */
PSC_API const char *psc_version(void);

/*
 * Option structs: the first member is `size_t sz`, set by PSC_OPTS so that a program built against
 * an older header keeps working with a newer library (the library reads only what `sz` covers).
 *
 *   PSC_OPTS(psc_evlist_open_opts, o, .skip_unsupported = true);
 *   psc_evlist__open(evlist, &o);
 */
#define PSC_OPTS(TYPE, NAME, ...) struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

enum psc_log_level {
	PSC_LOG_WARN,
	PSC_LOG_INFO,
	PSC_LOG_DEBUG,
};

typedef void (*psc_log_fn)(enum psc_log_level level, const char *fmt, va_list ap);

/*
 * The library never prints; it reports through this callback (default: none). The only global
 * mutable state in the library. Not thread-safe: set it once before other calls. Returns the old
 * one.
 */
PSC_API psc_log_fn psc_set_log(psc_log_fn fn);

/*
 * Where a parser (event list, cpu list, filter ...) stopped: a byte offset into the input and
 * a sentence saying what was expected there, e.g. "unknown event 'page-fault'; did you mean
 * 'page-faults'?". Filled by every function that takes one; pos is -1 when no position applies.
 */
struct psc_parse_error {
	int pos;
	char msg[512];
};

/*
 * Turns an errno from perf_event_open(2) into advice for a person: the paranoid level and
 * CAP_PERFMON for EACCES/EPERM, "not supported on this machine" for ENOENT/EOPNOTSUPP,
 * RLIMIT_NOFILE for EMFILE. `event` names the event in the message (may be NULL). Returns buf.
 */
PSC_API const char *psc_strerror_open(int err, const char *event, char *buf, size_t len);

/* True when err from perf_event_open means "this machine cannot count this event at all". */
PSC_API int psc_errno_is_unsupported(int err);

#ifdef __cplusplus
}
#endif
#endif
