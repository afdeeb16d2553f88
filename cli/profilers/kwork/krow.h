/* krow: named rows of one or two latency measures (wait, run time), for lock and kwork. */
#ifndef PERFSCOPE_CLI_KROW_H
#define PERFSCOPE_CLI_KROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "keymap.h"
#include "lat_row.h"
#include "pair_copy.h"
#include "profiler.h"

#define KROW_MEAS 2

/*
 * One thing measured (a lock, a caller stack, an irq, a softirq vector, a work function): its
 * distributions (lat_row.h: since the start and since the last interval), its name, and the
 * first sample that made it, kept only to print its stack from.
 */
struct krow {
	struct lat_row *lat[KROW_MEAS]; /* NULL: a measure this row does not have */
	char *name;
	struct pair_copy *sample;
	uint64_t key;
	uint64_t aux; /* the profiler's: a lock's flags, a kwork row's CPU + 1 (0: all) */
};

struct krows {
	struct keymap map; /* key -> struct krow * */
	unsigned int meas; /* bit i: lat[i] is kept */
	uint64_t nomem; /* values with no row: no memory */
	struct krow *last; /* the last row asked for (events come in runs) */
};

int krows__init(struct krows *rs, unsigned int meas);
void krows__exit(struct krows *rs);
/* The row of key, *created when it is new (its name then NULL: the caller's to set). NULL: no
 * memory (counted). */
struct krow *krows__get(struct krows *rs, uint64_t key, bool *created);
/* Counts v in measure m of r (not NULL). */
void krow__add(struct krows *rs, struct krow *r, int m, uint64_t v, bool over, bool ival);
void krows__reset_ival(struct krows *rs);

/* How a table is printed. */
struct krows_print {
	const char *title; /* the first column's header: "lock (wait)", "softirq latency" */
	const char *table; /* its name in JSON ("table": "locks") */
	int meas; /* which measure */
	bool final; /* totals, else the interval's */
	bool stacks; /* the rows' stacks under them */
	long top; /* the most rows printed, 0: all */
	/* the row's own JSON members (lock address, class...); NULL: none */
	void (*json)(struct prof *p, const struct krow *r, void *arg);
	void *arg;
	const char *over; /* the outliers column's header; NULL: none */
};

/* An interval's heading in text ("2026-01-02 03:04:05"), as multi-trace's; nothing in JSON. */
void krows__interval_head(struct prof *p);
/* The rows with values, most total time first, as a text table or one JSON object each. */
void krows__print(struct prof *p, struct krows *rs, const struct krows_print *kp);

#endif
