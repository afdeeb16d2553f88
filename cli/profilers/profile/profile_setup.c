/* perfscope profile's set-up: each event's attr from the options, then its BPF programs attached */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "clock.h"
#include "profile.h"
#include "profiler.h"
#include "user_only.h"

#define THAN_WINDOW_NS 1000000000ull /* --than without -i: CPU use judged per second */

/* Each -e event's attr: -F/-c, the exclusions, user space only when the kernel is refused. */
int profile_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *a)
{
	struct profile *pf = priv;
	bool own = ev->spec->attr.sample_period || ev->spec->attr.freq;

	if (!pf->event)
		pf->event = ev->name;
	if (pf->bpf && a->type == PERF_TYPE_TRACEPOINT)
		return prof_usage(p,
				  "--bpf counts samples with a perf_event BPF program, which a "
				  "tracepoint does not take: -e %s needs the ring path (no --bpf)",
				  ev->name);
	if (pf->filt.on && a->type == PERF_TYPE_TRACEPOINT)
		return prof_usage(
			p,
			"the sample filters (--exclude_pid, --prio ...) are a perf_event "
			"BPF program, which a tracepoint does not take: -e %s cannot have "
			"them",
			ev->name);
	/* period=/freq= on the event win; -F/-c apply to the rest; 99 Hz to the clock-like */
	if (!own && (pf->freq || pf->period || a->freq)) {
		if (pf->use_freq) {
			a->freq = 1;
			a->sample_freq = (uint64_t)pf->freq_used;
		} else {
			a->freq = 0;
			a->sample_period = (uint64_t)pf->period_used;
		}
	}
	if (pf->exclude_user)
		a->exclude_user = 1;
	if (pf->exclude_kernel)
		a->exclude_kernel = 1;
	if (pf->exclude_guest)
		a->exclude_guest = 1;
	/*
	 * perf_event_paranoid >= 2 and no privilege: a task's samples of its user space, as stat
	 * counts it and perf does, rather than none. Whole CPUs need more: refused as before.
	 */
	if (!pf->exclude_user && cli_opts_task_target(&p->opts)) {
		bool first;

		if (user_only__apply(&pf->kernel_refused, a, &first))
			pf->user_only = true;
		if (first)
			user_only__say(prof__say(p), true);
	}
	/* what the first event samples at is what the outputs say (every event of a tracepoint) */
	if (ev->idx == 0) {
		pf->use_freq = a->freq;
		if (a->freq)
			pf->freq_used = (long)a->sample_freq;
		else
			pf->period_used = (long)a->sample_period;
	}
	return 0;
}

/* --bpf's program (stacks) or the filters' attached to every event opened; says why not. */
static int attach(struct prof *p, struct profile *pf, bool stacks)
{
	struct psc_evsel *evsel;
	char why[512];
	int i, err;

	psc_evlist__for_each(p->evlist, i, evsel)
	{
		if (!psc_evsel__is_open(evsel))
			continue;
		err = stacks ? bpf_stacks__attach(pf->bs, evsel, why, sizeof(why))
			     : bpf_filter__attach(pf->bf, evsel, why, sizeof(why));
		if (err) {
			fprintf(stderr, "perfscope %s: %s: %s\n", p->name,
				stacks ? "--bpf" : "the sample filters", why);
			return err;
		}
	}
	return 0;
}

/* The events are open: --bpf's program and the filters attached, --than's windows made. */
int profile_start(struct prof *p, void *priv)
{
	struct profile *pf = priv;
	int err;

	/* symbols are read when a profile is written: the maps of exited processes wait for it */
	callchain__hold_exits(prof__callchain(p), true);
	pf->slice_wall_ns = realtime_ns();
	if (pf->than && !pf->use_freq)
		return prof_usage(p,
				  "--than judges CPU use from a sampling frequency, and %s is "
				  "sampled by period (%ld); give it freq=N or leave -e out",
				  pf->event, pf->period_used);
	if (pf->bs && (err = attach(p, pf, true)))
		return err;
	if (pf->bf && (err = attach(p, pf, false)))
		return err;
	if (pf->than) {
		pf->nr_wins = psc_cpu__nr_possible();
		pf->wins = calloc((size_t)pf->nr_wins, sizeof(*pf->wins));
		if (!pf->wins)
			return -ENOMEM;
		for (int i = 0; i < pf->nr_wins; i++)
			if (keymap__init(&pf->wins[i].stacks, sizeof(uint64_t), 64))
				return -ENOMEM;
		pf->than_window_ns = p->opts.interval_ms
					     ? (uint64_t)p->opts.interval_ms * 1000000ull
					     : THAN_WINDOW_NS;
	}
	return 0;
}
