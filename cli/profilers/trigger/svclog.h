/* svclog: a service's notes (stderr and a --log file) with the file reopened on SIGHUP. */
#ifndef PERFSCOPE_COMMON_SVCLOG_H
#define PERFSCOPE_COMMON_SVCLOG_H

#include <stdbool.h>
#include <stdint.h>

#include "output.h"

struct prof;

/*
 * A long-running profiler's log: every note goes to stderr (the journal under systemd) and, with
 * a path, is appended to that file too, so that logrotate can move it and send SIGHUP for a new
 * one. Zero it, set prog (the profiler's name) and path (NULL: none), then svclog__open. Lines
 * other than notes (a profiler's results) can be written to out (NULL when there is no file)
 * with json for their JSON form. Not thread-safe.
 */
struct svclog {
	const char *prog; /* "trigger": lines are "perfscope trigger: ..." */
	const char *path;
	struct out *out;
	struct json json;
	uint64_t reopened; /* SIGHUPs taken */
	int hup_fd; /* svclog__watch_hup's signalfd, -1 before */
	bool verbose; /* say every reopening, not only a failed one */
};

/* Opens path for appending; a failure is said on stderr and the run goes on without the file. */
void svclog__open(struct svclog *l);
/* Flushes and closes the file and the SIGHUP signalfd. */
void svclog__close(struct svclog *l);
/* SIGHUP reopens the file instead of ending the run: blocked, read from the loop of p. 0 or -errno.
 */
int svclog__watch_hup(struct svclog *l, struct prof *p);
/* A note for people: "perfscope PROG: TEXT" on stderr and in the file. */
void svclog__note(struct svclog *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
