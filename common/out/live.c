/* live: the terminal tests, size and clearing behind a view redrawn in place (live.h). */
#include <sys/ioctl.h>
#include <unistd.h>

#include "live.h"
#include "output.h"

void live__init(struct live *l, int fd, bool json)
{
	l->fd = fd;
	l->tty = !json && fd >= 0 && isatty(fd);
}

bool live__redraws(const struct live *l, bool final)
{
	return l->tty && !final;
}

long live__rows(const struct live *l, int reserved)
{
	struct winsize ws;

	if (!l->tty || ioctl(l->fd, TIOCGWINSZ, &ws) || ws.ws_row <= reserved + 1)
		return 0;
	return ws.ws_row - reserved;
}

void live__clear(struct out *o)
{
	out__puts(o, "\033[H\033[2J");
}
