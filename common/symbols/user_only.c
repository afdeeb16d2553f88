/* user_only: a task's events for user space only when this user may not measure the kernel. */
#include "user_only.h"

#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include <perfscope/cpumap.h>
#include <perfscope/evsel.h>
#include <perfscope/kernel.h>
#include <perfscope/threadmap.h>

bool user_only__kernel_refused(void)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_TASK_CLOCK,
		.disabled = 1,
	};
	struct psc_evsel *evsel;
	struct psc_cpumap *cpus;
	struct psc_threadmap *self;
	int err;

	if (psc_kernel__sysctl("perf_event_paranoid", 2) < 2)
		return false;
	/* opened as it is: psc_attr__probe would try user space only by itself */
	evsel = psc_evsel__new(&a, "task-clock");
	cpus = psc_cpumap__new_any();
	self = psc_threadmap__new_tid(getpid());
	err = evsel && cpus && self ? psc_evsel__open(evsel, cpus, self, NULL) : -ENOMEM;
	psc_evsel__delete(evsel);
	psc_cpumap__put(cpus);
	psc_threadmap__put(self);
	return err == -EACCES || err == -EPERM;
}

bool user_only__apply(int *state, struct perf_event_attr *attr, bool *first)
{
	*first = false;
	if (attr->exclude_kernel)
		return false; /* nothing to fall back from */
	if (*state < 0) {
		*state = user_only__kernel_refused();
		*first = *state;
	}
	if (!*state)
		return false;
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = 1;
	return true;
}

void user_only__say(const struct say *to, bool sampling)
{
	say(to,
	    "perf_event_paranoid is 2 or more and this user may not %s the kernel: %s user space "
	    "only (events marked :u). As root, with CAP_PERFMON, or with "
	    "/proc/sys/kernel/perf_event_paranoid at 1 the kernel is %s too.",
	    sampling ? "sample" : "count", sampling ? "sampling" : "counting",
	    sampling ? "sampled" : "counted");
}
