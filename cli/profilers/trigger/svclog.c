/* svclog: a service's notes (stderr and a --log file) with the file reopened on SIGHUP. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "prof.h"
#include "session.h"
#include "svclog.h"

void svclog__open(struct svclog *l)
{
	int fd;

	if (!l->path)
		return;
	fd = open(l->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "perfscope %s: cannot open the log '%s': %s\n", l->prog, l->path,
			strerror(errno));
		return;
	}
	l->out = out__new(fd, 64 * 1024);
	if (!l->out)
		close(fd);
}

static void close_file(struct svclog *l)
{
	if (!l->out)
		return;
	out__flush(l->out);
	close(l->out->fd);
	out__delete(l->out);
	l->out = NULL;
}

void svclog__close(struct svclog *l)
{
	close_file(l);
	if (l->hup_fd >= 0)
		close(l->hup_fd);
	l->hup_fd = -1;
}

void svclog__note(struct svclog *l, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "perfscope %s: %s\n", l->prog, line);
	if (l->out) {
		out__printf(l->out, "perfscope %s: %s\n", l->prog, line);
		out__flush(l->out);
	}
}

static int on_hup(void *ctx, int fd, uint32_t revents)
{
	struct svclog *l = ctx;
	struct signalfd_siginfo si;

	if (revents == SESSION_FD_END)
		return 0;
	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		close_file(l);
		svclog__open(l);
		l->reopened++;
		if (l->verbose || !l->out)
			svclog__note(l, "SIGHUP: %s",
				     l->path ? "log reopened" : "no --log to reopen");
	}
	return 0;
}

int svclog__watch_hup(struct svclog *l, struct prof *p)
{
	sigset_t hup;

	sigemptyset(&hup);
	sigaddset(&hup, SIGHUP);
	sigprocmask(SIG_BLOCK, &hup, NULL);
	l->hup_fd = signalfd(-1, &hup, SFD_CLOEXEC | SFD_NONBLOCK);
	/* without the signalfd SIGHUP stays blocked: the run goes on, the log is not reopened */
	if (l->hup_fd < 0)
		return 0;
	return prof__add_fd(p, l->hup_fd, EPOLLIN, on_hup, l);
}
