/* bpf_filter: perf-prof's in-kernel sample filters for profile (bpf/filter.bpf.c), loaded and read.
 */
#ifndef PERFSCOPE_COMMON_BPF_FILTER_H
#define PERFSCOPE_COMMON_BPF_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "filter.h" /* bpf/: struct filter_cfg, struct filter_counts, enum filter_reason */

struct psc_evsel;

/*
 * A BPF_PROG_TYPE_PERF_EVENT program on the sampling event runs each test of cfg on every sample
 * and returns 0 for one it refuses, so the kernel never writes it to the ring; what it passed and
 * what each test dropped is counted and must be reported. profile --bpf takes the same tests
 * inside its own program (bpf_stacks_opts.filter): then this object is not needed.
 * Not thread-safe.
 */
struct bpf_filter;

/* The option that turns test r on, as perf-prof spells it ("exclude_pid" ...). */
const char *bpf_filter__name(enum filter_reason r);

/*
 * Whether the running kernel and this build can do every test cfg turns on: fills
 * cfg->resched_bit, and returns 0, or -errno with why naming the option and what is missing
 * (no BPF in this build: -ENOTSUP; a kernel structure without the field: -ENOENT).
 */
int bpf_filter__check(struct filter_cfg *cfg, char *why, size_t whylen);

/* Loads the program for cfg (checked). NULL + errno, why filled. */
struct bpf_filter *bpf_filter__new(const struct filter_cfg *cfg, char *why, size_t whylen);
void bpf_filter__delete(struct bpf_filter *f);

/* Attaches to every fd of an open sampling event. 0, or -errno with why filled. */
int bpf_filter__attach(struct bpf_filter *f, struct psc_evsel *evsel, char *why, size_t whylen);

/* The counts so far (since load). */
void bpf_filter__counts(const struct bpf_filter *f, struct filter_counts *out);

/* The loaded program's fd (bench: its run time); -1 without BPF. */
int bpf_filter__prog_fd(const struct bpf_filter *f);

#endif
