// SPDX-License-Identifier: GPL-2.0-only
/*
 * filter: perf-prof's sample filters for the ring path of profile: returning 0 from a perf_event
 * program drops the sample before it is written to the ring. Every drop is counted by reason.
 */
#include "filter.bpf.h"

SEC("perf_event")
int filter_sample(struct bpf_perf_event_data *ctx)
{
	return filter_pass(ctx);
}

char LICENSE[] SEC("license") = "GPL";
