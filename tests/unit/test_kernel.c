/* Unit tests of lib/kernel.c: the perf sysctls as /proc shows them, capabilities, the lost probe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/capability.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

#include <perfscope/kernel.h>

/* The value as the shell would read it, or dflt. */
static long proc_value(const char *path, long dflt)
{
	FILE *f = fopen(path, "r");
	long v = dflt;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = dflt;
		fclose(f);
	}
	return v;
}

static void test_sysctl(void **state)
{
	(void)state;
	assert_int_equal(psc_kernel__sysctl("perf_event_paranoid", -99),
			 proc_value("/proc/sys/kernel/perf_event_paranoid", -99));
	assert_int_equal(psc_kernel__sysctl("perf_event_max_sample_rate", -99),
			 proc_value("/proc/sys/kernel/perf_event_max_sample_rate", -99));
	/* what is not there, or not a name, is the default */
	assert_int_equal(psc_kernel__sysctl("no_such_sysctl", 42), 42);
	assert_int_equal(psc_kernel__sysctl("../kernel/perf_event_paranoid", 42), 42);
	assert_int_equal(psc_kernel__sysctl("", 42), 42);
	assert_int_equal(psc_kernel__sysctl(NULL, 42), 42);
	/* a file of text, not a number */
	assert_int_equal(psc_kernel__sysctl("ostype", 7), 7);
}

/* The effective set as /proc shows it (CapEff), or 0 when it cannot be read. */
static unsigned long long cap_eff(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	if (f)
		fclose(f);
	return eff;
}

static void test_caps(void **state)
{
	unsigned long long eff = cap_eff();

	(void)state;
	/* the same answer as /proc's CapEff, whoever runs it (root in a container may lack some) */
	assert_int_equal(psc_kernel__has_cap(CAP_SYS_ADMIN), !!(eff & (1ull << CAP_SYS_ADMIN)));
	assert_int_equal(psc_kernel__has_cap(CAP_IPC_LOCK), !!(eff & (1ull << CAP_IPC_LOCK)));
	assert_int_equal(psc_kernel__has_cap(CAP_PERFMON), !!(eff & (1ull << CAP_PERFMON)));
	/* no such capability: what capget cannot tell, the uid decides */
	assert_int_equal(psc_kernel__has_cap(-1), geteuid() == 0);
	assert_int_equal(psc_kernel__has_cap(1000), geteuid() == 0);
}

static void test_format_lost(void **state)
{
	(void)state;
	/* probed once: the same answer again */
	assert_int_equal(psc_kernel__has_format_lost(), psc_kernel__has_format_lost());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysctl),
		cmocka_unit_test(test_caps),
		cmocka_unit_test(test_format_lost),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
