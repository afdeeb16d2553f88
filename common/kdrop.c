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

void kdrop__print(FILE *f, const char *prof, const char *event, int cpu, int tid, uint64_t n)
{
	char where[32];

	if (cpu >= 0)
		snprintf(where, sizeof(where), "cpu %d", cpu);
	else
		snprintf(where, sizeof(where), "thread %d", tid);
	fprintf(f,
		"perfscope %s: %s: the kernel counted %llu hits on %s that never reached the ring, "
		"and reported no loss: dropped silently by the kernel (seen on VMs whose idle CPU "
		"drops the samples taken while it idles); results miss them\n",
		prof, event, (unsigned long long)n, where);
}
