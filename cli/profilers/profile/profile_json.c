/* perfscope profile as JSON: one object per profile, its stacks and functions. */
#include <stdint.h>

#include "profile.h"

/* One JSON object for the whole profile: header, stacks (frames innermost first), functions. */
void profile_write_json(struct prof *p, struct profile *pf, struct out *o, double secs,
			struct stack_ent **arr, size_t nr)
{
	struct json j;

	json__begin(&j, o);
	json__key(&j, "event");
	json__str(&j, pf->event);
	if (pf->use_freq) {
		json__key(&j, "freq");
		json__u64(&j, (uint64_t)pf->freq_used);
	} else {
		json__key(&j, "period");
		json__u64(&j, (uint64_t)pf->period_used);
	}
	if (pf->why_event) {
		json__key(&j, "note");
		json__str(&j, pf->why_event);
	}
	json__key(&j, "target");
	json__str(&j, p->title);
	if (pf->user_only) {
		json__key(&j, "user_only");
		json__bool(&j, true);
	}
	if (p->opts.interval_ms) {
		json__key(&j, "profile");
		json__u64(&j, pf->seq);
	}
	json__key(&j, "seconds");
	json__dbl(&j, secs);
	json__key(&j, "samples");
	json__u64(&j, pf->samples);
	json__key(&j, "lost");
	json__u64(&j, pf->lost);
	if (!p->opts.interval_ms) { /* measured when the run ends */
		json__key(&j, "kernel_dropped");
		json__u64(&j, prof__kernel_dropped(p));
	}
	json__key(&j, "truncated");
	json__u64(&j, pf->truncated);
	if (pf->bpf) {
		json__key(&j, "bpf_keys_full");
		json__u64(&j, pf->bpf_keys_full);
		json__key(&j, "bpf_kstack_lost");
		json__u64(&j, pf->bpf_kstack_lost);
		json__key(&j, "bpf_ustack_lost");
		json__u64(&j, pf->bpf_ustack_lost);
	}
	if (pf->filt.on) {
		json__key(&j, "filter_passed");
		json__u64(&j, pf->filt_now.passed);
		json__key(&j, "filter_dropped");
		json__obj(&j);
		for (int r = 0; r < FILTER_NR; r++)
			if (pf->filt.on & (1u << r)) {
				json__key(&j, r == FILTER_NR_RUNNING ? "nr_running"
								     : bpf_filter__name(r));
				json__u64(&j, (uint64_t)pf->filt_now.dropped[r]);
			}
		json__end(&j);
	}
	json__key(&j, "stacks");
	json__arr(&j);
	for (size_t i = 0; i < nr; i++) {
		const struct stack_ent *e = arr[i];
		int n = profile_resolve(p, pf, e);

		json__obj(&j);
		json__key(&j, "comm");
		json__str(&j, e->comm);
		json__key(&j, "pid");
		json__u64(&j, e->pid);
		if (pf->per_thread) {
			json__key(&j, "tid");
			json__u64(&j, e->tid);
		}
		json__key(&j, "count");
		json__u64(&j, e->count);
		json__key(&j, "period");
		json__u64(&j, e->period);
		json__key(&j, "frames");
		json__arr(&j);
		for (int k = 0; k < n; k++)
			frame__json(&j, &pf->frames[k]);
		json__end(&j);
		json__end(&j);
	}
	json__end(&j);
	json__key(&j, "functions");
	json__arr(&j);
	profile_funcs_sort(pf);
	for (size_t i = 0; i < pf->nr_funcs; i++) {
		json__obj(&j);
		json__key(&j, "name");
		json__str(&j, pf->funcs[i].name);
		json__key(&j, "dso");
		json__str(&j, pf->funcs[i].dso);
		json__key(&j, "self");
		json__u64(&j, pf->funcs[i].self);
		json__key(&j, "total");
		json__u64(&j, pf->funcs[i].total);
		json__end(&j);
	}
	json__end(&j);
	json__end_line(&j);
}
