/* perfscope profile's description: the event sampled, how often and why, as every header says. */
#include <stdio.h>
#include <string.h>

#include "profile.h"

/* Whether ev's period counts time (ns) rather than events. */
bool profile_time_event(const char *ev)
{
	return ev && (!strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock"));
}

/* What was sampled, how often, and why: every format's header says it. */
void profile_describe(struct prof *p, struct profile *pf, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s", pf->event ? pf->event : "?");

	if (pf->use_freq)
		n += snprintf(buf + n, len - (size_t)n, " at %ld Hz", pf->freq_used);
	else if (pf->period_used == 1)
		n += snprintf(buf + n, len - (size_t)n, " (every event)");
	else
		n += snprintf(buf + n, len - (size_t)n, " every %ld %s", pf->period_used,
			      profile_time_event(pf->event) ? "ns" : "events");
	if (pf->why_event)
		n += snprintf(buf + n, len - (size_t)n, " (%s)", pf->why_event);
	if (pf->user_only)
		n += snprintf(buf + n, len - (size_t)n,
			      ", user space only (the kernel may not be sampled by this user)");
	if (pf->bpf)
		snprintf(buf + n, len - (size_t)n, ", counted in the kernel (BPF)");
}
