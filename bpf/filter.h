/* filter: what bpf/filter.bpf.h and common/bpf/bpf_filter.c share: the filter's settings and
 * counts. */
#ifndef PERFSCOPE_BPF_FILTER_H
#define PERFSCOPE_BPF_FILTER_H

#include <linux/types.h>

/* Which tests are on (filter_cfg.on), perf-prof's profile filters; one bit each. */
enum filter_reason {
	FILTER_PID, /* --exclude_pid: the current process or thread is this one */
	FILTER_NR_RUNNING, /* --nr_running_min/max: the CPU's runqueue length out of range */
	FILTER_IRQS, /* --irqs_disabled: the sampled regs' interrupt flag is not as asked */
	FILTER_RESCHED, /* --tif_need_resched: TIF_NEED_RESCHED of the task is not as asked */
	FILTER_POLICY, /* --sched_policy: the task's scheduling policy is another */
	FILTER_PRIO, /* --prio: the task's prio is out of range */
	FILTER_NR
};

/* Set before load (rodata): the verifier drops the code of every test that is off. */
struct filter_cfg {
	__u32 on; /* 1 << enum filter_reason */
	__u32 exclude_pid;
	__u32 nr_min, nr_max;
	__u32 irqs_disabled; /* 1: keep samples taken with interrupts off; 0: with them on */
	__u32 need_resched; /* 1: keep samples of a task with TIF_NEED_RESCHED set; 0: clear */
	__u32 resched_bit; /* TIF_NEED_RESCHED's bit on this kernel and architecture */
	__u32 policy;
	__s32 prio_min, prio_max;
};

/* Counted by the program (.bss), read and reported by the profiler. */
struct filter_counts {
	__u64 passed; /* samples let through */
	__u64 dropped[FILTER_NR]; /* samples dropped, by the first test that refused them */
};

#endif
