/* perfscope num-dist's parts: its state, each event's distributions, the reports. */
#ifndef PERFSCOPE_CLI_NUM_DIST_H
#define PERFSCOPE_CLI_NUM_DIST_H

#include <stdbool.h>
#include <stdint.h>

#include "expr.h"
#include "heatmap.h"
#include "hist.h"
#include "keymap.h"
#include "profiler.h"

struct nd {
	bool perins;
	uint64_t than; /* 0: none */
	const char *than_text; /* --than as given: NULL when not */
	const char *heatmap;
	uint64_t dropped;
};

/*
 * A key's distributions: since the start, and since the last interval. On the heap, the keymap
 * holding a pointer: a hist's 128-bit sum wants 16-byte alignment, keymap values have 8.
 */
struct nd_dist {
	struct hist total, ival;
};

struct nd_ev {
	struct expr *num, *key;
	struct keymap dists;
	struct heatmap *hm;
	uint64_t errors;
};

/* num_dist_report.c: every event's distributions (final: the whole run's, else the interval's,
 * then reset); the report hook, the heatmap files too. */
int nd_print(struct prof *p, struct nd *nd, bool final);
int nd_report(struct prof *p, void *priv);

#endif
