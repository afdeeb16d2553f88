/* perfscope profile's samples counted by stack: the ring's, and those --bpf counts in the kernel */
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>

#include "profile.h"

/* --bpf: one stack the kernel counted, into the same table the ring path fills. */
static int pull_stack(void *ctx, const struct bpf_stacks_ent *e)
{
	struct prof *p = ctx;
	struct profile *pf = p->priv;
	const char *comm = prof__comm(p, e->pid, e->tid);
	uint64_t ips[2 * 128 + 2];
	struct stack_ent *ent;
	int nr = bpf_stacks_ent__callchain(e, ips, (int)(sizeof(ips) / sizeof(ips[0])));

	if (!comm || !*comm)
		comm = *e->comm ? e->comm : "[unknown]";
	pf->samples += e->count;
	pf->period_sum += e->period;
	if (e->klost)
		pf->bpf_kstack_lost += e->count;
	if (e->ulost)
		pf->bpf_ustack_lost += e->count;
	ent = stack_table__count(&pf->stacks, e->pid, e->tid, comm, ips, (uint32_t)nr, e->count,
				 e->period);
	if (!ent)
		pf->dropped += e->count;
	return 0;
}

/* Everything the kernel counted since the last profile, and what it could not keep. */
int profile_pull_bpf(struct prof *p, struct profile *pf)
{
	struct bpf_stacks_drops d;
	int err = bpf_stacks__for_each(pf->bs, true, pull_stack, p);

	bpf_stacks__drops(pf->bs, &d);
	pf->bpf_keys_full += d.keys_full - pf->bpf_seen.keys_full;
	pf->bpf_seen = d;
	if (err)
		fprintf(stderr, "perfscope %s: reading the BPF counts: %s\n", p->name,
			strerror(-err));
	return err;
}

/* The filters' counts since the last profile, into filt_now. */
void profile_pull_filter(struct profile *pf)
{
	struct filter_counts c;

	if (!pf->filt.on)
		return;
	if (pf->bs)
		bpf_stacks__filter_counts(pf->bs, &c);
	else if (pf->bf)
		bpf_filter__counts(pf->bf, &c);
	else
		return;
	pf->filt_now.passed = c.passed - pf->filt_seen.passed;
	for (int r = 0; r < FILTER_NR; r++)
		pf->filt_now.dropped[r] = c.dropped[r] - pf->filt_seen.dropped[r];
	pf->filt_seen = c;
}

/* A sample from the ring: its stack counted (the sampled address alone without one). */
int profile_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		   const struct psc_sample *s)
{
	struct profile *pf = priv;
	const char *comm = prof__comm(p, s->pid, s->tid);
	uint64_t one[2];
	const uint64_t *ips;
	uint64_t n;
	uint32_t nr;
	struct stack_ent *e;

	/* symbolized at the report, when the process may be gone: its maps are read now */
	callchain__see(prof__callchain(p), (pid_t)s->pid);
	n = callchain__sample_ips(prof__callchain(p), s, &ips);
	if (n) {
		nr = (uint32_t)(n > 4096 ? 4096 : n);
	} else {
		/* no stack asked for (or none taken): the sampled address alone, in its space */
		bool kernel = (s->misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;

		one[0] = kernel ? (uint64_t)PERF_CONTEXT_KERNEL : (uint64_t)PERF_CONTEXT_USER;
		one[1] = s->ip;
		ips = one;
		nr = 2;
	}
	pf->samples++;
	pf->period_sum += s->period;
	e = stack_table__count(&pf->stacks, s->pid, s->tid, comm && *comm ? comm : "[unknown]", ips,
			       nr, 1, s->period);
	if (!e) {
		pf->dropped++;
		return 0;
	}
	if (pf->than)
		profile_than_sample(p, pf, cpu, s, e);
	return 0;
}

/* Samples the ring had no room for, counted for the profile to say. */
void profile_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct profile *pf = priv;

	pf->lost += n;
}
