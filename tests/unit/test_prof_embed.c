/* Unit tests of common/prof_embed: -e items naming a profiler rewritten to its event, the rest
 * kept as typed, error positions put back into the typed text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "prof.h"
#include "prof_embed.h"

/* a stand-in for profile: "-x" cannot be said, anything else is the frequency */
static int fake_as_event(const char *opts, char *buf, size_t len, char *why, size_t why_len)
{
	if (strstr(opts, "-x")) {
		snprintf(why, why_len, "option '-x' cannot be expressed");
		return -1;
	}
	snprintf(buf, len, "cpu-clock//freq=%s/:k", opts + 3);
	return 0;
}

static const struct profiler fake_profile = { .name = "profile", .as_event = fake_as_event };
static const struct profiler fake_state = { .name = "task-state" };
static const struct profiler fake_faults = { .name = "page-faults" };

static const struct profiler *fake_lookup(const char *name)
{
	if (!strcmp(name, "profile"))
		return &fake_profile;
	if (!strcmp(name, "task-state"))
		return &fake_state;
	if (!strcmp(name, "page-faults"))
		return &fake_faults;
	return NULL;
}

static void t_rewrite(void **state)
{
	struct prof_embed e;
	const char *in = "sched:a/x==1/key=y/,profile/-F 200/untraced/,sched:b";

	(void)state;
	assert_int_equal(prof_embed__rewrite("t", in, fake_lookup, &e), 0);
	assert_string_equal(e.text, "sched:a/x==1/key=y/,cpu-clock//freq=200/untraced/:k,sched:b");
	/* before, in the profiler's part, in the ATTRs typed, after */
	assert_int_equal(prof_embed__pos(&e, 2), 2);
	assert_int_equal(prof_embed__pos(&e, 22), 20); /* "cpu-clock" -> "profile" */
	assert_int_equal(prof_embed__pos(&e, (int)(strstr(e.text, "untraced") - e.text)),
			 (int)(strstr(in, "untraced") - in));
	assert_int_equal(prof_embed__pos(&e, (int)(strstr(e.text, ",sched:b") - e.text) + 1),
			 (int)(strstr(in, ",sched:b") - in) + 1);
	assert_int_equal(prof_embed__pos(&e, -1), -1);
	prof_embed__free(&e);

	/* no profiler named: nothing rewritten; commas in quotes and a tracepoint "profile:" stay
	 */
	assert_int_equal(prof_embed__rewrite("t",
					     "sched:a/comm==\"x,profile/-F 1/\"/,cpu-clock//stack/",
					     fake_lookup, &e),
			 0);
	assert_null(e.text);
	assert_int_equal(prof_embed__rewrite("t", "profile:x/a==1/", fake_lookup, &e), 0);
	assert_null(e.text);
	/* the last item, no ATTRs of its own, and ATTRs without their last '/' */
	assert_int_equal(prof_embed__rewrite("t", "profile/-F 5/", fake_lookup, &e), 0);
	assert_string_equal(e.text, "cpu-clock//freq=5/:k");
	prof_embed__free(&e);
	assert_int_equal(prof_embed__rewrite("t", "sched:b,profile/-F 5/stack", fake_lookup, &e),
			 0);
	assert_string_equal(e.text, "sched:b,cpu-clock//freq=5/stack/:k");
	prof_embed__free(&e);
}

static void t_errors(void **state)
{
	struct prof_embed e;

	(void)state;
	assert_int_equal(prof_embed__rewrite("t", "sched:a,profile/-F 1 -x/", fake_lookup, &e), 2);
	assert_null(e.text);
	assert_int_equal(prof_embed__rewrite("t", "task-state/-S/", fake_lookup, &e), 2);
	assert_int_equal(prof_embed__rewrite("t", "page-faults/-N 10/", fake_lookup, &e), 2);
	/* a profiler named like an event (page-faults): NAME/FILTER/ and NAME//ATTR/ are the
	 * event, left to the event parser; only NAME/-OPTS/ means the profiler */
	assert_int_equal(prof_embed__rewrite("t", "page-faults/pid==1/", fake_lookup, &e), 0);
	assert_null(e.text);
	assert_int_equal(prof_embed__rewrite("t", "sched:a,page-faults//stack/", fake_lookup, &e),
			 0);
	assert_null(e.text);
	assert_int_equal(prof_embed__rewrite("t", "profile/-F 1", fake_lookup, &e), 2);
	/* without the CLI's table nothing is a profiler: options where a filter goes are an error
	 */
	assert_int_equal(prof_embed__rewrite("t", "profile/-F 1/", NULL, &e), 2);
	assert_null(e.text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_rewrite),
		cmocka_unit_test(t_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
