/* The profiler table printed for the test suites (`perfscope help --table`). */
#ifndef PERFSCOPE_CLI_TABLE_H
#define PERFSCOPE_CLI_TABLE_H

#include <stdbool.h>

/* One line per profiler: "NAME\tCONFORMANCE_ARGS", or with json every shared and own option it
 * declares (metavariable, kind of value), its ATTRs and needs, as one object per line. */
int table_print(bool json);

#endif
