/* Unit tests of common/ksyms: a synthetic /proc/kallsyms with modules, aliases, data and hidden
 * addresses. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ksyms.h"

static const char kallsyms[] = "ffffffff81000000 T _stext\n"
			       "ffffffff81000000 t __pfx_startup_64\n"
			       "ffffffff81000000 T startup_64\n"
			       "ffffffff81000100 T do_syscall_64\n"
			       "ffffffff81000100 t _do_syscall_64_alias\n"
			       "ffffffff81000180 D some_data\n"
			       "ffffffff81000200 t local_helper\n"
			       "ffffffff81000300 W weak_fn\n"
			       "ffffffff81000400 T _etext\n"
			       "ffffffff82000000 B bss_thing\n"
			       "ffffffffc0200000 t ext4_fill_super\t[ext4]\n"
			       "ffffffffc0200100 T ext4_mount\t[ext4]\n"
			       "ffffffffc0300000 t xfs_init\t[xfs]\n"
			       "garbage line\n";

static const char hidden[] = "0000000000000000 T _stext\n"
			     "0000000000000000 T startup_64\n"
			     "0000000000000000 t ext4_mount\t[ext4]\n";

static char tmpdir[] = "/tmp/perfscope-ksyms-XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return path;
}

static int setup(void **state)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/kallsyms", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/hidden", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	return 0;
}

static void test_find(void **state)
{
	struct ksyms *ks = ksyms__load(write_file("kallsyms", kallsyms));
	const struct ksym *s;
	uint64_t off = 0;

	assert_non_null(ks);
	assert_null(ksyms__problem(ks));
	/* aliases collapse to one per address; data symbols are not text */
	assert_int_equal(ksyms__nr(ks), 8);

	s = ksyms__find(ks, 0xffffffff81000010, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "startup_64"); /* global, no leading '_' wins */
	assert_int_equal(off, 0x10);
	assert_string_equal(s->module, "[kernel.kallsyms]");

	s = ksyms__find(ks, 0xffffffff81000100, &off);
	assert_string_equal(s->name, "do_syscall_64");
	assert_int_equal(off, 0);
	/* the data symbol at 0x180 does not end do_syscall_64 */
	s = ksyms__find(ks, 0xffffffff810001f0, &off);
	assert_string_equal(s->name, "do_syscall_64");
	assert_int_equal(off, 0xf0);
	assert_string_equal(ksyms__find(ks, 0xffffffff81000250, NULL)->name, "local_helper");
	assert_string_equal(ksyms__find(ks, 0xffffffff81000300, NULL)->name, "weak_fn");

	s = ksyms__find(ks, 0xffffffffc0200104, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "ext4_mount");
	assert_string_equal(s->module, "ext4");
	assert_int_equal(off, 4);
	s = ksyms__find(ks, 0xffffffffc0300010, &off);
	assert_string_equal(s->module, "xfs");

	/* before the first symbol, and far past the last one of a module */
	assert_null(ksyms__find(ks, 0xffffffff80000000, &off));
	assert_null(ksyms__find(ks, 0xffffffffc0280000, &off));
	assert_null(ksyms__find(ks, 0xffffffffc0400000, &off));

	assert_non_null(ksyms__lookup(ks, "ext4_fill_super"));
	assert_int_equal(ksyms__lookup(ks, "do_syscall_64")->addr, 0xffffffff81000100);
	assert_null(ksyms__lookup(ks, "no_such_symbol"));
	ksyms__delete(ks);
}

/* The variables' table (a lock's name): d/D/b/B only, in the kernel half, sized to the next. */
static void test_data(void **state)
{
	struct ksyms *ks = ksyms__load_data(write_file("kallsyms", kallsyms));
	const struct ksym *s;
	uint64_t off = 0;

	assert_non_null(ks);
	assert_int_equal(ksyms__nr(ks), 2);
	s = ksyms__find(ks, 0xffffffff81000188, &off);
	assert_non_null(s);
	assert_string_equal(s->name, "some_data");
	assert_int_equal(off, 8);
	assert_string_equal(ksyms__find(ks, 0xffffffff82000000, NULL)->name, "bss_thing");
	/* text is not data, and a heap address below every variable has no name */
	assert_null(ksyms__lookup(ks, "do_syscall_64"));
	assert_null(ksyms__find(ks, 0xffff888100000000, &off));
	ksyms__delete(ks);
}

static void test_hidden_addresses(void **state)
{
	struct ksyms *ks = ksyms__load(write_file("hidden", hidden));
	const char *why;

	assert_non_null(ks);
	assert_int_equal(ksyms__nr(ks), 0);
	why = ksyms__problem(ks);
	assert_non_null(why);
	assert_non_null(strstr(why, "read as 0"));
	assert_non_null(strstr(why, "kptr_restrict"));
	assert_non_null(strstr(why, "to fix"));
	assert_null(ksyms__find(ks, 0xffffffff81000000, NULL));
	ksyms__delete(ks);
}

/* The reason given follows the kernel's rule (kallsyms_show_value) for each kptr_restrict. */
static void test_hidden_reasons(void **state)
{
	char why[512];

	ksyms_hidden_reason(why, sizeof(why), "/proc/kallsyms", 2, 2);
	assert_non_null(strstr(why, "kernel.kptr_restrict=2 hides them from every process, root"));
	assert_non_null(strstr(why, "sysctl -w kernel.kptr_restrict=1"));
	ksyms_hidden_reason(why, sizeof(why), "/proc/kallsyms", 1, -1);
	assert_non_null(strstr(why, "only to processes with CAP_SYSLOG"));
	assert_non_null(strstr(why, "run as root"));
	/* 0: what hides them is perf_event_paranoid, not kptr_restrict */
	ksyms_hidden_reason(why, sizeof(why), "/proc/kallsyms", 0, 2);
	assert_non_null(strstr(why, "kernel.perf_event_paranoid <= 1 (it is 2)"));
	assert_non_null(strstr(why, "sysctl -w kernel.perf_event_paranoid=1"));
	ksyms_hidden_reason(why, sizeof(why), "/proc/kallsyms", INT_MIN, INT_MIN);
	assert_non_null(strstr(why, "read as 0"));
	assert_non_null(strstr(why, "to fix"));
}

static void test_missing_file(void **state)
{
	errno = 0;
	assert_null(ksyms__load("/nonexistent/kallsyms"));
	assert_int_equal(errno, ENOENT);
	ksyms__delete(NULL);
}

static void test_live_kallsyms(void **state)
{
	struct ksyms *ks = ksyms__load(NULL);
	const struct ksym *s;

	if (!ks || ksyms__problem(ks)) {
		print_message("# /proc/kallsyms unusable here: %s\n",
			      ks ? ksyms__problem(ks) : strerror(errno));
		ksyms__delete(ks);
		skip();
	}
	s = ksyms__lookup(ks, "schedule");
	assert_non_null(s);
	assert_ptr_equal(ksyms__find(ks, s->addr + 1, NULL), s);
	ksyms__delete(ks);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_find),	       cmocka_unit_test(test_data),
		cmocka_unit_test(test_hidden_addresses),
		cmocka_unit_test(test_hidden_reasons), cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_live_kallsyms),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
