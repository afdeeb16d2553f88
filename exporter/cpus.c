/* --collector.perf.cpus: node_exporter's syntax on top of libperfscope's strict CPU-list parser. */
#include "cpus.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <perfscope/cpumap.h>

#include "caret.h"

struct psc_cpumap *exporter_parse_cpus(const char *flag, bool online, char *err, size_t errlen)
{
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_cpumap *map;

	if (!flag || !*flag) {
		map = psc_cpumap__new_online();
		if (!map)
			snprintf(err, errlen, "cannot read the online CPUs: %s", strerror(errno));
		return map;
	}
	map = online ? psc_cpumap__parse(flag, &perr) : psc_cpumap__parse_syntax(flag, &perr);
	if (!map) {
		int n = snprintf(err, errlen, "--collector.perf.cpus=%s: %s", flag,
				 perr.msg[0] ? perr.msg : strerror(errno));

		/* the flag again on a line of its own, where the caret can point into it */
		if (n >= 0 && (size_t)n + 1 < errlen &&
		    caret__snprint(err + n + 1, errlen - (size_t)n - 1, "  ",
				   "--collector.perf.cpus=", flag, perr.pos) > 0)
			err[n] = '\n';
	}
	return map;
}
