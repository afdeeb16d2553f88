/*
 * filter.bpf.h: perf-prof's in-kernel sample filters (profile --exclude_pid, --prio ...), included
 * by every perf_event program that takes them. Kernel structures come from the small subset below,
 * relocated by libbpf against the running kernel's BTF (CO-RE): no vmlinux.h at build time.
 */
#ifndef PERFSCOPE_BPF_FILTER_BPF_H
#define PERFSCOPE_BPF_FILTER_BPF_H

#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "filter.h"

/* The kernel's own layouts, only the fields used: libbpf finds each by name at load time. */
struct thread_info {
	unsigned long flags;
} __attribute__((preserve_access_index));

struct rq {
	unsigned int nr_running;
} __attribute__((preserve_access_index));

struct cfs_rq {
	struct rq *rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

/* cfs_rq.nr_running was renamed nr_queued in 6.13: both flavors, one exists */
struct cfs_rq___old {
	unsigned int nr_running;
} __attribute__((preserve_access_index));

struct cfs_rq___new {
	unsigned int nr_queued;
} __attribute__((preserve_access_index));

struct sched_entity {
	struct cfs_rq *cfs_rq; /* CONFIG_FAIR_GROUP_SCHED */
} __attribute__((preserve_access_index));

struct task_struct {
	struct thread_info thread_info; /* CONFIG_THREAD_INFO_IN_TASK */
	int pid;
	int tgid;
	int prio;
	unsigned int policy;
	struct sched_entity se;
} __attribute__((preserve_access_index));

const volatile struct filter_cfg filter_cfg = {};
struct filter_counts filter_counts;

/*
 * The runqueue length of the current CPU: the rq of the task's cfs_rq (all classes) where the
 * kernel has group scheduling, else the CFS queue's own count under either of its names.
 */
static __always_inline __u32 filter_nr_running(struct task_struct *task)
{
	struct cfs_rq *cfs = BPF_CORE_READ(task, se.cfs_rq);
	struct rq *rq = NULL;

	if (bpf_core_field_exists(cfs->rq))
		rq = BPF_CORE_READ(cfs, rq);
	if (rq)
		return BPF_CORE_READ(rq, nr_running);
	if (bpf_core_field_exists(((struct cfs_rq___new *)cfs)->nr_queued))
		return BPF_CORE_READ((struct cfs_rq___new *)cfs, nr_queued);
	return BPF_CORE_READ((struct cfs_rq___old *)cfs, nr_running);
}

/* The first test that refuses the sample, or FILTER_NR when it passes them all. */
static __always_inline int filter_test(struct bpf_perf_event_data *ctx)
{
	__u32 on = filter_cfg.on;
	struct task_struct *task;

	if (!on)
		return FILTER_NR;
#if defined(__TARGET_ARCH_x86)
	if (on & (1u << FILTER_IRQS)) {
		int off = !(ctx->regs.eflags & (1 << 9)); /* X86_EFLAGS_IF */

		if (off != (int)filter_cfg.irqs_disabled)
			return FILTER_IRQS;
	}
#endif
	task = (struct task_struct *)bpf_get_current_task();
	if (on & (1u << FILTER_PID)) {
		__u64 id = bpf_get_current_pid_tgid();

		if ((__u32)id == filter_cfg.exclude_pid ||
		    (__u32)(id >> 32) == filter_cfg.exclude_pid)
			return FILTER_PID;
	}
	if (on & (1u << FILTER_RESCHED)) {
		unsigned long flags = BPF_CORE_READ(task, thread_info.flags);

		if (((flags >> filter_cfg.resched_bit) & 1) != filter_cfg.need_resched)
			return FILTER_RESCHED;
	}
	if (on & (1u << FILTER_NR_RUNNING)) {
		__u32 nr = filter_nr_running(task);

		if (nr < filter_cfg.nr_min || nr > filter_cfg.nr_max)
			return FILTER_NR_RUNNING;
	}
	if (on & (1u << FILTER_POLICY)) {
		if (BPF_CORE_READ(task, policy) != filter_cfg.policy)
			return FILTER_POLICY;
	}
	if (on & (1u << FILTER_PRIO)) {
		int prio = BPF_CORE_READ(task, prio);

		if (prio < filter_cfg.prio_min || prio > filter_cfg.prio_max)
			return FILTER_PRIO;
	}
	return FILTER_NR;
}

/* 1: the sample goes on; 0: dropped, and counted under the test that refused it. */
static __always_inline int filter_pass(struct bpf_perf_event_data *ctx)
{
	int r = filter_test(ctx);

	if (r >= FILTER_NR) {
		if (filter_cfg.on)
			__sync_fetch_and_add(&filter_counts.passed, 1);
		return 1;
	}
	__sync_fetch_and_add(&filter_counts.dropped[r], 1);
	return 0;
}

#endif
