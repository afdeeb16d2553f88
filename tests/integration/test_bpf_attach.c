/* Integration: BPF programs attached to perf events through psc_evsel__attach_bpf (bpf/count). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <perfscope/perfscope.h>
#include <perfscope/tp.h>

#ifdef HAVE_BPF_SKEL
#include "count.skel.h"
#endif

#define PAGES 2000

/* Skips, with the library's reason, where this process may not load BPF. */
static void need_bpf(void)
{
	char why[512];
	int err = psc_bpf__probe();

	if (err) {
		print_message("# %s\n", psc_strerror_bpf(err, "BPF probe", why, sizeof(why)));
		skip();
	}
}

/* A software event sampling each hit, on this thread, any CPU, opened disabled. */
static struct psc_evsel *open_sw(uint64_t config)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE, .config = config, .sample_period = 1, .disabled = 1
	};
	struct psc_evsel *evsel = psc_evsel__new(&a, "page-faults");
	struct psc_cpumap *cpus = psc_cpumap__new_any();
	struct psc_threadmap *threads = psc_threadmap__new_tid((pid_t)syscall(SYS_gettid));

	assert_non_null(evsel);
	assert_int_equal(psc_evsel__open(evsel, cpus, threads, NULL), 0);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return evsel;
}

/* A program of another kind (a socket filter, r0 = 0): fits no perf event. */
static int load_socket_filter(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "psc_test", "GPL", insns, 2, NULL);

	assert_true(fd >= 0);
	return fd;
}

static void test_wrong_type(void **state)
{
	struct psc_evsel *evsel;
	char why[512];
	int fd;

	need_bpf();
	evsel = open_sw(PERF_COUNT_SW_PAGE_FAULTS);
	fd = load_socket_filter();
	assert_int_equal(psc_evsel__attach_bpf(evsel, fd, NULL), -EINVAL);
	assert_int_equal(psc_evsel__nr_bpf(evsel), 0);
	psc_strerror_bpf(-EINVAL, "page-faults", why, sizeof(why));
	assert_non_null(strstr(why, "BPF_PROG_TYPE_PERF_EVENT"));
	/* an fd that is no program at all */
	assert_int_equal(psc_evsel__attach_bpf(evsel, 0, NULL), -EBADF);
	assert_int_equal(psc_evsel__attach_bpf(evsel, -1, NULL), -EBADF);
	close(fd);
	psc_evsel__close(evsel);
	/* a closed event */
	assert_int_equal(psc_evsel__attach_bpf(evsel, 0, NULL), -EBADF);
	psc_evsel__delete(evsel);
}

static void test_strerror(void **state)
{
	char buf[512];

	assert_non_null(strstr(psc_strerror_bpf(-EPERM, "ev", buf, sizeof(buf)), "CAP_BPF"));
	assert_non_null(strstr(psc_strerror_bpf(ENOSYS, "ev", buf, sizeof(buf)), "no BPF"));
	assert_non_null(strstr(psc_strerror_bpf(-EEXIST, NULL, buf, sizeof(buf)), "already"));
	assert_int_equal(psc_evsel__attach_bpf(NULL, 0, NULL), -EINVAL);
	assert_int_equal(psc_evlist__attach_bpf(NULL, 0, NULL), -EINVAL);
}

#ifdef HAVE_BPF_SKEL
/* Uninstrumented: ASan's shadow-memory checks would fault in shadow pages and skew the count. */
__attribute__((no_sanitize_address)) static void touch_pages(int n)
{
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p =
		mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	assert_true(p != MAP_FAILED);
	for (int i = 0; i < n; i++)
		p[i * page] = 1;
	munmap((void *)p, n * page);
}

/* syscalls:sys_enter_getppid on every online CPU, any task; NULL (skipped) when absent. */
static struct psc_evsel *open_getppid(void)
{
	struct psc_tp_format *fmt = psc_tp_format__load("syscalls", "sys_enter_getppid");
	struct perf_event_attr a = { .type = PERF_TYPE_TRACEPOINT,
				     .sample_period = 1,
				     .disabled = 1 };
	struct psc_cpumap *cpus;
	struct psc_threadmap *threads;
	struct psc_evsel *evsel;
	int err;

	if (!fmt) {
		print_message("# syscalls:sys_enter_getppid unavailable here (%s)\n",
			      strerror(errno));
		skip();
	}
	a.config = (uint64_t)psc_tp_format__id(fmt);
	psc_tp_format__delete(fmt);
	evsel = psc_evsel__new(&a, "syscalls:sys_enter_getppid");
	cpus = psc_cpumap__new_online();
	threads = psc_threadmap__new_any();
	assert_non_null(evsel);
	err = psc_evsel__open(evsel, cpus, threads, NULL);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	assert_int_equal(err, 0);
	return evsel;
}

static struct count_bpf *load_count(void)
{
	struct count_bpf *skel = count_bpf__open_and_load();

	if (!skel) {
		print_message("# cannot load bpf/count.bpf.c: %s\n", strerror(errno));
		fail();
	}
	return skel;
}

static uint64_t count_of(struct count_bpf *skel, uint32_t pid)
{
	uint64_t v = 0;

	if (bpf_map__lookup_elem(skel->maps.counts, &pid, sizeof(pid), &v, sizeof(v), 0))
		return 0;
	return v;
}

static uint64_t counter(struct psc_evsel *evsel)
{
	struct psc_counts c;

	assert_int_equal(psc_evsel__read(evsel, 0, 0, &c), 0);
	return c.val;
}

/* The program's count by pid matches the event's own count of the same page faults. */
static void test_perf_event_count(void **state)
{
	struct count_bpf *skel;
	struct psc_evsel *evsel;
	uint64_t val, got;

	need_bpf();
	skel = load_count();
	evsel = open_sw(PERF_COUNT_SW_PAGE_FAULTS);
	PSC_OPTS(psc_bpf_attach_opts, o, .cookie = 0x5ca1ab1e);
	assert_int_equal(
		psc_evsel__attach_bpf(evsel, bpf_program__fd(skel->progs.count_perf_event), &o), 0);
	assert_int_equal(psc_evsel__nr_bpf(evsel), 1);
	assert_true(psc_evsel__bpf_link(evsel, 0, 0) >= 0);
	assert_int_equal(psc_evsel__enable(evsel), 0);
	touch_pages(PAGES);
	assert_int_equal(psc_evsel__disable(evsel), 0);
	val = counter(evsel);
	got = count_of(skel, (uint32_t)getpid());
	print_message("# page-faults counted %llu, by the BPF program %llu\n",
		      (unsigned long long)val, (unsigned long long)got);
	assert_true(val >= PAGES);
	/* each fault is a sample (period 1) and runs the program, unless the kernel throttled */
	assert_true(got <= val);
	assert_true(got >= val - val / 10);
	assert_int_equal(skel->bss->dropped, 0);
	assert_int_equal(skel->bss->last_cookie, 0x5ca1ab1e);

	/* one program per event */
	assert_int_equal(
		psc_evsel__attach_bpf(evsel, bpf_program__fd(skel->progs.count_perf_event), NULL),
		-EEXIST);
	psc_evsel__delete(evsel);
	count_bpf__destroy(skel);
}

/* A tracepoint program runs once per hit, however many CPUs the event was opened on. */
static void test_tracepoint_once(void **state)
{
	struct count_bpf *skel;
	struct psc_evsel *evsel;
	char why[512];
	uint64_t got;
	int err;

	need_bpf();
	evsel = open_getppid();
	skel = load_count();
	/* the perf_event program does not fit a tracepoint */
	err = psc_evsel__attach_bpf(evsel, bpf_program__fd(skel->progs.count_perf_event), NULL);
	assert_int_equal(err, -EINVAL);
	assert_non_null(
		strstr(psc_strerror_bpf(err, NULL, why, sizeof(why)), "BPF_PROG_TYPE_TRACEPOINT"));
	assert_int_equal(
		psc_evsel__attach_bpf(evsel, bpf_program__fd(skel->progs.count_tracepoint), NULL),
		0);
	assert_int_equal(psc_evsel__nr_bpf(evsel), 1);
	for (int i = 0; i < 1000; i++)
		syscall(SYS_getppid);
	got = count_of(skel, (uint32_t)getpid());
	print_message("# 1000 getppid() on %d CPUs: the program ran %llu times\n",
		      psc_cpumap__nr(psc_evsel__cpus(evsel)), (unsigned long long)got);
	assert_int_equal(got, 1000);
	/* and the tracepoint program does not fit a software event */
	psc_evsel__delete(evsel);
	evsel = open_sw(PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(
		psc_evsel__attach_bpf(evsel, bpf_program__fd(skel->progs.count_tracepoint), NULL),
		-EINVAL);
	psc_evsel__delete(evsel);
	count_bpf__destroy(skel);
}

/* The link id of a link fd, to ask the kernel later whether the link still exists. */
static uint32_t link_id(int link_fd)
{
	struct bpf_link_info info;
	uint32_t len = sizeof(info);

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(link_fd, &info, &len), 0);
	return info.id;
}

static bool link_exists(uint32_t id)
{
	int fd = bpf_link_get_fd_by_id(id);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Detach stops the program while the event keeps counting; close detaches too. */
static void test_detach(void **state)
{
	struct count_bpf *skel;
	struct psc_evsel *evsel;
	uint64_t before, val0, val1;
	uint32_t id;
	int prog;

	need_bpf();
	skel = load_count();
	prog = bpf_program__fd(skel->progs.count_perf_event);
	evsel = open_sw(PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(psc_evsel__attach_bpf(evsel, prog, NULL), 0);
	id = link_id(psc_evsel__bpf_link(evsel, 0, 0));
	assert_true(link_exists(id));
	assert_int_equal(psc_evsel__enable(evsel), 0);
	touch_pages(PAGES / 4);
	assert_int_equal(psc_evsel__detach_bpf(evsel), 0);
	assert_int_equal(psc_evsel__nr_bpf(evsel), 0);
	assert_false(link_exists(id));
	before = count_of(skel, (uint32_t)getpid());
	val0 = counter(evsel);
	touch_pages(PAGES / 4);
	val1 = counter(evsel);
	assert_true(before > 0);
	assert_true(val1 >= val0 + PAGES / 4); /* the event counts on */
	assert_int_equal(count_of(skel, (uint32_t)getpid()), before); /* the program does not */

	/* attached again, then the event closed: the link goes with it */
	assert_int_equal(psc_evsel__attach_bpf(evsel, prog, NULL), 0);
	id = link_id(psc_evsel__bpf_link(evsel, 0, 0));
	psc_evsel__close(evsel);
	assert_false(link_exists(id));
	assert_int_equal(psc_evsel__nr_bpf(evsel), 0);

	/* by ioctl: stays until close (-EBUSY), then goes with the event */
	psc_evsel__delete(evsel);
	evsel = open_sw(PERF_COUNT_SW_PAGE_FAULTS);
	PSC_OPTS(psc_bpf_attach_opts, o, .no_link = true);
	assert_int_equal(psc_evsel__attach_bpf(evsel, prog, &o), 0);
	assert_int_equal(psc_evsel__bpf_link(evsel, 0, 0), -1);
	assert_int_equal(psc_evsel__nr_bpf(evsel), 1);
	assert_int_equal(psc_evsel__detach_bpf(evsel), -EBUSY);
	psc_evsel__delete(evsel);
	/* a cookie needs a link */
	evsel = open_sw(PERF_COUNT_SW_PAGE_FAULTS);
	PSC_OPTS(psc_bpf_attach_opts, oc, .no_link = true, .cookie = 1);
	assert_int_equal(psc_evsel__attach_bpf(evsel, prog, &oc), -EINVAL);
	psc_evsel__delete(evsel);
	count_bpf__destroy(skel);
}

/* The evlist form attaches to every open evsel; failing on one, it detaches the others. */
static void test_evlist(void **state)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .sample_period = 1,
				     .disabled = 1 };
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = psc_cpumap__new_any();
	struct psc_threadmap *threads = psc_threadmap__new_tid((pid_t)syscall(SYS_gettid));
	struct count_bpf *skel;
	uint64_t got;

	need_bpf();
	skel = load_count();
	a.config = PERF_COUNT_SW_PAGE_FAULTS;
	assert_int_equal(psc_evlist__add(evlist, psc_evsel__new(&a, "page-faults")), 0);
	a.config = PERF_COUNT_SW_PAGE_FAULTS_MIN;
	assert_int_equal(psc_evlist__add(evlist, psc_evsel__new(&a, "minor-faults")), 0);
	assert_int_equal(psc_evlist__set_maps(evlist, cpus, threads), 0);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	assert_int_equal(psc_evlist__open(evlist, NULL), 0);
	/* the second already has one: the first is detached again */
	assert_int_equal(psc_evsel__attach_bpf(psc_evlist__at(evlist, 1),
					       bpf_program__fd(skel->progs.count_perf_event), NULL),
			 0);
	assert_int_equal(
		psc_evlist__attach_bpf(evlist, bpf_program__fd(skel->progs.count_perf_event), NULL),
		-EEXIST);
	assert_int_equal(psc_evsel__nr_bpf(psc_evlist__at(evlist, 0)), 0);
	assert_int_equal(psc_evlist__detach_bpf(evlist), 0);
	assert_int_equal(
		psc_evlist__attach_bpf(evlist, bpf_program__fd(skel->progs.count_perf_event), NULL),
		0);
	assert_int_equal(psc_evlist__enable(evlist), 0);
	touch_pages(PAGES);
	assert_int_equal(psc_evlist__disable(evlist), 0);
	got = count_of(skel, (uint32_t)getpid());
	print_message("# %d pages under page-faults and minor-faults: the program ran %llu times\n",
		      PAGES, (unsigned long long)got);
	assert_true(got >= 2 * PAGES - PAGES / 5);
	psc_evlist__delete(evlist);
	count_bpf__destroy(skel);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strerror),	 cmocka_unit_test(test_wrong_type),
#ifdef HAVE_BPF_SKEL
		cmocka_unit_test(test_perf_event_count), cmocka_unit_test(test_tracepoint_once),
		cmocka_unit_test(test_detach),		 cmocka_unit_test(test_evlist),
#endif
	};

#ifndef HAVE_BPF_SKEL
	print_message("# built with -Dbpf=disabled: the attach tests with bpf/count.bpf.c are not "
		      "built\n");
#endif
	return cmocka_run_group_tests(tests, NULL, NULL);
}
