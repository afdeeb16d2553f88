/* perfscope profile: CPU sampling counted in memory by stack, reported as folded, text or JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "profile.h"
#include "user_only.h"
#include "profiler.h"

#define THAN_WINDOW_NS 1000000000ull /* --than without -i: CPU use judged per second */

/* ---- hooks (profile_check is in profile_opts.c) ---- */

static int profile_event(struct prof *p, void *priv, struct prof_event *ev,
			 struct perf_event_attr *a)
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

/* ---- counting ---- */

static uint64_t stack_key(const struct profile *pf, const struct psc_sample *s, const char *comm,
			  const uint64_t *ips, uint32_t nr)
{
	uint64_t h = profile_mix(profile_str_hash(comm, 16), s->pid);

	if (pf->per_thread)
		h = profile_mix(h, s->tid);
	for (uint32_t i = 0; i < nr; i++)
		h = profile_mix(h, ips[i]);
	return h;
}

static bool same_stack(const struct stack_ent *e, const struct profile *pf,
		       const struct psc_sample *s, const char *comm, const uint64_t *ips,
		       uint32_t nr)
{
	return e->nr == nr && e->pid == s->pid && (!pf->per_thread || e->tid == s->tid) &&
	       !strncmp(e->comm, comm, sizeof(e->comm)) && !memcmp(e->ips, ips, nr * sizeof(*ips));
}

static struct stack_ent *count_stack(struct profile *pf, const struct psc_sample *s,
				     const char *comm, const uint64_t *ips, uint32_t nr)
{
	uint64_t key = stack_key(pf, s, comm, ips, nr);
	struct stack_ent **head, *e;

	head = keymap__find(&pf->stacks, key);
	for (e = head ? *head : NULL; e; e = e->next)
		if (same_stack(e, pf, s, comm, ips, nr))
			break;
	if (!e) {
		e = malloc(sizeof(*e) + nr * sizeof(*ips));
		if (!e)
			return NULL;
		head = keymap__insert(&pf->stacks, key, NULL);
		if (!head) {
			free(e);
			return NULL;
		}
		*e = (struct stack_ent){ .next = *head, .pid = s->pid, .tid = s->tid, .nr = nr };
		strncpy(e->comm, comm, sizeof(e->comm) - 1);
		memcpy(e->ips, ips, nr * sizeof(*ips));
		*head = e;
		pf->nr_stacks++;
	}
	e->count++;
	e->period += s->period;
	return e;
}

/* --bpf: one stack the kernel counted, into the same table the ring path fills. */
static int pull_stack(void *ctx, const struct bpf_stacks_ent *e)
{
	struct prof *p = ctx;
	struct profile *pf = p->priv;
	struct psc_sample s = { .pid = e->pid, .tid = e->tid, .period = e->period };
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
	ent = count_stack(pf, &s, comm, ips, (uint32_t)nr);
	if (!ent) {
		pf->dropped += e->count;
		return 0;
	}
	ent->count += e->count - 1; /* count_stack added one sample, and all of the period */
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

static int profile_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
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
	e = count_stack(pf, s, comm && *comm ? comm : "[unknown]", ips, nr);
	if (!e) {
		pf->dropped++;
		return 0;
	}
	if (pf->than)
		profile_than_sample(p, pf, cpu, s, e);
	return 0;
}

static void profile_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct profile *pf = priv;

	pf->lost += n;
}

void profile_free_stacks(struct profile *pf)
{
	struct keymap_iter it;
	struct stack_ent **head;
	uint64_t key;

	if (!pf->stacks.slots)
		return; /* never set up: check stopped first */
	keymap__for_each(&pf->stacks, &it, key, head)
	{
		struct stack_ent *e = *head, *n;

		for (; e; e = n) {
			n = e->next;
			free(e);
		}
	}
	keymap__clear(&pf->stacks);
	pf->nr_stacks = 0;
	for (int i = 0; i < pf->nr_wins; i++)
		keymap__clear(&pf->wins[i].stacks);
}

/* ---- lifecycle ---- */

static int profile_start(struct prof *p, void *priv)
{
	struct profile *pf = priv;

	/* symbols are read when a profile is written: the maps of exited processes wait for it */
	callchain__hold_exits(prof__callchain(p), true);
	pf->slice_wall_ns = profile_wall_ns();
	if (pf->than && !pf->use_freq)
		return prof_usage(p,
				  "--than judges CPU use from a sampling frequency, and %s is "
				  "sampled by period (%ld); give it freq=N or leave -e out",
				  pf->event, pf->period_used);
	if (pf->bs) {
		struct psc_evsel *evsel;
		char why[512];
		int i, err;

		psc_evlist__for_each(p->evlist, i, evsel)
		{
			if (!psc_evsel__is_open(evsel))
				continue;
			err = bpf_stacks__attach(pf->bs, evsel, why, sizeof(why));
			if (err) {
				fprintf(stderr, "perfscope %s: --bpf: %s\n", p->name, why);
				return err;
			}
		}
	}
	if (pf->bf) {
		struct psc_evsel *evsel;
		char why[512];
		int i, err;

		psc_evlist__for_each(p->evlist, i, evsel)
		{
			if (!psc_evsel__is_open(evsel))
				continue;
			err = bpf_filter__attach(pf->bf, evsel, why, sizeof(why));
			if (err) {
				fprintf(stderr, "perfscope %s: the sample filters: %s\n", p->name,
					why);
				return err;
			}
		}
	}
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

static int profile_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	/* --than alone prints hot spots as they come; -i makes it judge per interval */
	return profile_write(p, priv);
}

static int profile_report(struct prof *p, void *priv)
{
	struct profile *pf = priv;
	int err;

	/* --bpf: what the kernel counted since the last slice decides as the ring's samples do */
	if (pf->bs && (err = profile_pull_bpf(p, pf)))
		return err;
	/* the last slice of an -i run: only when something was sampled since */
	if (p->opts.interval_ms && !pf->samples && pf->seq)
		err = 0;
	else
		err = profile_write(p, pf);
	if (pf->file && out__flush(pf->file)) {
		fprintf(stderr, "perfscope %s: writing to '%s' failed: %s\n", p->name, pf->output,
			strerror(-out__error(pf->file)));
		return -EIO;
	}
	if (pf->truncated_total && !p->opts.quiet)
		fprintf(stderr,
			"perfscope %s: %" PRIu64 " samples have a user stack that stops before "
			"main, _start or a thread's start (frame pointers missing): try "
			"--call-graph dwarf\n",
			p->name, pf->truncated_total);
	if (pf->dropped)
		fprintf(stderr, "perfscope %s: %" PRIu64 " samples left out: out of memory\n",
			p->name, pf->dropped);
	if (pf->bs) {
		const struct bpf_stacks_drops *d = &pf->bpf_seen;

		if (!p->opts.quiet)
			fprintf(stderr,
				"perfscope %s: --bpf: %" PRIu64 " samples counted in the kernel, "
				"none through the ring\n",
				p->name, d->samples);

		/* every drop of the run, whatever the format: nothing is lost silently */
		if (d->keys_full)
			fprintf(stderr,
				"perfscope %s: %" PRIu64 " of %" PRIu64 " samples lost: the BPF "
				"counts map was full (more distinct stacks than it holds: raise "
				"--bpf-stacks)\n",
				p->name, d->keys_full, d->samples);
		if (d->kcollisions + d->ucollisions + d->kfull + d->ufull + d->kother + d->uother)
			fprintf(stderr,
				"perfscope %s: stacks the BPF stack map could not keep (the sample "
				"counted without them): kernel %" PRIu64 " (%" PRIu64
				" collisions, %" PRIu64 " full), user %" PRIu64 " (%" PRIu64
				" collisions, %" PRIu64 " full); a larger --bpf-stacks makes "
				"collisions rarer\n",
				p->name, d->kcollisions + d->kfull + d->kother, d->kcollisions,
				d->kfull, d->ucollisions + d->ufull + d->uother, d->ucollisions,
				d->ufull);
	}
	if (pf->filt.on && (pf->bs || pf->bf)) {
		/* the whole run's, whatever the format: a filtered profile says what it left out */
		const struct filter_counts *c = &pf->filt_seen;

		/* an -i run's last slice is not written when it sampled nothing */
		profile_pull_filter(pf);

		fprintf(stderr,
			"perfscope %s: sample filters: %" PRIu64 " passed, dropped:", p->name,
			(uint64_t)c->passed);
		for (int r = 0; r < FILTER_NR; r++)
			if (pf->filt.on & (1u << r))
				fprintf(stderr, " %s %" PRIu64, bpf_filter__name(r),
					(uint64_t)c->dropped[r]);
		fputc('\n', stderr);
	}
	if (pf->than && !p->opts.quiet)
		fprintf(stderr,
			"perfscope %s: %" PRIu64 " windows of a CPU at or above --than %g%%\n",
			p->name, pf->hot_windows, pf->than);
	return err;
}

static void profile_teardown(struct prof *p, void *priv)
{
	struct profile *pf = priv;

	profile_free_stacks(pf);
	keymap__exit(&pf->stacks);
	profile_funcs_clear(pf);
	keymap__exit(&pf->func_idx);
	free(pf->funcs);
	for (int i = 0; i < pf->nr_wins; i++)
		keymap__exit(&pf->wins[i].stacks);
	free(pf->wins);
	out__delete(pf->file);
	bpf_stacks__delete(pf->bs);
	bpf_filter__delete(pf->bf);
}

/*
 * profile as an event source in another profiler's -e (perf-prof's profile/-F 200 -g/untraced/):
 * its samples are those of one event, so its options become that event's ATTRs and modifiers.
 * The ring options (-m, --watermark) are the host's: accepted, they change nothing sampled.
 */
static int as_event_num(const char *opt, const char *arg, long *v, char *why, size_t why_len)
{
	char *end;

	if (!arg) {
		snprintf(why, why_len, "option '%s' needs a value", opt);
		return -1;
	}
	errno = 0;
	*v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || *v <= 0) {
		snprintf(why, why_len, "option '%s' takes a positive number, not '%s'", opt, arg);
		return -1;
	}
	return 0;
}

static int profile_as_event(const char *opts, char *buf, size_t len, char *why, size_t why_len)
{
	char copy[512], *save = NULL, *tok;
	const char *event = "cpu-clock", *mods = "";
	long freq = 0, period = 0, v;
	bool stack = false, xuser = false, xkernel = false;
	int n;

	snprintf(copy, sizeof(copy), "%s", opts);
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		char *val = strchr(tok, '=');
		const char *arg;

		if (tok[0] == '-' && tok[1] == '-' && val)
			*val++ = 0; /* --freq=200 */
		else if (tok[0] == '-' && tok[1] && tok[1] != '-' && tok[2])
			val = tok + 2; /* -F200 */
		arg = val;
#define TAKES(s, l) (!strcmp(tok, s) || (!strncmp(tok, s, 2) && val == tok + 2) || !strcmp(tok, l))
#define NEXT() (arg ? arg : strtok_r(NULL, " \t", &save))
		if (TAKES("-F", "--freq")) {
			if (as_event_num(tok, NEXT(), &freq, why, why_len))
				return -1;
		} else if (TAKES("-c", "--count")) {
			if (as_event_num(tok, NEXT(), &period, why, why_len))
				return -1;
		} else if (TAKES("-m", "--mmap-pages") || !strcmp(tok, "--watermark")) {
			if (as_event_num(tok, NEXT(), &v, why, why_len))
				return -1;
		} else if (TAKES("-e", "--event")) {
			event = NEXT();
			if (!event || strpbrk(event, "/,{}")) {
				snprintf(why, why_len,
					 "-e takes one event name here (no /ATTR/ nor list)");
				return -1;
			}
		} else if (!strcmp(tok, "-g") && !val) {
			stack = true;
		} else if (!strcmp(tok, "--call-graph")) {
			arg = NEXT();
			if (!arg || strcmp(arg, "fp")) {
				snprintf(why, why_len,
					 "--call-graph: only fp can be an event's stack here");
				return -1;
			}
			stack = true;
		} else if (!strcmp(tok, "--exclude-user") && !val) {
			xuser = true;
		} else if (!strcmp(tok, "--exclude-kernel") && !val) {
			xkernel = true;
		} else {
			snprintf(
				why, why_len,
				"option '%s' cannot be expressed as an event (its samples join this "
				"profiler's stream); give this profiler's own options instead, or only "
				"-F HZ, -c PERIOD, -g, -e EVENT, --exclude-user, --exclude-kernel here",
				tok);
			return -1;
		}
#undef TAKES
#undef NEXT
	}
	if (freq && period) {
		snprintf(why, why_len, "-F and -c: one or the other");
		return -1;
	}
	if (xuser && xkernel) {
		snprintf(why, why_len,
			 "--exclude-user and --exclude-kernel leave nothing to sample");
		return -1;
	}
	if (xuser)
		mods = ":k";
	else if (xkernel)
		mods = ":u";
	if (!freq && !period && !strcmp(event, "cpu-clock"))
		freq = 99; /* profile's own default; another -e event keeps its own */
	if (freq || period)
		n = snprintf(buf, len, "%s//%s=%ld/%s%s", event, period ? "period" : "freq",
			     period ? period : freq, stack ? "stack/" : "", mods);
	else
		n = snprintf(buf, len, "%s//%s%s", event, stack ? "stack/" : "", mods);
	if (n < 0 || (size_t)n >= len) {
		snprintf(why, why_len, "the event name is too long");
		return -1;
	}
	return 0;
}

#define OFF(f) offsetof(struct profile, f)
static const struct prof_opt profile_opts[] = {
	{ "freq", 'F', "HZ", PROF_OPT_LONG, OFF(freq), 1, 1000000, NULL,
	  "samples per second and CPU (default 99); at most\n"
	  "kernel.perf_event_max_sample_rate" },
	{ "count", 'c', "PERIOD", PROF_OPT_LONG, OFF(period), 1, 0x7fffffffffffffffL, NULL,
	  "a sample every PERIOD events (ns for cpu-clock) instead of -F" },
	{ "format", 0, "F", PROF_OPT_FN, 0, 0, 0, profile_opt_format,
	  "text (default: top functions), folded (flamegraph.pl),\n"
	  "json, svg (an interactive flame graph), pprof (gzipped\n"
	  "profile.proto for go tool pprof). Without it, -o's name\n"
	  "decides: .folded, .json, .svg, .pb.gz" },
	{ "output", 'o', "FILE", PROF_OPT_STRING, OFF(output), 0, 0, NULL,
	  "write the profile to FILE (with -i: FILE.0001.EXT ... for\n"
	  "folded, svg and pprof)" },
	{ "flame-graph", 0, "FILE", PROF_OPT_STRING, OFF(flame_graph), 0, 0, NULL,
	  "also write the folded stacks to FILE.folded (perf-prof's)" },
	{ "exclude-user", 0, NULL, PROF_OPT_FLAG, OFF(exclude_user), 0, 0, NULL,
	  "sample only while the CPU runs the kernel" },
	{ "exclude-kernel", 0, NULL, PROF_OPT_FLAG, OFF(exclude_kernel), 0, 0, NULL,
	  "sample only while the CPU runs user code" },
	{ "exclude-guest", 0, NULL, PROF_OPT_FLAG, OFF(exclude_guest), 0, 0, NULL,
	  "not while the CPU runs a KVM guest (perf-prof's)" },
	{ "per-pid", 0, NULL, PROF_OPT_FLAG, OFF(per_pid), 0, 0, NULL,
	  "root frame comm-PID instead of the process name" },
	{ "per-thread", 0, NULL, PROF_OPT_FLAG, OFF(per_thread), 0, 0, NULL,
	  "root frame comm-PID/TID" },
	{ "than", 0, "PCT", PROF_OPT_FN, 0, 0, 0, profile_opt_than,
	  "hot spots: a line for each CPU busy at least PCT% over a\n"
	  "second (or -i), with its hottest stack (perf-prof's)" },
	{ "bpf", 0, NULL, PROF_OPT_FLAG, OFF(bpf), 0, 0, NULL,
	  "count the samples by stack in the kernel (a BPF program):\n"
	  "no sample crosses the ring buffer; stacks the BPF maps\n"
	  "cannot hold are counted and reported" },
	{ "bpf-stacks", 0, "N", PROF_OPT_LONG, OFF(bpf_stacks), 256, 1048576, NULL,
	  "--bpf: the stacks its stack map holds (default 16384,\n"
	  "about 1 KiB each; the counts map holds 4 x N)" },
	{ "exclude_pid", 0, "PID", PROF_OPT_FN, 0, 0, 0, profile_opt_exclude_pid,
	  "filter (BPF, in the kernel): drop the samples of process\n"
	  "or thread PID (0: the idle tasks)" },
	{ "nr_running_min", 0, "N", PROF_OPT_FN, 0, 0, 0, profile_opt_nr_min,
	  "filter: keep samples while the CPU's runqueue holds at\n"
	  "least N tasks (running one included)" },
	{ "nr_running_max", 0, "N", PROF_OPT_FN, 0, 0, 0, profile_opt_nr_max,
	  "filter: keep samples while it holds at most N" },
	{ "irqs_disabled", 0, "[=0|1]", PROF_OPT_FN, 0, 0, 0, profile_opt_irqs,
	  "filter: keep samples taken with interrupts off (1, the\n"
	  "default) or on (0); x86" },
	{ "tif_need_resched", 0, "[=0|1]", PROF_OPT_FN, 0, 0, 0, profile_opt_resched,
	  "filter: keep samples of a task with TIF_NEED_RESCHED set\n"
	  "(1, the default: it should yield) or clear (0); x86" },
	{ "sched_policy", 0, "POLICY", PROF_OPT_FN, 0, 0, 0, profile_opt_policy,
	  "filter: keep samples of tasks of this policy: 0 NORMAL,\n"
	  "1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE" },
	{ "prio", 0, "N[-M]", PROF_OPT_FN, 0, 0, 0, profile_opt_prio,
	  "filter: keep samples of tasks whose prio is N (to M):\n"
	  "0-99 real-time, 100-139 the others (120 + nice)" },
	{ "top", 0, "N", PROF_OPT_FN, 0, 0, 0, profile_opt_top,
	  "text: the N functions with most self samples (default 30,\n0: all)" },
	{ 0 },
};

const struct profiler profiler_profile = {
	.name = "profile",
	.summary = "sample the CPUs: where the time goes, as top functions, flame graphs or pprof",
	.usage =
		"[-F HZ | -c PERIOD] [-a | -C CPUS] [-p PID,... | -t TID,... | -G CGROUP]\n"
		"                         [-g | --call-graph fp|dwarf[,SIZE]] [--duration S] [-i MS]\n"
		"                         [--format folded|text|json|svg|pprof] [-o FILE] [--flame-graph FILE]\n"
		"                         [-- COMMAND ARGS...]",
	.description =
		"Samples what the CPUs run, at -F HZ (99 by default), with the kernel and user stack of each\n"
		"sample (frame pointers; --call-graph dwarf unwinds code built without them), and counts\n"
		"the samples by stack in memory: memory grows with the distinct stacks, not with the run\n"
		"time, and nothing is written until a profile is. Stacks are symbolized when the profile\n"
		"is written (at the end, or every -i MS), each distinct address once. The event is cycles\n"
		"where a hardware PMU counts them, else cpu-clock, and the output says which (-e samples\n"
		"any other event).\n"
		"\n"
		"Formats: text lists the functions with the most samples, their total (samples with the\n"
		"function anywhere in the stack) and self (at the top) shares, as perf report --stdio does;\n"
		"folded is 'comm;outer;...;leaf COUNT' lines for flamegraph.pl, inferno and speedscope;\n"
		"json is one object per profile with its stacks (frames innermost first) and functions;\n"
		"svg is an interactive flame graph; pprof is gzipped profile.proto (go tool pprof, Pyroscope,\n"
		"Parca) with pid and comm labels, mappings and build-ids.\n"
		"Every format names a frame alike: its function; without a symbol [module+0xOFFSET]\n"
		"(the offset in the file: the same in every process and run); else [unknown]. Folded\n"
		"and svg mark kernel frames with flamegraph.pl's '_[k]' suffix (blue in the SVG).\n"
		"A user whom kernel.perf_event_paranoid (2 or more) forbids the kernel samples the user\n"
		"space of its own COMMAND or -p processes, as perf does, and is told so.",
	.events_help = "what to sample instead of cycles/cpu-clock: any event perfscope\n"
		       "knows (e.g. -e page-faults, -e sched:sched_switch); period=/freq=\n"
		       "on the event win over -F/-c",
	.notes =
		"Samples whose user stack stops before main, _start or a thread's start (code built\n"
		"without frame pointers) are counted and reported, with the advice to use DWARF stacks.\n"
		"Lost samples (rings full) are counted and reported; raise -m if you see them.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N samples, or when COMMAND or the -p\n"
		"process exits; the profile is written then (SIGUSR1 writes the one so far and starts a\n"
		"new one, as -i does). Exit status: COMMAND's status when it ends;\n"
		"0 after any other clean stop; 1 on a runtime failure (e.g. -o not writable, said before\n"
		"sampling starts); 2 on a usage error (e.g. -F above kernel.perf_event_max_sample_rate).",
	.examples = "profile -F 999 --duration 5\n"
		    "profile -F 999 --format folded -o cpu.folded -- ./a.out\n"
		    "profile -F 999 -o cpu.svg -- ./a.out\n"
		    "profile -F 999 -o cpu.pb.gz -- ./a.out && go tool pprof -top cpu.pb.gz\n"
		    "profile -F 499 -a -i 1000 -o slice.svg --duration 5\n"
		    "profile -F 999 --call-graph dwarf -o cpu.svg -- ./a.out\n"
		    "profile -F 997 -p 1 -g --flame-graph cpu --duration 2\n"
		    "profile -F 997 -C 0 --than 30 -g --duration 3\n"
		    "profile -F 997 --exclude-user -g --flame-graph kernel --duration 2\n"
		    "profile -F 499 -i 1000 --format json --duration 3 | jq .samples\n"
		    "profile -F 99 -a --per-pid --format folded --duration 2 > all.folded\n"
		    "profile -F 999 -a --bpf -o cpu.svg --duration 10\n"
		    "profile -F 999 -a --exclude_pid 0 --prio 120-139 -g --duration 5\n"
		    "profile -F 997 -C 0 --irqs_disabled -g --flame-graph irqoff --duration 5",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL |
		       CLI_OPT_DURATION | CLI_OPT_MMAP | CLI_OPT_ORDER | CLI_OPT_CALLCHAIN |
		       CLI_OPT_EXIT_N | CLI_OPT_SAMPLING_LIMIT | CLI_OPT_QUIET | CLI_OPT_USAGE_SELF,
	.opts = profile_opts,
	.needs = PROF_RINGS | PROF_COMM | PROF_STACKS,
	.conformance_args = "-F 99 -i 200",
	.priv_size = sizeof(struct profile),
	.as_event = profile_as_event,
	.check = profile_check,
	.event = profile_event,
	.start = profile_start,
	.sample = profile_sample,
	.lost = profile_lost,
	.interval = profile_interval,
	.report = profile_report,
	.teardown = profile_teardown,
};
