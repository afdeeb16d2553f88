/* perfscope exporter: the CLI table's entry for the Prometheus exporter, which lives in exporter/.
 */
#include "exporter.h"
#include "profiler.h"

const struct psc_profiler psc_profiler_exporter = {
	.name = "exporter",
	.summary =
		"serve per-CPU perf counters to Prometheus (node_exporter perf collector compatible)",
	.help = psc_exporter_help,
	.run = psc_exporter_main,
};
