/* libperfscope: what the running kernel lets perf do: its sysctls, the caller's capabilities. */
#ifndef PERFSCOPE_KERNEL_H
#define PERFSCOPE_KERNEL_H

#include <stdbool.h>

#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * /proc/sys/kernel/NAME as a number ("perf_event_paranoid", "perf_event_max_sample_rate",
 * "perf_event_mlock_kb", "kptr_restrict"), read at each call (root may change them while a
 * tool runs); dflt when it cannot be read. Give perf_event_paranoid a default of 2, what the
 * kernel assumes when unsure.
 */
PSC_API long psc_kernel__sysctl(const char *name, long dflt);
/* Whether the caller has capability cap (CAP_PERFMON, CAP_IPC_LOCK, ...) in its effective set. */
PSC_API bool psc_kernel__has_cap(int cap);
/* Whether the kernel counts lost samples per event (PERF_FORMAT_LOST, Linux 6.0): probed once. */
PSC_API bool psc_kernel__has_format_lost(void);

#ifdef __cplusplus
}
#endif
#endif
