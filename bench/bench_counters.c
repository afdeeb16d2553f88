/* Benchmark: cost per call of counter reads, group reads, meters and psc_measure vs the bare
 * syscalls. */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

/*
 * Each case is a pair: the bare system calls a careful C programmer would write, and the library
 * call that does the same job. Both use the same events and read_format (the library always asks
 * for TOTAL_TIME_ENABLED|RUNNING|ID, so the bare side does too), run on the calling thread, and
 * are timed in interleaved rounds so that drift of the machine hits both alike. The figure is the
 * median over the rounds of the mean ns per call in a round.
 */

#define READ_FORMAT \
	(PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID)
#define GROUP_EVENTS "page-faults,context-switches,cpu-migrations,minor-faults"

static const uint64_t group_configs[4] = {
	PERF_COUNT_SW_PAGE_FAULTS,
	PERF_COUNT_SW_CONTEXT_SWITCHES,
	PERF_COUNT_SW_CPU_MIGRATIONS,
	PERF_COUNT_SW_PAGE_FAULTS_MIN,
};

static int iterations = 20000;
static int rounds = 31;

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_counters: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int bare_open(uint64_t config, int group_fd, uint64_t read_format)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = config,
		.read_format = read_format,
		.disabled = group_fd < 0,
	};
	int fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		die("perf_event_open", errno);
	return fd;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One side of a case: state set up once, then `iters` calls of step. */
struct side {
	void (*step)(void *ctx);
	void *ctx;
	int iters; /* calls per round; 0 = the global iterations */
};

struct result {
	double bare, lib; /* medians */
	double bare_min, lib_min; /* the least noisy round of each */
};

static double time_round(const struct side *s)
{
	int n = s->iters ? s->iters : iterations;
	double t0 = now_ns();

	for (int i = 0; i < n; i++)
		s->step(s->ctx);
	return (now_ns() - t0) / n;
}

static struct result run_case(const struct side *bare, const struct side *lib)
{
	double *b = calloc(rounds, sizeof(*b)), *l = calloc(rounds, sizeof(*l));
	struct result r;

	if (!b || !l)
		die("calloc", ENOMEM);
	/* warm-up: caches, page tables, the kernel's per-event state */
	time_round(bare);
	time_round(lib);
	for (int i = 0; i < rounds; i++) {
		/* alternate which goes first so neither always follows the other */
		if (i & 1) {
			l[i] = time_round(lib);
			b[i] = time_round(bare);
		} else {
			b[i] = time_round(bare);
			l[i] = time_round(lib);
		}
	}
	qsort(b, rounds, sizeof(*b), cmp_double);
	qsort(l, rounds, sizeof(*l), cmp_double);
	r.bare = b[rounds / 2];
	r.lib = l[rounds / 2];
	r.bare_min = b[0];
	r.lib_min = l[0];
	free(b);
	free(l);
	return r;
}

static void report(const char *name, const char *bare_what, const char *lib_what, struct result r)
{
	double over = 100.0 * (r.lib - r.bare) / r.bare;
	double over_min = 100.0 * (r.lib_min - r.bare_min) / r.bare_min;

	printf("%-34s %9.0f %9.0f %+8.1f%% %+8.1f%%  %s\n", name, r.bare, r.lib, over, over_min,
	       over <= 10.0 ? "ok" : "OVER 10%");
	printf("    bare: %s\n    lib:  %s\n", bare_what, lib_what);
	fflush(stdout);
}

/* ---- case 1: one counter, one read(2) ------------------------------------------------------ */
struct one_ctx {
	int fd;
	struct psc_evsel *evsel;
};

static void bare_read_one(void *p)
{
	struct one_ctx *c = p;
	uint64_t buf[4];

	if (read(c->fd, buf, sizeof(buf)) != sizeof(buf))
		die("read", errno);
}

static void lib_read_one(void *p)
{
	struct one_ctx *c = p;
	struct psc_counts counts;
	int err = psc_evsel__read(c->evsel, 0, 0, &counts);

	if (err)
		die("psc_evsel__read", err);
}

/* ---- case 2: a group of 4, one read(2) with PERF_FORMAT_GROUP ------------------------------ */
/* ---- case 3: 4 counters, 4 read(2)s --------------------------------------------------------- */
struct four_ctx {
	int fds[4];
	struct psc_evlist *evlist;
};

static void bare_read_group(void *p)
{
	struct four_ctx *c = p;
	uint64_t buf[3 + 2 * 4];

	if (read(c->fds[0], buf, sizeof(buf)) != sizeof(buf))
		die("read group", errno);
}

static void lib_read_group(void *p)
{
	struct four_ctx *c = p;
	int err = psc_evsel__read_group(psc_evlist__at(c->evlist, 0), 0, 0);

	if (err)
		die("psc_evsel__read_group", err);
}

static void bare_read_four(void *p)
{
	struct four_ctx *c = p;
	uint64_t buf[4];

	for (int i = 0; i < 4; i++)
		if (read(c->fds[i], buf, sizeof(buf)) != sizeof(buf))
			die("read", errno);
}

static void lib_read_evlist(void *p)
{
	struct four_ctx *c = p;
	int err = psc_evlist__read(c->evlist);

	if (err)
		die("psc_evlist__read", err);
}

/* ---- case 4: a meter around a call: start, stop, read (group of 4) -------------------------- */
struct meter_ctx {
	int fds[4];
	struct psc_meter *meter;
	struct psc_meter_value values[4];
};

static void bare_meter_cycle(void *p)
{
	struct meter_ctx *c = p;
	uint64_t buf[3 + 2 * 4];

	if (ioctl(c->fds[0], PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) ||
	    ioctl(c->fds[0], PERF_EVENT_IOC_ENABLE, 0) ||
	    ioctl(c->fds[0], PERF_EVENT_IOC_DISABLE, 0))
		die("ioctl", errno);
	if (read(c->fds[0], buf, sizeof(buf)) != sizeof(buf))
		die("read group", errno);
}

static void lib_meter_cycle(void *p)
{
	struct meter_ctx *c = p;
	int err = psc_meter__start(c->meter);

	if (!err)
		err = psc_meter__stop(c->meter);
	if (!err && psc_meter__read(c->meter, c->values, 4) != 4)
		err = -EIO;
	if (err)
		die("psc_meter start/stop/read", err);
}

static void bare_meter_read(void *p)
{
	struct meter_ctx *c = p;
	uint64_t buf[3 + 2 * 4];

	if (read(c->fds[0], buf, sizeof(buf)) != sizeof(buf))
		die("read group", errno);
}

static void lib_meter_read(void *p)
{
	struct meter_ctx *c = p;

	if (psc_meter__read(c->meter, c->values, 4) != 4)
		die("psc_meter__read", EIO);
}

/* ---- case 5: measure a call from nothing: open, enable, disable, read, close ---------------- */
static void nothing(void *arg)
{
	(void)arg;
}

static void bare_measure(void *p)
{
	uint64_t buf[4];
	int fd = bare_open(PERF_COUNT_SW_PAGE_FAULTS, -1, READ_FORMAT);

	(void)p;
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		die("ioctl", errno);
	nothing(NULL);
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0))
		die("ioctl", errno);
	if (read(fd, buf, sizeof(buf)) != sizeof(buf))
		die("read", errno);
	close(fd);
}

static void lib_measure(void *p)
{
	struct psc_meter_value v[1];
	int n = psc_measure(nothing, NULL, "page-faults", v, 1, NULL);

	(void)p;
	if (n != 1)
		die("psc_measure", n < 0 ? n : EIO);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: bench_counters [-n ITERATIONS] [-r ROUNDS]\n"
		"Prints ns per call of bare system calls and of the libperfscope call doing\n"
		"the same, and the library's overhead over the bare floor.\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs = NULL;
	struct psc_cpumap *cpus = psc_cpumap__new_any();
	struct psc_threadmap *threads = psc_threadmap__new_tid(gettid());
	struct one_ctx one = { 0 };
	struct four_ctx grp = { 0 }, sep = { 0 };
	struct meter_ctx mc = { 0 };
	struct side bare, lib;
	int opt, err;

	while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
		if (opt == 'n' && atoi(optarg) > 0)
			iterations = atoi(optarg);
		else if (opt == 'r' && atoi(optarg) > 0)
			rounds = atoi(optarg);
		else
			usage();
	}
	if (!cpus || !threads)
		die("maps", errno);
	printf("libperfscope %s, %d rounds x %d calls (open..close: / 10, cold: / 200); ns per call,\n"
	       "median of the rounds; overhead = lib / bare - 1, on the medians and on the fastest rounds\n",
	       psc_version(), rounds, iterations);
	printf("%-34s %9s %9s %9s %9s\n", "case", "bare ns", "lib ns", "overhead", "(min)");

	/* 1: a single counter */
	one.fd = bare_open(PERF_COUNT_SW_PAGE_FAULTS, -1, READ_FORMAT);
	{
		struct perf_event_attr a = { .type = PERF_TYPE_SOFTWARE,
					     .config = PERF_COUNT_SW_PAGE_FAULTS };

		one.evsel = psc_evsel__new(&a, "page-faults");
		if (!one.evsel || (err = psc_evsel__open(one.evsel, cpus, threads, NULL)))
			die("psc_evsel__open", one.evsel ? err : ENOMEM);
		psc_evsel__enable(one.evsel);
		ioctl(one.fd, PERF_EVENT_IOC_ENABLE, 0);
	}
	bare = (struct side){ bare_read_one, &one, 0 };
	lib = (struct side){ lib_read_one, &one, 0 };
	report("read one counter", "read(fd) of {value, enabled, running, id}",
	       "psc_evsel__read(evsel, 0, 0, &counts)", run_case(&bare, &lib));

	/* 2 and 3: four counters, grouped and not */
	err = psc_parse_events(GROUP_EVENTS, NULL, &specs, &perr);
	if (err)
		die(perr.msg, err);
	grp.evlist = psc_evlist__new();
	sep.evlist = psc_evlist__new();
	if (!grp.evlist || !sep.evlist || psc_evlist__add_specs(grp.evlist, specs, true) ||
	    psc_evlist__add_specs(sep.evlist, specs, false))
		die("evlist", ENOMEM);
	psc_evlist__set_maps(grp.evlist, cpus, threads);
	psc_evlist__set_maps(sep.evlist, cpus, threads);
	if ((err = psc_evlist__open(grp.evlist, NULL)) ||
	    (err = psc_evlist__open(sep.evlist, NULL)))
		die("psc_evlist__open", err);
	psc_evlist__enable(grp.evlist);
	psc_evlist__enable(sep.evlist);
	for (int i = 0; i < 4; i++) {
		grp.fds[i] = bare_open(group_configs[i], i ? grp.fds[0] : -1,
				       READ_FORMAT | PERF_FORMAT_GROUP);
		sep.fds[i] = bare_open(group_configs[i], -1, READ_FORMAT);
		ioctl(sep.fds[i], PERF_EVENT_IOC_ENABLE, 0);
	}
	ioctl(grp.fds[0], PERF_EVENT_IOC_ENABLE, 0);
	bare = (struct side){ bare_read_group, &grp, 0 };
	lib = (struct side){ lib_read_group, &grp, 0 };
	report("read a group of 4", "read(leader) with PERF_FORMAT_GROUP",
	       "psc_evsel__read_group(leader, 0, 0)", run_case(&bare, &lib));
	bare = (struct side){ bare_read_four, &sep, 0 };
	lib = (struct side){ lib_read_evlist, &sep, 0 };
	report("read 4 separate counters", "4 x read(fd)", "psc_evlist__read(evlist of 4)",
	       run_case(&bare, &lib));

	/* 4: a meter of the same four events, and the same group opened by hand */
	mc.meter = psc_meter__new(GROUP_EVENTS, NULL, &perr);
	if (!mc.meter)
		die(perr.msg, errno);
	memcpy(mc.fds, grp.fds, sizeof(mc.fds));
	bare = (struct side){ bare_meter_cycle, &mc, 0 };
	lib = (struct side){ lib_meter_cycle, &mc, 0 };
	report("meter start+stop+read (group 4)",
	       "ioctl RESET(group), ENABLE, DISABLE; read(leader)",
	       "psc_meter__start, psc_meter__stop, psc_meter__read", run_case(&bare, &lib));
	bare = (struct side){ bare_meter_read, &mc, 0 };
	lib = (struct side){ lib_meter_read, &mc, 0 };
	report(psc_meter__uses_rdpmc(mc.meter) ? "meter read (group 4, rdpmc)"
					       : "meter read (group 4)",
	       "read(leader) with PERF_FORMAT_GROUP", "psc_meter__read(meter, values, 4)",
	       run_case(&bare, &lib));

	/*
	 * 5: everything from scratch per call. Warm: this thread already has counters open (all of
	 * the above), so the kernel keeps its perf context. Cold: nothing else open, and each call
	 * also creates and frees the context, which dominates on some kernels.
	 */
	bare = (struct side){ bare_measure, NULL, iterations / 10 };
	lib = (struct side){ lib_measure, NULL, iterations / 10 };
	report("measure a call, warm (open..close)",
	       "perf_event_open, ENABLE, fn(), DISABLE, read, close",
	       "psc_measure(fn, NULL, \"page-faults\", v, 1, NULL)", run_case(&bare, &lib));

	for (int i = 0; i < 4; i++) {
		close(grp.fds[i]);
		close(sep.fds[i]);
	}
	close(one.fd);
	psc_meter__delete(mc.meter);
	psc_evsel__delete(one.evsel);
	psc_evlist__delete(grp.evlist);
	psc_evlist__delete(sep.evlist);
	bare.iters = lib.iters = iterations / 200 > 0 ? iterations / 200 : 1;
	report("measure a call, cold (open..close)", "the same, no other counter on the thread",
	       "the same", run_case(&bare, &lib));
	psc_event_list__delete(specs);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return 0;
}
