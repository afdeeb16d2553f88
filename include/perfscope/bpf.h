/* libperfscope: attaching a loaded BPF program to the fds of an open event. Not thread-safe. */
#ifndef PERFSCOPE_BPF_H
#define PERFSCOPE_BPF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct psc_evsel;
struct psc_evlist;

/*
 * The library does not load programs (libbpf, a skeleton or bpf(2) do that) and does not link
 * libbpf: it takes the fd of a loaded program and attaches it with the bpf(2) and ioctl(2)
 * system calls. Which program fits which event is the kernel's rule:
 *
 * - a software, hardware, cache or raw PMU event takes a BPF_PROG_TYPE_PERF_EVENT program. It
 *   runs at each overflow of each fd (each sample: attach to a sampling event), on the CPU and
 *   in the task that overflowed; returning 0 keeps the sample out of the ring buffer;
 * - a tracepoint event takes a BPF_PROG_TYPE_TRACEPOINT program. The kernel attaches it to the
 *   tracepoint itself, not to one fd: it runs once at every hit of the tracepoint, on any CPU
 *   and in any task, whatever the event's CPUs and threads; the kernel takes a program once per
 *   tracepoint (EEXIST through a second fd). The library attaches it through the event's first
 *   open fd only, and it goes when that fd closes.
 *   Returning 0 drops that hit for every perf event of the tracepoint;
 * - uprobe and kprobe PMU events take BPF_PROG_TYPE_KPROBE programs (left to the kernel to
 *   check).
 */
struct psc_bpf_attach_opts {
	size_t sz;
	/*
	 * What bpf_get_attach_cookie() returns in the program (Linux 5.15+). Needs a bpf_link:
	 * -EOPNOTSUPP when the kernel has none for perf events.
	 */
	uint64_t cookie;
	/* true: PERF_EVENT_IOC_SET_BPF even where a bpf_link could be made (no detach then). */
	bool no_link;
};
/* The last field of psc_bpf_attach_opts; a newer caller's bytes after it must be 0 (PSC_OPTS). */
#define psc_bpf_attach_opts__last_field no_link

/*
 * Attaches the program prog_fd to every open fd of evsel (a tracepoint: to its first, see
 * above), through a bpf_link (BPF_LINK_CREATE, Linux 5.15+) or else PERF_EVENT_IOC_SET_BPF. The
 * program stays attached until psc_evsel__detach_bpf() or psc_evsel__close(); the caller may
 * close prog_fd at once (the kernel holds the program). Before it asks the kernel, the library
 * checks the program's type against the event's kind (-EINVAL, logged with both types).
 * Returns 0 or -errno, and detaches what this call attached when it fails (but for what it
 * attached by ioctl, which stays until the event is closed: a kernel without perf links):
 *   -EBADF: evsel is not open or prog_fd is not a BPF program;
 *   -EINVAL: the program's type does not fit the event (see above);
 *   -EEXIST: a program is attached already (the kernel takes one per event);
 *   -EPERM/-EACCES: loading and attaching BPF needs root or CAP_BPF and CAP_PERFMON;
 *   -ENOSYS: this kernel has no bpf(2);
 *   -EOPNOTSUPP: a cookie was asked for and this kernel cannot give one.
 * psc_strerror_bpf() turns each into a sentence.
 */
PSC_API int psc_evsel__attach_bpf(struct psc_evsel *evsel, int prog_fd,
				  const struct psc_bpf_attach_opts *opts);
/*
 * Detaches what psc_evsel__attach_bpf() attached. A program attached with PERF_EVENT_IOC_SET_BPF
 * (no_link, or a kernel without links) can only go with the event: -EBUSY, and it stays until
 * psc_evsel__close(). 0 when nothing is attached.
 */
PSC_API int psc_evsel__detach_bpf(struct psc_evsel *evsel);
/* How many of evsel's fds have a program attached by this library (links and ioctls). */
PSC_API int psc_evsel__nr_bpf(const struct psc_evsel *evsel);
/* The bpf_link fd at (cpu_idx, thread_idx), -1 when none (not attached, or by ioctl). */
PSC_API int psc_evsel__bpf_link(const struct psc_evsel *evsel, int cpu_idx, int thread_idx);

/*
 * psc_evsel__attach_bpf() on every open evsel of evlist (an evsel that failed to open with
 * skip_unsupported is passed over). On failure, every evsel this call attached is detached
 * again where it can be, and the -errno is returned.
 */
PSC_API int psc_evlist__attach_bpf(struct psc_evlist *evlist, int prog_fd,
				   const struct psc_bpf_attach_opts *opts);
/* psc_evsel__detach_bpf() on every evsel; the first error, after trying them all. */
PSC_API int psc_evlist__detach_bpf(struct psc_evlist *evlist);

/*
 * Can this process load and attach BPF programs here? Loads a two-instruction
 * BPF_PROG_TYPE_PERF_EVENT program and frees it. 0, or -ENOSYS (no bpf(2)), -EPERM (no
 * rights), -EINVAL (a kernel without perf event programs).
 */
PSC_API int psc_bpf__probe(void);

/*
 * Turns an error of the calls above (or of loading a program) into a sentence: what BPF needs
 * that this machine or process lacks, and how to get it. `event` names the event (may be NULL).
 * Returns buf.
 */
PSC_API const char *psc_strerror_bpf(int err, const char *event, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
