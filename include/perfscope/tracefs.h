/* libperfscope: where tracefs is mounted, for tools that read tracepoint formats or ids themselves.
 */
#ifndef PERFSCOPE_TRACEFS_H
#define PERFSCOPE_TRACEFS_H

#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The tracefs mount point, e.g. "/sys/kernel/tracing", found through /proc/mounts (tracefs, else
 * <debugfs>/tracing). When it is not mounted and the caller is root, mounts it at
 * /sys/kernel/tracing. The answer is cached (thread-safe). NULL + errno when tracefs is absent and
 * cannot be mounted (ENOENT when not root, else mount(2)'s errno); the log says how to fix it.
 */
PSC_API const char *psc_tracefs__dir(void);

#ifdef __cplusplus
}
#endif
#endif
