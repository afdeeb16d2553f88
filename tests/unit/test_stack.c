/* Unit tests of common/stack, symcache, usyms and demangle: callchain markers, folding, maps,
 * own-process symbols. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "demangle.h"
#include "dso.h"
#include "stack.h"
#include "symcache.h"
#include "usyms.h"

/* A pid no process has (above the kernel's PID_MAX_LIMIT): /proc knows nothing of it. */
#define FAKE_PID 0x7ffffff0

static const char kallsyms[] = "ffffffff81000000 T entry_SYSCALL_64\n"
			       "ffffffff81000100 T do_syscall_64\n"
			       "ffffffff81000200 T x64_sys_call\n"
			       "ffffffff81000300 T __x64_sys_getppid\n"
			       "ffffffffc0200000 t ext4_file_read_iter\t[ext4]\n";

static char tmpdir[] = "/tmp/perfscope-stack-XXXXXX";
static char kallsyms_path[256];

static int setup(void **state)
{
	FILE *f;

	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(kallsyms_path, sizeof(kallsyms_path), "%s/kallsyms", tmpdir);
	f = fopen(kallsyms_path, "w");
	if (!f)
		return -1;
	fputs(kallsyms, f);
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	unlink(kallsyms_path);
	rmdir(tmpdir);
	return 0;
}

static struct symcache *new_cache(void)
{
	struct symcache_opts o = { .sz = sizeof(o) };
	struct symcache *sc;

	o.kallsyms = kallsyms_path;
	sc = symcache__new(&o);
	assert_non_null(sc);
	return sc;
}

/* Functions of this test binary, kept out of line so their addresses are theirs. */
__attribute__((noinline)) int perfscope_unit_leaf(int x);
__attribute__((noinline)) int perfscope_unit_leaf(int x)
{
	return x * 3 + 1;
}

static void test_demangle(void **state)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "_ZN3foo3barEv", "foo::bar()" },
		{ "_ZNSt6vectorIiSaIiEE9push_backERKi",
		  "std::vector<int, std::allocator<int> >::push_back(int const&)" },
		/* Rust legacy: the hash is dropped */
		{ "_ZN4core3fmt5write17h1f7a5d9e7e4b8c3aE", "core::fmt::write" },
		/* Rust v0 */
		{ "_RNvNtCs1234_7mycrate3foo3bar", "mycrate::foo::bar" },
		/* as rustc 1.95 emits them: legacy with $..$ escapes, v0 with generic arguments */
		{ "_ZN1r5inner13Poke$LT$T$GT$12poke_getppid17h708e69f67593dd49E",
		  "r::inner::Poke<T>::poke_getppid" },
		{ "_ZN4core3ptr85drop_in_place$LT$std..rt..lang_start$LT$$LP$$RP$$GT$..$u7b$$u7b$"
		  "closure$u7d$$u7d$$GT$17h0123456789abcdefE",
		  "core::ptr::drop_in_place<std::rt::lang_start<()>::{{closure}}>" },
		{ "_RNvMNtCs6GmmlP4bgsG_1r5innerINtB2_4PokemE12poke_getppidB4_",
		  "<r::inner::Poke<u32>>::poke_getppid" },
		{ "_RINvNtC3std3mem8align_ofdE", "std::mem::align_of::<f64>" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = demangle_name(cases[i].in);

		assert_non_null(d);
		assert_string_equal(d, cases[i].out);
		free(d);
	}
	assert_false(is_mangled("main"));
	assert_true(is_mangled("_ZN3foo3barEv"));
	errno = 0;
	assert_null(demangle_name("main"));
	assert_int_equal(errno, EINVAL);
	assert_null(demangle_name("_ZN9__gnu_cxx")); /* malformed */
}

static void test_kernel_chain(void **state)
{
	struct symcache *sc = new_cache();
	const uint64_t ips[] = {
		(uint64_t)PERF_CONTEXT_KERNEL,
		0xffffffff81000308, /* sample ip */
		0xffffffff81000201, /* return address right after a call at the end of ... */
		0xffffffff81000150,
		0xffffffffc0200010,
		0xffffffff70000000, /* no symbol */
	};
	struct frame fr[8];
	char line[128];
	int n = stack__resolve(sc, FAKE_PID, ips, 6, 0, fr, 8);

	assert_int_equal(n, 5);
	assert_string_equal(fr[0].sym, "__x64_sys_getppid");
	assert_int_equal(fr[0].off, 8);
	assert_true(fr[0].kernel);
	/* looked up at ip - 1: the caller is x64_sys_call, not do_syscall_64 */
	assert_string_equal(fr[1].sym, "x64_sys_call");
	assert_int_equal(fr[1].off, 1);
	assert_string_equal(fr[2].sym, "do_syscall_64");
	assert_string_equal(fr[3].dso, "ext4");
	assert_null(fr[4].sym);

	frame__snprint(&fr[0], line, sizeof(line));
	assert_string_equal(line, "__x64_sys_getppid+0x8 ([kernel.kallsyms])");
	frame__snprint(&fr[3], line, sizeof(line));
	assert_string_equal(line, "ext4_file_read_iter+0x10 (ext4)");
	frame__snprint(&fr[4], line, sizeof(line));
	assert_string_equal(line, "[unknown] ([kernel.kallsyms])");
	frame__name(&fr[4], true, line, sizeof(line));
	assert_string_equal(line, "[unknown]_[k]");
	frame__name(&fr[0], true, line, sizeof(line));
	assert_string_equal(line, "__x64_sys_getppid_[k]");
	frame__name(&fr[0], false, line, sizeof(line));
	assert_string_equal(line, "__x64_sys_getppid");

	/* max-stack and dropping kernel frames */
	assert_int_equal(stack__resolve(sc, FAKE_PID, ips, 6, 0, fr, 2), 2);
	assert_int_equal(stack__resolve(sc, FAKE_PID, ips, 6, STACK_NO_KERNEL, fr, 8), 0);
	symcache__delete(sc);
}

static void test_fold(void **state)
{
	const struct frame fr[] = {
		{ .sym = "leaf", .kernel = true },
		{ .sym = "mid;dle", .kernel = false },
		{ .sym = NULL, .dso = "libc.so.6", .mapped = true, .file_off = 0x2a1f0 },
		{ .sym = "std::vector<int>::push_back(int const&)" },
		{ .sym = "main" },
	};
	char buf[256], small[8];
	int n;

	n = stack__fold(fr, 5, NULL, 0, buf, sizeof(buf));
	assert_string_equal(
		buf,
		"main;std::vector<int>::push_back(int const&);[libc.so.6+0x2a1f0];mid_dle;leaf");
	assert_int_equal(n, (int)strlen(buf));
	stack__fold(fr, 5, "bash", FOLD_KERNEL_SUFFIX, buf, sizeof(buf));
	assert_string_equal(
		buf,
		"bash;main;std::vector<int>::push_back(int const&);[libc.so.6+0x2a1f0];mid_dle;"
		"leaf_[k]");
	/* a thread gone before it was named is no root of its own */
	stack__fold(fr + 4, 1, "<...>", 0, buf, sizeof(buf));
	assert_string_equal(buf, "[unknown];main");
	/* truncation: snprintf-style length, always terminated */
	n = stack__fold(fr, 5, NULL, 0, small, sizeof(small));
	assert_int_equal(n, (int)strlen("main;std::vector<int>::push_back(int const&);"
					"[libc.so.6+0x2a1f0];mid_dle;leaf"));
	assert_string_equal(small, "main;st");
	stack__fold(fr, 0, NULL, 0, buf, sizeof(buf));
	assert_string_equal(buf, "");
}

/* A name longer than FRAME_NAME_MAX (a C++ template) is cut at the same length by every writer. */
static void test_long_name_cut(void **state)
{
	static char sym[3000], big[8192];
	struct frame fr = { .sym = sym, .dso = "prog" };
	int n;

	memset(sym, 'x', sizeof(sym) - 1);
	n = frame__name(&fr, false, big, sizeof(big));
	assert_true(n >= FRAME_NAME_MAX - 1);
	assert_int_equal(strlen(big), FRAME_NAME_MAX - 1);
	fr.kernel = true;
	frame__name(&fr, true, big, sizeof(big));
	assert_int_equal(strlen(big), FRAME_NAME_MAX - 1);
	fr.kernel = false;
	/* folded: the root, ';', then the name cut there */
	stack__fold(&fr, 1, "p", 0, big, sizeof(big));
	assert_int_equal(strlen(big), 2 + FRAME_NAME_MAX - 1);
	/* text: the cut name, then "+0x0 (prog)" */
	frame__snprint(&fr, big, sizeof(big));
	assert_int_equal(strlen(big), FRAME_NAME_MAX - 1 + strlen("+0x0 (prog)"));
}

static void test_maps_overlap(void **state)
{
	struct symcache *sc = new_cache();
	struct usyms *u = symcache__usyms(sc);
	struct umap_file a = { .path = "/nonexistent/liba.so", .prot = PROT_EXEC | PROT_READ };
	struct umap_file b = { .path = "/nonexistent/libb.so", .prot = PROT_EXEC };
	struct umap_file data = { .path = "/nonexistent/data", .prot = PROT_READ };
	struct uaddr hit;
	uint64_t gen1, gen2;

	assert_int_equal(usyms__mmap(u, FAKE_PID, 0x10000, 0x40000, 0, &a), 0);
	assert_int_equal(usyms__find(u, FAKE_PID, 0x10800, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/liba.so");
	/* the file cannot be read: a binary without symbols, and why */
	assert_non_null(hit.dso);
	assert_int_equal(hit.dso->nr_syms, 0);
	assert_int_equal(hit.dso->load_err, ENOENT);
	assert_int_equal(hit.vaddr, 0x800);
	gen1 = hit.gen;

	/* b lands in the middle of a: a is split around it */
	assert_int_equal(usyms__mmap(u, FAKE_PID, 0x20000, 0x10000, 0x5000, &b), 0);
	assert_int_equal(usyms__find(u, FAKE_PID, 0x20010, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/libb.so");
	assert_int_equal(hit.vaddr, 0x5010);
	gen2 = hit.gen;
	assert_true(gen2 != gen1);
	assert_int_equal(usyms__find(u, FAKE_PID, 0x30010, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/liba.so");
	assert_int_equal(hit.vaddr, 0x20010); /* the right part keeps its file offset */
	assert_int_equal(usyms__find(u, FAKE_PID, 0x1ffff, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/liba.so");

	/* a data mapping over the end of a removes that code */
	assert_int_equal(usyms__mmap(u, FAKE_PID, 0x48000, 0x10000, 0, &data), 0);
	assert_int_equal(usyms__find(u, FAKE_PID, 0x48010, &hit), -ENOENT);
	assert_int_equal(usyms__find(u, FAKE_PID, 0x47ff0, &hit), 0);
	assert_int_equal(usyms__find(u, FAKE_PID, 0x9000, &hit), -ENOENT);

	/* fork copies, exec forgets, exit removes */
	assert_int_equal(usyms__fork(u, FAKE_PID, FAKE_PID + 1, 0), 0);
	assert_int_equal(usyms__find(u, FAKE_PID + 1, 0x20010, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/libb.so");
	usyms__exec(u, FAKE_PID + 1, 0);
	assert_int_equal(usyms__find(u, FAKE_PID + 1, 0x20010, &hit), -ENOENT);
	assert_int_equal(usyms__find(u, FAKE_PID, 0x20010, &hit), 0);
	usyms__exit(u, FAKE_PID);
	usyms__exit(u, FAKE_PID + 1);
	/* unknown now, and /proc has nothing of it */
	assert_int_equal(usyms__find(u, FAKE_PID, 0x20010, &hit), -ESRCH);
	symcache__delete(sc);
}

/*
 * An unsymbolized user frame is named by its module and file offset, the same in two processes
 * that map the binary at different addresses; an unmapped one is "[unknown]", never its
 * address; a 0 ends the user part (the frame-pointer walk's terminator).
 */
static void test_frame_names(void **state)
{
	struct symcache *sc = new_cache();
	struct usyms *u = symcache__usyms(sc);
	struct umap_file a = { .path = "/nonexistent/liba.so", .prot = PROT_EXEC | PROT_READ };
	const uint64_t c1[] = {
		(uint64_t)PERF_CONTEXT_USER, 0x11234, 0x12001, 0x999000, 0, 0x11111
	};
	const uint64_t c2[] = {
		(uint64_t)PERF_CONTEXT_USER, 0x7f0000001234, 0x7f0000002001, 0x999000, 0, 0x22222
	};
	struct frame f1[8], f2[8];
	char b1[256], b2[256];

	assert_int_equal(usyms__mmap(u, FAKE_PID, 0x10000, 0x10000, 0x1000, &a), 0);
	assert_int_equal(usyms__mmap(u, FAKE_PID + 1, 0x7f0000000000, 0x10000, 0x1000, &a), 0);
	assert_int_equal(stack__resolve(sc, FAKE_PID, c1, 6, 0, f1, 8), 3);
	assert_int_equal(stack__resolve(sc, FAKE_PID + 1, c2, 6, 0, f2, 8), 3);
	frame__name(&f1[0], true, b1, sizeof(b1));
	assert_string_equal(b1, "[liba.so+0x2234]");
	stack__fold(f1, 3, "prog", FOLD_KERNEL_SUFFIX, b1, sizeof(b1));
	stack__fold(f2, 3, "prog", FOLD_KERNEL_SUFFIX, b2, sizeof(b2));
	assert_string_equal(b1, "prog;[unknown];[liba.so+0x3001];[liba.so+0x2234]");
	assert_string_equal(b1, b2);
	frame__snprint(&f1[2], b1, sizeof(b1));
	assert_string_equal(b1, "[unknown] ([unknown])");
	frame__snprint(&f1[0], b1, sizeof(b1));
	assert_string_equal(b1, "[liba.so+0x2234] (liba.so)");
	usyms__exit(u, FAKE_PID);
	usyms__exit(u, FAKE_PID + 1);
	symcache__delete(sc);
}

/*
 * Records read out of time order (each CPU's ring in turn, as profile reads them): a child's
 * exec and mmaps before its FORK, libraries ld.so maps before the exec, an old image's mmap
 * after it. The maps end as the process has them.
 */
static void test_maps_out_of_order(void **state)
{
	struct symcache *sc = new_cache();
	struct usyms *u = symcache__usyms(sc);
	struct umap_file a = { .path = "/nonexistent/parent", .prot = PROT_EXEC, .time = 100 };
	struct umap_file b = { .path = "/nonexistent/child", .prot = PROT_EXEC, .time = 310 };
	struct umap_file c = { .path = "/nonexistent/libc", .prot = PROT_EXEC, .time = 250 };
	struct umap_file l = { .path = "/nonexistent/libl", .prot = PROT_EXEC, .time = 420 };
	struct umap_file old = { .path = "/nonexistent/old", .prot = PROT_EXEC, .time = 390 };
	const pid_t parent = FAKE_PID, child = FAKE_PID + 1, kid = FAKE_PID + 2;
	struct uaddr hit;

	assert_int_equal(usyms__mmap(u, parent, 0x10000, 0x1000, 0, &a), 0);

	/* fork (200) then exec (300) and an mmap (310), the child's read first */
	usyms__exec(u, child, 300);
	assert_int_equal(usyms__mmap(u, child, 0x20000, 0x1000, 0, &b), 0);
	assert_int_equal(usyms__fork(u, parent, child, 200), 0);
	assert_int_equal(usyms__find(u, child, 0x20010, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/child");
	assert_int_equal(usyms__find(u, child, 0x10010, &hit), -ENOENT); /* exec'd away */
	assert_true(usyms__born(u, child) >= 300);

	/* a fork (200) without exec, its child's mmap (250) read first: the parent's and its own */
	assert_int_equal(usyms__mmap(u, kid, 0x30000, 0x1000, 0, &c), 0);
	assert_int_equal(usyms__fork(u, parent, kid, 200), 0);
	assert_int_equal(usyms__find(u, kid, 0x30010, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/libc");
	assert_int_equal(usyms__find(u, kid, 0x10010, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/parent");

	/* kid execs (400): ld.so's library (420) read before the exec, old image's (390) after */
	assert_int_equal(usyms__mmap(u, kid, 0x40000, 0x1000, 0, &l), 0);
	usyms__exec(u, kid, 400);
	assert_int_equal(usyms__mmap(u, kid, 0x50000, 0x1000, 0, &old), 0);
	assert_int_equal(usyms__find(u, kid, 0x40010, &hit), 0);
	assert_string_equal(hit.map_name, "/nonexistent/libl");
	assert_int_equal(usyms__find(u, kid, 0x10010, &hit), -ENOENT);
	assert_int_equal(usyms__find(u, kid, 0x30010, &hit), -ENOENT);
	assert_int_equal(usyms__find(u, kid, 0x50010, &hit), -ENOENT);

	/* a pid reused: the FORK (500) of the new process replaces the old one's maps */
	assert_int_equal(usyms__fork(u, parent, kid, 500), 0);
	assert_int_equal(usyms__find(u, kid, 0x40010, &hit), -ENOENT);
	assert_int_equal(usyms__find(u, kid, 0x10010, &hit), 0);
	assert_int_equal(usyms__born(u, kid), 500);
	symcache__delete(sc);
}

/* True when the stripped dso has a symbol of that name. */
static bool dso_has(const struct dso *dso, const char *name)
{
	for (size_t i = 0; i < dso->nr_syms; i++)
		if (!strcmp(dso->syms[i].name, name))
			return true;
	return false;
}

/*
 * A stripped copy of this test binary whose symbols live in DEBUG_DIR/.build-id/ab/cdef....debug,
 * as distributions install debug packages: found by build-id, and only by it.
 */
static void test_build_id_debug_file(void **state)
{
	char dir[] = "/tmp/perfscope-buildid-XXXXXX", cmd[2048], hex[2 * BUILD_ID_MAX + 1];
	char stripped[256], debug[512], self[512];
	struct dso_opts o = { 0 };
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	struct dso *dso;
	uint8_t id[BUILD_ID_MAX];
	int n = elf_build_id("/proc/self/exe", id, sizeof(id)), off;

	/* not /proc/self/exe in the commands below: there it would be the shell */
	assert_true(len > 0);
	self[len] = '\0';
	if (n <= 0) {
		print_message("# skip: this test binary has no build-id (linked without it)\n");
		skip();
	}
	if (system("command -v objcopy >/dev/null && command -v strip >/dev/null")) {
		print_message("# skip: needs objcopy and strip (binutils)\n");
		skip();
	}
	assert_non_null(mkdtemp(dir));
	off = snprintf(debug, sizeof(debug), "%s/.build-id/%02x", dir, id[0]);
	snprintf(cmd, sizeof(cmd), "mkdir -p %s", debug);
	assert_int_equal(system(cmd), 0);
	debug[off++] = '/';
	for (int i = 1; i < n; i++)
		off += snprintf(debug + off, sizeof(debug) - (size_t)off, "%02x", id[i]);
	snprintf(debug + off, sizeof(debug) - (size_t)off, ".debug");
	snprintf(stripped, sizeof(stripped), "%s/unit_stack.stripped", dir);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug '%s' %s && strip --strip-all -o %s '%s'", self, debug,
		 stripped, self);
	assert_int_equal(system(cmd), 0);

	o.debug_dir = dir;
	dso = dso__load(stripped, NULL, &o);
	assert_non_null(dso);
	assert_int_equal(dso->load_err, 0);
	assert_int_equal(strlen(dso__build_id_hex(dso, hex, sizeof(hex))), 2 * (size_t)n);
	assert_non_null(dso->sym_source);
	assert_non_null(strstr(dso->sym_source, "build-id"));
	assert_true(dso_has(dso, "perfscope_unit_leaf"));
	dso__delete(dso);

	/* without the debug file only .dynsym is left: the static function's name is gone */
	assert_int_equal(unlink(debug), 0);
	dso = dso__load(stripped, NULL, &o);
	assert_non_null(dso);
	assert_false(dso_has(dso, "perfscope_unit_leaf"));
	dso__delete(dso);

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_own_process_symbols(void **state)
{
	struct symcache *sc = new_cache();
	struct symcache_stats st;
	uint64_t ip = (uint64_t)(uintptr_t)&perfscope_unit_leaf + 2;
	struct sym sym;
	struct frame fr[4];
	uint64_t chain[] = { (uint64_t)PERF_CONTEXT_USER, ip, (uint64_t)(uintptr_t)&getpid + 1 };

	assert_int_equal(perfscope_unit_leaf(1), 4);
	assert_int_equal(symcache__resolve(sc, getpid(), ip, false, &sym), 0);
	assert_string_equal(sym.name, "perfscope_unit_leaf");
	assert_int_equal(ip - sym.start, 2);
	assert_string_equal(sym.dso, "unit_stack");

	/* the second lookup is a cache hit with the same answer */
	assert_int_equal(symcache__resolve(sc, getpid(), ip, false, &sym), 0);
	assert_string_equal(sym.name, "perfscope_unit_leaf");
	symcache__stats(sc, &st);
	assert_int_equal(st.lookups, 2);
	assert_int_equal(st.hits, 1);
	assert_int_equal(st.dsos, 1);

	/* libc's getpid through .dynsym (or its debug file) */
	assert_int_equal(stack__resolve(sc, getpid(), chain, 3, 0, fr, 4), 2);
	assert_string_equal(fr[0].sym, "perfscope_unit_leaf");
	assert_non_null(fr[1].sym);
	assert_non_null(strstr(fr[1].sym, "getpid"));
	assert_non_null(strstr(fr[1].dso, "libc"));
	assert_false(fr[1].kernel);
	symcache__delete(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_kernel_chain),
		cmocka_unit_test(test_fold),
		cmocka_unit_test(test_long_name_cut),
		cmocka_unit_test(test_frame_names),
		cmocka_unit_test(test_maps_out_of_order),
		cmocka_unit_test(test_maps_overlap),
		cmocka_unit_test(test_own_process_symbols),
		cmocka_unit_test(test_build_id_debug_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
