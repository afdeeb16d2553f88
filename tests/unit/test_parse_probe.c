/* Unit tests of uprobe:/kprobe: events: parsing and resolution against this test's own binary
 * and libc, errors, and the commands psc_probes__create/remove/remove_stale write to a fake
 * tracefs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfscope/parse.h>
#include <perfscope/probe.h>

static char root[PATH_MAX], pmu_none[PATH_MAX + 16], pmu_kprobe[PATH_MAX + 16],
	tracefs[PATH_MAX + 16], exe[PATH_MAX];

/* The function the tests probe: its bytes in the file at the resolved offset are its code. */
__attribute__((noinline, used)) int psc_test_target_fn(int a, int b);
__attribute__((noinline, used)) int psc_test_target_fn(int a, int b)
{
	return a * 31 + b;
}

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = path + strlen(root) + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *rel)
{
	static char buf[8192];
	char path[PATH_MAX * 2];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	return buf;
}

static int setup(void **state)
{
	ssize_t n;

	snprintf(root, sizeof(root), "/tmp/psc_probe_XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(pmu_none, sizeof(pmu_none), "%s/pmu", root);
	snprintf(pmu_kprobe, sizeof(pmu_kprobe), "%s/pmuk", root);
	snprintf(tracefs, sizeof(tracefs), "%s/tracing", root);
	put("pmu/uprobe/type", "8\n");
	put("pmuk/kprobe/type", "7\n");
	put("tracing/uprobe_events", "");
	put("tracing/kprobe_events", "");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int teardown(void **state)
{
	return nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static struct psc_event_list *parse_with(const char *str, const char *pmu, int want,
					 struct psc_parse_error *err)
{
	PSC_OPTS(psc_parse_opts, opts, .pmu_dir = pmu, .tracefs_dir = tracefs);
	struct psc_event_list *list = NULL;
	int ret = psc_parse_events(str, &opts, &list, err);

	if (ret != want)
		print_message("# '%s': %d at %d: %s\n", str, ret, err->pos, err->msg);
	assert_int_equal(ret, want);
	return list;
}

static struct psc_event_list *ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static struct psc_event_list *ok(const char *fmt, ...)
{
	struct psc_parse_error err = { 0 };
	char str[PATH_MAX * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(str, sizeof(str), fmt, ap);
	va_end(ap);
	return parse_with(str, pmu_none, 0, &err);
}

static void fails(int want, const char *needle, int pos, const char *pmu, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void fails(int want, const char *needle, int pos, const char *pmu, const char *fmt, ...)
{
	struct psc_parse_error err = { 0 };
	char str[PATH_MAX * 2];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(str, sizeof(str), fmt, ap);
	va_end(ap);
	assert_null(parse_with(str, pmu, want, &err));
	if (!strstr(err.msg, needle) || (pos >= 0 && err.pos != pos))
		print_message("# '%s': at %d: %s\n", str, err.pos, err.msg);
	assert_non_null(strstr(err.msg, needle));
	if (pos >= 0)
		assert_int_equal(err.pos, pos);
	assert_true(err.pos >= 0 && err.pos <= (int)strlen(str));
	/* the library's messages name no command: the CLI adds its own hints */
	assert_null(strstr(err.msg, "perfscope"));
}

/* The resolved file offset holds the function's code as it runs here. */
static void test_uprobe_resolves(void **state)
{
	struct psc_event_list *l = ok("uprobe:psc_test_target_fn@%s", exe);
	const struct psc_event_spec *s = &l->specs[0];
	unsigned char code[16];
	int fd;

	assert_int_equal(l->nr, 1);
	assert_int_equal(s->kind, PSC_EVENT_UPROBE);
	assert_non_null(s->probe);
	assert_false(s->probe->retprobe);
	assert_string_equal(s->probe->func, "psc_test_target_fn");
	assert_string_equal(s->probe->binary, exe);
	assert_int_equal(s->probe->offset, 0);
	fd = open(exe, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, code, sizeof(code), (off_t)s->probe->file_offset),
			 (ssize_t)sizeof(code));
	close(fd);
	assert_memory_equal(code, (const void *)psc_test_target_fn, sizeof(code));
	psc_event_list__delete(l);
	psc_test_target_fn(1, 2);
}

static void test_uprobe_forms(void **state)
{
	struct psc_event_list *l;
	uint64_t base;

	l = ok("uprobe:psc_test_target_fn@%s", exe);
	base = l->specs[0].probe->file_offset;
	psc_event_list__delete(l);

	/* +OFFSET after the function or after the binary */
	l = ok("uprobe:psc_test_target_fn+4@%s", exe);
	assert_int_equal(l->specs[0].probe->offset, 4);
	assert_int_equal(l->specs[0].probe->file_offset, base + 4);
	psc_event_list__delete(l);
	l = ok("uprobe:psc_test_target_fn@%s+0x4", exe);
	assert_int_equal(l->specs[0].probe->file_offset, base + 4);
	assert_non_null(strstr(l->specs[0].name, "+0x4@"));
	psc_event_list__delete(l);

	/* quoted, with a filter and ATTRs after; unquoted path with "//" then ATTRs */
	l = ok("uretprobe:psc_test_target_fn@\"%s\"/ret>0/stack/key=ret/", exe);
	assert_true(l->specs[0].probe->retprobe);
	assert_string_equal(l->specs[0].filter, "ret>0");
	assert_true(l->specs[0].stack);
	assert_int_equal(l->specs[0].nr_attrs, 1);
	assert_string_equal(l->specs[0].attrs[0].name, "key");
	psc_event_list__delete(l);
	l = ok("uprobe:psc_test_target_fn@%s//stack/,uretprobe:\"psc_test_target_fn\"@%s", exe,
	       exe);
	assert_int_equal(l->nr, 2);
	assert_true(l->specs[0].stack);
	assert_true(l->specs[1].probe->retprobe);
	assert_int_equal(l->specs[1].kind, PSC_EVENT_UPROBE);
	psc_event_list__delete(l);

	/* a library by name, as ld.so finds it; then a filter after the name */
	l = ok("uprobe:malloc@libc.so.6/arg1>100/,uretprobe:free@libc.so.6");
	assert_int_equal(l->nr, 2);
	assert_non_null(strstr(l->specs[0].probe->binary, "/libc.so.6"));
	assert_true(l->specs[0].probe->binary[0] == '/');
	assert_string_equal(l->specs[0].filter, "arg1>100");
	assert_string_equal(l->specs[0].name, "uprobe:malloc@libc.so.6");
	psc_event_list__delete(l);

	/* in a group, beside other events */
	l = ok("{uprobe:psc_test_target_fn@%s,uretprobe:psc_test_target_fn@%s}", exe, exe);
	assert_int_equal(l->specs[0].nr_members, 2);
	psc_event_list__delete(l);
}

static void test_uprobe_errors(void **state)
{
	fails(-EINVAL, "expected '@BINARY'", 25, pmu_none, "uprobe:psc_test_target_fn");
	fails(-EINVAL, "expected a function", 7, pmu_none, "uprobe:@libc.so.6");
	fails(-EINVAL, "expected a binary", 14, pmu_none, "uprobe:malloc@");
	fails(-EINVAL, "expected an offset", 14, pmu_none, "uprobe:malloc+zz@libc.so.6");
	fails(-ENOENT, "did you mean 'malloc'", 7, pmu_none, "uprobe:mallok@libc.so.6");
	fails(-ENOENT, "no binary 'no-such-lib.so.9'", 14, pmu_none,
	      "uprobe:malloc@no-such-lib.so.9");
	fails(-ENOENT, "quote a path", 14, pmu_none, "uprobe:malloc@/no/such/file/x>1/");
	fails(-EINVAL, "no ELF64 file", 14, pmu_none, "uprobe:malloc@/etc/hostname");
	/* devices are never opened: a watchdog would start */
	fails(-EINVAL, "no ELF64 file", 14, pmu_none, "uprobe:malloc@/dev/null");
	fails(-EINVAL, "uretprobe goes on a function's return", 17, pmu_none,
	      "uretprobe:malloc+4@libc.so.6");
	fails(-EINVAL, "two offsets", -1, pmu_none, "uprobe:malloc+4@libc.so.6+8");
	fails(-EINVAL, "past the end", -1, pmu_none, "uprobe:malloc+0x100000@libc.so.6");
	fails(-EINVAL, "modifiers do not apply to probes", 23, pmu_none,
	      "uprobe:malloc@libc.so.6:u");
	fails(-EINVAL, "unterminated", 14, pmu_none, "uprobe:malloc@\"libc.so.6");
	fails(-EINVAL, "modifiers do not apply", -1, pmu_none,
	      "{uprobe:malloc@libc.so.6,page-faults}:u");
}

static void test_kprobe(void **state)
{
	struct psc_parse_error err = { 0 };
	struct psc_event_list *l;

	/* this machine's case: no kprobe PMU, no kprobes */
	fails(-EOPNOTSUPP, "this kernel has no kprobes", 0, pmu_none, "kprobe:do_sys_openat2");
	fails(-EOPNOTSUPP, "CONFIG_KPROBE_EVENTS", 3, pmu_none, "cs,kretprobe:do_sys_openat2");
	/* where the kernel has them */
	l = parse_with("kprobe:do_sys_openat2+8/dfd==3/,kretprobe:do_sys_openat2", pmu_kprobe, 0,
		       &err);
	assert_int_equal(l->nr, 2);
	assert_int_equal(l->specs[0].kind, PSC_EVENT_KPROBE);
	assert_int_equal(l->specs[0].probe->offset, 8);
	assert_null(l->specs[0].probe->binary);
	assert_string_equal(l->specs[0].filter, "dfd==3");
	assert_true(l->specs[1].probe->retprobe);
	assert_string_equal(l->specs[0].name, "kprobe:do_sys_openat2+0x8");
	psc_event_list__delete(l);
	fails(-EINVAL, "no '@BINARY'", 13, pmu_kprobe, "kprobe:vfs_rw@x");
	fails(-EINVAL, "kretprobe goes on a function's return", 19, pmu_kprobe,
	      "kretprobe:vfs_read+4");
}

static void test_find_binary(void **state)
{
	char buf[PATH_MAX];

	assert_int_equal(psc_probe__find_binary("libc.so.6", buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "libc.so.6"));
	/* a program in $PATH */
	assert_int_equal(psc_probe__find_binary("sh", buf, sizeof(buf)), 0);
	assert_true(buf[0] == '/');
	assert_int_equal(psc_probe__find_binary("no-such-thing.so", buf, sizeof(buf)), -ENOENT);
	assert_int_equal(psc_probe__find_binary("libc.so.6", buf, 4), -ENAMETOOLONG);
	assert_int_equal(psc_probe__find_binary("", buf, sizeof(buf)), -EINVAL);
}

static int count_fn(const char *name, uint64_t addr, uint64_t size, void *ctx)
{
	if (!strcmp(name, "psc_test_target_fn"))
		(*(int *)ctx)++;
	return 0;
}

static int stop_fn(const char *name, uint64_t addr, uint64_t size, void *ctx)
{
	return 7;
}

static void test_for_each_func(void **state)
{
	int n = 0;

	assert_int_equal(psc_probe__for_each_func(exe, count_fn, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(psc_probe__for_each_func(exe, stop_fn, NULL), 7);
	assert_int_equal(psc_probe__for_each_func("/etc/hostname", count_fn, &n), -EINVAL);
	assert_int_equal(psc_probe__for_each_func("/no/such", count_fn, &n), -ENOENT);
}

/* The commands written to a fake tracefs, the specs turned into its tracepoints, removal. */
static void test_create_remove(void **state)
{
	PSC_OPTS(psc_probes_opts, po, .tracefs_dir = tracefs, .group = "perfscope_test");
	struct psc_parse_error err = { 0 };
	struct psc_probes *pr = NULL;
	struct psc_event_list *l;
	char *text;

	put("tracing/uprobe_events", "");
	put("tracing/events/perfscope_test/psc_test_target_fn/id", "1234\n");
	put("tracing/events/perfscope_test/psc_test_target_fn_ret/id", "1235\n");
	put("tracing/events/perfscope_test/psc_test_target_fn_2/id", "1236\n");
	l = ok("uprobe:psc_test_target_fn@%s,uretprobe:psc_test_target_fn@%s,"
	       "uprobe:psc_test_target_fn+1@%s,cs",
	       exe, exe, exe);
	assert_int_equal(psc_probes__create(l, &po, &pr, &err), 0);
	assert_non_null(pr);
	assert_int_equal(psc_probes__nr(pr), 3);
	assert_string_equal(psc_probes__group(pr), "perfscope_test");
	assert_int_equal(l->specs[0].kind, PSC_EVENT_TRACEPOINT);
	assert_int_equal(l->specs[0].attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(l->specs[0].attr.config, 1234);
	assert_string_equal(l->specs[0].sys, "perfscope_test");
	assert_string_equal(l->specs[1].event, "psc_test_target_fn_ret");
	assert_int_equal(l->specs[2].attr.config, 1236);
	assert_non_null(l->specs[0].probe); /* still says what it is */
	text = slurp("tracing/uprobe_events");
	assert_non_null(strstr(text, "p:perfscope_test/psc_test_target_fn "));
	assert_non_null(strstr(text, " arg1=%di:x64 arg2=%si:x64"));
	assert_non_null(strstr(text, "r:perfscope_test/psc_test_target_fn_ret "));
	assert_non_null(strstr(text, " ret=$retval:x64\n"));
	assert_non_null(strstr(text, "p:perfscope_test/psc_test_target_fn_2 "));
	assert_int_equal(psc_probes__remove(pr), 0);
	text = slurp("tracing/uprobe_events");
	assert_non_null(strstr(text, "-:perfscope_test/psc_test_target_fn\n"));
	assert_non_null(strstr(text, "-:perfscope_test/psc_test_target_fn_ret\n"));
	assert_non_null(strstr(text, "-:perfscope_test/psc_test_target_fn_2\n"));
	/* removed once: delete writes nothing more */
	put("tracing/uprobe_events", "");
	psc_probes__delete(pr);
	assert_string_equal(slurp("tracing/uprobe_events"), "");
	/* created specs are not created again */
	pr = (void *)1;
	assert_int_equal(psc_probes__create(l, &po, &pr, &err), 0);
	assert_null(pr);
	psc_event_list__delete(l);
}

/* usdt_find as common/ gives it: here a fixed probe, or none */
static int fake_usdt_find(const char *path, const char *provider, const char *name,
			  struct psc_probe_spec *probe, char *msg, size_t msg_len, void *ctx)
{
	if (strcmp(name, "gc__start")) {
		snprintf(msg, msg_len, "no USDT probe %s:%s", provider, name);
		return -ENOENT;
	}
	probe->file_offset = 0x287f3;
	probe->ref_ctr_offset = 0x68326e;
	probe->fetch_args = strdup("arg1=+112(%sp):s32");
	return probe->fetch_args ? 0 : -ENOMEM;
}

/* usdt:PROVIDER:NAME@BINARY: parsed, found by the caller, made with semaphore and arguments */
static void test_usdt(void **state)
{
	PSC_OPTS(psc_parse_opts, opts, .pmu_dir = pmu_none, .tracefs_dir = tracefs,
		 .usdt_find = fake_usdt_find);
	PSC_OPTS(psc_probes_opts, po, .tracefs_dir = tracefs, .group = "perfscope_test");
	struct psc_parse_error err = { 0 };
	struct psc_event_list *l = NULL;
	struct psc_probes *pr = NULL;
	char str[PATH_MAX * 2], want[PATH_MAX * 2];

	/* without a reader of SDT notes the library refuses them */
	fails(-EOPNOTSUPP, "usdt_find", 0, pmu_none, "usdt:python:gc__start@%s", exe);
	fails(-EINVAL, "expected ':NAME'", 11, pmu_none, "usdt:python@%s", exe);
	snprintf(str, sizeof(str), "usdt:python:gc__nope@%s", exe);
	assert_int_equal(psc_parse_events(str, &opts, &l, &err), -ENOENT);
	assert_non_null(strstr(err.msg, "no USDT probe python:gc__nope"));
	assert_int_equal(err.pos, 12);
	snprintf(str, sizeof(str), "usdt:python:gc__start@\"%s\"/arg1==1/", exe);
	assert_int_equal(psc_parse_events(str, &opts, &l, &err), 0);
	assert_int_equal(l->nr, 1);
	assert_int_equal(l->specs[0].kind, PSC_EVENT_UPROBE);
	assert_string_equal(l->specs[0].filter, "arg1==1");
	snprintf(want, sizeof(want), "usdt:python:gc__start@%s", exe);
	assert_string_equal(l->specs[0].name, want);
	put("tracing/uprobe_events", "");
	put("tracing/events/perfscope_test/python_gc__start/id", "1240\n");
	assert_int_equal(psc_probes__create(l, &po, &pr, &err), 0);
	assert_int_equal(l->specs[0].attr.config, 1240);
	snprintf(want, sizeof(want),
		 "p:perfscope_test/python_gc__start %s:0x287f3(0x68326e) arg1=+112(%%sp):s32\n",
		 exe);
	assert_string_equal(slurp("tracing/uprobe_events"), want);
	psc_probes__delete(pr);
	psc_event_list__delete(l);
}

static void test_create_fails(void **state)
{
	PSC_OPTS(psc_probes_opts, po, .tracefs_dir = tracefs, .group = "perfscope_nofmt");
	struct psc_parse_error err = { 0 };
	struct psc_probes *pr = (void *)1;
	struct psc_event_list *l;

	/* the kernel made it but shows no id: it is removed again, the error says which */
	put("tracing/uprobe_events", "");
	l = ok("uprobe:psc_test_target_fn@%s", exe);
	assert_int_equal(psc_probes__create(l, &po, &pr, &err), -ENOENT);
	assert_null(pr);
	assert_non_null(strstr(err.msg, "cannot read its id"));
	assert_int_equal(err.pos, 0);
	assert_non_null(
		strstr(slurp("tracing/uprobe_events"), "-:perfscope_nofmt/psc_test_target_fn\n"));
	assert_int_equal(l->specs[0].kind, PSC_EVENT_UPROBE);
	psc_event_list__delete(l);
}

/* Groups of processes that are gone are removed; a live process's and others' are kept. */
static void test_remove_stale(void **state)
{
	char text[1024];
	pid_t dead = fork();
	char *after;

	assert_true(dead >= 0);
	if (!dead)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	snprintf(text, sizeof(text),
		 "p:perfscope_%d/malloc /lib/libc.so.6:0x0000000000098930 arg1=%%di:x64\n"
		 "r:perfscope_%d/malloc_ret /lib/libc.so.6:0x0000000000098930 ret=$retval:x64\n"
		 "p:perfscope_%d/mine /bin/x:0x10\n"
		 "p:uprobes/other /bin/x:0x10\n"
		 "p:perfscope_x12/odd /bin/x:0x10\n",
		 (int)dead, (int)dead, (int)getpid());
	put("tracing/uprobe_events", text);
	put("tracing/kprobe_events", "");
	assert_int_equal(psc_probes__remove_stale(tracefs), 2);
	after = slurp("tracing/uprobe_events");
	snprintf(text, sizeof(text), "-:perfscope_%d/malloc\n-:perfscope_%d/malloc_ret\n",
		 (int)dead, (int)dead);
	assert_non_null(strstr(after, text));
	snprintf(text, sizeof(text), "-:perfscope_%d/", (int)getpid());
	assert_null(strstr(after, text));
	assert_null(strstr(after, "-:uprobes"));
	assert_null(strstr(after, "-:perfscope_x12"));
	assert_int_equal(psc_probes__remove_stale("/nonexistent/tracefs"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_uprobe_resolves), cmocka_unit_test(test_uprobe_forms),
		cmocka_unit_test(test_uprobe_errors),	cmocka_unit_test(test_kprobe),
		cmocka_unit_test(test_find_binary),	cmocka_unit_test(test_for_each_func),
		cmocka_unit_test(test_create_remove),	cmocka_unit_test(test_create_fails),
		cmocka_unit_test(test_remove_stale),	cmocka_unit_test(test_usdt),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
