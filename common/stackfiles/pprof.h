/* pprof: profiles as gzipped profile.proto (go tool pprof, Pyroscope, Parca), built in memory. */
#ifndef PERFSCOPE_COMMON_PPROF_H
#define PERFSCOPE_COMMON_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * A profile being built: strings, functions, mappings and locations are kept once each (hashed),
 * and samples with the same stack and labels are merged (their values added), so memory grows
 * with the distinct stacks, not with the samples. What is written keeps what the consumers
 * check: string_table[0] is "", ids are non-zero and unique, every location has a mapping (ids
 * 1..N, in the order first seen), labels are strings only.
 *
 * Not thread-safe. Strings passed in are copied: the caller's may go away after each call.
 */
struct pprof;

/* A sample value's (or the period's) type and unit: {"samples", "count"}, {"cpu", "nanoseconds"}.
 */
struct pprof_value_type {
	const char *type;
	const char *unit;
};

/*
 * One frame of a stack. Frames with the same mapping (module, start, limit, offset, build-id)
 * share one Mapping; frames with the same mapping, address and function share one Location.
 */
struct pprof_frame {
	uint64_t addr; /* the pc (absolute, as sampled); 0 when unknown */
	const char *function; /* demangled name; NULL: unknown (pprof shows the address) */
	const char *system_name; /* mangled name; NULL: same as function */
	const char *source_file; /* NULL: unknown */
	int64_t line; /* 0: unknown */
	/*
	 * The module: its path ("/usr/lib/x86_64-linux-gnu/libc.so.6", "[kernel.kallsyms]");
	 * NULL: "[unknown]". map_start/map_limit are the mapped range [start, limit) in the
	 * process, map_offset the file offset at map_start: pprof needs them to turn addresses
	 * back into file addresses. All 0 when unknown.
	 */
	const char *module;
	uint64_t map_start, map_limit, map_offset;
	const char *build_id; /* hex ("4f2a..."); NULL: none */
};

/* A string label on a sample: {"pid", "1234"}, {"comm", "nginx"}. */
struct pprof_label {
	const char *key;
	const char *value;
};

/*
 * A new empty profile whose samples carry nr_types values each, of these types (e.g.
 * samples/count and cpu/nanoseconds), every sample standing for `period` units of period_type
 * (e.g. cpu/nanoseconds, 1e9 / frequency). The last sample type is the default one pprof shows.
 * NULL with errno set (EINVAL: no type, ENOMEM).
 */
struct pprof *pprof__new(const struct pprof_value_type *types, size_t nr_types,
			 const struct pprof_value_type *period_type, int64_t period);
/* Frees p; NULL is a no-op. */
void pprof__delete(struct pprof *p);

/* Wall-clock start of the profile (ns since the epoch) and its duration (ns). */
void pprof__set_time(struct pprof *p, int64_t time_ns, int64_t duration_ns);
/* Adds a comment line ("perfscope profile -F 99 -a", "lost 12 samples"). 0 or -ENOMEM. */
int pprof__add_comment(struct pprof *p, const char *comment);

/*
 * Adds a sample: frames[0..n) innermost first (the leaf, then its callers), values[] as many as
 * the sample types, labels[0..nr_labels) (may be NULL when 0). A sample whose stack and labels
 * were seen before adds its values to that one. n may be 0 (a sample without a stack).
 * 0 or -ENOMEM, -EINVAL (NULL frames with n > 0).
 */
int pprof__add_sample(struct pprof *p, const struct pprof_frame *frames, size_t n,
		      const int64_t *values, const struct pprof_label *labels, size_t nr_labels);

/* Distinct samples, locations, functions and mappings held (for reports and tests). */
size_t pprof__nr_samples(const struct pprof *p);
size_t pprof__nr_locations(const struct pprof *p);
size_t pprof__nr_functions(const struct pprof *p);
size_t pprof__nr_mappings(const struct pprof *p);

/*
 * Writes the profile, serialized and gzipped, to out (left open: the caller closes it and
 * checks that close). 0 or -errno (-EIO when out failed, -ENOMEM).
 */
int pprof__write(const struct pprof *p, FILE *out);
/* The same to path, created or truncated. 0 or -errno. */
int pprof__write_path(const struct pprof *p, const char *path);

#endif
