/* Integration tests of EXPR ATTRs in the profiler engine: a declared profiler whose ATTRs are
 * expressions, bound against this kernel's formats, and the errors pointing into the event list. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <perfscope/perfscope.h>

#include "expr.h"
#include "prof.h"

static const char *const key_var[] = { "key", NULL };

static const struct prof_attr attrs[] = {
	{ "key", PROF_ATTR_EXPR, false, "key=EXPR: the row" },
	{ "top-by", PROF_ATTR_EXPR, true, "top-by=EXPR: summed" },
	{ "comm", PROF_ATTR_EXPR, false, "comm=EXPR: the name", .any_type = true },
	{ "printkey", PROF_ATTR_EXPR, false, "printkey=EXPR: the key as text", .any_type = true,
	  .vars = key_var },
	{ NULL },
};

/* What the event hook saw: each ATTR's value on a synthetic sched_wakeup record. */
static char seen[1024];

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static int on_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *attr)
{
	uint8_t raw[40] = { 0 };
	struct psc_sample s = { .cpu = 1, .pid = 500, .tid = 501 };
	size_t used = 0;

	(void)p;
	(void)priv;
	(void)attr;
	memcpy(raw + 8, "bash", 4);
	put32(raw + 24, 42);
	put32(raw + 28, 120);
	for (int i = 0; i < ev->nr_attrs; i++) {
		struct expr *e = ev->attrs[i].expr;
		struct expr_val v;
		char val[128];

		assert_non_null(e);
		expr__set_var(e, 0, 7);
		assert_int_equal(expr__eval(e, raw, sizeof(raw), &s, &v), 0);
		expr_val__snprint(expr__type(e), &v, val, sizeof(val));
		used += (size_t)snprintf(seen + used, sizeof(seen) - used, "%s%s=%s",
					 used ? " " : "", ev->attrs[i].decl->name, val);
	}
	return 1; /* seen enough: end with exit 0 */
}

static const struct profiler test_prof = {
	.name = "exprtest",
	.summary = "EXPR ATTRs",
	.usage = "-e EVENT",
	.shared_opts = CLI_OPT_EVENTS,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_COMM,
	.attrs = attrs,
	.event = on_event,
};

/* Runs the profiler on events; its stderr into err. */
static int run(const char *events, char *err, size_t len)
{
	char *argv[] = { "exprtest", "-e", (char *)events, NULL };
	FILE *f = tmpfile();
	int saved = dup(2), ret;
	size_t n;

	assert_non_null(f);
	fflush(stderr);
	dup2(fileno(f), 2);
	seen[0] = 0;
	ret = prof__main(&test_prof, NULL, 3, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(err, 1, len - 1, f);
	err[n] = 0;
	fclose(f);
	return ret;
}

static int setup(void **state)
{
	(void)state;
	if (!psc_tracefs__dir() && !psc_tracefs__mount()) {
		print_message("# tracefs cannot be mounted here: skipped\n");
		return -1;
	}
	return 0;
}

static void test_bound(void **state)
{
	char err[4096];

	assert_int_equal(run("sched:sched_wakeup//key=pid/top-by=prio*2/top-by=_cpu/comm=comm/"
			     "printkey=\"printf(\"%d-%s\", key, comm)\"/",
			     err, sizeof(err)),
			 0);
	assert_string_equal(seen, "key=42 top-by=240 top-by=1 comm=bash printkey=7-bash");
	/* not a tracepoint: the sample's names */
	assert_int_equal(run("page-faults//key=(_cpu << 16) | _tid/", err, sizeof(err)), 0);
	assert_string_equal(seen, "key=66037");
}

/* err holds part, or the test fails showing err. */
static void has(const char *err, const char *part)
{
	if (!strstr(err, part))
		fail_msg("stderr lacks '%s':\n%s", part, err);
}

static void test_errors(void **state)
{
	char err[4096];

	/* an unknown name: caret under it in the event list, the fields listed */
	assert_int_equal(run("sched:sched_wakeup//key=prio + pidd/", err, sizeof(err)), 2);
	has(err, "perfscope exprtest: key=prio + pidd: sched_wakeup has no field "
		 "'pidd'; did you mean 'pid' or '_pid'?\n"
		 "  sched:sched_wakeup//key=prio + pidd/\n"
		 "                                 ^\n"
		 "  sched:sched_wakeup has fields: common_type, ");
	/* a number is needed for key=, a string is fine for comm= */
	assert_int_equal(run("sched:sched_wakeup//key=comm/", err, sizeof(err)), 2);
	has(err, "key=comm: this is a string, and a number is needed here");
	/* a type error in a quoted value: the caret counts the quote */
	assert_int_equal(run("sched:sched_wakeup//top-by=\"comm / 2\"/", err, sizeof(err)), 2);
	has(err, "  sched:sched_wakeup//top-by=\"comm / 2\"/\n"
		 "                              ^\n");
	/* the variables are the ATTR's own: key is no name in key= */
	assert_int_equal(run("sched:sched_wakeup//key=key/", err, sizeof(err)), 2);
	has(err, "has no field 'key'");
	/* an ATTR it does not take: the list says what the EXPR ones take */
	assert_int_equal(run("sched:sched_wakeup//nope=1/", err, sizeof(err)), 2);
	has(err, "key=EXPR, top-by=EXPR, comm=EXPR, printkey=EXPR");
	/* an ATTR given twice that may not be */
	assert_int_equal(run("sched:sched_wakeup//key=pid/key=prio/", err, sizeof(err)), 2);
	has(err, "given twice");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
