/* Integration: real rings on this kernel: exactly N samples for N known operations, lost,
 * overwrite. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <cmocka.h>

#include <perfscope/perfscope.h>
#include <perfscope/tracefs.h>

#define SAMPLE_BITS (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/* The operations counted: calls of these functions (breakpoints) and getppid(2) (tracepoint). */
__attribute__((noinline)) static void target_a(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void target_b(void)
{
	__asm__ volatile("" ::: "memory");
}

static void (*volatile call_a)(void) = target_a;
static void (*volatile call_b)(void) = target_b;

static struct perf_event_attr bp_attr(void (*fn)(void))
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_BREAKPOINT,
		.size = sizeof(a),
		.bp_type = HW_BREAKPOINT_X,
		.bp_addr = (uintptr_t)fn,
		.bp_len = sizeof(long),
		.sample_period = 1,
		.sample_type = SAMPLE_BITS,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return a;
}

/* What one drain saw, per evsel slot (0, 1) and in total. */
struct seen {
	struct psc_evsel *evsels[2];
	uint64_t fn_addr[2]; /* expected ip, 0 for the tracepoint */
	uint64_t samples[2];
	uint64_t other;
	uint64_t bad; /* samples that failed to decode or had wrong fields */
	uint64_t unordered; /* time going backwards within one ring and batch order */
	uint64_t last_time[64];
	bool newest_first;
};

static void check_sample(struct seen *seen, int slot, int ring_idx, int ring_cpu,
			 const struct psc_sample *s)
{
	uint64_t *last = &seen->last_time[ring_idx % 64];

	seen->samples[slot]++;
	if ((pid_t)s->tid != gettid() || (pid_t)s->pid != getpid())
		seen->bad++;
	if (seen->fn_addr[slot] && s->ip != seen->fn_addr[slot])
		seen->bad++;
	if (!seen->fn_addr[slot]) {
		int32_t common_pid;

		/* tracepoint: the raw record's common_pid is this thread */
		if (s->raw.size < 8)
			seen->bad++;
		else if (memcpy(&common_pid, (const char *)s->raw.data + 4, 4),
			 common_pid != gettid())
			seen->bad++;
	}
	if (ring_cpu >= 0 && (int)s->cpu != ring_cpu)
		seen->bad++;
	if (*last && (seen->newest_first ? s->time > *last : s->time < *last))
		seen->unordered++;
	*last = s->time;
}

/* Reads every ring of the evlist once, decoding each record with its evsel's attr. */
static void drain(struct psc_evlist *evlist, struct seen *seen)
{
	for (int i = 0; i < psc_evlist__nr_rings(evlist); i++) {
		struct psc_ring *ring = psc_evlist__ring(evlist, i);
		const struct perf_event_header *h;

		if (psc_ring__read_init(ring))
			continue;
		while ((h = psc_ring__next(ring))) {
			struct psc_evsel *evsel = psc_evlist__evsel_for_record(evlist, h);
			struct psc_sample s;
			int slot = evsel == seen->evsels[0] ? 0 : evsel == seen->evsels[1] ? 1 : -1;

			if (h->type != PERF_RECORD_SAMPLE) {
				seen->other++;
			} else if (slot < 0 ||
				   psc_record__parse_sample(h, psc_evsel__attr(evsel), &s)) {
				seen->bad++;
			} else {
				check_sample(seen, slot, i, psc_ring__cpu(ring), &s);
			}
			psc_ring__consume(ring);
		}
		assert_int_equal(errno, 0);
		psc_ring__read_done(ring);
	}
}

static struct psc_evlist *new_evlist(bool per_cpu)
{
	struct psc_evlist *evlist = psc_evlist__new();
	struct psc_cpumap *cpus = per_cpu ? psc_cpumap__new_online() : psc_cpumap__new_any();
	struct psc_threadmap *threads = psc_threadmap__new_tid(gettid());

	assert_non_null(evlist);
	assert_non_null(cpus);
	assert_non_null(threads);
	assert_int_equal(psc_evlist__set_maps(evlist, cpus, threads), 0);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return evlist;
}

/* Opens; skips the test (with the kernel's reason) only when the event type is not supported. */
static bool open_or_skip(struct psc_evlist *evlist, const char *what)
{
	int err = psc_evlist__open(evlist, NULL);
	char msg[512];

	if (err && psc_errno_is_unsupported(err)) {
		print_message("# skip: %s\n", psc_strerror_open(err, what, msg, sizeof(msg)));
		return false;
	}
	assert_int_equal(err, 0);
	return true;
}

/* Raw API: one fd, one ring, exactly N samples for N calls, read while they are produced. */
static void test_raw_ring_exact(void **state)
{
	struct perf_event_attr a = bp_attr(target_a);
	const int n = 3000;
	struct psc_ring_stats st;
	struct psc_ring *ring;
	uint64_t got = 0, last = 0;
	int fd;

	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && psc_errno_is_unsupported(errno)) {
		print_message("# skip: execute breakpoints not supported here: %s\n",
			      strerror(errno));
		skip();
	}
	assert_true(fd >= 0);
	PSC_OPTS(psc_ring_opts, o, .tid = gettid());
	ring = psc_ring__new_fd(fd, 8, &o);
	assert_non_null(ring);
	assert_int_equal(psc_ring__fd(ring), fd);
	assert_int_equal(psc_ring__tid(ring), gettid());
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
	for (int i = 0; i < n; i++) {
		call_a();
		/* read as we go: a 32 KiB ring holds fewer records than n, and they wrap */
		if (i % 100 == 99 || i == n - 1) {
			const struct perf_event_header *h;

			if (psc_ring__read_init(ring))
				continue;
			while ((h = psc_ring__next(ring))) {
				struct psc_sample s;

				assert_int_equal(h->type, PERF_RECORD_SAMPLE);
				assert_int_equal(psc_record__parse_sample(h, &a, &s), 0);
				assert_int_equal(s.ip, (uintptr_t)target_a);
				assert_int_equal(s.tid, gettid());
				assert_true(s.time >= last);
				last = s.time;
				got++;
				psc_ring__consume(ring);
			}
			psc_ring__read_done(ring);
		}
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	assert_int_equal(got, n);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.records, n);
	assert_int_equal(st.lost, 0);
	assert_true(st.wrapped > 0 || st.bytes < psc_ring__data_size(ring));
	psc_ring__delete(ring);
	close(fd);
}

/*
 * evlist API, per-CPU rings: two events on this thread, each CPU's fds sharing one ring through
 * SET_OUTPUT, records routed to their evsel by PERF_SAMPLE_IDENTIFIER.
 */
static void test_evlist_per_cpu_two_events(void **state)
{
	struct psc_evlist *evlist = new_evlist(true);
	struct perf_event_attr a = bp_attr(target_a), b = bp_attr(target_b);
	struct seen seen = { 0 };
	const int n = 2000;
	uint64_t unattributed;

	seen.evsels[0] = psc_evsel__new(&a, "bp_a");
	seen.evsels[1] = psc_evsel__new(&b, "bp_b");
	seen.fn_addr[0] = (uintptr_t)target_a;
	seen.fn_addr[1] = (uintptr_t)target_b;
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[0]), 0);
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[1]), 0);
	assert_int_equal(psc_evlist__config_sampling(evlist), 0);
	if (!open_or_skip(evlist, "breakpoint")) {
		psc_evlist__delete(evlist);
		skip();
	}
	PSC_OPTS(psc_mmap_opts, mo, .pages = 3);
	assert_int_equal(psc_evlist__mmap(evlist, &mo), -EINVAL); /* not a power of two */
	mo.pages = 4;
	assert_int_equal(psc_evlist__mmap(evlist, &mo), 0);
	assert_int_equal(psc_evlist__mmap(evlist, &mo), -EBUSY);
	assert_int_equal(psc_evlist__nr_rings(evlist), psc_cpumap__nr(psc_evlist__cpus(evlist)));
	for (int i = 0; i < psc_evlist__nr_rings(evlist); i++)
		assert_int_equal(psc_ring__cpu(psc_evlist__ring(evlist, i)),
				 psc_cpumap__cpu(psc_evlist__cpus(evlist), i));
	assert_null(psc_evlist__ring(evlist, psc_evlist__nr_rings(evlist)));
	assert_int_equal(psc_evlist__enable(evlist), 0);
	for (int i = 0; i < n; i++) {
		call_a();
		call_b();
		if (i % 50 == 49)
			drain(evlist, &seen);
	}
	psc_evlist__disable(evlist);
	drain(evlist, &seen);
	assert_int_equal(seen.samples[0], n);
	assert_int_equal(seen.samples[1], n);
	assert_int_equal(seen.bad, 0);
	assert_int_equal(seen.unordered, 0);
	assert_int_equal(psc_evlist__lost(evlist, &unattributed), 0);
	psc_evlist__munmap(evlist);
	assert_int_equal(psc_evlist__nr_rings(evlist), 0);
	psc_evlist__delete(evlist);
}

/* A tracepoint, per-thread ring (the "any CPU" map): exactly N getppid(2) calls seen. */
static void test_tracepoint_per_thread(void **state)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(a),
		.sample_period = 1,
		.sample_type = SAMPLE_BITS | PERF_SAMPLE_RAW,
	};
	const char *dir = psc_tracefs__dir();
	struct psc_evlist *evlist;
	struct seen seen = { 0 };
	const int n = 5000;
	char path[512];
	FILE *f;
	unsigned long long id;

	if (!dir) {
		print_message("# skip: tracefs is not available: %s\n", strerror(errno));
		skip();
	}
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_getppid/id", dir);
	f = fopen(path, "r");
	if (!f) {
		print_message("# skip: %s: %s (kernel without syscall tracepoints)\n", path,
			      strerror(errno));
		skip();
	}
	assert_int_equal(fscanf(f, "%llu", &id), 1);
	fclose(f);
	a.config = id;
	evlist = new_evlist(false);
	seen.evsels[0] = psc_evsel__new(&a, "syscalls:sys_enter_getppid");
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[0]), 0);
	if (!open_or_skip(evlist, "syscalls:sys_enter_getppid")) {
		psc_evlist__delete(evlist);
		skip();
	}
	assert_int_equal(psc_evlist__mmap(evlist, NULL), 0);
	assert_int_equal(psc_evlist__nr_rings(evlist), 1);
	assert_int_equal(psc_ring__cpu(psc_evlist__ring(evlist, 0)), -1);
	assert_int_equal(psc_ring__tid(psc_evlist__ring(evlist, 0)), gettid());
	assert_int_equal(psc_evlist__enable(evlist), 0);
	for (int i = 0; i < n; i++) {
		syscall(SYS_getppid);
		if (i % 1000 == 999)
			drain(evlist, &seen);
	}
	psc_evlist__disable(evlist);
	drain(evlist, &seen);
	assert_int_equal(seen.samples[0], n);
	assert_int_equal(seen.bad, 0);
	assert_int_equal(seen.unordered, 0);
	psc_evlist__delete(evlist);
}

/*
 * A ring too small for the burst: what was not delivered is reported by LOST records, to the
 * ring and to the evsel. Samples seen + lost reported = calls made, exactly.
 */
static void test_lost_adds_up(void **state)
{
	struct psc_evlist *evlist = new_evlist(false);
	struct perf_event_attr a = bp_attr(target_a);
	struct seen seen = { 0 };
	struct psc_ring_stats st;
	const int n = 5000;
	uint64_t unattributed, lost;

	seen.evsels[0] = psc_evsel__new(&a, "bp_a");
	seen.fn_addr[0] = (uintptr_t)target_a;
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[0]), 0);
	if (!open_or_skip(evlist, "breakpoint")) {
		psc_evlist__delete(evlist);
		skip();
	}
	PSC_OPTS(psc_mmap_opts, mo, .pages = 1);
	assert_int_equal(psc_evlist__mmap(evlist, &mo), 0);
	assert_int_equal(psc_evlist__enable(evlist), 0);
	for (int i = 0; i < n; i++)
		call_a();
	drain(evlist, &seen);
	/* the kernel writes the pending LOST record before the next sample that fits */
	call_a();
	psc_evlist__disable(evlist);
	drain(evlist, &seen);
	psc_ring__stats(psc_evlist__ring(evlist, 0), &st);
	lost = psc_evlist__lost(evlist, &unattributed);
	assert_true(st.lost > 0);
	assert_int_equal(st.lost, lost);
	assert_int_equal(psc_evsel__lost(seen.evsels[0]), lost);
	assert_int_equal(unattributed, 0);
	assert_int_equal(seen.other, st.lost_records);
	assert_int_equal(seen.samples[0] + lost, n + 1);
	assert_int_equal(seen.bad, 0);
	psc_evlist__delete(evlist);
}

/* Flight recorder: a backward ring keeps the newest records; reads return only what is new. */
static void test_overwrite_ring(void **state)
{
	struct psc_evlist *evlist = new_evlist(false);
	struct perf_event_attr a = bp_attr(target_a);
	struct seen seen = { .newest_first = true };
	struct psc_ring *ring;
	struct psc_ring_stats st;
	uint64_t first;

	a.write_backward = 1;
	seen.evsels[0] = psc_evsel__new(&a, "bp_a");
	seen.fn_addr[0] = (uintptr_t)target_a;
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[0]), 0);
	if (!open_or_skip(evlist, "breakpoint")) {
		psc_evlist__delete(evlist);
		skip();
	}
	PSC_OPTS(psc_mmap_opts, mo, .pages = 1, .overwrite = false);
	/* write_backward events need overwrite rings */
	assert_int_equal(psc_evlist__mmap(evlist, &mo), -EINVAL);
	mo.overwrite = true;
	assert_int_equal(psc_evlist__mmap(evlist, &mo), 0);
	ring = psc_evlist__ring(evlist, 0);
	assert_true(psc_ring__is_overwrite(ring));
	assert_int_equal(psc_evlist__enable(evlist), 0);
	/* many more than one page holds: the kernel overwrites, never loses or waits */
	for (int i = 0; i < 2000; i++)
		call_a();
	assert_int_equal(psc_ring__pause(ring), 0);
	drain(evlist, &seen);
	first = seen.samples[0];
	/* one 4 KiB page of 40-byte records, minus the one torn at the end */
	assert_true(first > 0 && first <= 4096 / 40);
	assert_true(first >= 4096 / 40 - 2);
	assert_int_equal(psc_ring__resume(ring), 0);
	for (int i = 0; i < 5; i++)
		call_a();
	assert_int_equal(psc_ring__pause(ring), 0);
	memset(seen.last_time, 0, sizeof(seen.last_time));
	drain(evlist, &seen);
	assert_int_equal(seen.samples[0] - first, 5);
	assert_int_equal(psc_ring__resume(ring), 0);
	psc_evlist__disable(evlist);
	assert_int_equal(seen.bad, 0);
	assert_int_equal(seen.unordered, 0);
	psc_ring__stats(ring, &st);
	assert_int_equal(st.corrupt, 0);
	psc_evlist__delete(evlist);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_raw_ring_exact),
		cmocka_unit_test(test_evlist_per_cpu_two_events),
		cmocka_unit_test(test_tracepoint_per_thread),
		cmocka_unit_test(test_lost_adds_up),
		cmocka_unit_test(test_overwrite_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
