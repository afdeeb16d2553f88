/* perfscope profile --than: per-CPU windows judged busy or not, with their hottest stack. */
#include <inttypes.h>
#include <stdio.h>

#include "profile.h"

/* ---- --than: hot spots ---- */

static void than_report(struct prof *p, struct profile *pf, int cpu, struct cpu_win *w,
			uint64_t span_ns)
{
	double expect = (double)pf->freq_used * (double)span_ns / 1e9;
	double busy = expect > 0 ? 100.0 * (double)w->n / expect : 0;
	struct keymap_iter it;
	char line[1024];
	int len;
	uint64_t key, *cnt, best = 0;
	struct stack_ent *top = NULL;

	if (busy < pf->than)
		return;
	pf->hot_windows++;
	keymap__for_each(&w->stacks, &it, key, cnt) if (*cnt > best)
	{
		best = *cnt;
		top = (struct stack_ent *)(uintptr_t)key;
	}
	len = snprintf(line, sizeof(line),
		       "hot: cpu %d %.0f%% busy (%" PRIu64 " samples in %.2f s, --than %g%%)", cpu,
		       busy > 100 ? 100 : busy, w->n, (double)span_ns / 1e9, pf->than);
	if (top) {
		int n = profile_resolve(p, pf, top);

		profile_fold(pf, top, n, false);
		snprintf(line + len, sizeof(line) - (size_t)len, ", hottest stack %.0f%%: %s",
			 profile_pct(best, w->n), pf->fold);
	}
	/* beside the profile's text or JSON; never inside folded stacks on standard output */
	if (pf->fmt == PF_FOLDED && !pf->output) {
		fprintf(stderr, "%s\n", line);
	} else {
		struct out *o = pf->file ? pf->file : p->out;

		out__puts(o, line);
		out__putc(o, '\n');
	}
}

void profile_than_sample(struct prof *p, struct profile *pf, int cpu, const struct psc_sample *s,
			 struct stack_ent *e)
{
	struct cpu_win *w;
	uint64_t *cnt;

	if (cpu < 0 || cpu >= pf->nr_wins)
		return;
	w = &pf->wins[cpu];
	if (!w->start)
		w->start = s->time;
	if (s->time - w->start >= pf->than_window_ns) {
		than_report(p, pf, cpu, w, s->time - w->start);
		w->start = s->time;
		w->n = 0;
		keymap__clear(&w->stacks);
	}
	/* the idle task (pid 0) is sampled too by cpu-clock: not time the CPU was busy */
	if (!s->pid)
		return;
	w->n++;
	/* the entry's address is its key: entries live until the profile is written */
	cnt = keymap__insert(&w->stacks, (uint64_t)(uintptr_t)e, NULL);
	if (cnt)
		(*cnt)++;
}

/* Judges every window still open, up to now (sample times are CLOCK_MONOTONIC too). */
void profile_than_flush(struct prof *p, struct profile *pf, uint64_t now)
{
	for (int cpu = 0; cpu < pf->nr_wins; cpu++) {
		struct cpu_win *w = &pf->wins[cpu];

		/* a window too short to tell busy from a few samples is left out */
		if (w->start && now > w->start && now - w->start >= pf->than_window_ns / 10)
			than_report(p, pf, cpu, w, now - w->start);
		w->start = 0;
		w->n = 0;
		keymap__clear(&w->stacks);
	}
}
