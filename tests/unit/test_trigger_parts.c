/* Unit tests of trigger's engines: cpustat (shares from /proc/stat text), flightrec (the newest
 * samples kept per CPU), capdir (names, sizes, the disk budget), capwrite (three files, the
 * pprof with addresses and build-ids),
 * condition (thresholds held --for a time) and capsched (windows, cooldown, --max). */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include <linux/perf_event.h>

#include "capdir.h"
#include "capsched.h"
#include "condition.h"
#include "capwrite.h"
#include "cpustat.h"
#include "flame.h"
#include "flightrec.h"
#include "pprof_read.h"

static void t_cpustat_shares(void **state)
{
	struct cpustat cs;

	(void)state;
	assert_int_equal(cpustat__init(&cs, 4), 0);
	/* user nice system idle iowait irq softirq steal */
	cpustat__parse(&cs, "cpu  100 0 100 800 0 0 0 0 0 0\n"
			    "cpu0 50 0 50 400 0 0 0 0 0 0\n"
			    "cpu1 50 0 50 400 0 0 0 0 0 0\n"
			    "intr 12345 1 2 3\n");
	/* first reading: nothing to compare */
	assert_true(cpustat__share(&cs, 0, CPUSTAT_SYS) < 0);
	/* the reading becomes the base: swap as cpustat__read does */
	{
		struct cpustat_ticks *t = cs.prev;

		cs.prev = cs.cpus;
		cs.cpus = t;
		cs.prev_total = cs.total;
	}
	/* cpu0: +10 user, +60 system, +20 idle, +10 iowait over 100 ticks; cpu1: all idle */
	cpustat__parse(&cs, "cpu  110 0 160 920 10 0 0 0 0 0\n"
			    "cpu0 60 0 110 420 10 0 0 0 0 0\n"
			    "cpu1 50 0 50 500 0 0 0 0 0 0\n");
	assert_float_equal(cpustat__share(&cs, 0, CPUSTAT_SYS), 60.0, 1e-9);
	assert_float_equal(cpustat__share(&cs, 0, CPUSTAT_USER), 10.0, 1e-9);
	assert_float_equal(cpustat__share(&cs, 0, CPUSTAT_IOWAIT), 10.0, 1e-9);
	assert_float_equal(cpustat__share(&cs, 0, CPUSTAT_BUSY), 70.0, 1e-9);
	assert_float_equal(cpustat__share(&cs, 1, CPUSTAT_BUSY), 0.0, 1e-9);
	/* the machine: 60 system of 200 ticks */
	assert_float_equal(cpustat__share(&cs, -1, CPUSTAT_SYS), 30.0, 1e-9);
	/* cpu2 has no line (offline), cpu 9 is out of range */
	assert_true(cpustat__share(&cs, 2, CPUSTAT_SYS) < 0);
	assert_true(cpustat__share(&cs, 9, CPUSTAT_SYS) < 0);
	assert_string_equal(cpustat__kind_name(CPUSTAT_BUSY), "cpu");
	/* the real file reads */
	assert_int_equal(cpustat__read(&cs), 0);
	assert_true(cs.total.seen);
	cpustat__exit(&cs);
}

static void t_cpustat_task(void **state)
{
	uint64_t user = 1, sys = 1;

	(void)state;
	assert_int_equal(cpustat__task(getpid(), &user, &sys), 0);
	assert_int_equal(cpustat__task(0x7ffffff0, &user, &sys), -ESRCH);
}

static unsigned int seen_nr;
static uint64_t seen_time[16];

static void collect(void *ctx, int cpu, const struct psc_sample *s)
{
	(void)ctx;
	assert_int_equal(cpu, 1);
	assert_int_equal(s->callchain.nr, 2);
	assert_int_equal(s->callchain.ips[1], s->time * 10);
	if (seen_nr < 16)
		seen_time[seen_nr++] = s->time;
}

static void t_flightrec(void **state)
{
	struct flightrec *fr = flightrec__new(4, 3);
	uint64_t ips[2];
	struct psc_sample s = { .sample_type = PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_TIME };

	(void)state;
	assert_non_null(fr);
	for (uint64_t t = 1; t <= 5; t++) {
		ips[0] = PERF_CONTEXT_USER;
		ips[1] = t * 10;
		s.time = t;
		s.callchain.nr = 2;
		s.callchain.ips = ips;
		flightrec__add(fr, 1, &s);
	}
	/* three slots: the newest three (3, 4, 5), oldest first; [4, 100) keeps 4 and 5 */
	seen_nr = 0;
	assert_int_equal(flightrec__each(fr, 1, 0, 100, collect, NULL), 3);
	assert_int_equal(seen_nr, 3);
	assert_int_equal(seen_time[0], 3);
	assert_int_equal(seen_time[2], 5);
	seen_nr = 0;
	assert_int_equal(flightrec__each(fr, 1, 4, 100, collect, NULL), 2);
	assert_int_equal(flightrec__each(fr, 1, 0, 5, collect, NULL), 2);
	/* every CPU: only cpu 1 has samples; out of range: none */
	assert_int_equal(flightrec__each(fr, -1, 0, 100, collect, NULL), 3);
	assert_int_equal(flightrec__each(fr, 7, 0, 100, collect, NULL), 0);
	assert_int_equal(flightrec__cut(fr), 0);
	flightrec__delete(fr);
	flightrec__delete(NULL);
}

static void t_capdir_size(void **state)
{
	uint64_t b;

	(void)state;
	assert_int_equal(capdir__parse_size("100M", &b), 0);
	assert_int_equal(b, 100ull << 20);
	assert_int_equal(capdir__parse_size("2GiB", &b), 0);
	assert_int_equal(b, 2ull << 30);
	assert_int_equal(capdir__parse_size("512k", &b), 0);
	assert_int_equal(b, 512ull << 10);
	assert_int_equal(capdir__parse_size("0", &b), 0);
	assert_int_equal(b, 0);
	assert_int_equal(capdir__parse_size("12x", &b), -EINVAL);
	assert_int_equal(capdir__parse_size("-1", &b), -EINVAL);
	assert_int_equal(capdir__parse_size("", &b), -EINVAL);
	assert_int_equal(capdir__parse_size("99999999999T", &b), -EINVAL);
}

static void touch(const char *dir, const char *name, size_t bytes)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	fclose(f);
}

static bool exists(const char *dir, const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void t_capdir_budget(void **state)
{
	char dir[] = "/tmp/psc_capdir_XXXXXX", stem[512], sub[600];
	struct capdir_stats st = { 0 };

	(void)state;
	assert_non_null(mkdtemp(dir));
	/* a name: the UTC stamp, milliseconds, the tag cleaned */
	capdir__stem(stem, sizeof(stem), dir, "trigger-", 1700000000123000000ull, "sys;cpu 1/x");
	assert_non_null(strstr(stem, "/trigger-20231114-221320.123-sys_cpu_1_x"));
	/* three captures of 2 files each (about 8 KiB each on disk), oldest first by name */
	touch(dir, "trigger-20200101-000000.000-sys-cpu0.folded", 4000);
	touch(dir, "trigger-20200101-000000.000-sys-cpu0.svg", 4000);
	touch(dir, "trigger-20210101-000000.000-sys-cpu0.folded", 4000);
	touch(dir, "trigger-20210101-000000.000-sys-cpu0.pb.gz", 4000);
	touch(dir, "trigger-20220101-000000.000-sys-cpu0.folded", 4000);
	touch(dir, "trigger-20220101-000000.000-sys-cpu0.svg", 4000);
	touch(dir, "other.txt", 40000);
	/* no limit: counted only */
	assert_int_equal(capdir__enforce(dir, "trigger-", 0, NULL, &st), 0);
	assert_int_equal(st.captures, 3);
	assert_int_equal(st.removed, 0);
	/* room for one: the two oldest go, whole, the newest (kept) stays; other files stay */
	snprintf(sub, sizeof(sub), "%s/trigger-20220101-000000.000-sys-cpu0", dir);
	assert_int_equal(capdir__enforce(dir, "trigger-", 9000, sub, &st), 0);
	assert_int_equal(st.removed, 2);
	assert_int_equal(st.captures, 1);
	assert_false(exists(dir, "trigger-20200101-000000.000-sys-cpu0.folded"));
	assert_false(exists(dir, "trigger-20200101-000000.000-sys-cpu0.svg"));
	assert_false(exists(dir, "trigger-20210101-000000.000-sys-cpu0.pb.gz"));
	assert_true(exists(dir, "trigger-20220101-000000.000-sys-cpu0.svg"));
	assert_true(exists(dir, "other.txt"));
	/* the kept one is never removed, even over the budget */
	assert_int_equal(capdir__enforce(dir, "trigger-", 1, sub, &st), 0);
	assert_true(exists(dir, "trigger-20220101-000000.000-sys-cpu0.folded"));
	assert_int_equal(capdir__enforce(dir, "trigger-", 1, NULL, &st), 0);
	assert_int_equal(st.removed, 3);
	assert_false(exists(dir, "trigger-20220101-000000.000-sys-cpu0.folded"));
	/* a missing dir */
	assert_int_equal(capdir__enforce("/nonexistent-psc", "trigger-", 1, NULL, &st), -ENOENT);
	unlink(strcat(strcpy(stem, dir), "/other.txt"));
	assert_int_equal(rmdir(dir), 0);
	/* prepare creates parents */
	snprintf(sub, sizeof(sub), "%s/a/b", dir);
	assert_int_equal(capdir__prepare(sub), 0);
	rmdir(sub);
	snprintf(sub, sizeof(sub), "%s/a", dir);
	rmdir(sub);
	rmdir(dir);
}

/* The pprof of a capture keeps every frame's address, and this binary's mapping its build-id. */
static void check_capture_pprof(const char *path)
{
	Perftools__Profiles__Profile *pr;
	bool self_with_id = false;
	size_t len;
	uint8_t *buf = gunzip_file(path, &len);

	pr = perftools__profiles__profile__unpack(NULL, len, buf);
	assert_non_null(pr);
	assert_int_equal(pr->n_sample, 2);
	assert_int_equal(pr->n_location, 2); /* t_condition is one address in both */
	for (size_t i = 0; i < pr->n_location; i++)
		assert_true(pr->location[i]->address != 0);
	for (size_t i = 0; i < pr->n_mapping; i++) {
		const Perftools__Profiles__Mapping *m = pr->mapping[i];

		if (strstr(pr->string_table[m->filename], "unit_trigger_parts") && m->build_id &&
		    strlen(pr->string_table[m->build_id]) >= 16 && m->memory_start)
			self_with_id = true;
	}
	assert_true(self_with_id);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(buf);
}

static void t_condition(void **state);

/* A frame of this program: a return address inside a function here. */
static uint64_t here(void (*fn)(void **))
{
	return (uint64_t)(uintptr_t)fn + 4;
}

static void t_capwrite(void **state)
{
	char dir[] = "/tmp/psc_capwrite_XXXXXX", stem[512], text[4096] = "";
	struct callchain *cc = callchain__new(NULL);
	struct capwrite_opts o = { .title = "t", .freq = 99 };
	struct capwrite_result res;
	struct stack_table st = { 0 };
	const uint64_t work[] = { (uint64_t)PERF_CONTEXT_USER, here(t_capwrite),
				  here(t_condition) };
	const uint64_t other[] = { (uint64_t)PERF_CONTEXT_USER, here(t_condition) };
	struct stat sb;
	FILE *f;

	(void)state;
	assert_non_null(cc);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(stack_table__init(&st, false), 0);
	assert_non_null(stack_table__count(&st, (uint32_t)getpid(), (uint32_t)getpid(), "w", work,
					   3, 5, 0));
	assert_non_null(stack_table__count(&st, (uint32_t)getpid(), (uint32_t)getpid(), "w", other,
					   2, 2, 0));
	snprintf(stem, sizeof(stem), "%s/cap", dir);
	assert_int_equal(capwrite__all(cc, &st, stem, &o, &res), 0);
	assert_int_equal(res.nr, 3);
	assert_int_equal(res.stacks, 2);
	assert_non_null(strstr(res.files[0], "cap.folded"));
	assert_non_null(strstr(res.files[1], "cap.svg"));
	assert_non_null(strstr(res.files[2], "cap.pb.gz"));
	/* symbolized from the addresses: the comm as the root, outermost first */
	f = fopen(res.files[0], "r");
	assert_non_null(f);
	assert_true(fread(text, 1, sizeof(text) - 1, f) > 0);
	fclose(f);
	assert_non_null(strstr(text, "w;t_condition;t_capwrite 5\n"));
	assert_non_null(strstr(text, "w;t_condition 2\n"));
	check_capture_pprof(res.files[2]);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(stat(res.files[i], &sb), 0);
		assert_true(sb.st_size > 0);
		unlink(res.files[i]);
	}
	/* unwritable: every file fails, the first error is kept */
	snprintf(stem, sizeof(stem), "/nonexistent-psc/cap");
	assert_true(capwrite__all(cc, &st, stem, &o, &res) < 0);
	assert_int_equal(res.nr, 0);
	stack_table__exit(&st);
	callchain__delete(cc);
	rmdir(dir);
}

static void t_condition(void **state)
{
	struct cond c = { 0 };
	char *ev = NULL;
	double v = 0;

	(void)state;
	assert_int_equal(cond__init_share(&c, CPUSTAT_SYS, "50%"), 0);
	assert_string_equal(c.name, "sys>=50%");
	assert_string_equal(c.tag, "sys");
	assert_int_equal(cond__init_share(&c, CPUSTAT_SYS, "0"), -EINVAL);
	assert_int_equal(cond__init_share(&c, CPUSTAT_SYS, "101"), -EINVAL);
	assert_int_equal(cond__init_share(&c, CPUSTAT_SYS, "5x"), -EINVAL);
	/* the last '>' splits: N may be written >=N */
	assert_int_equal(cond__split_rate("sched:sched_switch>=500", &ev, &v), 0);
	assert_string_equal(ev, "sched:sched_switch");
	assert_float_equal(v, 500, 1e-9);
	free(ev);
	assert_int_equal(cond__split_rate("sched:sched_switch", &ev, &v), -EINVAL);
	assert_int_equal(cond__split_rate(">5", &ev, &v), -EINVAL);
	assert_int_equal(cond__split_rate("cs>0", &ev, &v), -ERANGE);
	assert_int_equal(cond__split_rate("cs>x", &ev, &v), -ERANGE);

	/* held for 1 s at 50%: readings every 100 ns stand for the periods */
	assert_int_equal(cond__init_share(&c, CPUSTAT_SYS, "50"), 0);
	assert_int_equal(cond__alloc_units(&c, 2), 0);
	assert_true(c.value[1] < 0);
	assert_false(cond__holds(&c, 0, 60, 1000, 900, 300, 0)); /* the run starts at 900 */
	assert_false(cond__holds(&c, 0, 40, 1100, 1000, 300, 0)); /* under: starts anew */
	assert_float_equal(c.value[0], 40, 1e-9);
	assert_false(cond__holds(&c, 0, 60, 1200, 1100, 300, 0));
	assert_false(cond__holds(&c, 0, 80, 1300, 1200, 300, 0));
	assert_true(cond__holds(&c, 0, 70, 1400, 1300, 300, 0)); /* 1100..1400 */
	assert_float_equal(cond__mean(&c, 0), 70, 1e-9);
	/* the other unit is its own; slack forgives a late reading */
	assert_false(cond__holds(&c, 1, -1, 1400, 1300, 300, 0));
	assert_false(cond__holds(&c, 1, 90, 1500, 1400, 300, 0));
	assert_true(cond__holds(&c, 1, 90, 1650, 1500, 300, 50));
	cond__reset(&c, 0);
	assert_false(cond__holds(&c, 0, 70, 1500, 1400, 300, 0));
	cond__free(&c);

	/* a latency: name, tag and threshold (ms) given; the tlat is its set's, not freed here */
	memset(&c, 0, sizeof(c));
	cond__init_latency(&c, (struct tlat *)&c, "latency a->b>20ms", "lat-b", 20);
	assert_int_equal(c.type, COND_LATENCY);
	assert_ptr_equal(c.lat, &c);
	assert_string_equal(c.name, "latency a->b>20ms");
	assert_string_equal(c.tag, "lat-b");
	assert_int_equal(cond__alloc_units(&c, 1), 0);
	assert_false(cond__holds(&c, 0, 19.9, 1000, 900, 100, 0)); /* under 20 ms */
	assert_true(cond__holds(&c, 0, 20, 1100, 1000, 100, 0));
	cond__free(&c);
}

static void t_capsched(void **state)
{
	struct capsched cs = { 0 };

	(void)state;
	assert_int_equal(capsched__init(&cs, 2), 0);
	cs.cooldown_ns = 1000;
	cs.grace_ns = 10;
	cs.max = 2;
	assert_true(capsched__can_start(&cs, 0, 5000));
	assert_int_equal(capsched__start(&cs, 0, 5000, 3000, 4000, 500), 1);
	/* the window does not reach before floor (the run's start) */
	assert_int_equal(cs.win[0].from_ns, 4000);
	assert_int_equal(cs.win[0].end_ns, 5500);
	assert_false(capsched__can_start(&cs, 0, 5100)); /* one at a time per unit */
	assert_true(capsched__can_start(&cs, 1, 5100));
	assert_int_equal(capsched__last_end(&cs), 5500);
	assert_int_equal(capsched__due(&cs, 5505), -1); /* its grace not over */
	assert_int_equal(capsched__due(&cs, 5510), 0);
	capsched__arm(&cs);
	capsched__end(&cs, 0, 5510);
	assert_false(capsched__can_start(&cs, 0, 6000)); /* cooling down */
	assert_true(capsched__can_start(&cs, 0, 6510));
	assert_false(capsched__done(&cs));
	assert_int_equal(capsched__start(&cs, 1, 7000, 0, 0, 0), 2);
	assert_false(capsched__can_start(&cs, 0, 9000)); /* --max 2 */
	assert_false(capsched__done(&cs)); /* the second still going on */
	capsched__end(&cs, 1, 7010);
	assert_true(capsched__done(&cs));
	capsched__exit(&cs);
	assert_int_equal(cs.end_fd, -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_cpustat_shares), cmocka_unit_test(t_cpustat_task),
		cmocka_unit_test(t_flightrec),	    cmocka_unit_test(t_capdir_size),
		cmocka_unit_test(t_capdir_budget),  cmocka_unit_test(t_capwrite),
		cmocka_unit_test(t_condition),	    cmocka_unit_test(t_capsched),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
