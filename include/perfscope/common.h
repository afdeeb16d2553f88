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
/* The inline per-record helpers (psc_ring__next_fast, psc_record__parse_again): a call would
 * cost the record more than their work. */
#define PSC_HOT_INLINE static inline __attribute__((always_inline))

#define PSC_VERSION_MAJOR 0
#define PSC_VERSION_MINOR 1
#define PSC_VERSION_PATCH 0

/* "0.1.0": the version of the library actually loaded, which may differ from the header's. */
PSC_API const char *psc_version(void);

/*
 * Option structs, libbpf's scheme: the first member is `size_t sz`, and each struct has a
 * `<type>__last_field` define naming its last member. PSC_OPTS declares one, zeroes all of it
 * (padding included), then sets sz to the size this program was built with and the fields given:
 *
 *   PSC_OPTS(psc_evlist_open_opts, o, .skip_unsupported = true);
 *   psc_evlist__open(evlist, &o);
 *
 * The library reads only the fields that sz covers, so a program built against an older header
 * (smaller sz) gets defaults for the fields added since. A program built against a newer header
 * (larger sz) is accepted as long as every byte after the end of the library's last known field
 * is zero, i.e. it set none of the fields this library cannot honour; otherwise the call fails
 * with EINVAL. The check is against the end of <type>__last_field, not sizeof: tail padding
 * would otherwise hide a field added later in it. A field is only ever added at the end, and the
 * define moves with it.
 *
 * PSC_OPTS expands to a declaration followed by statements (one assignment per field, up to
 * 24), not to an initializer: when every field is given, gcc leaves the padding of an
 * initialized struct as the stack had it, and copying a compound literal over a memset struct
 * (libbpf's LIBBPF_OPTS) copies the literal's garbage padding at -O0. A newer caller's padding
 * is what an older library checks.
 */
#define PSC_OPTS(TYPE, NAME, ...)                          \
	struct TYPE NAME;                                  \
	__builtin_memset(&(NAME), 0, sizeof(struct TYPE)); \
	PSC__OPTS_SET(NAME, .sz = sizeof(struct TYPE), ##__VA_ARGS__)

/* clang-format off */
#define PSC__OPTS_CAT(a, b) PSC__OPTS_CAT_(a, b)
#define PSC__OPTS_CAT_(a, b) a##b
#define PSC__OPTS_NARG(...) PSC__OPTS_NARG_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, \
	14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1)
#define PSC__OPTS_NARG_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
	_17, _18, _19, _20, _21, _22, _23, _24, n, ...) n
/* NAME .field = value; for each designator: (NAME).field = value */
#define PSC__OPTS_SET(N, ...) PSC__OPTS_CAT(PSC__OPTS_SET_, PSC__OPTS_NARG(__VA_ARGS__))(N, __VA_ARGS__)
#define PSC__OPTS_SET_1(N, a) (N)a
#define PSC__OPTS_SET_2(N, a, ...) (N)a; PSC__OPTS_SET_1(N, __VA_ARGS__)
#define PSC__OPTS_SET_3(N, a, ...) (N)a; PSC__OPTS_SET_2(N, __VA_ARGS__)
#define PSC__OPTS_SET_4(N, a, ...) (N)a; PSC__OPTS_SET_3(N, __VA_ARGS__)
#define PSC__OPTS_SET_5(N, a, ...) (N)a; PSC__OPTS_SET_4(N, __VA_ARGS__)
#define PSC__OPTS_SET_6(N, a, ...) (N)a; PSC__OPTS_SET_5(N, __VA_ARGS__)
#define PSC__OPTS_SET_7(N, a, ...) (N)a; PSC__OPTS_SET_6(N, __VA_ARGS__)
#define PSC__OPTS_SET_8(N, a, ...) (N)a; PSC__OPTS_SET_7(N, __VA_ARGS__)
#define PSC__OPTS_SET_9(N, a, ...) (N)a; PSC__OPTS_SET_8(N, __VA_ARGS__)
#define PSC__OPTS_SET_10(N, a, ...) (N)a; PSC__OPTS_SET_9(N, __VA_ARGS__)
#define PSC__OPTS_SET_11(N, a, ...) (N)a; PSC__OPTS_SET_10(N, __VA_ARGS__)
#define PSC__OPTS_SET_12(N, a, ...) (N)a; PSC__OPTS_SET_11(N, __VA_ARGS__)
#define PSC__OPTS_SET_13(N, a, ...) (N)a; PSC__OPTS_SET_12(N, __VA_ARGS__)
#define PSC__OPTS_SET_14(N, a, ...) (N)a; PSC__OPTS_SET_13(N, __VA_ARGS__)
#define PSC__OPTS_SET_15(N, a, ...) (N)a; PSC__OPTS_SET_14(N, __VA_ARGS__)
#define PSC__OPTS_SET_16(N, a, ...) (N)a; PSC__OPTS_SET_15(N, __VA_ARGS__)
#define PSC__OPTS_SET_17(N, a, ...) (N)a; PSC__OPTS_SET_16(N, __VA_ARGS__)
#define PSC__OPTS_SET_18(N, a, ...) (N)a; PSC__OPTS_SET_17(N, __VA_ARGS__)
#define PSC__OPTS_SET_19(N, a, ...) (N)a; PSC__OPTS_SET_18(N, __VA_ARGS__)
#define PSC__OPTS_SET_20(N, a, ...) (N)a; PSC__OPTS_SET_19(N, __VA_ARGS__)
#define PSC__OPTS_SET_21(N, a, ...) (N)a; PSC__OPTS_SET_20(N, __VA_ARGS__)
#define PSC__OPTS_SET_22(N, a, ...) (N)a; PSC__OPTS_SET_21(N, __VA_ARGS__)
#define PSC__OPTS_SET_23(N, a, ...) (N)a; PSC__OPTS_SET_22(N, __VA_ARGS__)
#define PSC__OPTS_SET_24(N, a, ...) (N)a; PSC__OPTS_SET_23(N, __VA_ARGS__)
/* clang-format on */

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
