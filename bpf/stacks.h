/* stacks: what bpf/stacks.bpf.c and common/bpf/bpf_stacks.c share: the counts map's key
 * and value. */
#ifndef PERFSCOPE_BPF_STACKS_H
#define PERFSCOPE_BPF_STACKS_H

#include <linux/types.h>

/* Frames kept per stack, kernel or user: the kernel's own limit (PERF_MAX_STACK_DEPTH). */
#define STACKS_DEPTH 127

/*
 * One counted stack: who ran it and its two stack ids in the stack-trace map. An id is < 0 when
 * that half has no stack (STACKS_NONE: a kernel thread has no user stack, user-only sampling
 * asks for no kernel one) or could not be stored (STACKS_LOST: counted in the drops, the sample
 * is still counted under this key so that shares stay right).
 */
struct stacks_key {
	__u32 pid; /* process */
	__u32 tid; /* thread; 0 unless per-thread keys were asked for */
	__s32 kstack;
	__s32 ustack;
};
#define STACKS_NONE (-1)
#define STACKS_LOST (-2)

struct stacks_val {
	__u64 count; /* samples */
	__u64 period; /* sum of their periods (ns for cpu-clock) */
	char comm[16]; /* the thread's name at its first sample */
};

/*
 * What was not kept, counted by the program (its .bss): each is a sample, counted once per half
 * that it lost. Read by common/bpf/bpf_stacks.c and reported; nothing is dropped silently.
 */
struct stacks_drops {
	__u64 samples; /* every sample the program saw */
	__u64 kcollisions, ucollisions; /* bpf_get_stackid -EEXIST: another stack in its bucket */
	__u64 kfull, ufull; /* -ENOMEM: the stack-trace map has no free entry */
	__u64 kother, uother; /* any other error */
	__u64 keys_full; /* the counts map had no room: the sample is lost entirely */
};

#endif
