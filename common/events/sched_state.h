/* What this kernel's sched_switch says of a task's state, read from its format, not assumed. */
#ifndef PERFSCOPE_COMMON_SCHED_STATE_H
#define PERFSCOPE_COMMON_SCHED_STATE_H

#include <stdint.h>

#include <perfscope/tp.h>

/*
 * The prev_state value of a task switched out by preemption. The kernel reports a preemption as
 * one bit above the states it names (TASK_REPORT_MAX: 0x100 on 4.14 to 6.x, 2048 on 4.9 and
 * earlier, where prev_state was TASK_STATE_MAX), a value that moved between versions; the
 * format's own print fmt tells which: the single bit it prints as "R+". 0 when no bit is (a
 * format without prev_state, or one that prints it otherwise).
 */
uint64_t sched_switch__preempted_state(struct psc_tp_format *fmt);

#endif
