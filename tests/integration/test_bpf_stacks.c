/* Integration: CPU samples counted by stack in the kernel (common/bpf/bpf_stacks.c,
 * bpf/stacks.bpf.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include <perfscope/perfscope.h>

#include "bpf_stacks.h"

#define PERIOD_NS 100000 /* cpu-clock: a sample each 0.1 ms of CPU */

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Burns ms of CPU in its own loop, looking at the clock rarely: most samples land in here. */
__attribute__((noinline)) static void spin_here(unsigned int ms)
{
	uint64_t end = cpu_ns() + ms * 1000000ull;
	volatile uint64_t x = 0;

	do
		for (int i = 0; i < 200000; i++)
			x += (uint64_t)i;
	while (cpu_ns() < end);
	__asm__ volatile("" : : "r"(x)); /* the sum is used: the loop stays */
}

/* depth frames of itself above spin_here: a distinct user stack for each depth. */
__attribute__((noinline)) static void descend(int depth, unsigned int ms)
{
	volatile int keep = depth;

	if (depth > 0)
		descend(depth - 1, ms);
	else
		spin_here(ms);
	(void)keep; /* no tail call: each level keeps its frame */
}

/* cpu-clock on this thread, any CPU, sampling every PERIOD_NS, opened disabled. */
static struct psc_evsel *open_clock(void)
{
	struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
				     .config = PERF_COUNT_SW_CPU_CLOCK,
				     .sample_period = PERIOD_NS,
				     .disabled = 1 };
	struct psc_evsel *evsel = psc_evsel__new(&a, "cpu-clock");
	struct psc_cpumap *cpus = psc_cpumap__new_any();
	struct psc_threadmap *threads = psc_threadmap__new_tid((pid_t)syscall(SYS_gettid));

	assert_non_null(evsel);
	assert_int_equal(psc_evsel__open(evsel, cpus, threads, NULL), 0);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return evsel;
}

/* Loads, or skips with the reason where this machine or build cannot. */
static struct bpf_stacks *load_or_skip(const struct bpf_stacks_opts *opts)
{
	char why[512];
	struct bpf_stacks *s = bpf_stacks__new(opts, why, sizeof(why));

	if (!s) {
		print_message("# %s\n", why);
		if (!bpf_stacks__built() || errno == EPERM || errno == ENOSYS)
			skip();
		fail();
	}
	return s;
}

struct tally {
	uint32_t pid;
	uint64_t mine, all, in_spin, ulost, with_frames, period;
	int max_depth;
};

static int add(void *ctx, const struct bpf_stacks_ent *e)
{
	struct tally *t = ctx;
	uintptr_t f = (uintptr_t)spin_here;

	t->all += e->count;
	if (e->pid != t->pid)
		return 0;
	t->mine += e->count;
	t->period += e->period;
	if (e->ulost)
		t->ulost += e->count;
	if (e->nr_uips > 0) {
		t->with_frames += e->count;
		if (e->uips[0] >= f && e->uips[0] < f + 512)
			t->in_spin += e->count;
	}
	if (e->nr_uips > t->max_depth)
		t->max_depth = e->nr_uips;
	return 0;
}

/* 300 ms in spin_here: the samples of this process, counted in the kernel, land there. */
static void test_counts(void **state)
{
	struct bpf_stacks_opts o = { .kernel = true, .user = true };
	struct bpf_stacks *s = load_or_skip(&o);
	struct psc_evsel *evsel = open_clock();
	struct tally t = { .pid = (uint32_t)getpid() }, again = { .pid = (uint32_t)getpid() };
	struct bpf_stacks_drops d;
	char why[512];

	assert_int_equal(bpf_stacks__attach(s, evsel, why, sizeof(why)), 0);
	assert_int_equal(psc_evsel__enable(evsel), 0);
	descend(3, 300);
	assert_int_equal(psc_evsel__disable(evsel), 0);
	assert_int_equal(bpf_stacks__for_each(s, false, add, &t), 0);
	bpf_stacks__drops(s, &d);
	print_message("# %llu samples, %llu of this process, %llu with their leaf in spin_here, "
		      "deepest user stack %d frames; drops: %llu %llu %llu %llu %llu\n",
		      (unsigned long long)d.samples, (unsigned long long)t.mine,
		      (unsigned long long)t.in_spin, t.max_depth,
		      (unsigned long long)(d.kcollisions + d.ucollisions),
		      (unsigned long long)(d.kfull + d.ufull),
		      (unsigned long long)(d.kother + d.uother), (unsigned long long)d.keys_full,
		      (unsigned long long)t.ulost);
	/* ~3000 samples for 300 ms; the kernel may throttle some, never most */
	assert_true(t.mine >= 1000);
	assert_true(t.in_spin >= t.mine * 8 / 10);
	assert_true(t.max_depth >= 5); /* spin_here, descend x4, ... (frame pointers) */
	assert_int_equal(t.period, t.mine * PERIOD_NS);
	/* every sample the program saw is counted under a key, or in a drop */
	assert_int_equal(d.samples, t.all + d.keys_full);
	assert_int_equal(d.keys_full, 0);
	/* a collision is possible even in a big map (each leaf address is its own stack): counted
	 */
	assert_int_equal(t.ulost, d.ucollisions + d.ufull + d.uother);

	/* cleared as read: a second walk finds nothing of those samples */
	t = (struct tally){ .pid = t.pid };
	assert_int_equal(bpf_stacks__for_each(s, true, add, &t), 0);
	assert_true(t.mine >= 1000);
	assert_int_equal(bpf_stacks__for_each(s, false, add, &again), 0);
	assert_int_equal(again.all, 0);
	psc_evsel__delete(evsel);
	bpf_stacks__delete(s);
}

/* 24 distinct user stacks of 10 ms each, sampled into maps of the sizes given. */
static void run_depths(uint32_t max_stacks, uint32_t max_keys, struct tally *t,
		       struct bpf_stacks_drops *d)
{
	struct bpf_stacks_opts o = { .user = true, .max_stacks = max_stacks, .max_keys = max_keys };
	struct bpf_stacks *s = load_or_skip(&o);
	struct psc_evsel *evsel = open_clock();
	char why[512];

	*t = (struct tally){ .pid = (uint32_t)getpid() };
	assert_int_equal(bpf_stacks__attach(s, evsel, why, sizeof(why)), 0);
	assert_int_equal(psc_evsel__enable(evsel), 0);
	for (int depth = 0; depth < 24; depth++)
		descend(depth, 10);
	assert_int_equal(psc_evsel__disable(evsel), 0);
	assert_int_equal(bpf_stacks__for_each(s, false, add, t), 0);
	bpf_stacks__drops(s, d);
	print_message("# 24 stacks, %u stack slots, %u keys: %llu samples, %llu user-stack "
		      "collisions, %llu stack map full, %llu counts map full, %llu counted without "
		      "their stack\n",
		      max_stacks, max_keys, (unsigned long long)d->samples,
		      (unsigned long long)d->ucollisions, (unsigned long long)d->ufull,
		      (unsigned long long)d->keys_full, (unsigned long long)t->ulost);
	/* every sample the program saw is counted under a key, or in a drop */
	assert_int_equal(d->samples, t->all + d->keys_full);
	assert_int_equal(d->kcollisions + d->kfull, 0); /* no kernel stacks asked for */
	psc_evsel__delete(evsel);
	bpf_stacks__delete(s);
}

/* Maps far too small: collisions and a full counts map are counted, and add up. */
static void test_drops_counted(void **state)
{
	struct bpf_stacks_drops d;
	struct tally t;

	/* 4 stack slots: the other stacks collide, their samples kept under a lost-stack key */
	run_depths(4, 0, &t, &d);
	assert_true(d.ucollisions + d.ufull > 0);
	assert_true(t.ulost > 0);
	assert_int_equal(t.ulost, d.ucollisions + d.ufull + d.uother);
	assert_int_equal(d.keys_full, 0);
	/* one key: the samples of every other stack are lost, and counted as such */
	run_depths(0, 1, &t, &d);
	assert_true(d.keys_full > 0);
}

/* The ring path's layout: context markers before each half, a half without frames left out. */
static void test_callchain_layout(void **state)
{
	const uint64_t k[] = { 0xffffffff81000010ull, 0xffffffff81000020ull }, u[] = { 0x401000 };
	struct bpf_stacks_ent e = { .kips = k, .nr_kips = 2, .uips = u, .nr_uips = 1 };
	uint64_t ips[8];

	assert_int_equal(bpf_stacks_ent__callchain(&e, ips, 8), 5);
	assert_true(ips[0] == (uint64_t)PERF_CONTEXT_KERNEL && ips[1] == k[0] && ips[2] == k[1]);
	assert_true(ips[3] == (uint64_t)PERF_CONTEXT_USER && ips[4] == u[0]);
	assert_int_equal(bpf_stacks_ent__callchain(&e, ips, 2), 2); /* bounded */
	e.nr_kips = 0;
	assert_int_equal(bpf_stacks_ent__callchain(&e, ips, 8), 2);
	assert_true(ips[0] == (uint64_t)PERF_CONTEXT_USER && ips[1] == u[0]);
}

/* A build without BPF programs says so, in words a user can act on. */
static void test_unavailable(void **state)
{
	char why[512] = "";

	if (bpf_stacks__built()) {
		struct bpf_stacks_opts none = { 0 };

		/* and an empty ask is refused before anything is loaded */
		assert_null(bpf_stacks__new(&none, why, sizeof(why)));
		assert_int_equal(errno, EINVAL);
		return;
	}
	assert_null(bpf_stacks__new(NULL, why, sizeof(why)));
	assert_int_equal(errno, ENOTSUP);
	assert_non_null(strstr(why, "-Dbpf=disabled"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unavailable),
		cmocka_unit_test(test_callchain_layout),
		cmocka_unit_test(test_counts),
		cmocka_unit_test(test_drops_counted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
