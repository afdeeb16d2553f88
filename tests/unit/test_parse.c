/* Unit tests of the event-list parser: uapi encodings, aliases, modifiers, PMUs and tracepoints on
 * fake trees, errors. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"
#include "parse_internal.h"

static char root[PATH_MAX];
static char pmu_dir[PATH_MAX + 8];
static char tracefs_dir[PATH_MAX + 8];

/* Writes text to root/rel, creating the directories on the way. */
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

static int setup(void **state)
{
	snprintf(root, sizeof(root), "/tmp/psc_parse_XXXXXX");
	if (!mkdtemp(root))
		return -1;
	snprintf(pmu_dir, sizeof(pmu_dir), "%s/pmu", root);
	snprintf(tracefs_dir, sizeof(tracefs_dir), "%s/tracing", root);

	put("pmu/software/type", "1\n");
	put("pmu/msr/type", "9\n");
	put("pmu/msr/format/event", "config:0-63\n");
	put("pmu/msr/events/tsc", "event=0x00\n");
	put("pmu/msr/events/aperf", "event=0x01\n");
	put("pmu/power/type", "23\n");
	put("pmu/power/format/event", "config:0-7\n");
	put("pmu/power/events/energy-pkg", "event=0x02\n");
	put("pmu/power/events/energy-pkg.scale", "2.3283064365386962890625e-10\n");
	put("pmu/power/events/energy-pkg.unit", "Joules\n");
	put("pmu/cpu/type", "4\n");
	put("pmu/cpu/format/event", "config:0-7\n");
	put("pmu/cpu/format/umask", "config:8-15\n");
	put("pmu/cpu/format/edge", "config:18\n");
	put("pmu/cpu/format/split", "config:0-3,8-11\n");
	put("pmu/cpu/format/ldlat", "config1:0-15\n");
	put("pmu/cpu/format/frontend", "config2:0-23\n");
	put("pmu/cpu/format/weird", "confx:0-3\n");
	put("pmu/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("pmu/cpu/events/bad", "event=0x3c,bogus=1\n");

	put("tracing/events/enable", "0\n");
	put("tracing/events/header_page", "x\n");
	put("tracing/events/sched/enable", "0\n");
	put("tracing/events/sched/filter", "none\n");
	put("tracing/events/sched/sched_switch/id", "316\n");
	put("tracing/events/sched/sched_wakeup/id", "318\n");
	put("tracing/events/sched/sched_wakeup_new/id", "317\n");
	put("tracing/events/sched/sched_process_exit/id", "300\n");
	put("tracing/events/syscalls/sys_enter_write/id", "602\n");
	put("tracing/events/syscalls/sys_enter_read/id", "600\n");
	put("tracing/events/syscalls/sys_exit_read/id", "601\n");
	put("tracing/events/kmem/kmalloc/id", "400\n");
	put("tracing/events/kmem/kfree/id", "401\n");
	put("tracing/events/broken/badid/id", "abc\n");
	put("tracing/events/broken/noid/format", "x\n");
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

static struct psc_event_list *parse_ok(const char *str)
{
	PSC_OPTS(psc_parse_opts, opts, .pmu_dir = pmu_dir, .tracefs_dir = tracefs_dir);
	struct psc_parse_error err = { 0 };
	struct psc_event_list *list = NULL;
	int ret = psc_parse_events(str, &opts, &list, &err);

	if (ret)
		print_message("# '%s': %d at %d: %s\n", str, ret, err.pos, err.msg);
	assert_int_equal(ret, 0);
	assert_non_null(list);
	assert_true(list->nr > 0);
	return list;
}

/* Parses one event and checks its type and config. */
static void expect_one(const char *str, uint32_t type, uint64_t config, const char *name)
{
	struct psc_event_list *list = parse_ok(str);

	assert_int_equal(list->nr, 1);
	assert_int_equal(list->specs[0].attr.type, type);
	assert_int_equal(list->specs[0].attr.config, config);
	assert_int_equal(list->specs[0].attr.size, sizeof(struct perf_event_attr));
	if (name)
		assert_string_equal(list->specs[0].name, name);
	psc_event_list__delete(list);
}

static void expect_error(const char *str, int ret, int pos, const char *needle)
{
	PSC_OPTS(psc_parse_opts, opts, .pmu_dir = pmu_dir, .tracefs_dir = tracefs_dir);
	struct psc_parse_error err = { 0 };
	struct psc_event_list *list = (void *)1;
	int got = psc_parse_events(str, &opts, &list, &err);

	if (got != ret || err.pos != pos || !strstr(err.msg, needle))
		print_message("# '%s': got %d at %d: %s\n", str, got, err.pos, err.msg);
	assert_int_equal(got, ret);
	assert_null(list);
	assert_int_equal(err.pos, pos);
	assert_non_null(strstr(err.msg, needle));
	/* the library's messages name no command: the CLI adds its own hints */
	assert_null(strstr(err.msg, "perfscope"));
}

static void test_hardware(void **state)
{
	expect_one("cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cpu-cycles");
	expect_one("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cpu-cycles");
	expect_one("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, NULL);
	expect_one("cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, NULL);
	expect_one("cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, NULL);
	expect_one("branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		   NULL);
	expect_one("branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
		   "branch-instructions");
	expect_one("branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, NULL);
	expect_one("bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, NULL);
	expect_one("stalled-cycles-frontend", PERF_TYPE_HARDWARE,
		   PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, NULL);
	expect_one("idle-cycles-frontend", PERF_TYPE_HARDWARE,
		   PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, "stalled-cycles-frontend");
	expect_one("stalled-cycles-backend", PERF_TYPE_HARDWARE,
		   PERF_COUNT_HW_STALLED_CYCLES_BACKEND, NULL);
	expect_one("idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
		   NULL);
	expect_one("ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, NULL);
}

static void test_software(void **state)
{
	expect_one("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, "cpu-clock");
	expect_one("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL);
	expect_one("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, NULL);
	expect_one("faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, "page-faults");
	expect_one("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, NULL);
	expect_one("cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, "context-switches");
	expect_one("cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, NULL);
	expect_one("migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS,
		   "cpu-migrations");
	expect_one("minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN, NULL);
	expect_one("major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ, NULL);
	expect_one("alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS, NULL);
	expect_one("emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS, NULL);
	expect_one("dummy", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, NULL);
	expect_one("bpf-output", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT, NULL);
	expect_one("cgroup-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CGROUP_SWITCHES, NULL);
}

#define CACHE_CFG(id, op, res) ((id) | ((op) << 8) | ((uint64_t)(res) << 16))

static void test_cache_every_combination(void **state)
{
	static const char *const ids[] = { "L1-dcache", "L1-icache", "LLC", "dTLB",
					   "iTLB",	"branch",    "node" };
	static const int id_vals[] = { PERF_COUNT_HW_CACHE_L1D,	 PERF_COUNT_HW_CACHE_L1I,
				       PERF_COUNT_HW_CACHE_LL,	 PERF_COUNT_HW_CACHE_DTLB,
				       PERF_COUNT_HW_CACHE_ITLB, PERF_COUNT_HW_CACHE_BPU,
				       PERF_COUNT_HW_CACHE_NODE };
	static const char *const ops[] = { "load", "store", "prefetch" };
	static const char *const opss[] = { "loads", "stores", "prefetches" };
	static const int op_vals[] = { PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_OP_WRITE,
				       PERF_COUNT_HW_CACHE_OP_PREFETCH };
	int n = 0;

	for (int i = 0; i < 7; i++) {
		for (int o = 0; o < 3; o++) {
			char name[64];

			snprintf(name, sizeof(name), "%s-%s", ids[i], opss[o]);
			expect_one(name, PERF_TYPE_HW_CACHE,
				   CACHE_CFG(id_vals[i], op_vals[o],
					     PERF_COUNT_HW_CACHE_RESULT_ACCESS),
				   name);
			snprintf(name, sizeof(name), "%s-%s-misses", ids[i], ops[o]);
			expect_one(
				name, PERF_TYPE_HW_CACHE,
				CACHE_CFG(id_vals[i], op_vals[o], PERF_COUNT_HW_CACHE_RESULT_MISS),
				name);
			n += 2;
		}
	}
	assert_int_equal(n, PERF_COUNT_HW_CACHE_MAX * PERF_COUNT_HW_CACHE_OP_MAX *
				    PERF_COUNT_HW_CACHE_RESULT_MAX);
}

static void test_cache_aliases(void **state)
{
	const uint32_t T = PERF_TYPE_HW_CACHE;

	expect_one("L1-dcache-load-misses", T, CACHE_CFG(0, 0, 1), "L1-dcache-load-misses");
	expect_one("l1d-loads", T, CACHE_CFG(0, 0, 0), "L1-dcache-loads");
	expect_one("L1-data-read-miss", T, CACHE_CFG(0, 0, 1), "L1-dcache-load-misses");
	expect_one("L1-dcache", T, CACHE_CFG(0, 0, 0), "L1-dcache-loads");
	expect_one("LLC-misses", T, CACHE_CFG(2, 0, 1), "LLC-load-misses");
	expect_one("L2-stores", T, CACHE_CFG(2, 1, 0), "LLC-stores");
	expect_one("LLC-store-misses", T, CACHE_CFG(2, 1, 1), NULL);
	expect_one("dTLB-loads", T, CACHE_CFG(3, 0, 0), NULL);
	expect_one("Data-TLB-speculative-read-miss", T, CACHE_CFG(3, 2, 1), "dTLB-prefetch-misses");
	expect_one("iTLB-load-misses", T, CACHE_CFG(4, 0, 1), NULL);
	expect_one("branch-loads", T, CACHE_CFG(5, 0, 0), NULL);
	expect_one("bpu-load-misses", T, CACHE_CFG(5, 0, 1), "branch-load-misses");
	expect_one("node-loads", T, CACHE_CFG(6, 0, 0), NULL);
	expect_one("node-misses-write", T, CACHE_CFG(6, 1, 1), "node-store-misses");
	expect_one("L1-icache-access", T, CACHE_CFG(1, 0, 0), "L1-icache-loads");
	/* hardware names win over cache ids: "branches" and "branch-misses" are PERF_TYPE_HARDWARE
	 */
	expect_one("branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, NULL);
	expect_error("dTLB-", -ENOENT, 0, "unknown event 'dTLB-'");
	expect_error("L1-dcache-loads-loads", -ENOENT, 0, "unknown event");
	expect_error("LLC-misses-misses", -ENOENT, 0, "unknown event");
}

static void test_named_table(void **state)
{
	const struct psc_named_event *e;
	int nr[PSC_EVENT_TRACEPOINT + 1] = { 0 }, i;

	for (i = 0; (e = psc_named_event__at(i)); i++) {
		static const uint32_t types[] = { PERF_TYPE_HARDWARE, PERF_TYPE_SOFTWARE,
						  PERF_TYPE_HW_CACHE };

		nr[e->kind]++;
		assert_true(e->kind <= PSC_EVENT_CACHE);
		expect_one(e->name, types[e->kind], e->config, e->name);
		if (e->alias)
			expect_one(e->alias, types[e->kind], e->config, e->name);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(psc_named_event__at(j)->name, e->name);
	}
	assert_int_equal(nr[PSC_EVENT_SOFTWARE], PERF_COUNT_SW_MAX);
	assert_int_equal(nr[PSC_EVENT_HARDWARE], PERF_COUNT_HW_MAX);
	assert_int_equal(nr[PSC_EVENT_CACHE], 42);
	assert_null(psc_named_event__at(-1));
	assert_null(psc_named_event__at(i));
}

static struct perf_event_attr attr_of(const char *str)
{
	struct psc_event_list *list = parse_ok(str);
	struct perf_event_attr a = list->specs[0].attr;

	psc_event_list__delete(list);
	return a;
}

static void test_modifiers(void **state)
{
	struct perf_event_attr a;
	struct psc_event_list *list;

	a = attr_of("cycles:u");
	assert_int_equal(a.exclude_user, 0);
	assert_int_equal(a.exclude_kernel, 1);
	assert_int_equal(a.exclude_hv, 1);
	assert_int_equal(a.exclude_guest, 1);
	a = attr_of("cycles:k");
	assert_int_equal(a.exclude_user, 1);
	assert_int_equal(a.exclude_kernel, 0);
	assert_int_equal(a.exclude_hv, 1);
	assert_int_equal(a.exclude_guest, 0);
	a = attr_of("page-faults:uk");
	assert_int_equal(a.exclude_user, 0);
	assert_int_equal(a.exclude_kernel, 0);
	assert_int_equal(a.exclude_hv, 1);
	a = attr_of("cycles:h");
	assert_int_equal(a.exclude_user, 1);
	assert_int_equal(a.exclude_kernel, 1);
	assert_int_equal(a.exclude_hv, 0);
	a = attr_of("cycles:G");
	assert_int_equal(a.exclude_guest, 0);
	assert_int_equal(a.exclude_host, 1);
	a = attr_of("cycles:H");
	assert_int_equal(a.exclude_guest, 1);
	assert_int_equal(a.exclude_host, 0);
	a = attr_of("cycles:ppp");
	assert_int_equal(a.precise_ip, 3);
	assert_int_equal(a.exclude_guest, 1);
	a = attr_of("cycles:p");
	assert_int_equal(a.precise_ip, 1);
	a = attr_of("cycles:I");
	assert_int_equal(a.exclude_idle, 1);
	a = attr_of("cycles:D");
	assert_int_equal(a.pinned, 1);
	a = attr_of("cycles:e");
	assert_int_equal(a.exclusive, 1);
	a = attr_of("cycles");
	assert_int_equal(a.exclude_user | a.exclude_kernel | a.exclude_hv | a.exclude_guest, 0);

	list = parse_ok("cycles:u,r1a8:k");
	assert_string_equal(list->specs[0].name, "cpu-cycles:u");
	assert_string_equal(list->specs[1].name, "r1a8:k");
	psc_event_list__delete(list);

	expect_error("cycles:x", -EINVAL, 7, "unknown modifier 'x'");
	expect_error("cycles:ux", -EINVAL, 8, "expected u (user)");
	expect_error("cycles:", -EINVAL, 7, "expected modifiers after ':'");
	expect_error("cycles:pppp", -EINVAL, 7, "precise levels are p, pp and ppp");
	expect_error("cycles:u/x/", -EINVAL, 8, "modifiers come last");
}

static void test_raw(void **state)
{
	expect_one("r1a8", PERF_TYPE_RAW, 0x1a8, "r1a8");
	expect_one("r0", PERF_TYPE_RAW, 0, NULL);
	expect_one("rFFFFFFFFFFFFFFFF", PERF_TYPE_RAW, UINT64_MAX, NULL);
	expect_one("r01c2:u", PERF_TYPE_RAW, 0x1c2, "r01c2:u");
	expect_error("r12345678901234567", -EINVAL, 0, "at most 16 hex digits");
	expect_error("r", -ENOENT, 0, "unknown event 'r'");
	expect_error("r1g", -ENOENT, 0, "unknown event 'r1g'");
}

static void test_pmu(void **state)
{
	struct psc_event_list *list;
	struct psc_event_spec *s;

	list = parse_ok("msr/tsc/");
	s = &list->specs[0];
	assert_int_equal(s->kind, PSC_EVENT_PMU);
	assert_int_equal(s->attr.type, 9);
	assert_int_equal(s->attr.config, 0);
	assert_string_equal(s->name, "msr/tsc/");
	assert_string_equal(s->sys, "msr");
	assert_string_equal(s->event, "tsc");
	assert_null(s->unit);
	assert_true(s->scale == 1.0);
	psc_event_list__delete(list);

	list = parse_ok("power/energy-pkg/,msr/aperf/:u");
	s = &list->specs[0];
	assert_int_equal(s->attr.type, 23);
	assert_int_equal(s->attr.config, 2);
	assert_string_equal(s->unit, "Joules");
	assert_true(s->scale == 2.3283064365386962890625e-10);
	s = &list->specs[1];
	assert_int_equal(s->attr.config, 1);
	assert_int_equal(s->attr.exclude_kernel, 1);
	assert_string_equal(s->name, "msr/aperf/:u");
	psc_event_list__delete(list);

	expect_one("cpu/event=0x3c,umask=1/", 4, 0x13c, "cpu/event=0x3c,umask=1/");
	expect_one("cpu/event=0x3c,edge/", 4, 0x3c | (1 << 18), NULL);
	expect_one("cpu/split=0xff/", 4, 0xf0f, NULL);
	expect_one("cpu/config=0x1234/", 4, 0x1234, NULL);
	expect_one("software/config=3/", 1, 3, NULL);

	list = parse_ok("cpu/mem-loads/");
	s = &list->specs[0];
	assert_int_equal(s->attr.config, 0x1cd);
	assert_int_equal(s->attr.config1, 3);
	assert_string_equal(s->event, "mem-loads");
	psc_event_list__delete(list);

	list = parse_ok("cpu/frontend=0xabcdef,ldlat=7,config2=5,period=1000/");
	s = &list->specs[0];
	assert_int_equal(s->attr.config1, 7);
	assert_int_equal(s->attr.config2, 5); /* the later term wins */
	assert_int_equal(s->attr.sample_period, 1000);
	assert_int_equal(s->attr.freq, 0);
	assert_null(s->event);
	psc_event_list__delete(list);

	expect_error("cpu/event=0x100/", -EINVAL, 4, "does not fit term 'event'");
	expect_error("cpu/umask=1,eveny=1/", -ENOENT, 12, "did you mean 'event'");
	expect_error("cpu/foo=1/", -ENOENT, 4, "expected config, config1, config2, period, freq");
	expect_error("cpu//", -EINVAL, 4, "empty PMU term list");
	expect_error("cpu/event=1,,umask=1/", -EINVAL, 12, "empty PMU term");
	expect_error("cpu/event=xyz/", -EINVAL, 10, "bad value 'xyz'");
	expect_error("cpu/event=-1/", -EINVAL, 10, "bad value '-1'");
	expect_error("cpu/event=99999999999999999999/", -EINVAL, 10, "bad value");
	expect_error("cpu/bad/", -EINVAL, 4, "events/bad uses term 'bogus'");
	expect_error("cpu/weird=1/", -EINVAL, 4, "expected configN:BITS");
	expect_error("cpu/config/", -EINVAL, 10, "needs a value");
	expect_error("cpu/period=0/", -EINVAL, 12, "positive value");
	expect_error("cpu/../", -EINVAL, 4, "bad PMU term '..'");
	expect_error("msr/tsc", -EINVAL, 3, "missing closing '/'");
	expect_error("msr/tsc,cycles", -EINVAL, 3, "missing closing '/'");
	expect_error("msr/tsc/u", -EINVAL, 8, "written ':MODS'");
	expect_error("msr:tsc", -EINVAL, 3, "'msr' is a PMU, not a tracepoint system");
	expect_error("nopmu/event=1/", -ENOENT, 0, "no PMU 'nopmu' on this machine");
	expect_error("nopmu/event=1/", -ENOENT, 0, "are: ");
	expect_error("pwer/energy=1/", -ENOENT, 0, "did you mean 'power'");
	/* a filter-like segment is an unknown perf-prof event, not a PMU */
	expect_error("nopmu/pid==1/", -ENOENT, 0, "unknown event 'nopmu'");
	expect_error("tsc", -ENOENT, 0, "did you mean 'msr/tsc/'");
}

static void test_tracepoints(void **state)
{
	struct psc_event_list *list;
	struct psc_event_spec *s;

	list = parse_ok("sched:sched_switch");
	s = &list->specs[0];
	assert_int_equal(s->kind, PSC_EVENT_TRACEPOINT);
	assert_int_equal(s->attr.type, PERF_TYPE_TRACEPOINT);
	assert_int_equal(s->attr.config, 316);
	assert_string_equal(s->name, "sched:sched_switch");
	assert_string_equal(s->sys, "sched");
	assert_string_equal(s->event, "sched_switch");
	assert_null(s->filter);
	psc_event_list__delete(list);

	list = parse_ok("sched:sched_wakeup*");
	assert_int_equal(list->nr, 2);
	assert_string_equal(list->specs[0].name, "sched:sched_wakeup");
	assert_int_equal(list->specs[0].attr.config, 318);
	assert_string_equal(list->specs[1].name, "sched:sched_wakeup_new");
	assert_int_equal(list->specs[1].attr.config, 317);
	psc_event_list__delete(list);

	list = parse_ok("*:sys_enter_*");
	assert_int_equal(list->nr, 2);
	assert_string_equal(list->specs[0].name, "syscalls:sys_enter_read");
	assert_string_equal(list->specs[1].name, "syscalls:sys_enter_write");
	psc_event_list__delete(list);

	list = parse_ok("sched:*");
	assert_int_equal(list->nr, 4);
	assert_string_equal(list->specs[0].event, "sched_process_exit");
	assert_string_equal(list->specs[3].event, "sched_wakeup_new");
	for (int i = 0; i < 4; i++) {
		assert_int_equal(list->specs[i].leader, i);
		assert_int_equal(list->specs[i].nr_members, 1);
	}
	psc_event_list__delete(list);

	list = parse_ok("sys*:sys_[ew]*_read");
	assert_int_equal(list->nr, 2);
	assert_string_equal(list->specs[0].name, "syscalls:sys_enter_read");
	assert_string_equal(list->specs[1].name, "syscalls:sys_exit_read");
	psc_event_list__delete(list);
	/* broken:noid has no id file: a glob does not take it for a tracepoint */
	expect_error("broken:no*", -ENOENT, 0, "no tracepoint matches 'broken:no*'");

	expect_error("sched:sched_swich", -ENOENT, 6, "did you mean 'sched:sched_switch'");
	expect_error("schd:sched_switch", -ENOENT, 0, "did you mean 'sched'");
	expect_error("sched:nomatch*", -ENOENT, 0, "no tracepoint matches 'sched:nomatch*'");
	expect_error("sched:", -EINVAL, 6, "expected a tracepoint name after 'sched:'");
	expect_error("sched:sched_switch:u", -EINVAL, 18, "modifiers do not apply to tracepoints");
	expect_error("sched:sched$", -EINVAL, 11, "invalid character '$'");
	expect_error("sched:..", -EINVAL, 6, "cannot start with '.'");
	expect_error("broken:badid", -EINVAL, 7, "not a number");
	expect_error("broken:noid", -ENOENT, 7, "cannot read the id");
	expect_error("sched_switch", -ENOENT, 0, "did you mean 'sched:sched_switch'");

	/* no tracefs at all: ENODEV (not "unknown tracepoint"), and the missing root is not made */
	{
		PSC_OPTS(psc_parse_opts, opts, .pmu_dir = pmu_dir, .tracefs_dir = "/nonexistent");
		struct psc_parse_error err;
		struct psc_event_list *l;
		char empty[PATH_MAX + 8];
		struct stat st;

		assert_int_equal(psc_parse_events("sched:sched_switch", &opts, &l, &err), -ENODEV);
		assert_null(l);
		assert_int_equal(err.pos, 0);
		assert_non_null(strstr(err.msg, "no tracefs at /nonexistent"));
		assert_int_equal(psc_parse_events("sched:*", &opts, &l, &err), -ENODEV);
		assert_int_equal(stat("/nonexistent", &st), -1);
		/* an empty directory is no tracefs either */
		snprintf(empty, sizeof(empty), "%s/empty", root);
		assert_int_equal(mkdir(empty, 0755), 0);
		opts.tracefs_dir = empty;
		assert_int_equal(psc_parse_events("sched:sched_switch", &opts, &l, &err), -ENODEV);
		assert_int_equal(rmdir(empty), 0);
	}
}

static void test_perf_prof_attrs(void **state)
{
	struct psc_event_list *list;
	struct psc_event_spec *s;

	list = parse_ok("sched:sched_switch/prev_pid>0 && (next_comm==\"a/b,c\" || prev_prio<5)/"
			"stack/max-stack=10/alias=sw.1/top-by=prev_pid/top-by=next_pid/"
			"top-add=a/top-add=b/key=prev_pid/ptr=p/size=s/num=n/delay=d/untraced/"
			"period=5/");
	assert_int_equal(list->nr, 1);
	s = &list->specs[0];
	assert_string_equal(s->filter, "prev_pid>0 && (next_comm==\"a/b,c\" || prev_prio<5)");
	assert_true(s->stack);
	assert_int_equal(s->max_stack, 10);
	assert_int_equal(s->attr.sample_max_stack, 10);
	assert_true(s->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	assert_string_equal(s->alias, "sw.1");
	/* the ATTRs the library does not apply are kept, in order, for the tool */
	{
		static const char *const want[][2] = {
			{ "top-by", "prev_pid" }, { "top-by", "next_pid" }, { "top-add", "a" },
			{ "top-add", "b" },	  { "key", "prev_pid" },    { "ptr", "p" },
			{ "size", "s" },	  { "num", "n" },	    { "delay", "d" },
			{ "untraced", NULL },
		};

		assert_int_equal(s->nr_attrs, 10);
		for (int i = 0; i < 10; i++) {
			assert_string_equal(s->attrs[i].name, want[i][0]);
			if (want[i][1])
				assert_string_equal(s->attrs[i].value, want[i][1]);
			else
				assert_null(s->attrs[i].value);
		}
		assert_int_equal(s->attrs[0].pos, 99);
		assert_int_equal(s->attrs[0].value_pos, 106);
		assert_int_equal(s->attrs[9].value_pos, -1);
	}
	assert_int_equal(s->attr.sample_period, 5);
	assert_int_equal(s->attr.freq, 0);
	assert_int_equal(s->text_pos, 0);
	psc_event_list__delete(list);

	list = parse_ok(" kmem:kmalloc//ptr=ptr/size=bytes_alloc/stack/ , kmem:kfree/ /ptr=ptr/");
	assert_int_equal(list->nr, 2);
	assert_null(list->specs[0].filter);
	assert_string_equal(list->specs[0].attrs[1].name, "size");
	assert_string_equal(list->specs[0].attrs[1].value, "bytes_alloc");
	assert_int_equal(list->specs[0].text_pos, 1);
	assert_int_equal(list->specs[0].text_len, 45);
	assert_string_equal(list->specs[1].attrs[0].value, "ptr");
	assert_null(list->specs[1].filter); /* only spaces */
	assert_int_equal(list->specs[1].text_pos, 49);
	psc_event_list__delete(list);

	/* a wildcard's filter and ATTRs go to each expansion */
	list = parse_ok("sched:sched_wakeup*/pid>1/freq=100/key=pid/");
	assert_int_equal(list->nr, 2);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(list->specs[i].filter, "pid>1");
		assert_int_equal(list->specs[i].nr_attrs, 1);
		assert_string_equal(list->specs[i].attrs[0].name, "key");
		assert_string_equal(list->specs[i].attrs[0].value, "pid");
		assert_int_equal(list->specs[i].attr.freq, 1);
		assert_int_equal(list->specs[i].attr.sample_freq, 100);
	}
	psc_event_list__delete(list);

	/* a quoted value may hold '/' and ','; the quotes are not kept */
	list = parse_ok(
		"sched:sched_switch//top-by=\"runtime/1000\"/printkey=\"printf(\\\"%d,%d\\\", a, b)\"/,cs");
	assert_int_equal(list->nr, 2);
	s = &list->specs[0];
	assert_int_equal(s->nr_attrs, 2);
	assert_string_equal(s->attrs[0].value, "runtime/1000");
	assert_int_equal(s->attrs[0].value_pos, 28);
	assert_string_equal(s->attrs[1].value, "printf(\\\"%d,%d\\\", a, b)");
	psc_event_list__delete(list);

	/* the perf-prof form on non-tracepoints, with an empty filter */
	list = parse_ok("cpu-clock//period=100000/stack/:k");
	s = &list->specs[0];
	assert_int_equal(s->attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(s->attr.sample_period, 100000);
	assert_true(s->attr.sample_type & PERF_SAMPLE_CALLCHAIN);
	assert_int_equal(s->attr.exclude_user, 1);
	assert_string_equal(s->name, "cpu-clock:k");
	psc_event_list__delete(list);
}

/* cpus=LIST: where the event opens; its commas are the list's, not the event list's */
static void test_cpus_attr(void **state)
{
	struct psc_event_list *list;

	(void)state;
	list = parse_ok("sched:sched_switch//cpus=0/,page-faults//cpus=0/");
	assert_int_equal(list->nr, 2);
	assert_string_equal(list->specs[0].cpus, "0");
	assert_string_equal(list->specs[1].cpus, "0");
	assert_int_equal(list->specs[0].nr_attrs, 0); /* the library's own ATTR, not the tool's */
	psc_event_list__delete(list);
	list = parse_ok("sched:sched_sw*//cpus=0/stack/");
	assert_true(list->nr >= 1);
	for (int i = 0; i < list->nr; i++)
		assert_string_equal(list->specs[i].cpus, "0"); /* every expansion has it */
	psc_event_list__delete(list);
	list = parse_ok("sched:sched_switch");
	assert_null(list->specs[0].cpus);
	psc_event_list__delete(list);
	expect_error("sched:sched_switch//cpus=0,0/", -EINVAL, 27, "cpus=0,0"); /* the second 0 */
	expect_error("sched:sched_switch//cpus=x/", -EINVAL, 25, "cpus=x");
	expect_error("sched:sched_switch//cpus=99999/", -EINVAL, 25, "cpus=99999");
	expect_error("sched:sched_switch//cpus/", -EINVAL, 24, "needs a value: cpus=LIST");
	/* a ',' before something else than a CPU ends the ATTR: the '/' is missing */
	expect_error("sched:sched_switch//cpus=0,page-faults", -EINVAL, 26, "missing closing '/'");
}

static void test_attr_errors(void **state)
{
	expect_error("page-faults/pid==1/", -EINVAL, 12, "filters apply to tracepoints only");
	expect_error("r12/x/", -EINVAL, 4, "'r12' is a raw event");
	expect_error("sched:sched_switch/prev_pid==1", -EINVAL, 18, "missing closing '/'");
	expect_error("sched:sched_switch/f/stack", -EINVAL, 26,
		     "missing closing '/' after ATTR 'stack'");
	expect_error("sched:sched_switch/f/stack,cs", -EINVAL, 26, "every ATTR ends with '/'");
	/* an ATTR where the filter goes: the empty filter before it was left out */
	expect_error("sched:sched_switch/stack/", -EINVAL, 19,
		     "'stack' is an ATTR, not a filter: the first /.../ after a tracepoint is its "
		     "filter; leave it empty to give ATTRs only: sched:sched_switch//stack/");
	expect_error("sched:sched_switch/alias=sw/", -EINVAL, 19, "sched:sched_switch//alias=sw/");
	expect_error("sched:sched_switch//period=abc/", -EINVAL, 27, "bad number 'abc'");
	expect_error("sched:sched_switch//period=0/", -EINVAL, 27, "must be positive");
	expect_error("sched:sched_switch//period=99999999999999999999/", -EINVAL, 27, "too large");
	expect_error("sched:sched_switch//period=1/freq=2/", -EINVAL, 29, "exclude each other");
	expect_error("sched:sched_switch//alias=a b/", -EINVAL, 27, "bad character ' '");
	expect_error("sched:sched_switch//stack=1/", -EINVAL, 25, "takes no value");
	expect_error("sched:sched_switch//max-stack=70000/", -EINVAL, 30, "too deep");
	expect_error("sched:sched_switch/f//", -EINVAL, 21, "empty ATTR");
	expect_error("sched:sched_switch/(a==1/", -EINVAL, 19, "unclosed '('");
	expect_error("sched:sched_switch/a==1)/", -EINVAL, 23, "unbalanced ')'");
	expect_error("sched:sched_switch/comm==\"x/", -EINVAL, 25, "unterminated string");
	expect_error("sched:sched_switch/a/:u", -EINVAL, 21, "modifiers do not apply");
	expect_error("sched:sched_switch//alias=a/alias=b/", -EINVAL, 28, "'alias' is given twice");
	expect_error("sched:sched_switch//alias/", -EINVAL, 25, "needs a value: alias=NAME");
	expect_error("sched:sched_switch//k y=1/", -EINVAL, 21,
		     "bad character ' ' in an ATTR name");
	expect_error("sched:sched_switch//=1/", -EINVAL, 20, "needs a name");
	expect_error("sched:sched_switch//key=\"a/b/", -EINVAL, 24, "unterminated \"");
}

static void test_list_errors(void **state)
{
	expect_error("", -EINVAL, 0, "empty event list");
	expect_error("   ", -EINVAL, 3, "empty event list");
	expect_error("page-faults,", -EINVAL, 11, "trailing ','");
	expect_error("page-faults , ", -EINVAL, 12, "trailing ','");
	expect_error(",page-faults", -EINVAL, 0, "empty event before ','");
	expect_error("page-faults,,cs", -EINVAL, 12, "empty event before ','");
	expect_error("page-fault", -ENOENT, 0, "did you mean 'page-faults'?");
	expect_error("cs,page-fault:u", -ENOENT, 3,
		     "unknown event 'page-fault'; did you mean 'page-faults'");
	expect_error("cpu-cyles", -ENOENT, 0, "'cpu-cycles'");
	expect_error("instrutcions", -ENOENT, 0, "'instructions'");
	expect_error("xyzzy", -ENOENT, 0, "unknown event 'xyzzy'");
	expect_error("cycles cs", -EINVAL, 7, "expected ',' or the end of the list");
	expect_error("cycles}", -EINVAL, 6, "no group open");
	expect_error("/x/", -EINVAL, 0, "expected an event name before '/'");
	expect_error(":u", -EINVAL, 0, "expected an event name, not ':'");
	expect_error("{cycles", -EINVAL, 0, "missing '}'");
	expect_error("{cycles,", -EINVAL, 0, "missing '}'");
	expect_error("{}", -EINVAL, 1, "empty group");
	expect_error("{cycles,}", -EINVAL, 7, "trailing ','");
	expect_error("{,cycles}", -EINVAL, 1, "empty event");
	expect_error("{cycles,{cs}}", -EINVAL, 8, "groups cannot nest");
	expect_error("{cycles cs}", -EINVAL, 8, "expected ',' or '}'");
	expect_error("{cycles}x", -EINVAL, 8, "expected ':MODS'");
	expect_error("{sched:sched_switch,cs}:u", -EINVAL, 23,
		     "'sched:sched_switch' is in this group");
	expect_error("{cycles}:z", -EINVAL, 9, "unknown modifier 'z'");
}

static void test_groups(void **state)
{
	struct psc_event_list *list =
		parse_ok("{cycles,instructions}:u, page-faults,{sched:sched_wakeup*,cs}");

	assert_int_equal(list->nr, 6);
	assert_int_equal(list->specs[0].leader, 0);
	assert_int_equal(list->specs[0].nr_members, 2);
	assert_int_equal(list->specs[1].leader, 0);
	assert_int_equal(list->specs[1].nr_members, 0);
	assert_string_equal(list->specs[0].name, "cpu-cycles:u");
	assert_string_equal(list->specs[1].name, "instructions:u");
	assert_int_equal(list->specs[1].attr.exclude_kernel, 1);
	assert_int_equal(list->specs[2].leader, 2);
	assert_int_equal(list->specs[2].nr_members, 1);
	assert_int_equal(list->specs[2].attr.exclude_kernel, 0);
	assert_int_equal(list->specs[3].leader, 3);
	assert_int_equal(list->specs[3].nr_members, 3);
	assert_string_equal(list->specs[4].name, "sched:sched_wakeup_new");
	assert_int_equal(list->specs[4].leader, 3);
	assert_int_equal(list->specs[5].leader, 3);
	psc_event_list__delete(list);

	/* a member's own modifiers combine with the group's, as in perf */
	list = parse_ok("{cycles:k,instructions}:u");
	assert_int_equal(list->specs[0].attr.exclude_kernel, 0);
	assert_int_equal(list->specs[0].attr.exclude_user, 0);
	assert_int_equal(list->specs[0].attr.exclude_hv, 1);
	assert_int_equal(list->specs[1].attr.exclude_user, 0);
	assert_int_equal(list->specs[1].attr.exclude_kernel, 1);
	psc_event_list__delete(list);
}

static void test_api_misuse(void **state)
{
	struct psc_event_list *list = (void *)1;
	struct psc_parse_error err;
	struct {
		struct psc_parse_opts o;
		long extra;
	} big = { .o = { .sz = sizeof(big) }, .extra = 1 };

	assert_int_equal(psc_parse_events("cycles", NULL, NULL, &err), -EINVAL);
	assert_int_equal(psc_parse_events(NULL, NULL, &list, &err), -EINVAL);
	assert_null(list);
	assert_int_equal(psc_parse_events("cycles", &big.o, &list, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "psc_parse_opts"));
	/* err may be NULL; named events need no sysfs */
	assert_int_equal(psc_parse_events("page-faults", NULL, &list, NULL), 0);
	assert_int_equal(list->nr, 1);
	psc_event_list__delete(list);
	assert_int_equal(psc_parse_events("page-fault", NULL, &list, NULL), -ENOENT);
	psc_event_list__delete(NULL);
}

static void test_edit_distance(void **state)
{
	struct psc_suggest s;
	char buf[200];

	assert_int_equal(psc_edit_distance("abc", 3, "abc", 3), 0);
	assert_int_equal(psc_edit_distance("abc", 3, "ABC", 3), 0);
	assert_int_equal(psc_edit_distance("abc", 3, "acb", 3), 1);
	assert_int_equal(psc_edit_distance("", 0, "abc", 3), 3);
	assert_int_equal(psc_edit_distance("kitten", 6, "sitting", 7), 3);

	psc_suggest__init(&s, "cyclse", 6);
	psc_suggest__add(&s, "cycles", NULL);
	psc_suggest__add(&s, "cpu-cycles", NULL);
	psc_suggest__add(&s, "cycles", NULL);
	psc_suggest__add(&s, "bus-cycles", NULL);
	psc_suggest__add(&s, "instructions", NULL);
	psc_suggest__format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "; did you mean 'cycles'?");

	psc_suggest__init(&s, "abcd", 4);
	psc_suggest__add(&s, "abce", NULL);
	psc_suggest__add(&s, "abcf", NULL);
	psc_suggest__add(&s, "abgh", NULL);
	psc_suggest__add(&s, "abcd1", NULL);
	psc_suggest__format(&s, buf, sizeof(buf));
	assert_string_equal(buf, "; did you mean 'abcd1', 'abce' or 'abcf'?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cpus_attr),
		cmocka_unit_test(test_hardware),
		cmocka_unit_test(test_software),
		cmocka_unit_test(test_cache_every_combination),
		cmocka_unit_test(test_cache_aliases),
		cmocka_unit_test(test_named_table),
		cmocka_unit_test(test_modifiers),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_pmu),
		cmocka_unit_test(test_tracepoints),
		cmocka_unit_test(test_perf_prof_attrs),
		cmocka_unit_test(test_attr_errors),
		cmocka_unit_test(test_list_errors),
		cmocka_unit_test(test_groups),
		cmocka_unit_test(test_api_misuse),
		cmocka_unit_test(test_edit_distance),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
