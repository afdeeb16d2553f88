/* perfscope profile's options: the values given, checked, and what they decide before the run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "condition.h"
#include "profile.h"

#define DEFAULT_FREQ 99

const char *const profile_format_names[] = { "text", "folded", "json", "svg", "pprof" };

/* ---- options ---- */

int profile_opt_format(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;

	for (size_t i = 0; i < sizeof(profile_format_names) / sizeof(profile_format_names[0]); i++)
		if (!strcmp(arg, profile_format_names[i])) {
			pf->format_arg = arg;
			pf->fmt = (enum pf_format)i;
			return 0;
		}
	return prof_usage(p, "--format must be folded, text, json, svg or pprof, not '%s'", arg);
}

/* ---- perf-prof's sample filters: options ---- */

/* a whole number from min to max, all of arg */
static int filter_num(struct prof *p, const char *opt, const char *arg, long min, long max, long *v)
{
	char *end;

	errno = 0;
	*v = arg ? strtol(arg, &end, 10) : 0;
	if (!arg || errno || end == arg || *end || *v < min || *v > max)
		return prof_usage(p, "--%s must be a whole number from %ld to %ld, not '%s'", opt,
				  min, max, arg ? arg : "");
	return 0;
}

int profile_opt_exclude_pid(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	long v;

	if (filter_num(p, "exclude_pid", arg, 0, 0x3fffffff, &v))
		return 2;
	pf->filt.exclude_pid = (uint32_t)v;
	pf->filt.on |= 1u << FILTER_PID;
	return 0;
}

int profile_opt_nr_min(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	long v;

	if (filter_num(p, "nr_running_min", arg, 0, 0x7fffffff, &v))
		return 2;
	pf->filt.nr_min = (uint32_t)v;
	pf->nr_min_set = true;
	pf->filt.on |= 1u << FILTER_NR_RUNNING;
	return 0;
}

int profile_opt_nr_max(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	long v;

	if (filter_num(p, "nr_running_max", arg, 0, 0x7fffffff, &v))
		return 2;
	pf->filt.nr_max = (uint32_t)v;
	pf->nr_max_set = true;
	pf->filt.on |= 1u << FILTER_NR_RUNNING;
	return 0;
}

/* --irqs_disabled[=0|1], --tif_need_resched[=0|1]: no value is 1 */
static int parse_01(struct prof *p, const char *opt, const char *arg, uint32_t *v)
{
	if (!arg || !strcmp(arg, "1"))
		*v = 1;
	else if (!strcmp(arg, "0"))
		*v = 0;
	else
		return prof_usage(p, "--%s takes 0 or 1 (--%s alone is 1), not '%s'", opt, opt,
				  arg);
	return 0;
}

int profile_opt_irqs(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;

	if (parse_01(p, "irqs_disabled", arg, &pf->filt.irqs_disabled))
		return 2;
	pf->filt.on |= 1u << FILTER_IRQS;
	return 0;
}

int profile_opt_resched(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;

	if (parse_01(p, "tif_need_resched", arg, &pf->filt.need_resched))
		return 2;
	pf->filt.on |= 1u << FILTER_RESCHED;
	return 0;
}

/* The kernel's SCHED_* numbers (uapi linux/sched.h); 4 is unused. */
static const char *const policies[] = { "NORMAL", "FIFO", "RR", "BATCH", NULL, "IDLE", "DEADLINE" };

int profile_opt_policy(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	const char *name = arg;
	char *end;
	long v = -1;

	if (!strncasecmp(name, "SCHED_", 6))
		name += 6;
	for (int i = 0; i < (int)(sizeof(policies) / sizeof(policies[0])); i++)
		if (policies[i] && !strcasecmp(name, policies[i]))
			v = i;
	if (!strcasecmp(name, "OTHER"))
		v = 0;
	if (v < 0) {
		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno || end == arg || *end || v < 0 || v > 6 || v == 4)
			return prof_usage(p,
					  "--sched_policy takes 0 NORMAL, 1 FIFO, 2 RR, 3 BATCH, 5 "
					  "IDLE or 6 DEADLINE (a number or a name), not '%s'",
					  arg);
	}
	pf->filt.policy = (uint32_t)v;
	pf->filt.on |= 1u << FILTER_POLICY;
	return 0;
}

/* --prio N[-M]: the kernel's prio, 0-99 real-time, 100-139 the others (120 + nice) */
int profile_opt_prio(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	char *end;
	long lo, hi;

	errno = 0;
	lo = strtol(arg, &end, 10);
	hi = lo;
	if (!errno && end != arg && *end == '-') {
		const char *h = end + 1;

		hi = strtol(h, &end, 10);
		if (end == h)
			end = (char *)"x";
	}
	if (errno || end == arg || *end || lo < 0 || hi > 139 || lo > hi)
		return prof_usage(p,
				  "--prio takes N or N-M within 0-139 (0-99 real-time, 100-139 "
				  "the others: 120 + nice), not '%s'",
				  arg);
	pf->filt.prio_min = (int32_t)lo;
	pf->filt.prio_max = (int32_t)hi;
	pf->filt.on |= 1u << FILTER_PRIO;
	return 0;
}

int profile_opt_top(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 0 || v > 1000000)
		return prof_usage(p,
				  "--top must be a number of functions from 0 (all) to 1000000, "
				  "not '%s'",
				  arg);
	pf->top = v;
	pf->top_set = true;
	return 0;
}

int profile_check(struct prof *p, void *priv)
{
	struct profile *pf = priv;
	long max;

	pf->kernel_refused = -1;
	if (pf->freq && pf->period)
		return prof_usage(p, "-F (a frequency) and -c (a period) contradict each other; "
				     "give one");
	if (pf->exclude_user && pf->exclude_kernel)
		return prof_usage(p,
				  "--exclude-user and --exclude-kernel together leave nothing to "
				  "sample; give one");
	if (pf->per_pid && pf->per_thread)
		return prof_usage(p, "--per-pid and --per-thread contradict each other; give one");
	if (pf->than && pf->period)
		return prof_usage(p, "--than judges CPU use from the sampling frequency: use -F, "
				     "not -c");
	if (pf->bpf && pf->than)
		return prof_usage(p, "--than judges each sample as it comes, and --bpf keeps them in "
				     "the kernel; give one");
	if (pf->bpf && p->opts.exit_n)
		return prof_usage(p, "-N counts samples as they come, and --bpf keeps them in the "
				     "kernel; stop with --duration instead");
	if (pf->bpf && p->opts.sampling_limit)
		return prof_usage(p, "--sampling-limit drops samples as they come, and --bpf keeps "
				     "them in the kernel; lower -F instead");
	/* no --format: what -o's name says, else text */
	if (!pf->format_arg && pf->output) {
		if (prof__ends_with(pf->output, ".svg"))
			pf->fmt = PF_SVG;
		else if (prof__ends_with(pf->output, ".pb.gz") ||
			 prof__ends_with(pf->output, ".pprof"))
			pf->fmt = PF_PPROF;
		else if (prof__ends_with(pf->output, ".folded"))
			pf->fmt = PF_FOLDED;
		else if (prof__ends_with(pf->output, ".json"))
			pf->fmt = PF_JSON;
	}
	if (p->opts.interval_ms && profile_file_format(pf->fmt) && !pf->output)
		return prof_usage(p,
				  "-i with --format %s writes one file per interval: give -o FILE "
				  "(FILE.0001.%s, FILE.0002.%s ...)",
				  profile_format_names[pf->fmt], profile_format_names[pf->fmt],
				  profile_format_names[pf->fmt]);
	max = psc_kernel__sysctl("perf_event_max_sample_rate", 0); /* 0: not known */
	if (pf->freq && max && pf->freq > max)
		return prof_usage(
			p,
			"-F %ld is above the kernel's limit, kernel.perf_event_max_sample_rate "
			"= %ld; use -F %ld or less, or raise the limit (sysctl -w "
			"kernel.perf_event_max_sample_rate=%ld)",
			pf->freq, max, max, pf->freq);
	if (!pf->top_set)
		pf->top = 30;
	pf->use_freq = !pf->period;
	pf->freq_used = pf->freq ? pf->freq : DEFAULT_FREQ;
	pf->period_used = pf->period;

	/* cycles where a PMU counts them, else the CPU clock; said in the output either way */
	if (!p->opts.events) {
		struct perf_event_attr a = {
			.size = sizeof(a),
			.type = PERF_TYPE_HARDWARE,
			.config = PERF_COUNT_HW_CPU_CYCLES,
			.disabled = 1,
			.exclude_kernel = pf->exclude_kernel,
			.exclude_user = pf->exclude_user,
			.exclude_hv = 1,
		};
		int err = psc_attr__probe(&a), ret;

		if (err)
			pf->why_event =
				err == -ENOENT || err == -EOPNOTSUPP
					? "no hardware PMU on this machine: cycles cannot be sampled"
					: "cycles cannot be opened here";
		if ((ret = prof__add_events(p, err ? "cpu-clock" : "cycles", NULL)))
			return ret;
	}
	/* stacks are what a profile is about: -g is the default (perf-prof's -g still accepted),
	 * unless only one part was asked for */
	if (p->opts.user_callchain != 1 && p->opts.kernel_callchain != 1)
		p->opts.callchain = true;
	p->callchain = true;

	/* an unwritable -o is said now, not after the run */
	if (pf->output) {
		char *name = p->opts.interval_ms && profile_file_format(pf->fmt)
				     ? prof__slice_name(pf->output, 1)
				     : NULL;

		pf->file = out__open(name ? name : pf->output, 256 * 1024);
		if (!pf->file) {
			fprintf(stderr, "perfscope %s: cannot write to '%s': %s\n", p->name,
				name ? name : pf->output, strerror(errno));
			free(name);
			return -EACCES;
		}
		free(name);
	}
	if (stack_table__init(&pf->stacks, pf->per_thread) ||
	    keymap__init(&pf->func_idx, sizeof(size_t), 256))
		return -ENOMEM;
	if (pf->bpf_stacks && !pf->bpf)
		return prof_usage(p, "--bpf-stacks sizes --bpf's stack map: give --bpf too");
	if (pf->filt.on) {
		char why[512];
		int err;

		if (!pf->nr_max_set)
			pf->filt.nr_max = UINT32_MAX;
		if (pf->filt.nr_min > pf->filt.nr_max)
			return prof_usage(p, "--nr_running_min %u is above --nr_running_max %u",
					  pf->filt.nr_min, pf->filt.nr_max);
		err = bpf_filter__check(&pf->filt, why, sizeof(why));
		if (err) {
			fprintf(stderr, "perfscope %s: %s\n", p->name, why);
			return err;
		}
		if (!pf->bpf) {
			pf->bf = bpf_filter__new(&pf->filt, why, sizeof(why));
			if (!pf->bf) {
				err = errno;
				fprintf(stderr,
					"perfscope %s: the sample filters are unavailable: %s\n",
					p->name, why);
				return -(err ? err : ENOTSUP);
			}
		}
	}
	if (pf->bpf) {
		/* the stacks the ring path would take: -g's parts as the engine reads them */
		struct bpf_stacks_opts o = {
			.kernel = p->opts.kernel_callchain == 1 ||
				  (p->opts.callchain && p->opts.kernel_callchain != 0),
			.user = p->opts.user_callchain == 1 ||
				(p->opts.callchain && p->opts.user_callchain != 0),
			/* the ring path names a stack by its thread's comm: keep threads apart */
			.per_thread = true,
			.max_stacks = (uint32_t)pf->bpf_stacks,
			/* a key per thread and stack pair: room for every stack several times */
			.max_keys = 4 * (uint32_t)(pf->bpf_stacks ? pf->bpf_stacks : 16384),
			.filter = pf->filt.on ? &pf->filt : NULL,
		};
		char why[512];

		if (!o.kernel && !o.user)
			return prof_usage(p, "--bpf counts stacks: --no-kernel-callchain and "
					     "--no-user-callchain together leave none");
		pf->bs = bpf_stacks__new(&o, why, sizeof(why));
		if (!pf->bs) {
			int err = errno;

			fprintf(stderr, "perfscope %s: --bpf is not available: %s\n", p->name, why);
			return -(err ? err : ENOTSUP);
		}
	}
	return 0;
}
