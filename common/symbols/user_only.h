/* user_only: perf's fallback for a user who may not measure the kernel: a task's events measure
 * its user space only, said once. */
#ifndef PERFSCOPE_COMMON_USER_ONLY_H
#define PERFSCOPE_COMMON_USER_ONLY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/perf_event.h>

#include "say.h"

/*
 * True when this user may not measure the kernel: perf_event_paranoid is 2 or more and the
 * kernel refuses a task-clock of this process that includes it (root, CAP_PERFMON or
 * CAP_SYS_ADMIN may: the kernel's own answer, not a guess).
 */
bool user_only__kernel_refused(void);

/*
 * One profiler's fallback: state starts at -1 (not asked yet). For an attr that would measure
 * the kernel, asks once whether the kernel is refused, and when it is makes attr user space
 * only (exclude_kernel, exclude_hv, exclude_callchain_kernel). Returns true when attr was
 * changed; *first is set true on the first such change (to say it once: user_only__say).
 */
bool user_only__apply(int *state, struct perf_event_attr *attr, bool *first);

/*
 * Says "perf_event_paranoid is 2 or more and this user may not count the kernel: counting user
 * space only (events marked :u). As root, ..." (sampling: "sample", "sampling").
 */
void user_only__say(const struct say *to, bool sampling);

#endif
