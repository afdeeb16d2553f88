/* duration: perf-prof's time arguments ("20ms", "1.5s", "100us", "500ns", a bare number is ns). */
#ifndef PERFSCOPE_COMMON_DURATION_H
#define PERFSCOPE_COMMON_DURATION_H

#include <stdint.h>

/* What duration__parse accepts, for messages that tell the user the forms. */
#define DURATION_FORMS "a number with an optional unit s, ms, us or ns (the default)"

/*
 * Parses a non-negative number with an optional unit s, ms, us or ns (none: ns) into
 * nanoseconds, rounded to the nearest. Returns 0, or -EINVAL (not a number, negative, not
 * finite, an unknown unit, or more than a u64 of nanoseconds); *ns is then unchanged.
 */
int duration__parse(const char *arg, uint64_t *ns);

/* duration__parse with a bare number counted in unit_ns (-i: milliseconds, --duration: s). */
int duration__parse_unit(const char *arg, uint64_t unit_ns, uint64_t *ns);

#endif
