// SPDX-License-Identifier: GPL-2.0-only
/*
 * stacks: CPU samples counted by stack in the kernel (profile --bpf): each sample's kernel and user
 * stacks go into a stack-trace map, and a count per (process, thread, stack ids) into a hash, so
 * that no sample crosses a ring buffer. Collisions and full maps are counted, never hidden.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>

#include "filter.bpf.h"
#include "stacks.h"

/* Set by the loader before load (bpf_map__set_max_entries); these are the defaults. */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, STACKS_DEPTH * sizeof(__u64));
} stack_traces SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct stacks_key);
	__type(value, struct stacks_val);
} counts SEC(".maps");

/* Read-only after load: what to collect. */
const volatile int want_kernel = 1;
const volatile int want_user = 1;
const volatile int per_thread = 0;

struct stacks_drops drops;

/*
 * Without BPF_F_REUSE_STACKID a stack whose bucket holds another one is refused (-EEXIST)
 * instead of replacing it: a replaced stack would give the counts already keyed by its id
 * someone else's frames.
 */
static __always_inline __s32 stack_id(struct bpf_perf_event_data *ctx, __u64 flags,
				      __u64 *collisions, __u64 *full, __u64 *other)
{
	long id = bpf_get_stackid(ctx, &stack_traces, flags);

	if (id >= 0)
		return (__s32)id;
	if (id == -EFAULT)
		return STACKS_NONE; /* no such stack: a kernel thread's user half */
	if (id == -EEXIST)
		__sync_fetch_and_add(collisions, 1);
	else if (id == -ENOMEM)
		__sync_fetch_and_add(full, 1);
	else
		__sync_fetch_and_add(other, 1);
	return STACKS_LOST;
}

SEC("perf_event")
int count_stack(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct stacks_key key = { .pid = id >> 32, .kstack = STACKS_NONE, .ustack = STACKS_NONE };
	struct stacks_val *v, first = {};

	if (!filter_pass(ctx))
		return 0; /* a sample the filters refuse: counted there, never counted here */
	__sync_fetch_and_add(&drops.samples, 1);
	if (per_thread)
		key.tid = (__u32)id;
	if (want_kernel)
		key.kstack = stack_id(ctx, 0, &drops.kcollisions, &drops.kfull, &drops.kother);
	if (want_user)
		key.ustack = stack_id(ctx, BPF_F_USER_STACK, &drops.ucollisions, &drops.ufull,
				      &drops.uother);
	v = bpf_map_lookup_elem(&counts, &key);
	if (!v) {
		bpf_get_current_comm(first.comm, sizeof(first.comm));
		/* -EEXIST: another CPU added it meanwhile; then it is found below */
		bpf_map_update_elem(&counts, &key, &first, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&counts, &key);
		if (!v) {
			__sync_fetch_and_add(&drops.keys_full, 1);
			return 0;
		}
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->period, ctx->sample_period);
	return 0; /* nothing for the ring: the count is the sample */
}

char LICENSE[] SEC("license") = "GPL";
