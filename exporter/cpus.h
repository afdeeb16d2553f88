/* --collector.perf.cpus: node_exporter's CPU list syntax ("2-6", "1-10:5", "0,3") checked against
 * this machine. */
#ifndef PERFSCOPE_EXPORTER_CPUS_H
#define PERFSCOPE_EXPORTER_CPUS_H

#include <stdbool.h>
#include <stddef.h>

struct psc_cpumap;

/*
 * NULL or "" selects every online CPU (node_exporter takes 0..runtime.NumCPU()-1, which is
 * wrong when CPUs are offline or the process is pinned). Otherwise items "N", "A-B" and
 * "A-B:S" (A, A+S, A+2S, ... up to B: what node_exporter computes, although its README says
 * 1-10:5 means 1,5,10). Unlike node_exporter, refuses a stride of 0 (node_exporter loops
 * forever), ranges that go down, repeated CPUs and, when `online` is set, CPUs that are not
 * online (node_exporter serves empty metrics for them). Returns NULL with a message in err.
 */
struct psc_cpumap *exporter_parse_cpus(const char *flag, bool online, char *err, size_t errlen);

#endif
