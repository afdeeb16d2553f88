/* live: a view redrawn in place each interval when it goes to a terminal (top's screen). */
#ifndef PERFSCOPE_LIVE_H
#define PERFSCOPE_LIVE_H

#include <stdbool.h>

struct out;

struct live {
	int fd; /* where the view goes: its terminal's size is asked of it */
	bool tty; /* a text view on a terminal: redrawn in place */
};

/* Where the view goes (fd) and whether it is JSON (never redrawn: a stream of objects). */
void live__init(struct live *l, int fd, bool json);
/* Is this frame drawn over the last? Not the final one, which stays on the screen. */
bool live__redraws(const struct live *l, bool final);
/* The rows of the terminal less reserved (headings), at least 1; 0 when not a terminal. */
long live__rows(const struct live *l, int reserved);
/* Starts a frame that redraws: the cursor home and the screen cleared. */
void live__clear(struct out *o);

#endif
