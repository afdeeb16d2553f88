/* libperfscope: cgroup targets, resolving a cgroup name to the directory fd perf_event_open wants.
 */
#ifndef PERFSCOPE_CGROUP_H
#define PERFSCOPE_CGROUP_H

#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Opens the cgroup directory for PERF_FLAG_PID_CGROUP: an absolute path is used as is; a relative
 * name ("system.slice/ssh.service") is looked up under the cgroup2 mount, else under the v1
 * perf_event hierarchy (from /proc/mounts). Returns an O_RDONLY|O_CLOEXEC fd or -errno
 * (-ENOENT: no such cgroup, -ENOTDIR: not a directory of the cgroup2 file system or of the v1
 * perf_event hierarchy, -EINVAL: an empty name, -ENODEV: no cgroup hierarchy that perf can use).
 */
PSC_API int psc_cgroup__open(const char *name);

#ifdef __cplusplus
}
#endif
#endif
