/* Integration: real rings on this kernel: exactly N samples for N known operations, lost,
 * overwrite, every sample_type bit decoded from what the kernel writes. */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cmocka.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif

#include <perfscope/perfscope.h>
#include <perfscope/tracefs.h>

#define SAMPLE_BITS (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)

/*
 * The operations counted: calls of these functions and getppid(2) (tracepoint). The functions
 * are probed with the uprobe PMU (perf_event_open with a path and a file offset, nothing left
 * in tracefs when the fd closes): execute breakpoints would do too, but many VMs do not pass
 * debug registers through and their breakpoints never fire.
 */
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

static char exe_path[4096];

/* The offset of fn in the file mapped at it (/proc/self/maps), 0 when not found. */
static uint64_t file_offset(void (*fn)(void))
{
	uintptr_t addr = (uintptr_t)fn;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096 + 128];
	uint64_t off = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, pgoff;
		int path_at = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &pgoff, &path_at) <
			    3 ||
		    !path_at || addr < start || addr >= end)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(exe_path, sizeof(exe_path), "%s", line + path_at);
		off = addr - start + pgoff;
		break;
	}
	fclose(f);
	return off;
}

/* The uprobe PMU's type, or -1 (then the tests that need it skip). */
static int uprobe_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -1;
		fclose(f);
	}
	return type;
}

static struct perf_event_attr probe_attr(void (*fn)(void))
{
	struct perf_event_attr a = {
		.type = (uint32_t)uprobe_type(),
		.size = sizeof(a),
		.sample_period = 1,
		.sample_type = SAMPLE_BITS,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	a.probe_offset = file_offset(fn);
	a.uprobe_path = (uintptr_t)exe_path;
	return a;
}

#define SKIP_WITHOUT_UPROBES()                                                                     \
	do {                                                                                       \
		if (uprobe_type() < 0 || !file_offset(target_a)) {                                 \
			print_message(                                                             \
				"# skip: no uprobe PMU "                                           \
				"(/sys/bus/event_source/devices/uprobe: CONFIG_UPROBE_EVENTS)\n"); \
			skip();                                                                    \
		}                                                                                  \
	} while (0)

/* The id of syscalls:NAME, or 0 when tracefs or the tracepoint is missing (reason printed). */
static unsigned long long syscall_tp_id(const char *name)
{
	const char *dir = psc_tracefs__mount();
	unsigned long long id = 0;
	char path[512];
	FILE *f;

	if (!dir) {
		print_message("# skip: tracefs is not available: %s\n", strerror(errno));
		return 0;
	}
	snprintf(path, sizeof(path), "%s/events/syscalls/%s/id", dir, name);
	f = fopen(path, "r");
	if (!f) {
		print_message("# skip: %s: %s (kernel without syscall tracepoints)\n", path,
			      strerror(errno));
		return 0;
	}
	if (fscanf(f, "%llu", &id) != 1)
		id = 0;
	fclose(f);
	return id;
}

/* Where cgroup2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified on hybrid systems). */
static bool cgroup2_mount(char *buf, size_t len)
{
	char dev[256], dir[4096], type[64];
	FILE *f = fopen("/proc/mounts", "r");
	bool found = false;

	if (!f)
		return false;
	while (!found && fscanf(f, "%255s %4095s %63s %*[^\n]", dev, dir, type) == 3)
		if (!strcmp(type, "cgroup2"))
			found = snprintf(buf, len, "%s", dir) < (int)len;
	fclose(f);
	return found;
}

/* The cgroup2 id of this process (what PERF_SAMPLE_CGROUP reports), 0 when unknown. */
static uint64_t own_cgroup_id(void)
{
	struct {
		struct file_handle fh;
		uint64_t id;
	} h = { .fh.handle_bytes = sizeof(uint64_t) };
	char line[4096], mnt[4096], path[8300];
	FILE *f;
	uint64_t id = 0;
	int mount_id;

	if (!cgroup2_mount(mnt, sizeof(mnt)))
		return 0;
	f = fopen("/proc/self/cgroup", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "%s%s", mnt, line + 3);
		if (!name_to_handle_at(AT_FDCWD, path, &h.fh, &mount_id, 0))
			memcpy(&id, h.fh.f_handle, sizeof(id));
	}
	fclose(f);
	return id;
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
	struct perf_event_attr a;
	const int n = 3000;
	struct psc_ring_stats st;
	struct psc_ring *ring;
	uint64_t got = 0, last = 0;
	int fd;
	SKIP_WITHOUT_UPROBES();
	a = probe_attr(target_a);

	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && psc_errno_is_unsupported(errno)) {
		print_message("# skip: uprobes not supported here: %s\n", strerror(errno));
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
	struct psc_evlist *evlist;
	struct perf_event_attr a, b;
	struct seen seen = { 0 };
	const int n = 2000;
	uint64_t unattributed;
	SKIP_WITHOUT_UPROBES();
	evlist = new_evlist(true);
	a = probe_attr(target_a);
	b = probe_attr(target_b);

	seen.evsels[0] = psc_evsel__new(&a, "probe_a");
	seen.evsels[1] = psc_evsel__new(&b, "probe_b");
	seen.fn_addr[0] = (uintptr_t)target_a;
	seen.fn_addr[1] = (uintptr_t)target_b;
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[0]), 0);
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[1]), 0);
	assert_int_equal(psc_evlist__config_sampling(evlist), 0);
	if (!open_or_skip(evlist, "uprobe")) {
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
	const char *dir = psc_tracefs__mount();
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
 * Every sample_type bit a profiler may ask for, as the kernel writes it: a getppid(2) tracepoint
 * leading a group with sys_exit_getppid, sampling IDENTIFIER ... CODE_PAGE_SIZE with
 * READ of the group, user and interrupt registers and 512 bytes of user stack. The decoder must
 * consume each record exactly, and the values must be the known ones.
 */
static void test_every_sample_bit(void **state)
{
	unsigned long long enter_id = syscall_tp_id("sys_enter_getppid");
	unsigned long long exit_id = syscall_tp_id("sys_exit_getppid");
	const uint64_t bits = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			      PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			      PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
			      PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW |
			      PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |
			      PERF_SAMPLE_DATA_SRC | PERF_SAMPLE_TRANSACTION |
			      PERF_SAMPLE_REGS_INTR | PERF_SAMPLE_PHYS_ADDR | PERF_SAMPLE_CGROUP |
			      PERF_SAMPLE_DATA_PAGE_SIZE | PERF_SAMPLE_CODE_PAGE_SIZE;
#if defined(__x86_64__)
	const uint64_t regs_mask =
		(1ULL << PERF_REG_X86_IP) | (1ULL << PERF_REG_X86_SP) | (1ULL << PERF_REG_X86_AX);
#else
	const uint64_t regs_mask = 0x7;
#endif
	struct perf_event_attr lead = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(lead),
		.config = enter_id,
		.sample_period = 1,
		.sample_type = bits,
		.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			       PERF_FORMAT_TOTAL_TIME_RUNNING,
		.sample_regs_user = regs_mask,
		.sample_regs_intr = regs_mask,
		.sample_stack_user = 512,
		.disabled = 1,
	};
	struct perf_event_attr member = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(member),
		.config = exit_id,
	};
	uint64_t lead_id = 0, member_id = 0, cgroup_id = own_cgroup_id(), got = 0;
	const int n = 200;
	uintptr_t frame = (uintptr_t)__builtin_frame_address(0);
	struct psc_ring *ring;
	const struct perf_event_header *h;
	int fd, mfd;

	if (!enter_id || !exit_id)
		skip();
	if (!cgroup_id)
		print_message(
			"# cgroup2 id of this process unknown: PERF_SAMPLE_CGROUP only checked "
			"non-zero\n");
	fd = (int)syscall(SYS_perf_event_open, &lead, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	/* CGROUP needs Linux 5.7, DATA/CODE_PAGE_SIZE 5.11: older kernels say EINVAL */
	if (fd < 0 && (psc_errno_is_unsupported(errno) || errno == EINVAL)) {
		print_message("# skip: this kernel refuses some sample_type bit (Linux 5.11+ has "
			      "them all): %s\n",
			      strerror(errno));
		skip();
	}
	assert_true(fd >= 0);
	mfd = (int)syscall(SYS_perf_event_open, &member, 0, -1, fd, PERF_FLAG_FD_CLOEXEC);
	assert_true(mfd >= 0);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ID, &lead_id), 0);
	assert_int_equal(ioctl(mfd, PERF_EVENT_IOC_ID, &member_id), 0);
	ring = psc_ring__new_fd(fd, 128, NULL);
	assert_non_null(ring);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP), 0);
	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	assert_int_equal(ioctl(fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP), 0);

	assert_int_equal(psc_ring__read_init(ring), 0);
	while ((h = psc_ring__next(ring))) {
		struct psc_sample_read_value v;
		struct psc_record r;
		const struct psc_sample *s = &r.sample;
		int32_t common_pid;

		assert_int_equal(psc_record__parse(h, &lead, &r), 0);
		assert_int_equal(r.type, PERF_RECORD_SAMPLE);

		got++;
		assert_int_equal(s->sample_type, bits);
		assert_int_equal(s->id, lead_id);
		assert_int_equal(s->stream_id, lead_id);
		assert_int_equal(s->pid, getpid());
		assert_int_equal(s->tid, gettid());
		assert_int_equal(s->period, 1);
		assert_true(s->time > 0);
		/* the group, read when the sample was taken: this enter counted, its exit not yet
		 */
		assert_int_equal(s->read.nr, 2);
		assert_true(s->read.time_enabled > 0 && s->read.time_running > 0);
		assert_int_equal(psc_sample_read__at(&s->read, 0, &v), 0);
		assert_int_equal(v.id, lead_id);
		assert_int_equal(v.value, got);
		assert_int_equal(psc_sample_read__at(&s->read, 1, &v), 0);
		assert_int_equal(v.id, member_id);
		assert_int_equal(v.value, got - 1);
		assert_int_equal(psc_sample_read__at(&s->read, 2, &v), -EINVAL);
		/* a context marker first; this thread's user frames (syscall tracepoints sample at
		 * the user registers of the call, so there may be no kernel part) */
		assert_true(s->callchain.nr >= 2);
		assert_true(s->callchain.ips[0] >= (uint64_t)PERF_CONTEXT_MAX);
		{
			uint64_t u = 0;

			for (uint64_t k = 0; k < s->callchain.nr; k++)
				u += s->callchain.ips[k] == (uint64_t)PERF_CONTEXT_USER;
			assert_int_equal(u, 1);
		}
		assert_true(s->raw.size >= 8);
		memcpy(&common_pid, (const char *)s->raw.data + 4, 4);
		assert_int_equal(common_pid, gettid());
		/* user registers at the syscall, and a copy of the user stack above them */
		assert_int_not_equal(s->regs_user.abi, PERF_SAMPLE_REGS_ABI_NONE);
		assert_int_equal(s->regs_user.mask, regs_mask);
		assert_int_equal(s->regs_user.nr, 3);
		assert_int_not_equal(s->regs_intr.abi, PERF_SAMPLE_REGS_ABI_NONE);
		assert_int_equal(s->regs_intr.nr, 3);
		assert_int_equal(s->stack_user.size, 512);
		assert_non_null(s->stack_user.data);
		assert_true(s->stack_user.dyn_size > 0 && s->stack_user.dyn_size <= 512);
#if defined(__x86_64__)
		/* regs in mask bit order: AX, SP, IP; SP is on this thread's stack, near here */
		assert_true(s->regs_user.regs[1] < frame + 65536 &&
			    s->regs_user.regs[1] + 65536 > frame);
		assert_int_not_equal(s->regs_user.regs[2], 0);
#endif
		/* no PMU behind a tracepoint: weight and transaction are written as 0 */
		assert_int_equal(s->weight, 0);
		assert_int_equal(s->transaction, 0);
		if (cgroup_id)
			assert_int_equal(s->cgroup, cgroup_id);
		else
			assert_int_not_equal(s->cgroup, 0);
		assert_true(s->code_page_size >= 4096);
		psc_ring__consume(ring);
	}
	assert_int_equal(errno, 0);
	psc_ring__read_done(ring);
	assert_int_equal(got, n);
	psc_ring__delete(ring);
	close(mfd);
	close(fd);
}

/*
 * A ring too small for the burst: what was not delivered is reported by LOST records, to the
 * ring and to the evsel. Samples seen + lost reported = calls made, exactly.
 */
static void test_lost_adds_up(void **state)
{
	struct psc_evlist *evlist;
	struct perf_event_attr a;
	struct seen seen = { 0 };
	struct psc_ring_stats st;
	const int n = 5000;
	uint64_t unattributed, lost;
	SKIP_WITHOUT_UPROBES();
	evlist = new_evlist(false);
	a = probe_attr(target_a);

	seen.evsels[0] = psc_evsel__new(&a, "probe_a");
	seen.fn_addr[0] = (uintptr_t)target_a;
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[0]), 0);
	if (!open_or_skip(evlist, "uprobe")) {
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
	struct psc_evlist *evlist;
	struct perf_event_attr a;
	struct seen seen = { .newest_first = true };
	struct psc_ring *ring;
	struct psc_ring_stats st;
	uint64_t first;
	SKIP_WITHOUT_UPROBES();
	evlist = new_evlist(false);
	a = probe_attr(target_a);

	a.write_backward = 1;
	seen.evsels[0] = psc_evsel__new(&a, "probe_a");
	seen.fn_addr[0] = (uintptr_t)target_a;
	assert_int_equal(psc_evlist__add(evlist, seen.evsels[0]), 0);
	if (!open_or_skip(evlist, "uprobe")) {
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
		cmocka_unit_test(test_every_sample_bit),
		cmocka_unit_test(test_lost_adds_up),
		cmocka_unit_test(test_overwrite_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
