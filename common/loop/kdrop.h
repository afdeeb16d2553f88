/* kdrop: hits the kernel counted but never wrote to a ring, with no loss reported. */
#ifndef PERFSCOPE_KDROP_H
#define PERFSCOPE_KDROP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "say.h"

#include <linux/perf_event.h>

/*
 * Some kernels drop a sample after counting its hit and say nothing: no PERF_RECORD_LOST, no
 * PERF_FORMAT_LOST count, no THROTTLE. Seen on a Firecracker VM's 6.18 kernel, where every
 * sample taken while one of its vCPUs was idle (a wakeup from a timer, the sched_switch back
 * from the idle task, cpu-clock itself) never reached the ring, though the event's count went up.
 * A profiler then sees a task's naps without their wakeups. For an event whose count is its hits
 * and whose every hit is a sample (period 1), count = samples + lost exactly, so the shortfall is
 * what the kernel dropped silently: it is measured at the end of a run, per event and ring. A
 * tracepoint whose hits weigh more than one (__perf_count: sched_stat_runtime counts nanoseconds)
 * is told by its samples' periods and left out by the session.
 */

/*
 * Does every hit of attr make one sample and add one to its count? Tracepoints (uprobes
 * included) and software events that count occurrences, with a fixed period of 1; not the
 * clocks (their count is nanoseconds), and not an event with a BPF program (one may drop samples
 * on purpose: nr_bpf, what psc_evsel__nr_bpf says).
 */
bool kdrop__applies(const struct perf_event_attr *attr, int nr_bpf);

/*
 * Is event (a name as "sched:sched_stat_runtime") one of the tracepoints whose hits add a weight
 * to the count (__perf_count: the sched_stat_* family, in nanoseconds)? Their samples tell it too,
 * by a period other than 1; the name is for a run where none was read.
 */
bool kdrop__weighs(const char *event);

/* The hits dropped silently: counted - (seen + lost) when positive, else 0. */
uint64_t kdrop__shortfall(uint64_t counted, uint64_t seen, uint64_t lost);

/*
 * Says "EVENT: the kernel counted N hits on cpu C that never reached the ring ..." with what it
 * means; cpu < 0 for a ring of a thread (tid).
 */
void kdrop__say(const struct say *to, const char *event, int cpu, int tid, uint64_t n);
/* The same for a clock: n samples' worth of time. */
void kdrop__say_clock(const struct say *to, const char *event, int cpu, int tid, uint64_t n);

/*
 * The clocks (cpu-clock, task-clock) sampled by time: their count is nanoseconds and each sample
 * carries the time it stands for (its period), so the count is the periods read, plus those of the
 * lost samples, plus less than a period per fd still running. Seen on the same VM: an idle CPU's
 * cpu-clock counted 2 s and its samples stood for 0.98 s. Not for an event that leaves time
 * unsampled on purpose (exclude_user, exclude_kernel, exclude_idle) or has a BPF program.
 */
bool kdrop__clock_applies(const struct perf_event_attr *attr, int nr_bpf);

/*
 * The samples dropped silently from a clock's ring: the time counted and not stood for by the
 * samples read or lost, in samples of the mean period read (of nominal_ns when fewer than 10
 * came), less one per fd (the period each was in when the count was read). 0 when within that,
 * or within 2% of the samples the count stands for: a late timer adds its delay to the count and
 * gives one sample, as a loaded VM's do now and then.
 */
uint64_t kdrop__clock_shortfall(uint64_t counted_ns, uint64_t period_ns, uint64_t samples,
				uint64_t lost, uint64_t nominal_ns, int fds);

/* The nominal period of attr in ns: 1e9 / sample_freq in frequency mode, else sample_period. */
uint64_t kdrop__nominal_ns(const struct perf_event_attr *attr);

#endif
