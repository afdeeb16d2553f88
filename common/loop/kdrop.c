/* kdrop: hits the kernel counted but never wrote to a ring, with no loss reported; see kdrop.h. */
#include "kdrop.h"

#include <string.h>

bool kdrop__applies(const struct perf_event_attr *attr, int nr_bpf)
{
	if (!attr || attr->freq || attr->sample_period != 1 || nr_bpf > 0)
		return false;
	if (attr->type == PERF_TYPE_TRACEPOINT)
		return true;
	/* hardware counts can run ahead of their samples (skid, throttling) */
	if (attr->type != PERF_TYPE_SOFTWARE)
		return false;
	switch (attr->config) {
	case PERF_COUNT_SW_CPU_CLOCK:
	case PERF_COUNT_SW_TASK_CLOCK:
	case PERF_COUNT_SW_DUMMY:
	case PERF_COUNT_SW_BPF_OUTPUT:
		return false;
	default:
		return true;
	}
}

bool kdrop__weighs(const char *event)
{
	return event && !strncmp(event, "sched:sched_stat_", strlen("sched:sched_stat_"));
}

uint64_t kdrop__shortfall(uint64_t counted, uint64_t seen, uint64_t lost)
{
	return counted > seen + lost ? counted - seen - lost : 0;
}

/* "cpu C", or "thread T" for a ring of a thread */
static const char *ring_name(char *buf, size_t len, int cpu, int tid)
{
	if (cpu >= 0)
		snprintf(buf, len, "cpu %d", cpu);
	else
		snprintf(buf, len, "thread %d", tid);
	return buf;
}

void kdrop__say(const struct say *to, const char *event, int cpu, int tid, uint64_t n)
{
	char where[32];

	say(to,
		"%s: the kernel counted %llu hits on %s that never reached the ring, "
		"and reported no loss: dropped silently by the kernel (seen on VMs whose idle CPU "
		"drops the samples taken while it idles); results miss them",
		event, (unsigned long long)n, ring_name(where, sizeof(where), cpu, tid));
}

bool kdrop__clock_applies(const struct perf_event_attr *attr, int nr_bpf)
{
	if (!attr || nr_bpf > 0 || attr->type != PERF_TYPE_SOFTWARE ||
	    (attr->config != PERF_COUNT_SW_CPU_CLOCK && attr->config != PERF_COUNT_SW_TASK_CLOCK))
		return false;
	if (!(attr->sample_type & PERF_SAMPLE_PERIOD) || !attr->sample_period)
		return false;
	/* time the kernel counts and, on purpose, never samples */
	return !attr->exclude_user && !attr->exclude_kernel && !attr->exclude_idle;
}

uint64_t kdrop__nominal_ns(const struct perf_event_attr *attr)
{
	if (attr->freq)
		return attr->sample_freq ? 1000000000ull / attr->sample_freq : 0;
	return attr->sample_period;
}

uint64_t kdrop__clock_shortfall(uint64_t counted_ns, uint64_t period_ns, uint64_t samples,
				uint64_t lost, uint64_t nominal_ns, int fds)
{
	uint64_t mean = samples >= 10 ? period_ns / samples : nominal_ns, missing, n;

	if (!mean || counted_ns <= period_ns)
		return 0;
	missing = (counted_ns - period_ns) / mean;
	n = (fds > 0 ? (uint64_t)fds : 1) + lost;
	/*
	 * A timer that fires late (a vCPU the host did not run, interrupts held off) adds its
	 * whole delay to the count and one sample of one period: up to a few in a hundred on a
	 * loaded VM. Less than 2% is taken for that, not for samples dropped.
	 */
	if (missing <= n || missing - n < counted_ns / mean / 50)
		return 0;
	return missing - n;
}

void kdrop__say_clock(const struct say *to, const char *event, int cpu, int tid, uint64_t n)
{
	char where[32];

	say(to,
		"%s: the kernel counted the time of about %llu more samples on %s "
		"than reached the ring, and reported no loss: not sampled or dropped silently by "
		"the kernel (seen on VMs whose idle CPU drops the samples taken while it idles, and "
		"timers held off for long); results miss that time",
		event, (unsigned long long)n, ring_name(where, sizeof(where), cpu, tid));
}
