/* prof_evhelp: perf-prof's `PROFILER -e EVENTS help`: the events' fields, not a command named help.
 */
#ifndef PERFSCOPE_PROF_EVHELP_H
#define PERFSCOPE_PROF_EVHELP_H

#include <stdbool.h>
#include <stdio.h>

struct prof;

/*
 * Is the COMMAND operand perf-prof's "help" (the word alone, not after "--")? argv is the
 * profiler's, as prof__main got it.
 */
bool prof_evhelp__asked(const struct prof *p, int argc, char **argv);

/*
 * Prints to f the command line as given (argv, up to "help"), the ATTRs the profiler takes, then
 * each event of -e with its kernel format (its fields, for filters and ATTRs). 0, or 1 when it
 * could not be written.
 */
int prof_evhelp__print(const struct prof *p, char **argv, FILE *f);

#endif
