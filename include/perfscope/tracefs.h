/* libperfscope: where tracefs is mounted (for tools that read tracepoint formats or ids
 * themselves), and mounting it. */
#ifndef PERFSCOPE_TRACEFS_H
#define PERFSCOPE_TRACEFS_H

#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The tracefs mount point, e.g. "/sys/kernel/tracing", found through /proc/mounts (tracefs, else
 * <debugfs>/tracing). Never mounts anything. A found answer is cached (thread-safe); a miss is
 * not, so a later call sees a mount made since. NULL + errno ENODEV when tracefs is not mounted.
 */
PSC_API const char *psc_tracefs__dir(void);

/*
 * The one call of the library that changes the system: when tracefs is not mounted, mounts it
 * at /sys/kernel/tracing (needs CAP_SYS_ADMIN). Returns the mount point, found or made (as
 * psc_tracefs__dir), or NULL + errno from mount(2): EPERM when not privileged, ENODEV when the
 * kernel has no tracefs (CONFIG_TRACING). Logs at debug level only, so a tool can call it
 * before parsing whether or not tracepoints are wanted: nothing else in the library mounts
 * tracefs, parsing a tracepoint without it fails with ENODEV.
 */
PSC_API const char *psc_tracefs__mount(void);

#ifdef __cplusplus
}
#endif
#endif
