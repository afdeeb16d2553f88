/* Prometheus exposition writer: text format 0.0.4 and OpenMetrics 1.0 into a growable buffer; no
 * I/O. */
#ifndef PERFSCOPE_EXPORTER_EXPO_H
#define PERFSCOPE_EXPORTER_EXPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum expo_format {
	EXPO_TEXT, /* text/plain; version=0.0.4 */
	EXPO_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

enum expo_type {
	EXPO_COUNTER,
	EXPO_GAUGE,
	EXPO_UNTYPED,
};

struct expo_label {
	const char *name;
	const char *value;
};

/*
 * One exposition being written. Functions never fail individually: an allocation failure sets
 * `oom` and later writes are dropped, so callers check once at the end (expo_finish).
 */
struct expo {
	char *buf;
	size_t len, cap;
	enum expo_format fmt;
	bool oom;
	/* The family being written: samples take its name (plus _total for counters). */
	char family[192];
	size_t family_len;
	enum expo_type type;
};

/* hint: expected size in bytes (the last exposition's size keeps reallocations away). */
void expo_init(struct expo *e, enum expo_format fmt, size_t hint);
/* Frees the buffer (when expo_finish was not called or failed). */
void expo_release(struct expo *e);
/*
 * Starts a family: # HELP and # TYPE lines. For counters `name` is the family name without
 * the `_total` suffix (text format shows it with the suffix, as client_golang does; OpenMetrics
 * without). `name` must be valid (expo_name_valid); help may contain any text (it is escaped).
 */
void expo_family(struct expo *e, const char *name, enum expo_type type, const char *help);
/* One sample of the current family; label values are escaped, names must be valid. */
void expo_u64(struct expo *e, const struct expo_label *labels, int nr_labels, uint64_t v);
void expo_double(struct expo *e, const struct expo_label *labels, int nr_labels, double v);
/* A nanosecond count written as seconds with 9 decimals, exactly (no double rounding). */
void expo_ns_as_seconds(struct expo *e, const struct expo_label *labels, int nr_labels,
			uint64_t ns);
/*
 * Ends the exposition (OpenMetrics: "# EOF") and hands over the NUL-terminated buffer, which
 * the caller frees; *len gets its length. NULL when memory ran out (nothing to free then).
 */
char *expo_finish(struct expo *e, size_t *len);

/* The Content-Type header value for a format (om_version: "1.0.0" or "0.0.1", NULL = 1.0.0). */
const char *expo_content_type(enum expo_format fmt, const char *om_version);
/* [a-zA-Z_:][a-zA-Z0-9_:]* */
bool expo_name_valid(const char *name);
/* [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__" (reserved) */
bool expo_label_name_valid(const char *name);
/*
 * Copies src into dst (size n) with every character not allowed in a metric name replaced by
 * '_' (a leading digit gets a '_' in front). Returns the length it needed (like snprintf).
 */
size_t expo_sanitize_name(char *dst, size_t n, const char *src);

/*
 * Content negotiation on an Accept header value (NULL = absent): OpenMetrics when the client
 * prefers application/openmetrics-text (by q-value) over text/plain, else text 0.0.4.
 * *om_version gets "1.0.0" or "0.0.1", the OpenMetrics version the client asked for.
 */
enum expo_format expo_negotiate(const char *accept, const char **om_version);
/* True when an Accept-Encoding value accepts gzip (q > 0, directly or through "*"). */
bool expo_accepts_gzip(const char *accept_encoding);

#endif
