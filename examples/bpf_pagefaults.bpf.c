// SPDX-License-Identifier: GPL-2.0-only
/* Example's BPF program: page-fault samples counted by process in a hash map (bpf_pagefaults.c). */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

/* What the map holds per process: the command is taken at its first sample, as the process
 * may be gone when the map is read. */
struct pid_samples {
	__u64 samples;
	char comm[16];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32); /* process id */
	__type(value, struct pid_samples);
} samples SEC(".maps");

/* Samples of processes that found the map full. */
__u64 missed;

SEC("perf_event")
int count_fault(struct bpf_perf_event_data *ctx)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	struct pid_samples *v = bpf_map_lookup_elem(&samples, &pid), first = { .samples = 1 };

	if (v) {
		__sync_fetch_and_add(&v->samples, 1);
		return 0;
	}
	bpf_get_current_comm(first.comm, sizeof(first.comm));
	if (!bpf_map_update_elem(&samples, &pid, &first, BPF_NOEXIST))
		return 0;
	v = bpf_map_lookup_elem(&samples, &pid); /* another CPU added it first, or full */
	if (v)
		__sync_fetch_and_add(&v->samples, 1);
	else
		__sync_fetch_and_add(&missed, 1);
	/* 0: nothing goes to a ring buffer (this example maps none); the count is all it keeps */
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
