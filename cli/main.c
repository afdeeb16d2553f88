/* perfscope: dispatches `perfscope PROFILER ...` through the profiler table; help and version. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "prof_embed.h"
#include "profiler.h"
#include "table.h"

static void print_usage(FILE *out)
{
	fprintf(out,
		"usage: perfscope [-v | --version] [help [PROFILER]] PROFILER [OPTIONS] [-- COMMAND ARGS...]\n"
		"       perfscope --symbols FILE [NAME|ADDR...]   (a function's file offset, for uprobes)\n\n"
		"Events are filtered in the kernel and processed in memory as they arrive.\n\n"
		"Profilers:\n");
	for (int i = 0; profilers[i]; i++)
		fprintf(out, "  %-12s %s\n", profilers[i]->name, profilers[i]->summary);
	fprintf(out,
		"\nSee 'perfscope help PROFILER' or 'perfscope PROFILER --help' for one profiler,\n"
		"and man perfscope(1).\n");
}

static int suggest_and_fail(const char *name)
{
	struct psc_suggest sg;
	char hint[448];

	psc_suggest__init(&sg, name, strlen(name));
	for (int i = 0; profilers[i]; i++)
		psc_suggest__add(&sg, profilers[i]->name, NULL);
	psc_suggest__format(&sg, hint, sizeof(hint));
	fprintf(stderr, "perfscope: '%s' is not a profiler%s\n", name, hint);
	fprintf(stderr, "Run 'perfscope help' for the list.\n");
	return 2;
}

/*
 * Started with stdin, stdout or stderr closed, the next open() would take fd 0, 1 or 2: a cgroup
 * fd of 0 reads as "no cgroup" (counting the whole machine instead), and output would land in a
 * perf fd. Fill the holes with /dev/null first.
 */
static void keep_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) >= 0 && fd <= STDERR_FILENO)
		;
	if (fd > STDERR_FILENO)
		close(fd);
}

/*
 * Blocked for the whole run, so that neither can kill perfscope before a profiler is ready for it
 * and leave a command it started running on its own: a write to a closed pipe (`| head -1`)
 * returns EPIPE, which every profiler's output turns into a clean stop; SIGUSR1 (show what was
 * counted so far) waits until a profiler takes it with signalfd or sigtimedwait, and is
 * harmless in one that does not. A launched command starts with an empty mask.
 */
static void block_async_signals(void)
{
	static const int stops[] = { SIGINT, SIGTERM };
	struct sigaction old;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGUSR1);
	/*
	 * A script's background job starts with SIGINT ignored, and an ignored signal that is not
	 * blocked is discarded: a `kill -INT` sent while perfscope starts would be lost and the run
	 * never end. Blocked, it waits until the profiler takes it and ends the run, as it would
	 * a moment later. Signals that are not ignored keep their default until then: Ctrl-C still
	 * ends a slow start at once.
	 */
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		if (!sigaction(stops[i], NULL, &old) && old.sa_handler == SIG_IGN)
			sigaddset(&set, stops[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * `perfscope help --table`, for tests/conformance: one line per profiler, NAME<TAB>ARGS, so that
 * a profiler in the table is in the suite. Not in the usage text: it is for the tests.
 */
static int dispatch(int argc, char **argv)
{
	const struct profiler *prof;

	if (argc < 2) {
		print_usage(stderr);
		return 2;
	}
	/*
	 * "perfscope -v PROFILER ARGS": -v is the profiler's --verbose, as it is after the
	 * profiler's name; printing the version and dropping the command would be a surprise.
	 */
	if ((argc > 2 && !strcmp(argv[1], "-v")) || !strcmp(argv[1], "-vv") ||
	    !strcmp(argv[1], "--verbose")) {
		char *verbose = argv[1]; /* -v, -vv or --verbose: the profiler takes each */

		if (argc < 3) {
			fprintf(stderr,
				"perfscope: %s needs a profiler: perfscope %s PROFILER ...\n",
				verbose, verbose);
			return 2;
		}
		prof = profiler_find(argv[2]);
		if (!prof)
			return suggest_and_fail(argv[2]);
		argv[1] = argv[2];
		argv[2] = verbose;
		return prof__main(prof, profiler_find, argc - 1, argv + 1);
	}
	/* perf's spellings: -v, --version and version all print the version. */
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-v") ||
	    !strcmp(argv[1], "version")) {
		if (argc > 2) {
			fprintf(stderr, "perfscope: %s takes no arguments\n", argv[1]);
			return 2;
		}
		cli_print_version(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--symbols"))
		return sym_lookup_main(argc, argv);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			print_usage(stdout);
			return 0;
		}
		/* for the conformance suite and its combination sweep */
		if (argc == 3 && !strcmp(argv[2], "--table"))
			return table_print(false);
		if (argc == 5 && !strcmp(argv[2], "--table") && !strcmp(argv[3], "--format") &&
		    !strcmp(argv[4], "json"))
			return table_print(true);
		prof = profiler_find(argv[2]);
		if (!prof)
			return suggest_and_fail(argv[2]);
		if (prof->help)
			fputs(prof->help, stdout);
		else
			prof__help(prof, stdout);
		return 0;
	}
	prof = profiler_find(argv[1]);
	if (!prof)
		return suggest_and_fail(argv[1]);
	return prof__main(prof, profiler_find, argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
	int ret;

	keep_std_fds();
	block_async_signals();
	ret = dispatch(argc, argv);
	/*
	 * Help and version go through stdio, whose errors show only at the flush: a help text that
	 * did not reach a full disk must not exit 0; a reader that left (| head) is no failure.
	 * (The profilers write their data with out and report their own write errors.)
	 */
	if ((fflush(stdout) || ferror(stdout)) && errno != EPIPE) {
		fprintf(stderr, "perfscope: writing to standard output failed: %s\n",
			strerror(errno));
		return ret ? ret : 1;
	}
	return ret;
}
