/* The table of perfscope subcommands; each is a `const struct profiler` (common/prof/prof.h) in
 * cli/profilers/<name>.c. */
#ifndef PERFSCOPE_CLI_PROFILER_H
#define PERFSCOPE_CLI_PROFILER_H

#include "prof.h"

/* cli/profilers.c: the one table, in the order `perfscope help` lists them. */
extern const struct profiler *const profilers[];
const struct profiler *profiler_find(const char *name);
/* perfscope --symbols FILE [NAME|ADDR...] (sym_lookup.c): argv as main has it; the exit status. */
int sym_lookup_main(int argc, char **argv);

#endif
