/* prof_parse_error: an event list the library refused, shown with a caret and the CLI's hint. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "caret.h"
#include "prof.h"

const char *cli_parse_hint(int ret, const struct psc_parse_error *err)
{
	if (ret == -ENOENT && err && strstr(err->msg, "no function '"))
		return "'perfscope list uprobe:BINARY' shows the functions a binary offers";
	if (ret == -ENOENT &&
	    !(err && (strstr(err->msg, PSC_SUGGEST_PREFIX) || strstr(err->msg, "perfscope list") ||
		      strstr(err->msg, "no binary "))))
		return "'perfscope list' shows the events and tracepoints of this machine";
	if (ret == -ENODEV) /* tracefs is not mounted: the CLI tried psc_tracefs__mount() */
		return geteuid() ? "tracefs: mounting it needs root; as root run: mount -t tracefs "
				   "nodev /sys/kernel/tracing"
				 : "tracefs: mounting it at /sys/kernel/tracing failed (is "
				   "CONFIG_TRACING enabled in this kernel?)";
	return NULL;
}

void cli_report_parse_error(const char *prof, const char *input,
				const struct psc_parse_error *err, int ret)
{
	const char *hint = cli_parse_hint(ret, err);

	fprintf(stderr, "perfscope %s: %s\n", prof, err->msg[0] ? err->msg : "invalid event list");
	caret__print(stderr, "  ", NULL, input, err->pos);
	if (hint)
		fprintf(stderr, "perfscope %s: %s\n", prof, hint);
}
