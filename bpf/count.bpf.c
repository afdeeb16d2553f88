// SPDX-License-Identifier: GPL-2.0-only
/* count: hits of a perf event or a tracepoint counted by process in a hash map (attach tests). */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_helpers.h>

#define COUNT_PIDS 16384

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, COUNT_PIDS);
	__type(key, __u32); /* tgid */
	__type(value, __u64);
} counts SEC(".maps");

/* Hits that found the map full: counted, never lost silently. */
__u64 dropped;
/* The attach cookie the last perf event hit ran with (bpf_get_attach_cookie). */
__u64 last_cookie;

static __always_inline void count(void)
{
	__u32 pid = bpf_get_current_pid_tgid() >> 32;
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(&counts, &pid);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (!bpf_map_update_elem(&counts, &pid, &one, BPF_NOEXIST))
		return;
	/* another CPU added this pid meanwhile, or the map is full */
	v = bpf_map_lookup_elem(&counts, &pid);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		__sync_fetch_and_add(&dropped, 1);
}

SEC("perf_event")
int count_perf_event(struct bpf_perf_event_data *ctx)
{
	count();
	last_cookie = bpf_get_attach_cookie(ctx);
	return 1; /* the sample goes on to the ring, if the event has one */
}

SEC("tracepoint")
int count_tracepoint(void *ctx)
{
	count();
	return 1; /* 0 would drop the hit for every perf event of the tracepoint */
}

char LICENSE[] SEC("license") = "GPL";
