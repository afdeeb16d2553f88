/* Unit tests of the option tables (shared and own, one parser, one --help), the shared stack
 * options (-g, perf's --call-graph fp|dwarf[,SIZE], --user-callchain=dwarf) and -e lists joined. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "options.h"
#include "prof.h"

static int parse(struct cli_opts *o, unsigned int flags, int argc, const char **argv)
{
	return cli_opts_parse(o, argc, (char **)argv, flags, "help\n");
}

#define PARSE(o, flags, ...)                                                         \
	({                                                                           \
		const char *argv_[] = { "trace", __VA_ARGS__, NULL };                \
		parse(o, flags, (int)(sizeof(argv_) / sizeof(argv_[0])) - 1, argv_); \
	})

static void t_g_is_frame_pointers(void **state)
{
	struct cli_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "-g"), 0);
	assert_true(o.callchain);
	assert_false(o.dwarf);
	/* perf-prof's --call-graph alone is -g */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph"), 0);
	assert_true(o.callchain);
	assert_false(o.dwarf);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "fp"), 0);
	assert_true(o.callchain);
	assert_false(o.dwarf);
}

/* perf-prof's time conversions are taken (with a note on stderr) where time order is, else unknown */
static void t_time_conversions_taken(void **state)
{
	struct cli_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, CLI_OPT_ORDER, "--tsc"), 0);
	assert_int_equal(PARSE(&o, CLI_OPT_ORDER, "--kvmclock", "uuid"), 0);
	assert_int_equal(PARSE(&o, CLI_OPT_ORDER, "--clock-offset", "1000"), 0);
	assert_int_equal(PARSE(&o, CLI_OPT_ORDER, "--clock-offset"), 2); /* needs its N */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--tsc"), 2);
}

/* perf-prof's spellings (--pids, --cpus) are the same option: abbreviations of both are taken */
static void t_spellings_abbreviated(void **state)
{
	struct cli_opts o;
	char self[16];

	snprintf(self, sizeof(self), "%d", (int)getpid());
	assert_int_equal(PARSE(&o, CLI_OPT_TARGET, "--pi", self), 0);
	assert_int_equal(o.nr_pids, 1);
	assert_int_equal(PARSE(&o, CLI_OPT_TARGET, "--pids", self), 0);
	assert_int_equal(o.nr_pids, 1);
	assert_int_equal(PARSE(&o, CLI_OPT_TARGET, "--ti", self), 0);
	assert_int_equal(o.nr_tids, 1);
	assert_int_equal(PARSE(&o, CLI_OPT_CPUS, "--cp", "0"), 0);
	assert_string_equal(o.cpus, "0");
	assert_int_equal(PARSE(&o, CLI_OPT_TARGET, "--cg", "/"), 0);
	assert_string_equal(o.cgroup, "/");
}

static void t_dwarf_default_and_size(void **state)
{
	struct cli_opts o;

	(void)state;
	/* perf's spelling, the mode a separate word */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf"), 0);
	assert_true(o.callchain);
	assert_true(o.dwarf);
	assert_int_equal(o.stack_dump_size, CLI_STACK_DUMP_DEFAULT);
	assert_int_equal(CLI_STACK_DUMP_DEFAULT, 8192);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph=dwarf,16384"), 0);
	assert_true(o.dwarf);
	assert_int_equal(o.stack_dump_size, 16384);
	/* rounded up to the multiple of 8 the kernel requires */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,100"), 0);
	assert_int_equal(o.stack_dump_size, 104);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,0x1000"), 0);
	assert_int_equal(o.stack_dump_size, 4096);
	/* the kernel's largest */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,65528"), 0);
	assert_int_equal(o.stack_dump_size, CLI_STACK_DUMP_MAX);
	/* -g after --call-graph dwarf keeps dwarf; fp after it goes back */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf", "-g"), 0);
	assert_true(o.dwarf);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf", "--call-graph=fp"),
			 0);
	assert_false(o.dwarf);
}

static void t_dwarf_refused(void **state)
{
	struct cli_opts o;

	(void)state;
	/* over the kernel's limit (65536 is not below USHRT_MAX), rounding included */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,65536"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,65529"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,0"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,-8"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,8k"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "dwarf,"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph=lbr"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph=fp,8192"), 2);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph=dwarfx"), 2);
	/* not a mode: with no command allowed, an unexpected argument */
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--call-graph", "lbr"), 2);
	/* a profiler without stacks has no such option */
	assert_int_equal(PARSE(&o, CLI_OPT_EVENTS, "--call-graph", "dwarf"), 2);
}

static void t_user_callchain_dwarf(void **state)
{
	struct cli_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--user-callchain=dwarf"), 0);
	assert_int_equal(o.user_callchain, 1);
	assert_false(o.callchain);
	assert_true(o.dwarf);
	assert_int_equal(o.stack_dump_size, 8192);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--user-callchain=dwarf,4096"), 0);
	assert_int_equal(o.stack_dump_size, 4096);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--user-callchain=fp"), 0);
	assert_int_equal(o.user_callchain, 1);
	assert_false(o.dwarf);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--user-callchain"), 0);
	assert_false(o.dwarf);
	assert_int_equal(PARSE(&o, CLI_OPT_CALLCHAIN, "--user-callchain=lbr"), 2);
}

static void t_command_after(void **state)
{
	/* o.command points into argv: the arrays live as long as the checks */
	const char *g_dwarf[] = { "trace", "-g", "dwarf", NULL };
	const char *cg_dwarf[] = { "trace", "--call-graph", "dwarf", "--", "./a.out", NULL };
	const char *cg_alone[] = { "trace", "--call-graph", "--", "./a.out", NULL };
	const unsigned int flags = CLI_OPT_CALLCHAIN | CLI_OPT_TARGET;
	struct cli_opts o;

	(void)state;
	/* -g never takes a value: what follows is the command */
	assert_int_equal(parse(&o, flags, 3, g_dwarf), 0);
	assert_false(o.dwarf);
	assert_non_null(o.command);
	assert_string_equal(o.command[0], "dwarf");
	assert_int_equal(parse(&o, flags, 5, cg_dwarf), 0);
	assert_true(o.dwarf);
	assert_string_equal(o.command[0], "./a.out");
	assert_int_equal(parse(&o, flags, 4, cg_alone), 0);
	assert_true(o.callchain);
	assert_false(o.dwarf);
	assert_string_equal(o.command[0], "./a.out");
}

/* -e again joins the lists, each one's start kept (multi-trace's groups); a profiler's own list
 * (cli_opts_add_events) joins the same way, and one that does not fit changes nothing */
static void t_events_joined(void **state)
{
	static char big[5000];
	struct cli_opts o;

	(void)state;
	assert_int_equal(PARSE(&o, CLI_OPT_EVENTS, "-e", "a,b", "-e", "c"), 0);
	assert_string_equal(o.events, "a,b,c");
	assert_int_equal(o.nr_event_args, 2);
	assert_int_equal(o.event_arg_pos[0], 0);
	assert_int_equal(o.event_arg_pos[1], 4);
	assert_int_equal(cli_opts_add_events(&o, "d"), 6);
	assert_string_equal(o.events, "a,b,c,d");
	assert_int_equal(o.nr_event_args, 3);
	assert_int_equal(o.event_arg_pos[2], 6);
	memset(&o, 0, sizeof(o));
	memset(big, 'x', sizeof(big) - 1);
	assert_int_equal(cli_opts_add_events(&o, "e"), 0);
	assert_int_equal(o.nr_event_args, 1);
	assert_int_equal(cli_opts_add_events(&o, big), -E2BIG);
	assert_string_equal(o.events, "e");
	assert_int_equal(o.nr_event_args, 1);
	/* the first list is kept as given, however long */
	memset(&o, 0, sizeof(o));
	assert_int_equal(cli_opts_add_events(&o, big), 0);
	assert_ptr_equal(o.events, big);
}

/* A profiler's own table beside the shared one: one parser, one --help generator. */
struct own {
	bool fast;
	long n;
	const char *name, *cpu;
};

static const struct prof_opt own_opts[] = {
	{ "fast", 'f', NULL, PROF_OPT_FLAG, offsetof(struct own, fast), 0, 0, NULL, "go fast" },
	{ "count", 0, "N", PROF_OPT_LONG, offsetof(struct own, n), 1, 9, NULL, "N times" },
	{ "name", 0, "TEXT", PROF_OPT_TEXT, offsetof(struct own, name), 0, 0, NULL, "a name" },
	/* takes over the shared --cpu (trigger's): -C and --cpus stay shared */
	{ "cpu", 0, "CPU", PROF_OPT_STRING, offsetof(struct own, cpu), 0, 0, NULL, "a CPU" },
	{ 0 },
};

static int parse_own(struct cli_opts *o, struct own *w, int argc, const char **argv)
{
	struct prof p = { .name = argv[0] };

	memset(w, 0, sizeof(*w));
	return opts__parse(&p, o, CLI_OPT_CPUS | CLI_OPT_INTERVAL, own_opts, w, argc,
			   (char **)argv, "help\n");
}

static void t_own_table(void **state)
{
	const char *ok[] = { "x", "-f", "--count", "3", "--name=", "--cpu", "2", "-C", "0-1",
			     "-i", "10", NULL };
	const char *range[] = { "x", "--count", "10", NULL };
	const char *alias[] = { "x", "--cpus", "3", NULL };
	struct cli_opts o;
	struct own w;

	assert_int_equal(parse_own(&o, &w, 11, ok), 0);
	assert_true(w.fast);
	assert_int_equal(w.n, 3);
	assert_string_equal(w.name, ""); /* TEXT takes an empty value */
	assert_string_equal(w.cpu, "2");
	assert_string_equal(o.cpus, "0-1");
	assert_int_equal(o.interval_ms, 10);
	assert_int_equal(parse_own(&o, &w, 3, range), 2);
	assert_int_equal(parse_own(&o, &w, 3, alias), 0);
	assert_string_equal(o.cpus, "3");
	assert_null(w.cpu);
}

static void collect(void *ctx, const char *line)
{
	strncat(ctx, line, 4095 - strlen(ctx));
	strncat(ctx, "\n", 4095 - strlen(ctx));
}

static void t_help_from_tables(void **state)
{
	char text[4096] = "";

	opts__help(cli_shared_opts, CLI_OPT_CPUS | CLI_OPT_INTERVAL, NULL, own_opts, collect, text);
	/* the own --cpu is left out of the shared line, the text kept in its column */
	assert_non_null(strstr(text, "  -C, --cpus CPUS          these CPUs only: 0-3,6\n"));
	assert_non_null(strstr(text, "  -i, --interval MS        print every MS milliseconds\n"));
	text[0] = '\0';
	opts__help(own_opts, 0, NULL, NULL, collect, text);
	assert_string_equal(text, "  -f, --fast               go fast\n"
				  "      --count N            N times\n"
				  "      --name TEXT          a name\n"
				  "      --cpu CPU            a CPU\n");
}

/* The table's value types: a time, a percentage, an expression's text, a heatmap's file. */
struct typed {
	uint64_t than;
	const char *than_text, *key, *heatmap;
	double pct;
};

static const struct prof_opt typed_opts[] = {
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct typed, than), 0, 0, NULL, "t",
	  .given = PROF_OPT_GIVEN(struct typed, than_text) },
	{ "pct", 0, "PCT", PROF_OPT_PERCENT, offsetof(struct typed, pct), 0, 0, NULL, "p" },
	{ "key", 'k', "EXPR", PROF_OPT_EXPR, offsetof(struct typed, key), 0, 0, NULL, "k" },
	{ "heatmap", 0, "FILE", PROF_OPT_HEATMAP, offsetof(struct typed, heatmap), 0, 0, NULL, "h" },
	{ 0 },
};

static int parse_typed(struct cli_opts *o, struct typed *t, const char *opt, const char *val)
{
	const char *argv[] = { "x", opt, val, NULL };
	struct prof p = { .name = "x" };

	memset(t, 0, sizeof(*t));
	return opts__parse(&p, o, CLI_OPT_INTERVAL | CLI_OPT_DURATION, typed_opts, t, 3,
			   (char **)argv, "help\n");
}

static void t_value_types(void **state)
{
	struct cli_opts o;
	struct typed t;

	assert_int_equal(parse_typed(&o, &t, "--than", "10ms"), 0);
	assert_int_equal(t.than, 10000000);
	assert_string_equal(t.than_text, "10ms");
	assert_int_equal(parse_typed(&o, &t, "--than", "12"), 0);
	assert_int_equal(t.than, 12); /* a bare number is nanoseconds */
	assert_int_equal(parse_typed(&o, &t, "--than", "10 ms"), 2);
	assert_null(t.than_text);
	assert_int_equal(parse_typed(&o, &t, "--pct", "12.5%"), 0);
	assert_true(t.pct == 12.5);
	assert_int_equal(parse_typed(&o, &t, "--pct", "0"), 2);
	assert_int_equal(parse_typed(&o, &t, "--pct", "101"), 2);
	assert_int_equal(parse_typed(&o, &t, "-k", "pid & 1"), 0);
	assert_string_equal(t.key, "pid & 1");
	assert_int_equal(parse_typed(&o, &t, "-k", ""), 2);
	assert_int_equal(parse_typed(&o, &t, "--heatmap", "/tmp/h.svg"), 0);
	assert_string_equal(t.heatmap, "/tmp/h.svg");
	assert_int_equal(parse_typed(&o, &t, "--heatmap", "/tmp"), 2);
	assert_int_equal(parse_typed(&o, &t, "--heatmap", "/no/such/folder/h.svg"), 2);
	/* -i and --duration: a time too, a bare number in ms and s */
	assert_int_equal(parse_typed(&o, &t, "-i", "250"), 0);
	assert_int_equal(o.interval_ms, 250);
	assert_int_equal(parse_typed(&o, &t, "-i", "2s"), 0);
	assert_int_equal(o.interval_ms, 2000);
	assert_int_equal(parse_typed(&o, &t, "-i", "1.5"), 2);
	assert_int_equal(parse_typed(&o, &t, "-i", "0"), 2);
	assert_int_equal(parse_typed(&o, &t, "--duration", "1.5"), 0);
	assert_true(o.duration_s == 1.5);
	assert_int_equal(parse_typed(&o, &t, "--duration", "500ms"), 0);
	assert_true(o.duration_s == 0.5);
	assert_int_equal(parse_typed(&o, &t, "--duration", "0"), 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_g_is_frame_pointers), cmocka_unit_test(t_dwarf_default_and_size),
		cmocka_unit_test(t_dwarf_refused),	 cmocka_unit_test(t_user_callchain_dwarf),
		cmocka_unit_test(t_command_after),
		cmocka_unit_test(t_time_conversions_taken),
		cmocka_unit_test(t_spellings_abbreviated),
		cmocka_unit_test(t_events_joined),
		cmocka_unit_test(t_own_table),
		cmocka_unit_test(t_help_from_tables),
		cmocka_unit_test(t_value_types),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
