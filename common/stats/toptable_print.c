/* toptable's rows shown (toptable.h): a text table, redrawn on a terminal, or JSON lines. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "live.h"
#include "toptable.h"

static void key_str(const struct toptable_show *sh, uint64_t key, char *buf, size_t len)
{
	if (sh->key_text)
		sh->key_text(sh->ctx, key, buf, len);
	else
		snprintf(buf, len, "%llu", (unsigned long long)key);
}

void toptable__print_json(const struct toptable *t, struct json *j, struct out *o,
			  const struct keymap_entry *rows, size_t n, const struct toptable_show *sh)
{
	char buf[128];

	for (size_t i = 0; i < n; i++) {
		const struct toptable_row *r = rows[i].value;

		json__begin(j, o);
		JSON_KEY(j, "time");
		json__dbl(j, sh->elapsed(sh->ctx));
		if (sh->final) {
			JSON_KEY(j, "final");
			json__bool(j, true);
		}
		JSON_KEY(j, "key");
		if (sh->key_text) {
			key_str(sh, rows[i].key, buf, sizeof(buf));
			json__str(j, buf);
		} else {
			json__u64(j, rows[i].key);
		}
		JSON_KEY(j, "name");
		if (sh->have_name)
			json__str(j, r->name);
		else
			json__null(j);
		JSON_KEY(j, "columns");
		json__obj(j);
		for (int c = 0; c < t->nr_cols; c++) {
			json__key(j, t->cols[c].title);
			json__u64(j, r->vals[c]);
		}
		json__end(j);
		JSON_KEY(j, "events");
		json__u64(j, r->events);
		json__end_line(j);
	}
}

void toptable__print_text(const struct toptable *t, struct out *o, const struct keymap_entry *rows,
			  size_t n, size_t total, const struct toptable_show *sh)
{
	char buf[128];
	int kw = 8, nw = 16;
	time_t now = time(NULL);
	struct tm tm;

	for (size_t i = 0; i < n; i++) {
		const struct toptable_row *r = rows[i].value;
		int l = (int)strlen(r->name);

		if (l > nw)
			nw = l;

		key_str(sh, rows[i].key, buf, sizeof(buf));
		l = (int)strlen(buf);
		if (l > kw)
			kw = l;
	}
	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
	if (sh->redraw)
		live__clear(o);
	out__printf(o, "%s %s: %zu rows", buf, sh->heading, total);
	if (n < total)
		out__printf(o, ", top %zu shown", n);
	out__printf(o, ", %.1f s\n", sh->elapsed(sh->ctx));
	if (sh->key_title)
		out__printf(o, "%*s ", kw, sh->key_title);
	if (sh->have_name)
		out__printf(o, "%-*s ", nw, "COMM");
	for (int c = 0; c < t->nr_cols; c++)
		out__printf(o, "%*s ", t->cols[c].width, t->cols[c].title);
	out__printf(o, "%10s\n", "EVENTS");
	for (size_t i = 0; i < n; i++) {
		const struct toptable_row *r = rows[i].value;

		if (sh->key_title) {
			key_str(sh, rows[i].key, buf, sizeof(buf));
			out__printf(o, "%*s ", kw, buf);
		}
		if (sh->have_name)
			out__printf(o, "%-*s ", nw, r->name);
		for (int c = 0; c < t->nr_cols; c++)
			out__printf(o, "%*llu ", t->cols[c].width, (unsigned long long)r->vals[c]);
		out__printf(o, "%10llu\n", (unsigned long long)r->events);
	}
	if (!sh->redraw)
		out__puts(o, "\n");
}
