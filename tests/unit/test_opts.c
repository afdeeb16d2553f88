/* Unit tests of the option-struct scheme: PSC_OPTS zeroing, older and newer callers' sz. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

struct fake_opts {
	size_t sz;
	int a;
	int b;
};
#define fake_opts__last_field b

/* Accepts whatever the library's own check accepts, for the fake type above. */
static bool fake_valid(const struct fake_opts *o)
{
	return OPTS_VALID(o, fake_opts);
}

static void test_older_caller(void **state)
{
	/* Built against a header that ended before b: b is never read, its default is used. */
	struct fake_opts older = { .sz = offsetofend(struct fake_opts, a), .a = 1, .b = 99 };
	const struct fake_opts *o = &older;

	assert_true(fake_valid(o));
	assert_int_equal(OPTS_GET(o, a, 7), 1);
	assert_int_equal(OPTS_GET(o, b, 7), 7);
	assert_int_equal(OPTS_GET((const struct fake_opts *)NULL, a, 7), 7);
	/* NULL is all defaults; a struct too small to hold sz itself is refused */
	assert_true(fake_valid(NULL));
	older.sz = 4;
	assert_false(fake_valid(o));
	older.sz = 0;
	assert_false(fake_valid(o));
}

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The same through psc_parse_events: pmu_dir past an older caller's sz is not read. */
static void test_older_caller_parse(void **state)
{
	char root[] = "/tmp/psc_opts_XXXXXX", path[PATH_MAX];
	struct psc_parse_error err;
	struct psc_event_list *list = NULL;

	assert_non_null(mkdtemp(root));
	snprintf(path, sizeof(path), "%s/fakepmu", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/fakepmu/format", root);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/fakepmu/type", root);
	put(path, "77\n");
	snprintf(path, sizeof(path), "%s/fakepmu/format/event", root);
	put(path, "config:0-7\n");

	PSC_OPTS(psc_parse_opts, o, .pmu_dir = root);
	assert_int_equal(psc_parse_events("fakepmu/event=5/", &o, &list, &err), 0);
	assert_int_equal(list->specs[0].attr.type, 77);
	assert_int_equal(list->specs[0].attr.config, 5);
	psc_event_list__delete(list);
	/* a caller whose header ended at tracefs_dir: the default PMU directory, no fakepmu there
	 */
	o.sz = offsetofend(struct psc_parse_opts, tracefs_dir);
	assert_int_equal(psc_parse_events("fakepmu/event=5/", &o, &list, &err), -ENOENT);
	assert_null(list);

	snprintf(path, sizeof(path), "%s/fakepmu/format/event", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/fakepmu/format", root);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/fakepmu/type", root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/fakepmu", root);
	rmdir(path);
	assert_int_equal(rmdir(root), 0);
}

static void test_newer_caller(void **state)
{
	struct {
		struct fake_opts o;
		long extra;
	} newer = { .o = { .sz = sizeof(newer), .a = 1, .b = 2 } };

	assert_true(fake_valid(&newer.o));
	assert_int_equal(OPTS_GET(&newer.o, b, 7), 2);
	/* a field this library does not know is set: refuse rather than ignore it */
	newer.extra = 5;
	assert_false(fake_valid(&newer.o));
}

/* The public entry points: a newer caller's unknown non-zero tail is EINVAL, a zero one works. */
static void test_entry_points(void **state)
{
	struct {
		struct psc_evlist_open_opts o;
		uint64_t newer_field;
	} eo = { .o = { .sz = sizeof(eo), .skip_unsupported = true } };
	struct {
		struct psc_parse_opts o;
		uint64_t newer_field;
	} po = { .o = { .sz = sizeof(po) } };
	struct {
		struct psc_meter_opts o;
		uint64_t newer_field;
	} mo = { .o = { .sz = sizeof(mo) }, .newer_field = 1 };
	struct {
		struct psc_ring_opts o;
		uint64_t newer_field;
	} ro = { .o = { .sz = sizeof(ro) }, .newer_field = 1 };
	struct {
		struct psc_mmap_opts o;
		uint64_t newer_field;
	} mmo = { .o = { .sz = sizeof(mmo) }, .newer_field = 1 };
	struct {
		struct psc_evsel_open_opts o;
		uint64_t newer_field;
	} so = { .o = { .sz = sizeof(so) }, .newer_field = 1 };
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_event_list *list = NULL;
	struct psc_parse_error err;
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	struct psc_evsel *evsel;
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_SOFTWARE };

	assert_non_null(evlist);
	/* an empty evlist opens nothing: only the opts check can fail */
	assert_int_equal(psc_evlist__open(evlist, &eo.o), 0);
	eo.newer_field = 1;
	assert_int_equal(psc_evlist__open(evlist, &eo.o), -EINVAL);

	assert_int_equal(psc_parse_events("page-faults", &po.o, &list, &err), 0);
	psc_event_list__delete(list);
	po.newer_field = 1;
	assert_int_equal(psc_parse_events("page-faults", &po.o, &list, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "psc_parse_opts"));

	errno = 0;
	assert_null(psc_meter__new("page-faults", &mo.o, NULL));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(psc_ring__new_fd(0, 1, &ro.o));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(psc_evlist__mmap(evlist, &mmo.o), -EINVAL);

	evsel = psc_evsel__new(&attr, "cpu-clock");
	assert_non_null(evsel);
	assert_int_equal(psc_evsel__open(evsel, cpus, threads, &so.o), -EINVAL);
	assert_int_equal(psc_evsel__fd(evsel, 0, 0), -1);
	psc_evsel__delete(evsel);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	psc_evlist__delete(evlist);
}

/*
 * A field added later where our struct has tail padding today (psc_evlist_open_opts: three
 * bools after an int leave one byte) is refused, not ignored: the check ends at the last field,
 * not at sizeof.
 */
struct evlist_open_opts_v2 {
	size_t sz;
	int cgroup_fd;
	bool inherit;
	bool enable_on_exec;
	bool skip_unsupported;
	bool newer_flag; /* lands in today's tail padding */
};

static void test_field_in_tail_padding(void **state)
{
	struct evlist_open_opts_v2 v2 = { .sz = sizeof(v2), .newer_flag = true };
	struct psc_evlist *evlist = psc_evlist__new();

	/* the premise: the new field fits in the old struct's size */
	assert_int_equal(sizeof(v2), sizeof(struct psc_evlist_open_opts));
	assert_true(offsetof(struct evlist_open_opts_v2, newer_flag) >=
		    offsetofend(struct psc_evlist_open_opts, skip_unsupported));
	assert_int_equal(psc_evlist__open(evlist, (const void *)&v2), -EINVAL);
	v2.newer_flag = false;
	assert_int_equal(psc_evlist__open(evlist, (const void *)&v2), 0);
	psc_evlist__delete(evlist);
}

/* Leaves a stack full of non-zero bytes where the next call's locals will be. */
static __attribute__((noinline)) void dirty_stack(void)
{
	volatile unsigned char junk[4096];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = 0xa5;
}

/* The -O0 code of both compilers, where a compound literal's padding is copied as it was. */
#ifdef __clang__
#define AT_O0 __attribute__((noinline, optnone))
#else
#define AT_O0 __attribute__((noinline, optimize("O0")))
#endif

/* Every field given: the case where an initializer leaves padding alone. */
static __attribute__((noinline)) void declare_opts(unsigned char *out)
{
	PSC_OPTS(psc_ring_opts, o, .overwrite = true, .cpu = 3, .tid = 7);

	memcpy(out, &o, sizeof(o));
}

static AT_O0 void declare_opts_O0(unsigned char *out)
{
	PSC_OPTS(psc_ring_opts, o, .overwrite = true, .cpu = 3, .tid = 7);

	memcpy(out, &o, sizeof(o));
}

static __attribute__((noinline)) void declare_opts_empty(unsigned char *out)
{
	PSC_OPTS(psc_meter_opts, o);

	memcpy(out, &o, sizeof(o));
}

static void check_ring_opts(const unsigned char *bytes)
{
	struct psc_ring_opts o;

	memcpy(&o, bytes, sizeof(o));
	assert_int_equal(o.sz, sizeof(o));
	assert_true(o.overwrite);
	assert_int_equal(o.cpu, 3);
	assert_int_equal(o.tid, 7);
	for (size_t i = offsetofend(struct psc_ring_opts, overwrite);
	     i < offsetof(struct psc_ring_opts, cpu); i++)
		assert_int_equal(bytes[i], 0);
	for (size_t i = offsetofend(struct psc_ring_opts, tid); i < sizeof(o); i++)
		assert_int_equal(bytes[i], 0);
	/* so the library's own check accepts what the macro declared */
	assert_true(psc_opts_valid(&o, offsetofend(struct psc_ring_opts, psc_ring_opts__last_field),
				   "psc_ring_opts"));
}

static void test_macro_zeroes_padding(void **state)
{
	unsigned char bytes[sizeof(struct psc_ring_opts)];
	unsigned char m[sizeof(struct psc_meter_opts)];
	const struct psc_meter_opts *mo = (const void *)m;

	/* psc_ring_opts: a bool then an int leave interior padding, and 20 bytes of fields in 24 */
	assert_true(offsetof(struct psc_ring_opts, cpu) >
		    offsetofend(struct psc_ring_opts, overwrite));
	assert_true(sizeof(struct psc_ring_opts) > offsetofend(struct psc_ring_opts, tid));

	dirty_stack();
	declare_opts(bytes);
	check_ring_opts(bytes);
	dirty_stack();
	declare_opts_O0(bytes);
	check_ring_opts(bytes);

	dirty_stack();
	declare_opts_empty(m);
	assert_int_equal(mo->sz, sizeof(*mo));
	for (size_t i = sizeof(size_t); i < sizeof(m); i++)
		assert_int_equal(m[i], 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_older_caller),
		cmocka_unit_test(test_older_caller_parse),
		cmocka_unit_test(test_newer_caller),
		cmocka_unit_test(test_entry_points),
		cmocka_unit_test(test_field_in_tail_padding),
		cmocka_unit_test(test_macro_zeroes_padding),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
