/* said: the lines an engine says, caught in a stream as the CLI would print them. */
#ifndef PERFSCOPE_TEST_SAID_H
#define PERFSCOPE_TEST_SAID_H

#include <stdio.h>

#include "say.h"

static FILE *said_to; /* where said_line writes; NULL: dropped */

/* ctx: the profiler's name of the prefix, "perfscope NAME: " */
static inline void said_line(void *ctx, const char *line)
{
	if (said_to)
		fprintf(said_to, "perfscope %s: %s\n", (const char *)ctx, line);
}

#endif
