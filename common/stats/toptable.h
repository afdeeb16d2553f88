/* toptable: u64-keyed rows summing columns, sorted by chosen columns, shown as top's table. */
#ifndef PERFSCOPE_COMMON_TOPTABLE_H
#define PERFSCOPE_COMMON_TOPTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "keymap.h"
#include "keymap_sorted.h"
#include "output.h"

#define TOPTABLE_NAME_LEN 48 /* a row's name (comm, file name, symbol) is cut here */
#define TOPTABLE_TITLE_LEN 64

/* A row: its name, the events it summed, then one u64 per column. */
struct toptable_row {
	char name[TOPTABLE_NAME_LEN];
	uint64_t events;
	uint64_t vals[];
};

struct toptable_col {
	char title[TOPTABLE_TITLE_LEN];
	bool by; /* sorted by, in the order the columns were added */
	int width; /* of the text column: the title's, at least 12 */
};

/* Columns added first, then toptable__start, then rows. Not thread-safe. */
struct toptable {
	struct toptable_col *cols;
	int nr_cols, cap_cols;
	int *order; /* column indexes in sort order: the by columns, then the others */
	struct keymap map; /* key -> struct toptable_row */
	uint64_t dropped; /* rows not created: no memory */
};

/* A column titled title (cut to TOPTABLE_TITLE_LEN - 1): its index, or -ENOMEM. */
int toptable__add_col(struct toptable *t, const char *title, bool by);
/* After the last column: 0 or -ENOMEM. */
int toptable__start(struct toptable *t);
void toptable__exit(struct toptable *t);
/* The row of key, made (zeroed, *created) when new; NULL when out of memory (counted). */
struct toptable_row *toptable__row(struct toptable *t, uint64_t key, bool *created);
void toptable_row__set_name(struct toptable_row *r, const char *s, size_t len);
static inline size_t toptable__nr(const struct toptable *t)
{
	return keymap__nr(&t->map);
}
/* Every row forgotten (an interval's table printed). */
void toptable__clear(struct toptable *t);
/*
 * The rows (values: struct toptable_row) sorted by the by columns in order, then the others, then
 * events, all descending, then key ascending. keymap__sorted's array: free it.
 */
struct keymap_entry *toptable__sorted(const struct toptable *t, size_t *nr);

/* How a table is shown (toptable_print.c). */
struct toptable_show {
	/* the key as text (buf of len); NULL: its number */
	void (*key_text)(void *ctx, uint64_t key, char *buf, size_t len);
	void *ctx;
	const char *key_title; /* the key column's; NULL: no key column */
	bool have_name; /* a name column (COMM) */
	const char *heading; /* after the time of day: "perfscope top", "totals" */
	double (*elapsed)(void *ctx); /* s since the start, read as each line is written */
	bool final; /* JSON: "final": true */
	bool redraw; /* text: clear the terminal first, no blank line after */
};

/*
 * The first n of total sorted rows: a heading line, the titles, the rows (text); or one JSON
 * object per row (time, final, key, name, columns, events).
 */
void toptable__print_text(const struct toptable *t, struct out *o, const struct keymap_entry *rows,
			  size_t n, size_t total, const struct toptable_show *sh);
void toptable__print_json(const struct toptable *t, struct json *j, struct out *o,
			  const struct keymap_entry *rows, size_t n,
			  const struct toptable_show *sh);

#endif
