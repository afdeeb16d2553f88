/* perfscope profile: CPU sampling counted in memory by stack, reported as folded, text or JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "clock.h"
#include "profile.h"
#include "profiler.h"

/* ---- hooks (check in profile_opts.c, event and start in profile_setup.c, sample in
 * profile_sample.c) ---- */

/* The profile so far written (what --bpf and the filters counted first), then a new one. */
static int profile_slice(struct prof *p, struct profile *pf)
{
	uint64_t now = mono_ns();
	int err;

	if (pf->bs && (err = profile_pull_bpf(p, pf)))
		return err;
	profile_pull_filter(pf);
	/* the windows --than has not judged yet: their stacks go with this profile */
	if (pf->than)
		profile_than_flush(p, pf, now);
	return profile_write(p, pf, now);
}

static int profile_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	/* --than alone prints hot spots as they come; -i makes it judge per interval */
	return profile_slice(p, priv);
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
		err = profile_slice(p, pf);
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

	stack_table__exit(&pf->stacks);
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
	{ "than", 0, "PCT", PROF_OPT_PERCENT, OFF(than), 0, 0, NULL,
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
