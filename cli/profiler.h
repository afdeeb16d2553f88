/* The shape of a perfscope subcommand: one `const struct profiler` per cli/profilers/<name>.c.
 */
#ifndef PERFSCOPE_CLI_PROFILER_H
#define PERFSCOPE_CLI_PROFILER_H

struct profiler {
	const char *name;
	const char *summary; /* one line for `perfscope help` */
	const char *help; /* usage, options and examples for `perfscope help NAME` and --help */
	/*
	 * Arguments with which it prints on stdout within about a second on any Linux machine and
	 * runs until stopped; tests/conformance drives every profiler with them through
	 * `perfscope help --table`. NULL: not a streaming or counting session (option checks only).
	 */
	const char *conformance_args;
	/*
	 * argv[0] is the profiler's name. Returns the process exit status: 0 ok, 1 runtime failure,
	 * 2 usage error, or a launched command's own status.
	 */
	int (*run)(int argc, char **argv);
};

/* cli/profilers.c: the one table, in the order `perfscope help` lists them. */
extern const struct profiler *const profilers[];
const struct profiler *profiler_find(const char *name);

#endif
