/* Unit tests of common/ustr: which fields are user strings, and reading one from a live process
 * (this one) after the fact, bounded, cut and unmapped memory included. No BPF here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "tp_formats.h"
#include "ustr.h"

static const char fmt_sys_enter_write[] =
	"name: sys_enter_write\n"
	"ID: 700\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * buf;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"fd: 0x%08lx, buf: 0x%08lx, count: 0x%08lx\", ((unsigned long)(REC->fd)), "
	"((unsigned long)(REC->buf)), ((unsigned long)(REC->count))\n";

static const char fmt_sys_enter_renameat[] =
	"name: sys_enter_renameat\n"
	"ID: 701\n" TP_FORMAT_COMMON_FIELDS
	"\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
	"\tfield:int olddfd;\toffset:16;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * oldname;\toffset:24;\tsize:8;\tsigned:0;\n"
	"\tfield:int newdfd;\toffset:32;\tsize:8;\tsigned:0;\n"
	"\tfield:const char * newname;\toffset:40;\tsize:8;\tsigned:0;\n"
	"\n"
	"print fmt: \"olddfd: 0x%08lx, oldname: 0x%08lx, newdfd: 0x%08lx, newname: 0x%08lx\", "
	"((unsigned long)(REC->olddfd)), ((unsigned long)(REC->oldname)), "
	"((unsigned long)(REC->newdfd)), ((unsigned long)(REC->newname))\n";

static void t_fields(void **state)
{
	const struct psc_tp_field *f[4];
	struct psc_tp_format *fmt;

	(void)state;
	fmt = psc_tp_format__parse(fmt_sys_enter_openat, "syscalls");
	assert_int_equal(ustr__fields(fmt, f, 4), 1);
	assert_string_equal(f[0]->name, "filename");
	psc_tp_format__delete(fmt);
	/* two of them, in record order; a max of 1 fills one and still counts both */
	fmt = psc_tp_format__parse(fmt_sys_enter_renameat, "syscalls");
	assert_int_equal(ustr__fields(fmt, f, 4), 2);
	assert_string_equal(f[0]->name, "oldname");
	assert_string_equal(f[1]->name, "newname");
	assert_int_equal(ustr__fields(fmt, f, 1), 2);
	psc_tp_format__delete(fmt);
	/* write's buf is data, not a string */
	fmt = psc_tp_format__parse(fmt_sys_enter_write, "syscalls");
	assert_int_equal(ustr__fields(fmt, f, 4), 0);
	psc_tp_format__delete(fmt);
	/* not a system call's entry */
	fmt = psc_tp_format__parse(fmt_sys_enter_openat, "other");
	assert_int_equal(ustr__fields(fmt, f, 4), 0);
	psc_tp_format__delete(fmt);
	fmt = psc_tp_format__parse(fmt_sched_wakeup, "sched");
	assert_int_equal(ustr__fields(fmt, f, 4), 0);
	psc_tp_format__delete(fmt);
}

/* Read late from a live process (this one): whole, cut at the bound, ending at a mapping's end. */
static void t_read_late(void **state)
{
	static const char path[] = "/etc/hostname";
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char buf[USTR_MAX], big[600], small[8];
	uint32_t pid = (uint32_t)getpid(), tid = (uint32_t)gettid();
	char *map;
	bool cut;

	(void)state;
	assert_int_equal(ustr__read(NULL, pid, tid, (uintptr_t)path, 0, buf, sizeof(buf), &cut),
			 13);
	assert_string_equal(buf, path);
	assert_false(cut);
	/* longer than USTR_MAX - 1: the first 255 bytes, cut */
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	assert_int_equal(ustr__read(NULL, pid, tid, (uintptr_t)big, 0, buf, sizeof(buf), &cut),
			 USTR_MAX - 1);
	assert_true(cut);
	/* longer than the caller's buffer: cut there */
	assert_int_equal(ustr__read(NULL, pid, tid, (uintptr_t)path, 0, small, sizeof(small), &cut),
			 7);
	assert_string_equal(small, "/etc/ho");
	assert_true(cut);
	/* a string that ends right at the end of a mapping, the next page unmapped */
	map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(munmap(map + page, page), 0);
	memcpy(map + page - 4, "abc", 4);
	assert_int_equal(
		ustr__read(NULL, pid, tid, (uintptr_t)(map + page - 4), 0, buf, sizeof(buf), &cut),
		3);
	assert_string_equal(buf, "abc");
	/* ... and one that the mapping's end cuts before its NUL is no string */
	memcpy(map + page - 3, "xyz", 3);
	assert_int_equal(
		ustr__read(NULL, pid, tid, (uintptr_t)(map + page - 3), 0, buf, sizeof(buf), &cut),
		-1);
	munmap(map, page);
	/* unmapped, NULL, a process that does not exist */
	assert_int_equal(
		ustr__read(NULL, pid, tid, (uintptr_t)(map + page), 0, buf, sizeof(buf), &cut), -1);
	assert_int_equal(ustr__read(NULL, pid, tid, 0, 0, buf, sizeof(buf), &cut), -1);
	assert_int_equal(
		ustr__read(NULL, 0x7fffffff, 1, (uintptr_t)path, 0, buf, sizeof(buf), &cut), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_fields),
		cmocka_unit_test(t_read_late),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
