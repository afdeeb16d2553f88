/* perfscope list's parts: what it lists into, the events by kind, a binary's functions. */
#ifndef PERFSCOPE_CLI_LIST_H
#define PERFSCOPE_CLI_LIST_H

#include <stdbool.h>

#include <perfscope/perfscope.h>

#include "options.h"
#include "output.h"

struct list_ctx {
	const char *glob;
	int kind; /* only events of this kind; -1: every kind */
	enum out_format format;
	struct out *out;
	int nr_shown, nr_unsupported;
};

/* How an event can be opened, as stat would open it (see probe() in list_events.c). */
struct probe {
	int err; /* 0 or the -errno that opening it gave */
	bool probed; /* false: not opened at all (tracepoints of a wide GLOB) */
	bool cpu_only; /* opens only system-wide, on CPUs (-a or -C), not on a task */
};

/* list_events.c: the events of each kind matching l's selection, each probed, as lines. */
void list_named(struct list_ctx *l);
void list_pmus(struct list_ctx *l);
void list_tracepoints(struct list_ctx *l);

/* list_uprobe.c: uprobe:[GLOB@]BINARY, the functions BINARY offers to uprobe: (exit status). */
int list_uprobe(const char *sel, enum out_format format);

#endif
