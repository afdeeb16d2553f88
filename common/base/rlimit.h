/* rlimit: raising the open-files limit (RLIMIT_NOFILE) for the fds that perf events take. */
#ifndef PERFSCOPE_COMMON_RLIMIT_H
#define PERFSCOPE_COMMON_RLIMIT_H

#include <stdint.h>
#include <sys/resource.h>

/* need for rlimit__raise_nofile: as high as the hard limit allows. */
#define RLIMIT_NOFILE_HARD 0

/*
 * One fd per event, CPU and thread adds up past the usual soft limit of 1024. Raises the soft
 * RLIMIT_NOFILE to need (RLIMIT_NOFILE_HARD: to the hard limit, as Go's runtime does for
 * node_exporter); never lowers it. *was, when not NULL, gets the limits as they were.
 *
 * Returns 1 when raised; 0 when it was already enough, or could not be read (the opens then say
 * whether it is short); -ERANGE when need is above the hard limit (nothing changed: the user must
 * raise it, ulimit -n); or setrlimit's -errno.
 */
int rlimit__raise_nofile(uint64_t need, struct rlimit *was);

#endif
