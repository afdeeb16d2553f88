/* bpf_stacks: CPU samples counted by stack in the kernel (bpf/stacks.bpf.c), for profile --bpf. */
#ifndef PERFSCOPE_COMMON_BPF_STACKS_H
#define PERFSCOPE_COMMON_BPF_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct psc_evsel;
struct filter_cfg;
struct filter_counts;

/*
 * The ring path of a profiler copies every sample with its callchain to user space and hashes it
 * there; this path leaves the sample in the kernel: a BPF program on the sampling event stores
 * the kernel and user stacks in a stack-trace map and counts (pid, tid, stack ids) in a hash.
 * User space reads the maps when it reports. What the maps could not hold is counted by the
 * program (struct bpf_stacks_drops) and must be reported by the caller.
 *
 * Needs a build with BPF programs (-Dbpf, the default where clang and bpftool exist) and the
 * rights to load BPF; bpf_stacks__new says which is missing. Not thread-safe.
 */
struct bpf_stacks;

struct bpf_stacks_opts {
	bool kernel, user; /* which stacks to take (at least one) */
	bool per_thread; /* key by thread too, not only by process */
	uint32_t max_stacks; /* stack-trace map entries (0: 16384) */
	uint32_t max_keys; /* counts map entries (0: 16384) */
	const struct filter_cfg *filter; /* profile's sample filters (checked), NULL: none */
};

/* What did not fit, as the program counted it; samples is every sample it saw. */
struct bpf_stacks_drops {
	uint64_t samples;
	uint64_t kcollisions, ucollisions; /* a stack whose bucket held another: its frames lost */
	uint64_t kfull, ufull; /* the stack-trace map was full: its frames lost */
	uint64_t kother, uother;
	uint64_t keys_full; /* the counts map was full: the sample lost */
};

/* One counted stack: frames innermost first (ips as the kernel gives them, no markers). */
struct bpf_stacks_ent {
	uint32_t pid, tid;
	const char *comm;
	uint64_t count, period;
	const uint64_t *kips, *uips;
	int nr_kips, nr_uips;
	bool klost, ulost; /* that half could not be stored (a drop above): no frames */
};

/*
 * Loads the program with opts (NULL: kernel and user stacks, per process). NULL + errno, and why
 * is filled with the reason: this build has no BPF programs (ENOTSUP), no rights, no BPF here.
 */
struct bpf_stacks *bpf_stacks__new(const struct bpf_stacks_opts *opts, char *why, size_t whylen);
/* Detaches (links closed) and frees. NULL is a no-op. */
void bpf_stacks__delete(struct bpf_stacks *s);

/*
 * Attaches the program to every fd of an open sampling event (psc_evsel__attach_bpf); it then
 * keeps every sample out of the ring. 0, or -errno with why filled.
 */
int bpf_stacks__attach(struct bpf_stacks *s, struct psc_evsel *evsel, char *why, size_t whylen);

/*
 * Calls fn for every counted stack; with clear, each is removed as it is read (so that the next
 * call sees only what came after: -i slices). A sample counted between the read and the removal
 * of its key is lost to both slices: the window is one map operation. fn's non-zero return stops
 * the walk and is returned. -errno on a map error.
 */
typedef int (*bpf_stacks_fn)(void *ctx, const struct bpf_stacks_ent *e);
int bpf_stacks__for_each(struct bpf_stacks *s, bool clear, bpf_stacks_fn fn, void *ctx);

/*
 * e's frames as PERF_SAMPLE_CALLCHAIN lays them out (PERF_CONTEXT_KERNEL, kernel frames,
 * PERF_CONTEXT_USER, user frames; a half without frames left out), so that the ring path's
 * stack counting takes them as they are. Fills at most max and returns how many.
 */
int bpf_stacks_ent__callchain(const struct bpf_stacks_ent *e, uint64_t *ips, int max);

/*
 * Deletes the stacks of the stack-trace map no counted key refers to (after a pull with clear):
 * an always-on reader calls it now and then so the map does not fill. A sample counted during
 * the call whose stack was deleted loses its frames. 0 or -errno.
 */
int bpf_stacks__trim(struct bpf_stacks *s);

/* The drops so far (totals since load). */
void bpf_stacks__drops(const struct bpf_stacks *s, struct bpf_stacks_drops *out);

/* What the sample filters (opts.filter) passed and dropped so far. */
void bpf_stacks__filter_counts(const struct bpf_stacks *s, struct filter_counts *out);

/* The loaded program's fd (its statistics, bpftool); -1 without BPF. */
int bpf_stacks__prog_fd(const struct bpf_stacks *s);

/* True when this build has the BPF program (built with -Dbpf): else bpf_stacks__new says so. */
bool bpf_stacks__built(void);

#endif
