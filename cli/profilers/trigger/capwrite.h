/* capwrite: one capture's stacks written as folded text, an SVG flame graph and a pprof file. */
#ifndef PERFSCOPE_COMMON_CAPWRITE_H
#define PERFSCOPE_COMMON_CAPWRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "callchain.h"
#include "stack_table.h"

#define CAPWRITE_FILES 3
#define CAPWRITE_PATH 4200

struct capwrite_opts {
	const char *title; /* the SVG's title and the pprof's first comment */
	const char *subtitle; /* the SVG's subtitle; NULL: none */
	long freq; /* samples per second a count stands for: pprof's cpu nanoseconds */
	uint64_t start_real_ns; /* wall clock at the start, and the duration (pprof) */
	uint64_t duration_ns;
};

/* What was written: files[0..nr) (STEM.folded, STEM.svg, STEM.pb.gz), and the first error. */
struct capwrite_result {
	char files[CAPWRITE_FILES][CAPWRITE_PATH];
	int nr;
	int err; /* 0 or the first -errno */
	const char *failed; /* the file it was about */
	size_t stacks; /* distinct folded stacks */
};

/*
 * Symbolizes each stack of st once through cc (the comm as the folded root and a pprof label)
 * and writes STEM.folded, STEM.svg and STEM.pb.gz, the pprof with every frame's address, mapping
 * and build-id. Each file on its own: one that fails is removed and the others are still
 * written. Returns res->err.
 */
int capwrite__all(struct callchain *cc, const struct stack_table *st, const char *stem,
		  const struct capwrite_opts *o, struct capwrite_result *res);

#endif
