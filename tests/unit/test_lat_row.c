/* Unit tests of common/stats/lat_row.c, lat_rows.c and heatmap_file.c, without a profiler. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "heatmap_file.h"
#include "json.h"
#include "lat_row.h"
#include "output.h"

/* Everything written to a memfd, as a string. */
static char *contents(int fd)
{
	static char buf[1 << 16];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	assert_true(n >= 0);
	buf[n] = 0;
	return buf;
}

static void rewind_fd(int fd)
{
	assert_int_equal(ftruncate(fd, 0), 0);
	assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
}

/* The columns each table asks for, in multi-trace's and the stage profilers' layouts. */
static void t_text(void **state)
{
	struct lat_cols plain = { .width = 6 };
	struct lat_cols all = {
		.width = 6, .total_width = 12, .over = "over_than", .errors = true
	};
	struct lat_row *r = lat_row__new(7);
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	char want[512], v[7][24], total[24];

	(void)state;
	assert_non_null(r);
	assert_int_equal(r->id, 7);
	lat_row__add(r, 1000, false, false, true);
	lat_row__add(r, 3000, true, true, true);
	lat_cols__header(&plain, o, "pair");
	lat_cols__row(&plain, o, "  all", &r->total, r->over, r->errors);
	assert_int_equal(out__flush(o), 0);
	assert_string_equal(
		contents(fd),
		"pair        calls        min       mean        p50        p95        p99"
		"      p99.9        max\n"
		"  all           2    1.00 us    2.00 us    1.00 us    3.00 us    3.00 us"
		"    3.00 us    3.00 us\n");
	rewind_fd(fd);
	lat_cols__header(&all, o, "St");
	lat_cols__row(&all, o, "S", &r->total, r->over, r->errors);
	assert_int_equal(out__flush(o), 0);
	hist_fmt(total, sizeof(total), 4000, "ns");
	hist_fmt(v[0], sizeof(v[0]), 1000, "ns");
	hist_fmt(v[1], sizeof(v[1]), 3000, "ns");
	snprintf(want, sizeof(want),
		 "%-6s %10s %12s %10s %10s %10s %10s %10s %10s %10s %10s %8s\n"
		 "%-6s %10d %12s %10s %10s %10s %10s %10s %10s %10s %10d %8d\n",
		 "St", "calls", "total", "min", "mean", "p50", "p95", "p99", "p99.9", "max",
		 "over_than", "errors", "S", 2, total, v[0], "2.00 us", v[0], v[1], v[1], v[1],
		 v[1], 1, 1);
	assert_string_equal(contents(fd), want);
	lat_row__delete(r);
	lat_row__delete(NULL);
	out__delete(o);
	close(fd);
}

/* total_ns only when there are values, errors only when asked for. */
static void t_json(void **state)
{
	struct lat_row *r = lat_row__new(0);
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	uint64_t errors = 3;
	struct json j;

	(void)state;
	json__begin(&j, o);
	lat_row__json(&j, &r->total, 0, NULL);
	json__end_line(&j);
	lat_row__add(r, 10, true, false, false);
	lat_row__add(r, 20, false, false, false);
	json__begin(&j, o);
	lat_row__json(&j, &r->total, r->over, &errors);
	json__end_line(&j);
	assert_int_equal(out__flush(o), 0);
	assert_string_equal(contents(fd),
			    "{\"count\":0,\"min_ns\":null,\"max_ns\":null,\"mean_ns\":null,"
			    "\"p50_ns\":null,\"p90_ns\":null,\"p95_ns\":null,\"p99_ns\":null,"
			    "\"p999_ns\":null,\"over_than\":0}\n"
			    "{\"count\":2,\"min_ns\":10,\"max_ns\":20,\"mean_ns\":15,\"p50_ns\":10,"
			    "\"p90_ns\":20,\"p95_ns\":20,\"p99_ns\":20,\"p999_ns\":20,"
			    "\"total_ns\":30,\"over_than\":1,\"errors\":3}\n");
	/* no interval kept: ival stays empty */
	assert_int_equal(hist__count(&r->ival), 0);
	lat_row__delete(r);
	out__delete(o);
	close(fd);
}

/* Rows by key: created once, summed, sorted three ways, a new interval empties ival only. */
static void t_rows(void **state)
{
	struct lat_rows rs;
	struct lat_row *a, *b, *c, *sum = lat_row__new(0), **sorted;
	size_t nr = 0;

	(void)state;
	assert_int_equal(lat_rows__init(&rs), 0);
	a = lat_rows__get(&rs, 30);
	b = lat_rows__get(&rs, 10);
	c = lat_rows__get(&rs, 20);
	assert_true(a && b && c && sum);
	assert_ptr_equal(lat_rows__get(&rs, 30), a);
	assert_int_equal(b->id, 10);
	/* a: 1 value of 1000; b: 3 of 10; c: 3 of 20 (ties with b on count: tid then id) */
	lat_row__add(a, 1000, true, true, true);
	for (int i = 0; i < 3; i++) {
		lat_row__add(b, 10, false, false, true);
		lat_row__add(c, 20, false, true, true);
	}
	b->tid = c->tid = 5;
	assert_int_equal(lat_rows__sum(&rs, sum), 0);
	assert_int_equal(hist__count(&sum->total), 7);
	assert_int_equal(hist__count(&sum->ival), 7);
	assert_true(hist__sum(&sum->total) == 1090);
	assert_int_equal(sum->over, 1);
	assert_int_equal(sum->errors, 4);
	assert_int_equal(sum->ival_errors, 4);

	sorted = lat_rows__sorted(&rs, lat_row__cmp_id, &nr);
	assert_int_equal(nr, 3);
	assert_ptr_equal(sorted[0], b);
	assert_ptr_equal(sorted[1], c);
	assert_ptr_equal(sorted[2], a);
	free(sorted);
	/* most values first; b and c tie on count and tid: by id */
	sorted = lat_rows__sorted(&rs, lat_row__cmp_count, &nr);
	assert_ptr_equal(sorted[0], b);
	assert_ptr_equal(sorted[1], c);
	assert_ptr_equal(sorted[2], a);
	free(sorted);
	sorted = lat_rows__sorted(&rs, lat_row__cmp_total, &nr);
	assert_ptr_equal(sorted[0], a);
	assert_ptr_equal(sorted[1], c);
	assert_ptr_equal(sorted[2], b);
	free(sorted);

	lat_rows__reset_ival(&rs);
	assert_int_equal(hist__count(&a->ival), 0);
	assert_int_equal(a->ival_over + a->ival_errors, 0);
	assert_int_equal(hist__count(&a->total), 1);
	assert_int_equal(a->over + a->errors, 2);
	lat_row__delete(sum);
	lat_rows__exit(&rs);
}

/* A heatmap file: written where it can be; an error says whether opening it failed. */
static void t_heatmap_file(void **state)
{
	struct heatmap *hm = heatmap__new(NULL);
	struct heatmap_svg svg = { .title = "t", .unit = "ns" };
	char dir[] = "/tmp/lat_row_XXXXXX", path[64];
	bool opened = false;
	char head[6] = "";
	FILE *f;

	(void)state;
	assert_non_null(hm);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(heatmap__add(hm, 1000, 500), 0);
	snprintf(path, sizeof(path), "%s/hm.svg", dir);
	assert_int_equal(heatmap__write_file(hm, path, &svg, &opened), 0);
	assert_true(opened);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fread(head, 1, 5, f), 5);
	fclose(f);
	assert_string_equal(head, "<?xml");
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/no/hm.svg", dir);
	assert_int_equal(heatmap__write_file(hm, path, &svg, &opened), -ENOENT);
	assert_false(opened);
	assert_int_equal(heatmap__write_file(hm, path, &svg, NULL), -ENOENT);
	assert_int_equal(rmdir(dir), 0);
	heatmap__delete(hm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_text),
		cmocka_unit_test(t_json),
		cmocka_unit_test(t_rows),
		cmocka_unit_test(t_heatmap_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
