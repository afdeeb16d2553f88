/* Unit tests of the stack table, the folding of resolved frames and their pprof samples. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "callchain.h"
#include "json.h"
#include "pprof_frames.h"
#include "stack.h"
#include "stack_table.h"

static const uint64_t ips_a[] = { (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x402000 };
static const uint64_t ips_b[] = { (uint64_t)PERF_CONTEXT_USER, 0x401000, 0x403000 };

/* The same stack of a process counts once however many threads ran it, unless per_thread. */
static void test_count_merge(void **state)
{
	struct stack_table t = { 0 };
	struct stack_ent *e1, *e2, *e3;

	assert_int_equal(stack_table__init(&t, false), 0);
	e1 = stack_table__count(&t, 10, 10, "app", ips_a, 3, 1, 100);
	e2 = stack_table__count(&t, 10, 11, "app", ips_a, 3, 4, 400);
	e3 = stack_table__count(&t, 10, 10, "app", ips_b, 3, 1, 100);
	assert_non_null(e1);
	assert_ptr_equal(e1, e2);
	assert_ptr_not_equal(e1, e3);
	assert_int_equal(t.nr, 2);
	assert_int_equal(e1->count, 5);
	assert_int_equal(e1->period, 500);
	assert_int_equal(e1->nr, 3);
	assert_memory_equal(e1->ips, ips_a, sizeof(ips_a));
	assert_string_equal(e1->comm, "app");
	/* another comm (an exec) or another process: another stack */
	assert_ptr_not_equal(stack_table__count(&t, 10, 10, "sh", ips_a, 3, 1, 1), e1);
	assert_ptr_not_equal(stack_table__count(&t, 12, 12, "app", ips_a, 3, 1, 1), e1);
	assert_int_equal(t.nr, 4);
	stack_table__exit(&t);

	assert_int_equal(stack_table__init(&t, true), 0);
	e1 = stack_table__count(&t, 10, 10, "app", ips_a, 3, 1, 1);
	e2 = stack_table__count(&t, 10, 11, "app", ips_a, 3, 1, 1);
	assert_ptr_not_equal(e1, e2);
	assert_int_equal(t.nr, 2);
	stack_table__exit(&t);
}

/* Most samples first, then by pid; cleared, the table starts again; a zeroed one is a no-op. */
static void test_sorted_clear(void **state)
{
	struct stack_table t = { 0 };
	struct stack_ent **arr;
	size_t nr;

	stack_table__clear(&t);
	stack_table__exit(&t);
	assert_int_equal(stack_table__init(&t, false), 0);
	stack_table__count(&t, 7, 7, "b", ips_a, 3, 2, 2);
	stack_table__count(&t, 5, 5, "a", ips_a, 3, 2, 2);
	stack_table__count(&t, 9, 9, "c", ips_b, 3, 9, 9);
	arr = stack_table__sorted(&t, &nr);
	assert_non_null(arr);
	assert_int_equal(nr, 3);
	assert_int_equal(arr[0]->pid, 9);
	assert_int_equal(arr[1]->pid, 5);
	assert_int_equal(arr[2]->pid, 7);
	free(arr);
	stack_table__clear(&t);
	assert_int_equal(t.nr, 0);
	arr = stack_table__sorted(&t, &nr);
	assert_non_null(arr);
	assert_int_equal(nr, 0);
	free(arr);
	assert_non_null(stack_table__count(&t, 5, 5, "a", ips_a, 3, 1, 1));
	assert_int_equal(t.nr, 1);
	stack_table__exit(&t);
}

static void test_is_root(void **state)
{
	assert_true(frame__is_root("main"));
	assert_true(frame__is_root("start_thread"));
	assert_true(frame__is_root("__libc_start_call_main"));
	assert_false(frame__is_root("mainloop"));
	assert_false(frame__is_root(NULL));
}

/* Resolved frames (innermost first) fold as stack__fold folds, root first, names escaped. */
static void test_cc_fold(void **state)
{
	struct frame f[3] = {
		{ .ip = 0xffffffff81000010,
		  .sym = "do_sys",
		  .dso = "[kernel.kallsyms]",
		  .kernel = true },
		{ .ip = 0x401010, .sym = "work;inner", .dso = "app" },
		{ .ip = 0x7f0000001234, .dso = "libc.so.6", .file_off = 0x1234, .mapped = true },
	};
	char buf[256], small[8];
	int n;

	n = stack__fold(f, 3, "app-10", FOLD_KERNEL_SUFFIX, buf, sizeof(buf));
	assert_string_equal(buf, "app-10;[libc.so.6+0x1234];work_inner;do_sys_[k]");
	assert_int_equal(n, (int)strlen(buf));
	stack__fold(f, 3, "<...>", 0, buf, sizeof(buf));
	assert_string_equal(buf, "[unknown];[libc.so.6+0x1234];work_inner;do_sys");
	n = stack__fold(f, 3, "app", 0, small, sizeof(small));
	assert_string_equal(small, "app;[li");
	assert_true(n > (int)sizeof(small));
	stack__fold(f, 0, "app", 0, buf, sizeof(buf));
	assert_string_equal(buf, "app");
}

/* A resolved frame as JSON: callchain__json's fields, and its file when its mapping is known. */
static void test_cc_json(void **state)
{
	struct frame u = { .ip = 0x401010,
			   .sym = "leaf",
			   .off = 16,
			   .dso = "app",
			   .path = "/usr/bin/app",
			   .map_start = 0x400000,
			   .map_limit = 0x500000,
			   .file_off = 0x1010,
			   .mapped = true };
	struct frame k = { .ip = 0xffffffff81000010, .dso = "[kernel.kallsyms]", .kernel = true };
	int fd = memfd_create("out", 0);
	struct out *o = out__new(fd, 0);
	char got[512] = "";
	struct json j;

	assert_non_null(o);
	json__begin(&j, o);
	json__key(&j, "u");
	frame__json(&j, &u);
	json__key(&j, "k");
	frame__json(&j, &k);
	json__end_line(&j);
	assert_int_equal(out__flush(o), 0);
	assert_true(pread(fd, got, sizeof(got) - 1, 0) > 0);
	assert_string_equal(got, "{\"u\":{\"ip\":\"0x401010\",\"name\":\"leaf\",\"sym\":\"leaf\","
				 "\"off\":16,\"dso\":\"app\",\"path\":\"/usr/bin/app\","
				 "\"file_off\":\"0x1010\",\"kernel\":false},"
				 "\"k\":{\"ip\":\"0xffffffff81000010\",\"name\":\"[unknown]\","
				 "\"sym\":null,\"dso\":\"[kernel.kallsyms]\",\"kernel\":true}}\n");
	out__delete(o);
	close(fd);
}

/* A stack's frames become locations with their mapping and build-id; the same stack merges. */
static void test_pprof_frames(void **state)
{
	static const uint8_t bid[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct pprof_value_type types[1] = { { "samples", "count" } };
	struct frame f[2] = {
		{ .ip = 0x401010,
		  .sym = "leaf",
		  .dso = "app",
		  .path = "/usr/bin/app",
		  .map_start = 0x400000,
		  .map_limit = 0x500000,
		  .build_id = bid,
		  .build_id_size = 4,
		  .mapped = true },
		{ .ip = 0x402020,
		  .sym = "main",
		  .dso = "app",
		  .path = "/usr/bin/app",
		  .map_start = 0x400000,
		  .map_limit = 0x500000,
		  .build_id = bid,
		  .build_id_size = 4,
		  .mapped = true },
	};
	struct pprof *pp = pprof__new(types, 1, &types[0], 1);
	int64_t one = 1;

	assert_non_null(pp);
	assert_int_equal(pprof__add_frames(pp, f, 2, &one, NULL, 0), 0);
	assert_int_equal(pprof__add_frames(pp, f, 2, &one, NULL, 0), 0);
	assert_int_equal(pprof__add_frames(pp, f + 1, 1, &one, NULL, 0), 0);
	assert_int_equal(pprof__nr_samples(pp), 2);
	assert_int_equal(pprof__nr_locations(pp), 2);
	assert_int_equal(pprof__nr_functions(pp), 2);
	assert_int_equal(pprof__nr_mappings(pp), 1);
	assert_int_equal(pprof__add_frames(pp, NULL, 0, &one, NULL, 0), 0);
	pprof__delete(pp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_count_merge), cmocka_unit_test(test_sorted_clear),
		cmocka_unit_test(test_is_root),	    cmocka_unit_test(test_cc_fold),
		cmocka_unit_test(test_cc_json),	    cmocka_unit_test(test_pprof_frames),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
