/* Unit tests of common/stackfiles/pprof.c: the profile's invariants (decoded back with protobuf-c)
 * and go tool
 * pprof reading it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "pprof.h"
#include "pprof_read.h"

static const struct pprof_value_type types[] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
static const struct pprof_value_type period_type = { "cpu", "nanoseconds" };
#define PERIOD 10101010 /* 99 Hz */

/* A program binary, libc and the kernel: main -> work -> hot_a (30) / hot_b (10), one unknown. */
static struct pprof *known_profile(void)
{
	struct pprof *p = pprof__new(types, 2, &period_type, PERIOD);
	struct pprof_frame prog = { .module = "/usr/bin/known",
				    .map_start = 0x400000,
				    .map_limit = 0x500000,
				    .map_offset = 0x1000,
				    .build_id = "0123456789abcdef" };
	struct pprof_frame st_a[4], st_b[3], st_k[2];
	struct pprof_label labels[] = { { "pid", "1234" }, { "comm", "known" } };
	int64_t v[2];

	assert_non_null(p);
	st_a[0] = prog, st_a[0].addr = 0x401010, st_a[0].function = "hot_a";
	st_a[0].source_file = "known.c", st_a[0].line = 12;
	st_a[1] = prog, st_a[1].addr = 0x401100, st_a[1].function = "work";
	st_a[2] = prog, st_a[2].addr = 0x401200, st_a[2].function = "main";
	st_a[3] = (struct pprof_frame){ .addr = 0x7f0000001234,
					.module = "/usr/lib/libc.so.6",
					.map_start = 0x7f0000000000,
					.map_limit = 0x7f0000100000,
					.function = "__libc_start_main" };
	st_b[0] = prog, st_b[0].addr = 0x401020, st_b[0].function = "hot_b";
	st_b[1] = st_a[1], st_b[2] = st_a[2];
	/* a kernel leaf under an unknown user frame */
	st_k[0] = (struct pprof_frame){ .addr = 0xffffffff81000010,
					.function = "do_syscall_64",
					.module = "[kernel.kallsyms]" };
	st_k[1] = (struct pprof_frame){ .addr = 0xdead0 };

	/* hot_a: 30 samples in 3 adds, merged into one sample */
	for (int i = 0; i < 3; i++) {
		v[0] = 10, v[1] = 10 * PERIOD;
		assert_int_equal(pprof__add_sample(p, st_a, 4, v, labels, 2), 0);
	}
	for (int i = 0; i < 10; i++) {
		v[0] = 1, v[1] = PERIOD;
		assert_int_equal(pprof__add_sample(p, st_b, 3, v, labels, 2), 0);
	}
	v[0] = 5, v[1] = 5 * PERIOD;
	assert_int_equal(pprof__add_sample(p, st_k, 2, v, labels, 1), 0);
	assert_int_equal(pprof__add_comment(p, "perfscope unit test"), 0);
	pprof__set_time(p, 1700000000000000000ll, 2000000000ll);
	return p;
}

static int write_known(char *path)
{
	struct pprof *p = known_profile();
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pprof__nr_samples(p), 3);
	/* main, work shared by both stacks: 4 + 1 (hot_b) + 2 (kernel, unknown) */
	assert_int_equal(pprof__nr_locations(p), 7);
	assert_int_equal(pprof__nr_functions(p), 6);
	/* the program, libc, the kernel, [unknown] */
	assert_int_equal(pprof__nr_mappings(p), 4);
	assert_int_equal(pprof__write_path(p, path), 0);
	pprof__delete(p);
	return 0;
}

static void t_invariants(void **state)
{
	char path[] = "/tmp/psc_pprof_XXXXXX";
	Perftools__Profiles__Profile *pr;
	uint8_t magic[2];
	size_t len;
	uint8_t *buf;
	FILE *f;
	bool seen_map[8] = { 0 };
	int64_t total = 0;

	(void)state;
	write_known(path);
	f = fopen(path, "rb");
	assert_int_equal(fread(magic, 1, 2, f), 2);
	fclose(f);
	assert_int_equal(magic[0], 0x1f); /* gzip */
	assert_int_equal(magic[1], 0x8b);
	buf = gunzip_file(path, &len);
	pr = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(pr);
	assert_true(pr->n_string_table > 0);
	assert_string_equal(pr->string_table[0], "");
	assert_int_equal(pr->n_sample_type, 2);
	assert_string_equal(pr->string_table[pr->sample_type[0]->type], "samples");
	assert_string_equal(pr->string_table[pr->sample_type[0]->unit], "count");
	assert_string_equal(pr->string_table[pr->sample_type[1]->type], "cpu");
	assert_string_equal(pr->string_table[pr->sample_type[1]->unit], "nanoseconds");
	assert_string_equal(pr->string_table[pr->period_type->type], "cpu");
	assert_string_equal(pr->string_table[pr->period_type->unit], "nanoseconds");
	assert_int_equal(pr->period, PERIOD);
	assert_int_equal(pr->duration_nanos, 2000000000ll);
	assert_int_equal(pr->n_comment, 1);
	/* mappings are 1..N; every location has one; ids unique and non-zero */
	assert_int_equal(pr->n_mapping, 4);
	for (size_t i = 0; i < pr->n_mapping; i++)
		assert_int_equal(pr->mapping[i]->id, i + 1);
	for (size_t i = 0; i < pr->n_location; i++) {
		assert_int_equal(pr->location[i]->id, i + 1);
		assert_true(pr->location[i]->mapping_id >= 1 &&
			    pr->location[i]->mapping_id <= pr->n_mapping);
		seen_map[pr->location[i]->mapping_id] = true;
	}
	for (size_t i = 1; i <= pr->n_mapping; i++)
		assert_true(seen_map[i]);
	for (size_t i = 0; i < pr->n_function; i++)
		assert_int_equal(pr->function[i]->id, i + 1);
	/* the program's mapping keeps its build-id and file offset */
	assert_string_equal(pr->string_table[pr->mapping[0]->filename], "/usr/bin/known");
	assert_string_equal(pr->string_table[pr->mapping[0]->build_id], "0123456789abcdef");
	assert_int_equal(pr->mapping[0]->file_offset, 0x1000);
	assert_true(pr->mapping[0]->has_functions);
	/* string labels only */
	for (size_t i = 0; i < pr->n_sample; i++) {
		assert_int_equal(pr->sample[i]->n_value, 2);
		total += pr->sample[i]->value[0];
		for (size_t j = 0; j < pr->sample[i]->n_label; j++) {
			assert_true(pr->sample[i]->label[j]->str > 0);
			assert_int_equal(pr->sample[i]->label[j]->num, 0);
		}
	}
	assert_int_equal(total, 45);
	assert_string_equal(pr->string_table[pr->sample[0]->label[0]->key], "pid");
	assert_string_equal(pr->string_table[pr->sample[0]->label[0]->str], "1234");
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(buf);
	unlink(path);
}

/* Runs cmd and returns its stdout (static buffer), NULL when it failed. */
static char *run(const char *cmd)
{
	static char out[1 << 16];
	FILE *f = popen(cmd, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(out, 1, sizeof(out) - 1, f);
	out[n] = '\0';
	return pclose(f) == 0 ? out : NULL;
}

/* A line of -top output naming fn with its flat count, e.g. "30 66.67% 66.67% 30 66.67%  hot_a". */
static long top_flat(const char *top, const char *fn)
{
	for (const char *l = top; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l), fl = strlen(fn);

		if (len > fl && !memcmp(l + len - fl, fn, fl) && l[len - fl - 1] == ' ')
			return strtol(l, NULL, 10);
	}
	return -1;
}

static void t_go_tool_pprof(void **state)
{
	char path[] = "/tmp/psc_pprof_XXXXXX", home[] = "/tmp/psc_pprof_home_XXXXXX";
	char cmd[1024], *out;

	(void)state;
	if (system("command -v go >/dev/null 2>&1")) {
		print_message("go is not installed (golang-go): go tool pprof not tried\n");
		skip();
	}
	assert_non_null(mkdtemp(home));
	write_known(path);
	/* go writes its cache under HOME: a private one, removed after */
#define GOENV "HOME=%1$s GOCACHE=%1$s/cache GOPATH=%1$s/go GOFLAGS= "
	snprintf(cmd, sizeof(cmd),
		 GOENV "go tool pprof -top -sample_index=samples -symbolize=none %2$s 2>/dev/null",
		 home, path);
	out = run(cmd);
	assert_non_null(out);
	assert_non_null(strstr(out, "of 45 total"));
	assert_int_equal(top_flat(out, "hot_a"), 30);
	assert_int_equal(top_flat(out, "hot_b"), 10);
	assert_int_equal(top_flat(out, "do_syscall_64"), 5);
	/* cpu time: 45 periods of 10.1 ms */
	snprintf(cmd, sizeof(cmd),
		 GOENV "go tool pprof -top -sample_index=cpu -symbolize=none %2$s 2>/dev/null",
		 home, path);
	out = run(cmd);
	assert_non_null(out);
	assert_non_null(strstr(out, "of 454.55ms total"));
	/* -raw: the mappings with their build-ids, the labels as strings */
	snprintf(cmd, sizeof(cmd), GOENV "go tool pprof -raw -symbolize=none %2$s 2>/dev/null",
		 home, path);
	out = run(cmd);
	assert_non_null(out);
	assert_non_null(strstr(out, "/usr/bin/known 0123456789abcdef"));
	assert_non_null(strstr(out, "pid:[1234]"));
	assert_non_null(strstr(out, "comm:[known]"));
	assert_non_null(strstr(out, "[kernel.kallsyms]"));
	assert_non_null(strstr(out, "PeriodType: cpu nanoseconds"));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", home);
	assert_int_equal(system(cmd), 0);
	unlink(path);
}

static void t_errors(void **state)
{
	struct pprof *p;
	int64_t v[2] = { 1, 1 };

	(void)state;
	assert_null(pprof__new(NULL, 0, NULL, 0));
	p = pprof__new(types, 2, NULL, 0);
	assert_non_null(p);
	assert_int_equal(pprof__add_sample(p, NULL, 1, v, NULL, 0), -EINVAL);
	/* a sample without a stack is still a sample */
	assert_int_equal(pprof__add_sample(p, NULL, 0, v, NULL, 0), 0);
	assert_int_equal(pprof__nr_samples(p), 1);
	assert_true(pprof__write_path(p, "/nonexistent-dir/x.pb.gz") < 0);
	pprof__delete(p);
	pprof__delete(NULL);
}

/* Many distinct stacks: entities stay deduplicated, the written file decodes. */
static void t_many(void **state)
{
	struct pprof *p = pprof__new(types, 2, &period_type, PERIOD);
	struct pprof_frame fr[3] = { 0 };
	char name[32], path[] = "/tmp/psc_pprof_XXXXXX";
	int64_t v[2] = { 1, PERIOD };
	int fd;

	(void)state;
	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "leaf_%d", i % 5000);
		fr[0] = (struct pprof_frame){ .addr = 0x1000 + (uint64_t)(i % 5000),
					      .function = name,
					      .module = "/bin/x",
					      .map_start = 0,
					      .map_limit = 1 << 20 };
		fr[1] = fr[0], fr[1].addr = 0x9000 + (uint64_t)(i % 7), fr[1].function = "mid";
		fr[2] = fr[0], fr[2].addr = 0xa000, fr[2].function = "main";
		assert_int_equal(pprof__add_sample(p, fr, 3, v, NULL, 0), 0);
	}
	assert_int_equal(pprof__nr_functions(p), 5002);
	assert_int_equal(pprof__nr_mappings(p), 1);
	assert_int_equal(pprof__nr_locations(p), 5000 + 7 + 1);
	/* i % 5000 and i % 7 repeat together every 35000: all 20000 distinct */
	assert_int_equal(pprof__nr_samples(p), 20000);
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(pprof__write_path(p, path), 0);
	pprof__delete(p);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_invariants),
		cmocka_unit_test(t_go_tool_pprof),
		cmocka_unit_test(t_errors),
		cmocka_unit_test(t_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
