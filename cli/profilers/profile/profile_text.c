/* perfscope profile's text report: what was sampled and lost, then the top functions. */
#include <inttypes.h>
#include <stdio.h>

#include "profile.h"

void profile_write_text(struct prof *p, struct profile *pf, struct out *o, double secs)
{
	char what[256];
	long rows = pf->top;

	profile_describe(p, pf, what, sizeof(what));
	out__printf(o, "# perfscope profile: %" PRIu64 " samples of %s, %s, %.2f s", pf->samples,
		    what, p->title, secs);
	if (p->opts.interval_ms)
		out__printf(o, ", profile %" PRIu64, pf->seq);
	out__puts(o, "\n");
	if (pf->lost)
		out__printf(o, "# %" PRIu64 " samples lost (rings full): raise -m\n", pf->lost);
	if (!p->opts.interval_ms && prof__kernel_dropped(p))
		out__printf(o,
			    "# about %" PRIu64 " samples dropped silently by the kernel (an idle "
			    "CPU of some VMs): they are not in this profile\n",
			    prof__kernel_dropped(p));
	if (pf->bpf_keys_full)
		out__printf(o, "# %" PRIu64 " samples lost: the BPF counts map was full\n",
			    pf->bpf_keys_full);
	if (pf->filt.on) {
		out__printf(o, "# filters: %" PRIu64 " samples passed, dropped:",
			    (uint64_t)pf->filt_now.passed);
		for (int r = 0; r < FILTER_NR; r++)
			if (pf->filt.on & (1u << r))
				out__printf(o, " %s %" PRIu64, bpf_filter__name(r),
					    (uint64_t)pf->filt_now.dropped[r]);
		out__puts(o, "\n");
	}
	if (pf->bpf_kstack_lost || pf->bpf_ustack_lost)
		out__printf(o,
			    "# %" PRIu64 " samples counted without their kernel stack and %" PRIu64
			    " without their user stack: the BPF stack map held another stack in "
			    "its slot, or was full (raise --bpf-stacks)\n",
			    pf->bpf_kstack_lost, pf->bpf_ustack_lost);
	if (pf->truncated)
		out__printf(o,
			    "# %" PRIu64 " samples (%.1f%%) have a user stack that stops before "
			    "main, _start or a thread's start (code without frame pointers): "
			    "try --call-graph dwarf\n",
			    pf->truncated, profile_pct(pf->truncated, pf->samples));
	out__printf(o, "#\n# %8s %8s  %-40s %s\n", "Total", "Self", "Function", "Module");
	profile_funcs_sort(pf);
	for (size_t i = 0; i < pf->nr_funcs && (rows <= 0 || (long)i < rows); i++) {
		const struct func *f = &pf->funcs[i];

		out__printf(o, "  %7.2f%% %7.2f%%  %-40s %s\n", profile_pct(f->total, pf->samples),
			    profile_pct(f->self, pf->samples), f->name,
			    f->dso ? f->dso : "[unknown]");
	}
	if (rows > 0 && pf->nr_funcs > (size_t)rows)
		out__printf(o, "# ... %zu more functions (--top 0 lists all)\n",
			    pf->nr_funcs - (size_t)rows);
	out__puts(o, "\n");
}
