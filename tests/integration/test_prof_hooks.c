/* Integration tests of the skeleton's hook protocol on real events: a start hook's PROF_DONE is a
 * clean end (exit 0, nothing sampled), -errno a failure (exit 1); default -e groups as typed. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "prof.h"

/* What the hooks saw, and what the start hook answers. */
static int start_ret, nr_started, nr_samples;
static char events_seen[256];
static int groups_seen, group2_pos;

static int on_check(struct prof *p, void *priv)
{
	snprintf(events_seen, sizeof(events_seen), "%s", p->opts.events ? p->opts.events : "");
	groups_seen = p->opts.nr_event_args;
	group2_pos = groups_seen > 1 ? p->opts.event_arg_pos[1] : -1;
	return PROF_GO;
}

static int on_start(struct prof *p, void *priv)
{
	nr_started++;
	return start_ret;
}

static int on_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	nr_samples++;
	return PROF_DONE;
}

static const struct profiler test_prof = {
	.name = "hooktest",
	.summary = "the hook results",
	.usage = "[-e EVENTS] -- COMMAND",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_TARGET | CLI_OPT_QUIET,
	.needs = PROF_EVENTS | PROF_RINGS,
	.default_groups = (const char *const[]){ "page-faults", "task-clock", NULL },
	.check = on_check,
	.start = on_start,
	.sample = on_sample,
};

/* Runs hooktest ARGS -- true, its stderr kept out of the TAP stream. */
static int run(int start, const char *events)
{
	char *with_e[] = { "hooktest", "-q", "-e", (char *)events, "--", "true", NULL };
	char *without[] = { "hooktest", "-q", "--", "true", NULL };
	FILE *f = tmpfile();
	int saved = dup(2), ret;

	assert_non_null(f);
	start_ret = start;
	nr_started = nr_samples = 0;
	events_seen[0] = 0;
	fflush(stderr);
	dup2(fileno(f), 2);
	ret = events ? prof__main(&test_prof, NULL, 6, with_e)
		     : prof__main(&test_prof, NULL, 4, without);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	fclose(f);
	return ret;
}

/* PROF_DONE from start: the run ends there, cleanly; the held command never runs */
static void test_start_done(void **state)
{
	assert_int_equal(run(PROF_DONE, NULL), 0);
	assert_int_equal(nr_started, 1);
	assert_int_equal(nr_samples, 0);
}

/* -errno from start: a runtime failure, exit status 1 */
static void test_start_errno(void **state)
{
	assert_int_equal(run(-EIO, NULL), 1);
	assert_int_equal(nr_samples, 0);
	assert_int_equal(run(-ENOMEM, NULL), 1);
}

/* PROF_GO: the command runs and its page faults are sampled; the sample hook's PROF_DONE stops */
static void test_start_go(void **state)
{
	assert_int_equal(run(PROF_GO, NULL), 0);
	assert_int_equal(nr_samples, 1);
}

/* no -e: the declaration's groups, joined as two -e would be, seen by the check hook */
static void test_default_groups(void **state)
{
	run(PROF_DONE, NULL);
	assert_string_equal(events_seen, "page-faults,task-clock");
	assert_int_equal(groups_seen, 2);
	assert_int_equal(group2_pos, (int)strlen("page-faults,"));
	run(PROF_DONE, "minor-faults");
	assert_string_equal(events_seen, "minor-faults");
	assert_int_equal(groups_seen, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_done),
		cmocka_unit_test(test_start_errno),
		cmocka_unit_test(test_start_go),
		cmocka_unit_test(test_default_groups),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
