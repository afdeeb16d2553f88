/* say: formats an engine's line and hands it to the caller's line(); see say.h. */
#include "say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void say(const struct say *to, const char *fmt, ...)
{
	char buf[1024], *big = NULL;
	va_list ap;
	int n;

	if (!to || !to->line)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(buf)) {
		/* a long line (a list of event names) is said whole; cut only when memory is out */
		va_start(ap, fmt);
		if (vasprintf(&big, fmt, ap) < 0)
			big = NULL;
		va_end(ap);
	}
	to->line(to->ctx, big ? big : buf);
	free(big);
}
