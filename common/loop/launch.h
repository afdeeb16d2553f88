/* Starting a command for a profiler: forked stopped before exec, released once events are open. */
#ifndef PERFSCOPE_COMMON_LAUNCH_H
#define PERFSCOPE_COMMON_LAUNCH_H

#include <sys/types.h>

/*
 * A child forked by launch_prepare() waits, before execvp(), until launch_go(). Events
 * opened on its pid in between (enable_on_exec, inherit) see the command from its first
 * instruction, as `perf stat -- CMD` does. Fields are read-only for callers.
 */
struct launch {
	pid_t pid; /* the child, 0 once reaped (or never started) */
	int go_fd; /* write end: closing it releases the child */
	int err_fd; /* read end, close-on-exec in the child: EOF means exec succeeded */
	int exec_errno; /* why execvp failed, 0 when it did not */
	const char *file; /* argv[0], for messages */
};

/*
 * Forks the child for argv (argv[0] searched in PATH). The child restores default signal
 * dispositions and an empty signal mask (the caller may have blocked signals for a signalfd, or
 * ignored SIGPIPE), and exits without running the command if its parent goes away before
 * launch_go(). Returns 0 or -errno (fork/pipe failure).
 */
int launch_prepare(struct launch *l, char *const argv[]);

/*
 * Releases the child into execvp and waits until the exec happened or failed. Returns 0 when
 * the command runs, or -errno of the failed exec (the child is then reaped: it exited with
 * 127, or 126 when the file exists but cannot be executed). Message: launch_strerror().
 */
int launch_go(struct launch *l);

/*
 * "cannot run 'xyz': No such file or directory" for the failed exec into buf. Returns buf.
 */
const char *launch_strerror(const struct launch *l, char *buf, size_t len);

/* The shell's exit code for a failed exec: 127 when not found, 126 otherwise. */
int launch_exec_exit_code(const struct launch *l);

/*
 * Waits for the child (blocking when block != 0, else WNOHANG). Returns 1 with *status set when
 * it has exited, 0 when still running (non-blocking), -errno on error; -ECHILD when already
 * reaped.
 */
int launch_wait(struct launch *l, int *status, int block);

/*
 * Like a non-blocking launch_wait, but the child stays a zombie, to be reaped by launch_wait:
 * until then /proc/PID/comm still names it. 1 + *status when it has exited, 0 when not yet,
 * -errno on error.
 */
int launch_exited(const struct launch *l, int *status);

/* Sends sig to the child when it is still ours to signal. Returns 0 or -errno. */
int launch_kill(struct launch *l, int sig);

/*
 * A pidfd for the child (pollable: readable when it exits), or -errno when the kernel has no
 * pidfd_open (then watch SIGCHLD instead). The caller closes it.
 */
int launch_pidfd(const struct launch *l);

/*
 * Frees the pipes; a child still waiting before exec is made to exit and reaped (an aborted
 * setup), a running one is left alone. Safe to call twice.
 */
void launch_release(struct launch *l);

/* A wait(2) status as a process exit code: the exit status, or 128 + signal number. */
int wait_status_to_exit_code(int status);

#endif
