/* perfscope exporter: the CLI table's entry for the Prometheus exporter, which lives in exporter/.
 */
#include "exporter.h"
#include "profiler.h"

const struct profiler profiler_exporter = {
	.name = "exporter",
	.summary =
		"serve per-CPU perf counters to Prometheus (node_exporter perf collector compatible)",
	.help = exporter_help,
	.run = exporter_main,
};
