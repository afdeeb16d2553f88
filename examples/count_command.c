/* Example: count software events of a command started here, like `perfscope stat -- CMD`. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* pipe2 */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

/*
 * The events: software ones count on every machine; "cycles" shows how an event this machine
 * cannot count (no hardware PMU in most VMs) is reported instead of failing the whole run.
 */
static const char *const default_events = "task-clock,page-faults,context-switches,cycles";

/*
 * Forks the command but holds it before exec until go_fd is written, so the counters can be
 * opened on its pid first; enable_on_exec then starts them exactly at exec. A failed exec
 * writes its errno to *exec_fd (close-on-exec: a successful exec just closes it), so the
 * parent knows there is nothing to report.
 */
static pid_t fork_held(char **argv, int *go_fd, int *exec_fd)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return -1;
	if (pipe2(ex, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(ex[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(126); /* the parent gave up */
		execvp(argv[0], argv);
		e = errno;
		fprintf(stderr, "count_command: cannot run %s: %s\n", argv[0], strerror(e));
		if (write(ex[1], &e, sizeof(e)) != sizeof(e))
			_exit(126);
		_exit(e == ENOENT ? 127 : 126);
	}
	close(go[0]);
	close(ex[1]);
	*go_fd = go[1];
	*exec_fd = ex[0];
	return pid;
}

int main(int argc, char **argv)
{
	const char *events = getenv("EVENTS") ? getenv("EVENTS") : default_events;
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs = NULL;
	struct psc_evlist *evlist = NULL;
	struct psc_cpumap *cpus = NULL;
	struct psc_threadmap *threads = NULL;
	struct psc_evsel *evsel;
	int go_fd = -1, exec_fd = -1, status = 0, ret = 1, err, i;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: [EVENTS=e1,e2] count_command COMMAND [ARGS...]\n");
		return 2;
	}
	/* Parse first: a typo is reported with its position before anything is started. */
	err = psc_parse_events(events, NULL, &specs, &perr);
	if (err) {
		fprintf(stderr, "count_command: %s\n  %s\n  %*s^\n", perr.msg, events,
			perr.pos > 0 ? perr.pos : 0, "");
		return 2;
	}
	pid = fork_held(argv + 1, &go_fd, &exec_fd);
	if (pid < 0) {
		perror("count_command: fork");
		goto out;
	}

	/* Follow the command's thread on any CPU ("any CPU" map), children included (inherit). */
	evlist = psc_evlist__new();
	cpus = psc_cpumap__new_any();
	threads = psc_threadmap__new_tid(pid);
	if (!evlist || !cpus || !threads || psc_evlist__add_specs(evlist, specs, false) ||
	    psc_evlist__set_maps(evlist, cpus, threads)) {
		fprintf(stderr, "count_command: cannot set up the counters: %s\n", strerror(errno));
		goto out;
	}
	PSC_OPTS(psc_evlist_open_opts, oo, .inherit = true, .enable_on_exec = true,
		 .skip_unsupported = true);
	err = psc_evlist__open(evlist, &oo);
	if (err || psc_evlist__nr_open(evlist) == 0) {
		char msg[512];

		psc_strerror_open(err ? err : -ENOENT, "the events", msg, sizeof(msg));
		fprintf(stderr, "count_command: %s\n", msg);
		goto out;
	}

	/* Let the command run, then wait for it: its counters stop counting when it exits. */
	if (write(go_fd, "g", 1) != 1) {
		perror("count_command: releasing the command");
		goto out;
	}
	close(go_fd);
	go_fd = -1;
	if (waitpid(pid, &status, 0) < 0) {
		perror("count_command: waitpid");
		goto out;
	}
	pid = -1;
	/* The command never ran: it said why; there are no counts to show. */
	if (read(exec_fd, &err, sizeof(err)) == sizeof(err)) {
		ret = WEXITSTATUS(status);
		goto out;
	}
	if (psc_evlist__read(evlist)) {
		fprintf(stderr, "count_command: reading the counters failed: %s\n",
			strerror(errno));
		goto out;
	}

	printf("counts for '%s':\n", argv[1]);
	psc_evlist__for_each(evlist, i, evsel)
	{
		struct psc_counts c;
		char why[512];

		if (!psc_evsel__is_open(evsel)) {
			psc_strerror_open(-psc_evsel__open_errno(evsel), psc_evsel__name(evsel),
					  why, sizeof(why));
			printf("  %20s  %s  (%s)\n", "<not supported>", psc_evsel__name(evsel),
			       why);
			continue;
		}
		/* -1, -1: summed over every CPU and thread slot; scaled in case of multiplexing. */
		psc_evsel__counts(evsel, -1, -1, &c);
		printf("  %20.0f  %s\n", psc_counts__scaled(&c), psc_evsel__name(evsel));
	}
	/* Exit like the command did, as `perfscope stat -- CMD` does. */
	ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
out:
	if (exec_fd >= 0)
		close(exec_fd);
	if (go_fd >= 0)
		close(go_fd); /* a held child reads EOF and exits */
	if (pid > 0)
		waitpid(pid, NULL, 0);
	psc_evlist__delete(evlist);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	psc_event_list__delete(specs);
	return ret;
}
