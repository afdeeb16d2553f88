/* libperfscope: "measure this function" helpers, perf-utils' CPUInstructions(fn) and profilers in
 * C. */
#ifndef PERFSCOPE_MEASURE_H
#define PERFSCOPE_MEASURE_H

#include <stdbool.h>
#include <perfscope/common.h>
#include <perfscope/evsel.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A meter: a set of events counted on the calling thread (any CPU), opened once as one group
 * so that a reading is one read(2) (or, where the PMU allows it, rdpmc from user space with no
 * system call). Start/stop/read/reset as many times as wanted. Not thread-safe; use it from the
 * thread that created it.
 */
struct psc_meter;

struct psc_meter_opts {
	size_t sz;
	bool exclude_kernel; /* count user space only (what perf_event_paranoid=2 allows) */
	bool no_group; /* open each event on its own (a group is all-or-nothing on the PMU) */
};
/* The last field of psc_meter_opts; a newer caller's bytes after it must be 0 (PSC_OPTS). */
#define psc_meter_opts__last_field no_group

/*
 * events: an event list in perfscope syntax ("instructions,cycles", "page-faults").
 * Events this machine cannot count are kept, marked unsupported (their value's `supported`
 * is false); NULL + errno only when none can be counted or the list does not parse (then *err
 * says why, err may be NULL).
 */
PSC_API struct psc_meter *psc_meter__new(const char *events, const struct psc_meter_opts *opts,
					 struct psc_parse_error *err);
PSC_API void psc_meter__delete(struct psc_meter *meter);
PSC_API int psc_meter__start(struct psc_meter *meter);
PSC_API int psc_meter__stop(struct psc_meter *meter);
PSC_API int psc_meter__reset(struct psc_meter *meter);

struct psc_meter_value {
	char name[128]; /* copied: values outlive the meter (psc_measure deletes it) */
	bool supported;
	int open_errno; /* why not, when !supported */
	uint64_t raw;
	double scaled; /* multiplexing-scaled */
	uint64_t ena, run;
};
/* Fills up to n values (one per event, in list order); returns the number of events, or -errno
 * (-EINVAL for a NULL meter, a negative n, or NULL values with n > 0). */
PSC_API int psc_meter__read(struct psc_meter *meter, struct psc_meter_value *values, int n);
PSC_API int psc_meter__nr(const struct psc_meter *meter);
/* True when reads use rdpmc (cap_user_rdpmc and cap_user_time) rather than read(2). */
PSC_API bool psc_meter__uses_rdpmc(const struct psc_meter *meter);

/*
 * One call: open `events` on this thread, run fn(arg) between enable and disable, read, close.
 * values as in psc_meter__read. Returns the number of events or -errno (-EINVAL for a NULL fn,
 * a negative n, or NULL values with n > 0).
 */
PSC_API int psc_measure(void (*fn)(void *arg), void *arg, const char *events,
			struct psc_meter_value *values, int n, struct psc_parse_error *err);

#ifdef __cplusplus
}
#endif
#endif
