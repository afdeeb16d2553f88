/* perfscope profile as an event source in another profiler's -e: its options as ATTRs. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"

/* A value of -F, -c or -m: a positive number. */
static int as_event_num(const char *opt, const char *arg, long *v, char *why, size_t why_len)
{
	char *end;

	if (!arg) {
		snprintf(why, why_len, "option '%s' needs a value", opt);
		return -1;
	}
	errno = 0;
	*v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *v <= 0) {
		snprintf(why, why_len, "option '%s' takes a positive number, not '%s'", opt, arg);
		return -1;
	}
	return 0;
}

/*
 * profile as an event source in another profiler's -e (perf-prof's profile/-F 200 -g/untraced/):
 * its samples are those of one event, so its options become that event's ATTRs and modifiers.
 * The ring options (-m, --watermark) are the host's: accepted, they change nothing sampled.
 */
int profile_as_event(const char *opts, char *buf, size_t len, char *why, size_t why_len)
{
	char copy[512], *save = NULL, *tok;
	const char *event = "cpu-clock", *mods = "";
	long freq = 0, period = 0, v;
	bool stack = false, xuser = false, xkernel = false;
	int n;

	snprintf(copy, sizeof(copy), "%s", opts);
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *val = strchr(tok, '=');
		const char *arg;

		if (tok[0] == '-' && tok[1] == '-' && val)
			*val++ = 0; /* --freq=200 */
		else if (tok[0] == '-' && tok[1] && tok[1] != '-' && tok[2])
			val = tok + 2; /* -F200 */
		arg = val;
#define TAKES(s, l) (!strcmp(tok, s) || (!strncmp(tok, s, 2) && val == tok + 2) || !strcmp(tok, l))
#define NEXT() (arg ? arg : strtok_r(NULL, " \t", &save))
		if (TAKES("-F", "--freq")) {
			if (as_event_num(tok, NEXT(), &freq, why, why_len))
				return -1;
		} else if (TAKES("-c", "--count")) {
			if (as_event_num(tok, NEXT(), &period, why, why_len))
				return -1;
		} else if (TAKES("-m", "--mmap-pages") || !strcmp(tok, "--watermark")) {
			if (as_event_num(tok, NEXT(), &v, why, why_len))
				return -1;
		} else if (TAKES("-e", "--event")) {
			event = NEXT();
			if (!event || strpbrk(event, "/,{}")) {
				snprintf(why, why_len,
					 "-e takes one event name here (no /ATTR/ nor list)");
				return -1;
			}
		} else if (!strcmp(tok, "-g") && !val) {
			stack = true;
		} else if (!strcmp(tok, "--call-graph")) {
			arg = NEXT();
			if (!arg || strcmp(arg, "fp")) {
				snprintf(why, why_len,
					 "--call-graph: only fp can be an event's stack here");
				return -1;
			}
			stack = true;
		} else if (!strcmp(tok, "--exclude-user") && !val) {
			xuser = true;
		} else if (!strcmp(tok, "--exclude-kernel") && !val) {
			xkernel = true;
		} else {
			snprintf(
				why, why_len,
				"option '%s' cannot be expressed as an event (its samples join this "
				"profiler's stream); give this profiler's own options instead, or only "
				"-F HZ, -c PERIOD, -g, -e EVENT, --exclude-user, --exclude-kernel here",
				tok);
			return -1;
		}
#undef TAKES
#undef NEXT
	}
	if (freq && period) {
		snprintf(why, why_len, "-F and -c: one or the other");
		return -1;
	}
	if (xuser && xkernel) {
		snprintf(why, why_len,
			 "--exclude-user and --exclude-kernel leave nothing to sample");
		return -1;
	}
	if (xuser)
		mods = ":k";
	else if (xkernel)
		mods = ":u";
	if (!freq && !period && !strcmp(event, "cpu-clock"))
		freq = 99; /* profile's own default; another -e event keeps its own */
	if (freq || period)
		n = snprintf(buf, len, "%s//%s=%ld/%s%s", event, period ? "period" : "freq",
			     period ? period : freq, stack ? "stack/" : "", mods);
	else
		n = snprintf(buf, len, "%s//%s%s", event, stack ? "stack/" : "", mods);
	if (n < 0 || (size_t)n >= len) {
		snprintf(why, why_len, "the event name is too long");
		return -1;
	}
	return 0;
}
