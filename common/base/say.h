/* say: the lines an engine has to tell its user, handed to whoever prints them. */
#ifndef PERFSCOPE_SAY_H
#define PERFSCOPE_SAY_H

/*
 * Engines do not print: they say a line (no prefix, no newline) to the caller's line(), and the
 * caller (the CLI's skeleton: "perfscope NAME: ...\n" on stderr) decides where it goes. A NULL
 * line() keeps the engine silent: a library caller that reads the engine's counts instead.
 */
struct say {
	void (*line)(void *ctx, const char *text);
	void *ctx;
};

void say(const struct say *to, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
