/* Latency rows: a distribution since the start and since the last interval, with its table text. */
#ifndef PERFSCOPE_COMMON_LAT_ROW_H
#define PERFSCOPE_COMMON_LAT_ROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hist.h"
#include "keymap.h"

struct out;
struct json;

/*
 * One row of a latency table (multi-trace and its presets, task-state, blktrace): the values
 * since the start (total) and since the last interval (ival), how many were outliers (over a
 * --than, under a --lower) and how many ended in an error (a system call's ret < 0). Heap only:
 * the hist's 128-bit sum wants an alignment keymap values do not give. Not thread-safe.
 */
struct lat_row {
	struct hist total, ival;
	uint64_t over, ival_over;
	uint64_t errors, ival_errors;
	uint64_t id; /* what the row is of: a key, a state, a system call */
	uint64_t tid; /* whose, when rows are per thread and per id */
};

/* An empty row of id. NULL and errno on failure. */
struct lat_row *lat_row__new(uint64_t id);
void lat_row__delete(struct lat_row *r);
/* Counts one value in total, and in ival when intervals are kept. */
void lat_row__add(struct lat_row *r, uint64_t v, bool over, bool error, bool ival);
/* A new interval: ival and its counts emptied. */
void lat_row__reset_ival(struct lat_row *r);

/*
 * The columns of a table: "LABEL calls [total] min mean p50 p95 p99 p99.9 max [OVER] [errors]",
 * values with their unit (hist_fmt), the label left-aligned in width columns.
 */
struct lat_cols {
	int width; /* of the label */
	int total_width; /* of the total column; 0: none */
	const char *over; /* the outliers column's header; NULL: none */
	bool errors; /* an errors column */
};

void lat_cols__header(const struct lat_cols *c, struct out *o, const char *first);
void lat_cols__row(const struct lat_cols *c, struct out *o, const char *label, const struct hist *h,
		   uint64_t over, uint64_t errors);

/*
 * The members of a row into the object j has open: hist__json's (count, min_ns ... p999_ns),
 * "total_ns" when not empty, "over_than", and "errors" when errors is not NULL.
 */
void lat_row__json(struct json *j, const struct hist *h, uint64_t over, const uint64_t *errors);

/* Rows by a u64 key, each created on first use. */
struct lat_rows {
	struct keymap map; /* key -> struct lat_row * */
};

int lat_rows__init(struct lat_rows *rs);
void lat_rows__exit(struct lat_rows *rs);
/* The row of key, created empty with id key; NULL when out of memory (nothing kept). */
struct lat_row *lat_rows__get(struct lat_rows *rs, uint64_t key);
/* The rows sorted by cmp (qsort's, over struct lat_row **); free() the array. NULL: no memory. */
struct lat_row **lat_rows__sorted(struct lat_rows *rs, int (*cmp)(const void *, const void *),
				  size_t *nr);
/* Every row's lat_row__reset_ival. */
void lat_rows__reset_ival(struct lat_rows *rs);
/* into = the sum of the rows (both distributions and counts); the merges that had no memory. */
uint64_t lat_rows__sum(struct lat_rows *rs, struct lat_row *into);

/* Orders for lat_rows__sorted: by id; most values first (then tid, id); most total time first. */
int lat_row__cmp_id(const void *a, const void *b);
int lat_row__cmp_count(const void *a, const void *b);
int lat_row__cmp_total(const void *a, const void *b);

#endif
