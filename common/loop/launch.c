/* Starting a command stopped before exec, releasing it, reporting exec failures and exit codes. */
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static __attribute__((noreturn)) void child(int go_rd, int err_wr, char *const argv[])
{
	struct sigaction sa = { .sa_handler = SIG_DFL };
	sigset_t none;
	char c;
	ssize_t n;
	int err;

	/*
	 * SIG_IGN survives exec: a command must not inherit the SIGPIPE that perfscope ignores
	 * to see EPIPE. The signals it found ignored stay ignored, as they would be without
	 * perfscope (nohup's SIGHUP, a background job's SIGINT); handlers are reset by exec and
	 * the mask, blocked for signalfd/sigtimedwait, is cleared.
	 */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	do
		n = read(go_rd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* parent aborted or died before releasing us */

	execvp(argv[0], argv);
	err = errno;
	do
		n = write(err_wr, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	_exit(err == ENOENT ? 127 : 126);
}

int launch_prepare(struct launch *l, char *const argv[])
{
	int go[2], er[2], err;
	pid_t pid;

	*l = (struct launch){ .go_fd = -1, .err_fd = -1 };
	if (!argv || !argv[0])
		return -EINVAL;
	l->file = argv[0];
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(er, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	fflush(NULL); /* buffered output must not be written twice */
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		close(er[0]);
		close(er[1]);
		return err;
	}
	if (pid == 0) {
		close(go[1]);
		close(er[0]);
		child(go[0], er[1], argv);
	}
	close(go[0]);
	close(er[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = er[0];
	return 0;
}

int launch_go(struct launch *l)
{
	ssize_t n;
	int err = 0, status;
	char c = 'g';

	if (l->pid <= 0 || l->go_fd < 0)
		return -EINVAL;
	do
		n = write(l->go_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	err = n == 1 ? 0 : -errno;
	close_fd(&l->go_fd);
	if (err)
		return err;

	/* The error pipe closes at exec (O_CLOEXEC) or carries exec's errno. */
	do
		n = read(l->err_fd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close_fd(&l->err_fd);
	if (n != (ssize_t)sizeof(err))
		return 0;
	l->exec_errno = err > 0 ? err : EIO;
	while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
		;
	l->pid = 0;
	return -l->exec_errno;
}

const char *launch_strerror(const struct launch *l, char *buf, size_t len)
{
	const char *hint = "";

	if (l->exec_errno == ENOENT && l->file && strchr(l->file, '/'))
		hint = " (no such file, or a script whose #! interpreter is missing)";
	else if (l->exec_errno == ENOENT)
		hint = " (not found in PATH; give a path or check the spelling)";
	else if (l->exec_errno == EACCES)
		hint = " (not executable: check its mode and the mount's noexec)";
	snprintf(buf, len, "cannot run '%s': %s%s", l->file ? l->file : "?",
		 strerror(l->exec_errno), hint);
	return buf;
}

int launch_exec_exit_code(const struct launch *l)
{
	return l->exec_errno == ENOENT ? 127 : 126;
}

int launch_wait(struct launch *l, int *status, int block)
{
	pid_t r;

	if (l->pid <= 0)
		return -ECHILD;
	do
		r = waitpid(l->pid, status, block ? 0 : WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r == 0)
		return 0;
	l->pid = 0;
	return 1;
}

int launch_exited(const struct launch *l, int *status)
{
	siginfo_t si = { 0 };

	if (l->pid <= 0)
		return -ECHILD;
	while (waitid(P_PID, (id_t)l->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
		if (errno != EINTR)
			return -errno;
	if (si.si_pid != l->pid)
		return 0;
	if (si.si_code == CLD_EXITED)
		*status = W_EXITCODE(si.si_status, 0);
	else
		*status = si.si_status | (si.si_code == CLD_DUMPED ? WCOREFLAG : 0);
	return 1;
}

int launch_kill(struct launch *l, int sig)
{
	if (l->pid <= 0)
		return -ESRCH;
	return kill(l->pid, sig) ? -errno : 0;
}

int launch_pidfd(const struct launch *l)
{
#ifdef SYS_pidfd_open
	long fd;

	if (l->pid <= 0)
		return -ESRCH;
	fd = syscall(SYS_pidfd_open, l->pid, 0);
	if (fd < 0)
		return -errno;
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
#else
	return -ENOSYS;
#endif
}

void launch_release(struct launch *l)
{
	int status;

	if (l->go_fd >= 0 && l->pid > 0) {
		/* Never released: it is waiting in read(); closing the pipe makes it exit. */
		close_fd(&l->go_fd);
		while (waitpid(l->pid, &status, 0) < 0 && errno == EINTR)
			;
		l->pid = 0;
	}
	close_fd(&l->go_fd);
	close_fd(&l->err_fd);
}

int wait_status_to_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
