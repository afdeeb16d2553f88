/* perfscope profile: CPU sampling counted in memory by stack, reported as folded, text or JSON. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>

#include <perfscope/perfscope.h>

#include "clock.h"
#include "bpf_filter.h"
#include "bpf_stacks.h"
#include "callchain.h"
#include "flame.h"
#include "flame_svg.h"
#include "pprof.h"
#include "keymap.h"
#include "profiler.h"

#define MAX_FRAMES 512
#define DEFAULT_FREQ 99
#define THAN_WINDOW_NS 1000000000ull /* --than without -i: CPU use judged per second */

enum pf_format { PF_TEXT, PF_FOLDED, PF_JSON, PF_SVG, PF_PPROF };
static const char *const format_names[] = { "text", "folded", "json", "svg", "pprof" };

/*
 * One distinct stack: the sampled addresses as the kernel gave them (markers included), and who
 * ran them. Symbolized only when a profile is written: a sample costs a hash of its ips.
 */
struct stack_ent {
	struct stack_ent *next; /* same hash */
	uint64_t count; /* samples */
	uint64_t period; /* sum of their periods (ns for cpu-clock) */
	uint32_t pid, tid;
	char comm[16];
	uint32_t nr;
	uint64_t ips[];
};

/* --than: one CPU's samples in the current window, and its stacks there. */
struct cpu_win {
	uint64_t start; /* sample time the window began */
	uint64_t n;
	struct keymap stacks; /* struct stack_ent * -> samples in the window */
};

/* A function in the text/JSON report: its self and total samples. */
struct func {
	char *name;
	const char *dso;
	uint64_t self, total;
	uint64_t last; /* the stack that last counted total: recursion counts once */
};

struct profile {
	/* options */
	long freq, period;
	const char *format_arg, *output, *flame_graph;
	bool exclude_user, exclude_kernel, exclude_guest, per_pid, per_thread;
	double than;
	long top; /* text rows; 0: all */
	bool top_set;
	/* what runs */
	enum pf_format fmt;
	const char *event; /* what was sampled, as the output says */
	const char *why_event; /* why not cycles, or NULL */
	bool use_freq; /* sample_freq applied (else period) */
	long freq_used, period_used;
	struct keymap stacks; /* hash -> struct stack_ent * */
	size_t nr_stacks;
	uint64_t samples, period_sum, dropped, lost;
	uint64_t seq; /* profiles written */
	uint64_t slice_start_ns; /* CLOCK_MONOTONIC at the start of this profile */
	int64_t slice_wall_ns; /* and CLOCK_REALTIME, for pprof's time_nanos */
	struct out *file; /* -o FILE for text/json (one stream); NULL: stdout (p->out) */
	/* --than */
	struct cpu_win *wins;
	int nr_wins;
	uint64_t than_window_ns;
	uint64_t hot_windows;
	/* report-time scratch */
	struct cc_frame frames[MAX_FRAMES];
	char fold[16384];
	struct func *funcs;
	size_t nr_funcs, cap_funcs;
	struct keymap func_idx; /* name hash -> index + 1 chain head */
	uint64_t truncated; /* samples whose user stack stops early, this profile */
	uint64_t truncated_total;
	/* --bpf: samples counted by stack in the kernel, pulled in when a profile is written */
	bool bpf;
	long bpf_stacks; /* --bpf-stacks: stack-trace map entries */
	struct bpf_stacks *bs;
	struct bpf_stacks_drops bpf_seen; /* its drop counts at the last pull */
	uint64_t bpf_kstack_lost, bpf_ustack_lost, bpf_keys_full; /* this profile's */
	/* perf-prof's sample filters, run in the kernel (bpf/filter.bpf.h) */
	struct filter_cfg filt;
	bool nr_min_set, nr_max_set;
	struct bpf_filter *bf; /* the ring path's; --bpf runs them in its own program */
	struct filter_counts filt_seen; /* the counts at the last profile */
	struct filter_counts filt_now; /* this profile's */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t str_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n && s[i]; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
	return h;
}

/* ---- options ---- */

static int parse_format(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;

	for (size_t i = 0; i < sizeof(format_names) / sizeof(format_names[0]); i++)
		if (!strcmp(arg, format_names[i])) {
			pf->format_arg = arg;
			pf->fmt = (enum pf_format)i;
			return 0;
		}
	return prof_usage(p, "--format must be folded, text, json, svg or pprof, not '%s'", arg);
}

static int parse_than(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (*end == '%')
		end++;
	if (errno || end == arg || *end || !(v > 0) || v > 100)
		return prof_usage(p,
				  "--than must be a percentage of a CPU above 0 and at most 100, "
				  "not '%s'",
				  arg);
	pf->than = v;
	return 0;
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

static int parse_exclude_pid(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;
	long v;

	if (filter_num(p, "exclude_pid", arg, 0, 0x3fffffff, &v))
		return 2;
	pf->filt.exclude_pid = (uint32_t)v;
	pf->filt.on |= 1u << FILTER_PID;
	return 0;
}

static int parse_nr_min(struct prof *p, void *priv, const char *arg)
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

static int parse_nr_max(struct prof *p, void *priv, const char *arg)
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

static int parse_irqs(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;

	if (parse_01(p, "irqs_disabled", arg, &pf->filt.irqs_disabled))
		return 2;
	pf->filt.on |= 1u << FILTER_IRQS;
	return 0;
}

static int parse_resched(struct prof *p, void *priv, const char *arg)
{
	struct profile *pf = priv;

	if (parse_01(p, "tif_need_resched", arg, &pf->filt.need_resched))
		return 2;
	pf->filt.on |= 1u << FILTER_RESCHED;
	return 0;
}

/* The kernel's SCHED_* numbers (uapi linux/sched.h); 4 is unused. */
static const char *const policies[] = { "NORMAL", "FIFO", "RR", "BATCH", NULL, "IDLE", "DEADLINE" };

static int parse_policy(struct prof *p, void *priv, const char *arg)
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
static int parse_prio(struct prof *p, void *priv, const char *arg)
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

static int parse_top(struct prof *p, void *priv, const char *arg)
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

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

/* The frequency limit the kernel enforces; 0 when it cannot be read. */
static long max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	long v = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%ld", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* "out.svg" -> "out.0001.svg": one file per -i slice. */
static char *slice_name(const char *path, uint64_t seq)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	char *name;

	if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1))
		dot = path + strlen(path);
	/* pprof's double extension stays whole: cpu.pb.gz -> cpu.0001.pb.gz */
	if (ends_with(path, ".pb.gz"))
		dot = path + strlen(path) - 6;
	if (asprintf(&name, "%.*s.%04" PRIu64 "%s", (int)(dot - path), path, seq, dot) < 0)
		return NULL;
	return name;
}

static bool file_format(enum pf_format f)
{
	return f == PF_FOLDED || f == PF_SVG || f == PF_PPROF;
}

static int profile_check(struct prof *p, void *priv)
{
	struct profile *pf = priv;
	long max;

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
		if (ends_with(pf->output, ".svg"))
			pf->fmt = PF_SVG;
		else if (ends_with(pf->output, ".pb.gz") || ends_with(pf->output, ".pprof"))
			pf->fmt = PF_PPROF;
		else if (ends_with(pf->output, ".folded"))
			pf->fmt = PF_FOLDED;
		else if (ends_with(pf->output, ".json"))
			pf->fmt = PF_JSON;
	}
	if (p->opts.interval_ms && file_format(pf->fmt) && !pf->output)
		return prof_usage(p,
				  "-i with --format %s writes one file per interval: give -o FILE "
				  "(FILE.0001.%s, FILE.0002.%s ...)",
				  format_names[pf->fmt], format_names[pf->fmt],
				  format_names[pf->fmt]);
	max = max_sample_rate();
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
		int err = psc_attr__probe(&a);

		if (!err) {
			p->opts.events = "cycles";
		} else {
			p->opts.events = "cpu-clock";
			pf->why_event =
				err == -ENOENT || err == -EOPNOTSUPP
					? "no hardware PMU on this machine: cycles cannot be sampled"
					: "cycles cannot be opened here";
		}
	}
	/* stacks are what a profile is about: -g is the default (perf-prof's -g still accepted),
	 * unless only one part was asked for */
	if (p->opts.user_callchain != 1 && p->opts.kernel_callchain != 1)
		p->opts.callchain = true;
	p->callchain = true;

	/* an unwritable -o is said now, not after the run */
	if (pf->output) {
		char *name = p->opts.interval_ms && file_format(pf->fmt) ? slice_name(pf->output, 1)
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
	if (keymap__init(&pf->stacks, sizeof(void *), 1024) ||
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
	/* what the first event samples at is what the outputs say (every event of a tracepoint) */
	if (ev->idx == 0) {
		pf->use_freq = a->freq;
		if (a->freq)
			pf->freq_used = (long)a->sample_freq;
		else
			pf->period_used = (long)a->sample_period;
	}
	(void)p;
	return 0;
}

/* ---- counting ---- */

static uint64_t stack_key(const struct profile *pf, const struct psc_sample *s, const char *comm,
			  const uint64_t *ips, uint32_t nr)
{
	uint64_t h = mix(str_hash(comm, 16), s->pid);

	if (pf->per_thread)
		h = mix(h, s->tid);
	for (uint32_t i = 0; i < nr; i++)
		h = mix(h, ips[i]);
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

static void than_sample(struct prof *p, struct profile *pf, int cpu, const struct psc_sample *s,
			struct stack_ent *e);
static void than_flush(struct prof *p, struct profile *pf, uint64_t now);

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
static int pull_bpf(struct prof *p, struct profile *pf)
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

	(void)ev;
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
		than_sample(p, pf, cpu, s, e);
	return 0;
}

static void profile_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct profile *pf = priv;

	(void)p;
	(void)ev;
	(void)cpu;
	pf->lost += n;
}

static void free_stacks(struct profile *pf)
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

/* ---- symbolizing ---- */

/* Returns that a stack's user part reaches a known root: main, _start, a thread's start. */
static bool is_root(const char *sym)
{
	static const char *const roots[] = {
		"main",
		"_start",
		"__libc_start_main",
		"__libc_start_call_main",
		"start_thread",
		"clone",
		"clone3",
		"__clone",
		"__clone3",
		"thread_start",
		"_dl_start",
		"_dl_start_user",
	};

	if (!sym)
		return false;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(sym, roots[i]))
			return true;
	return false;
}

/* A frame's name in every output: the function, else the module and the address in it. */
static int frame_name(const struct cc_frame *f, char *buf, size_t len)
{
	if (f->sym)
		return snprintf(buf, len, "%s", f->sym);
	if (!f->kernel && f->map_limit)
		return snprintf(buf, len, "[%s+0x%" PRIx64 "]", f->dso ? f->dso : "[unknown]",
				f->file_off);
	if (f->dso && !f->kernel)
		return snprintf(buf, len, "[%s]", f->dso);
	return snprintf(buf, len, "0x%" PRIx64, f->ip);
}

/* Resolves e into pf->frames; returns their number; counts it as truncated when it is. */
static int resolve(struct prof *p, struct profile *pf, const struct stack_ent *e)
{
	int n = callchain__frames(prof__callchain(p), (pid_t)e->pid, e->ips, e->nr, pf->frames,
				  MAX_FRAMES);
	bool user = false, rooted = false;

	for (int i = 0; i < n; i++) {
		if (pf->frames[i].kernel)
			continue;
		user = true;
		rooted = rooted || is_root(pf->frames[i].sym);
	}
	/* only a stack with a user part can fall short of main; -g off has no stack at all */
	if (user && !rooted && p->opts.callchain && p->opts.user_callchain != 0)
		pf->truncated += e->count;
	return n;
}

static void put_name(char **o, char *end, const char *s)
{
	for (; *s && *o < end; s++)
		*(*o)++ = (*s == ';' || (unsigned char)*s < 0x20 || *s == 0x7f) ? '_' : *s;
}

/* "comm;outer;...;leaf" into pf->fold; its length. */
static size_t fold(struct profile *pf, const struct stack_ent *e, int n, bool ksuffix)
{
	char *o = pf->fold, *end = pf->fold + sizeof(pf->fold) - 1, name[512];

	put_name(&o, end, e->comm);
	if (pf->per_pid || pf->per_thread) {
		if (pf->per_thread)
			snprintf(name, sizeof(name), "-%u/%u", e->pid, e->tid);
		else
			snprintf(name, sizeof(name), "-%u", e->pid);
		put_name(&o, end, name);
	}
	for (int i = n - 1; i >= 0; i--) {
		if (o < end)
			*o++ = ';';
		frame_name(&pf->frames[i], name, sizeof(name));
		put_name(&o, end, name);
		/* the SVG writer colors kernel frames by flamegraph.pl's suffix (and hides it) */
		if (ksuffix && pf->frames[i].kernel)
			put_name(&o, end, "_[k]");
	}
	*o = '\0';
	return (size_t)(o - pf->fold);
}

static struct func *func_get(struct profile *pf, const char *name, const char *dso)
{
	uint64_t key = mix(str_hash(name, SIZE_MAX), (uint64_t)(uintptr_t)dso);
	size_t *idx = keymap__find(&pf->func_idx, key);

	/* a hash shared by two functions: the next key along, as open addressing would */
	while (idx) {
		struct func *f = &pf->funcs[*idx];

		if (!strcmp(f->name, name) && f->dso == dso)
			return f;
		key++;
		idx = keymap__find(&pf->func_idx, key);
	}
	if (pf->nr_funcs == pf->cap_funcs) {
		size_t cap = pf->cap_funcs ? pf->cap_funcs * 2 : 256;
		struct func *n = realloc(pf->funcs, cap * sizeof(*n));

		if (!n)
			return NULL;
		pf->funcs = n;
		pf->cap_funcs = cap;
	}
	idx = keymap__insert(&pf->func_idx, key, NULL);
	if (!idx)
		return NULL;
	*idx = pf->nr_funcs;
	pf->funcs[pf->nr_funcs] = (struct func){ .name = strdup(name), .dso = dso, .last = 0 };
	if (!pf->funcs[pf->nr_funcs].name) {
		keymap__remove(&pf->func_idx, key);
		return NULL;
	}
	return &pf->funcs[pf->nr_funcs++];
}

static void funcs_clear(struct profile *pf)
{
	for (size_t i = 0; i < pf->nr_funcs; i++)
		free(pf->funcs[i].name);
	pf->nr_funcs = 0;
	keymap__clear(&pf->func_idx);
}

/* Self and total samples of every function of the stack just resolved (seq: its number). */
static void count_funcs(struct profile *pf, const struct stack_ent *e, int n, uint64_t seq)
{
	char name[512];

	for (int i = 0; i < n; i++) {
		struct func *f;

		frame_name(&pf->frames[i], name, sizeof(name));
		f = func_get(pf, name, pf->frames[i].dso);
		if (!f)
			continue;
		if (!i)
			f->self += e->count;
		if (f->last != seq) {
			f->total += e->count;
			f->last = seq;
		}
	}
}

static int by_self(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct stack_ent *x = *(const struct stack_ent *const *)a;
	const struct stack_ent *y = *(const struct stack_ent *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Every stack of the profile, most samples first. NULL + *nr 0 when none or out of memory. */
static struct stack_ent **sorted_stacks(struct profile *pf, size_t *nr)
{
	struct stack_ent **arr = malloc((pf->nr_stacks ? pf->nr_stacks : 1) * sizeof(*arr));
	struct keymap_iter it;
	struct stack_ent **head;
	uint64_t key;
	size_t n = 0;

	*nr = 0;
	if (!arr)
		return NULL;
	keymap__for_each(&pf->stacks, &it, key, head) for (struct stack_ent *e = *head;
							   e && n < pf->nr_stacks; e = e->next)
		arr[n++] = e;
	qsort(arr, n, sizeof(*arr), by_count);
	*nr = n;
	return arr;
}

/* ---- writing ---- */

static bool time_event(const char *ev)
{
	return ev && (!strcmp(ev, "cpu-clock") || !strcmp(ev, "task-clock"));
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

static void describe(struct prof *p, struct profile *pf, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s", pf->event ? pf->event : "?");

	if (pf->use_freq)
		n += snprintf(buf + n, len - (size_t)n, " at %ld Hz", pf->freq_used);
	else if (pf->period_used == 1)
		n += snprintf(buf + n, len - (size_t)n, " (every event)");
	else
		n += snprintf(buf + n, len - (size_t)n, " every %ld %s", pf->period_used,
			      time_event(pf->event) ? "ns" : "events");
	if (pf->why_event)
		n += snprintf(buf + n, len - (size_t)n, " (%s)", pf->why_event);
	if (pf->bpf)
		snprintf(buf + n, len - (size_t)n, ", counted in the kernel (BPF)");
	(void)p;
}

static void write_text(struct prof *p, struct profile *pf, struct out *o, double secs)
{
	char what[256];
	long rows = pf->top;

	describe(p, pf, what, sizeof(what));
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
			    pf->truncated, pct(pf->truncated, pf->samples));
	out__printf(o, "#\n# %8s %8s  %-40s %s\n", "Total", "Self", "Function", "Module");
	if (pf->nr_funcs) /* funcs is NULL before the first function: qsort wants an array */
		qsort(pf->funcs, pf->nr_funcs, sizeof(*pf->funcs), by_self);
	for (size_t i = 0; i < pf->nr_funcs && (rows <= 0 || (long)i < rows); i++) {
		const struct func *f = &pf->funcs[i];

		out__printf(o, "  %7.2f%% %7.2f%%  %-40s %s\n", pct(f->total, pf->samples),
			    pct(f->self, pf->samples), f->name, f->dso ? f->dso : "[unknown]");
	}
	if (rows > 0 && pf->nr_funcs > (size_t)rows)
		out__printf(o, "# ... %zu more functions (--top 0 lists all)\n",
			    pf->nr_funcs - (size_t)rows);
	out__puts(o, "\n");
}

static void json_frame(struct json *j, const struct cc_frame *f)
{
	char name[512];

	json__obj(j);
	json__key(j, "ip");
	json__hex(j, f->ip);
	frame_name(f, name, sizeof(name));
	json__key(j, "name");
	json__str(j, name);
	json__key(j, "sym");
	json__str(j, f->sym);
	if (f->sym) {
		json__key(j, "off");
		json__u64(j, f->off);
	}
	json__key(j, "dso");
	json__str(j, f->dso);
	if (!f->kernel && f->map_limit) {
		json__key(j, "path");
		json__str(j, f->path);
		json__key(j, "file_off");
		json__hex(j, f->file_off);
	}
	json__key(j, "kernel");
	json__bool(j, f->kernel);
	json__end(j);
}

/* One JSON object for the whole profile: header, stacks (frames innermost first), functions. */
static void write_json(struct prof *p, struct profile *pf, struct out *o, double secs,
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
		int n = resolve(p, pf, e);

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
			json_frame(&j, &pf->frames[k]);
		json__end(&j);
		json__end(&j);
	}
	json__end(&j);
	json__key(&j, "functions");
	json__arr(&j);
	if (pf->nr_funcs) /* funcs is NULL before the first function: qsort wants an array */
		qsort(pf->funcs, pf->nr_funcs, sizeof(*pf->funcs), by_self);
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

/* The profile's stacks folded (kernel frames "_[k]" for the SVG's colors). NULL: no memory. */
static struct flame *build_flame(struct prof *p, struct profile *pf, struct stack_ent **arr,
				 size_t nr, bool ksuffix)
{
	struct flame *fl = flame__new();

	if (!fl)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		int n = resolve(p, pf, arr[i]);
		size_t len = fold(pf, arr[i], n, ksuffix);

		if (flame__add(fl, pf->fold, len, arr[i]->count))
			pf->dropped += arr[i]->count;
	}
	return fl;
}

/* The profile as pprof: samples/count and cpu/nanoseconds (or the event's count), pid and comm
 * labels, every frame with its mapping and build-id. */
static struct pprof *build_pprof(struct prof *p, struct profile *pf, struct stack_ent **arr,
				 size_t nr, double secs)
{
	struct pprof_value_type types[2] = { { "samples", "count" }, { "cpu", "nanoseconds" } };
	struct pprof_frame *pfr = calloc(MAX_FRAMES, sizeof(*pfr));
	char(*bid)[2 * 20 + 1] = calloc(MAX_FRAMES, sizeof(*bid));
	int64_t period = pf->use_freq ? 1000000000ll / pf->freq_used : pf->period_used;
	struct pprof *pp = NULL;
	char what[300], comment[600];

	if (!pfr || !bid)
		goto out;
	/* a period in events, not time: the second value is the event's count */
	if (!time_event(pf->event)) {
		types[1].type = pf->event ? pf->event : "events";
		types[1].unit = "count";
		if (pf->use_freq)
			period = 1;
	}
	pp = pprof__new(types, 2, &types[1], period);
	if (!pp)
		goto out;
	pprof__set_time(pp, pf->slice_wall_ns, (int64_t)(secs * 1e9));
	describe(p, pf, what, sizeof(what));
	snprintf(comment, sizeof(comment), "perfscope profile: %s, %s", what, p->title);
	pprof__add_comment(pp, comment);
	if (pf->lost) {
		snprintf(comment, sizeof(comment), "%" PRIu64 " samples lost", pf->lost);
		pprof__add_comment(pp, comment);
	}
	if (!p->opts.interval_ms && prof__kernel_dropped(p)) {
		snprintf(comment, sizeof(comment),
			 "about %" PRIu64 " samples dropped silently by the kernel",
			 prof__kernel_dropped(p));
		pprof__add_comment(pp, comment);
	}
	if (pf->truncated) {
		snprintf(comment, sizeof(comment),
			 "%" PRIu64 " samples with a user stack that stops before main",
			 pf->truncated);
		pprof__add_comment(pp, comment);
	}
	for (size_t i = 0; i < nr; i++) {
		const struct stack_ent *e = arr[i];
		int n = resolve(p, pf, e);
		char pid[16], tid[16];
		struct pprof_label labels[3] = {
			{ "comm", e->comm },
			{ "pid", pid },
			{ "tid", tid },
		};
		int64_t values[2] = { (int64_t)e->count, (int64_t)e->period };

		snprintf(pid, sizeof(pid), "%u", e->pid);
		snprintf(tid, sizeof(tid), "%u", e->tid);
		for (int k = 0; k < n; k++) {
			const struct cc_frame *f = &pf->frames[k];

			pfr[k] = (struct pprof_frame){
				.addr = f->ip,
				.function = f->sym,
				.module = f->kernel ? f->dso : f->path,
				.map_start = f->map_start,
				.map_limit = f->map_limit,
				.map_offset = f->map_pgoff,
			};
			if (f->build_id_size) {
				for (int b = 0; b < f->build_id_size && b < 20; b++)
					snprintf(bid[k] + 2 * b, 3, "%02x", f->build_id[b]);
				pfr[k].build_id = bid[k];
			}
		}
		if (pprof__add_sample(pp, pfr, (size_t)n, values, labels, pf->per_thread ? 3 : 2))
			pf->dropped += e->count;
	}
out:
	free(pfr);
	free(bid);
	return pp;
}

/* The profile in a file format (folded, svg, pprof) into f, which is closed. 0 or -errno. */
static int write_file_format(struct prof *p, struct profile *pf, enum pf_format fmt,
			     struct stack_ent **arr, size_t nr, double secs, FILE *f,
			     const char *what)
{
	struct flame *fl = NULL;
	struct pprof *pp = NULL;
	int err = -ENOMEM;

	if (fmt == PF_PPROF) {
		pp = build_pprof(p, pf, arr, nr, secs);
		if (pp)
			err = pprof__write(pp, f);
		if (fclose(f) && !err)
			err = -errno;
	} else if (fmt == PF_SVG) {
		char title[300], sub[300];
		struct flame_svg_opts o = { .title = title, .subtitle = sub };

		fl = build_flame(p, pf, arr, nr, true);
		snprintf(title, sizeof(title), "perfscope profile: %s", p->title);
		describe(p, pf, sub, sizeof(sub));
		if (fl)
			err = flame_svg__write(fl, &o, f, NULL);
		if (fclose(f) && !err)
			err = -errno;
	} else {
		fl = build_flame(p, pf, arr, nr, false);
		err = fl ? flame__write_file(fl, f) : (fclose(f), -ENOMEM);
	}
	if (err)
		fprintf(stderr, "perfscope %s: cannot write the %s profile to %s: %s\n", p->name,
			format_names[fmt], what, strerror(-err));
	else if (!p->opts.quiet && strcmp(what, "standard output"))
		fprintf(stderr, "perfscope %s: %" PRIu64 " samples in %zu stacks written to %s\n",
			p->name, pf->samples, nr, what);
	flame__delete(fl);
	pprof__delete(pp);
	return err;
}

static FILE *fopen_slice(struct prof *p, const char *path, uint64_t seq, bool sliced, char **name)
{
	FILE *f;

	*name = sliced ? slice_name(path, seq) : strdup(path);
	if (!*name)
		return NULL;
	f = fopen(*name, "we");
	if (!f)
		fprintf(stderr, "perfscope %s: cannot write to '%s': %s\n", p->name, *name,
			strerror(errno));
	return f;
}

static int64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* The filters' counts since the last profile, into filt_now. */
static void pull_filter(struct profile *pf)
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

/* Writes the profile counted so far, then starts a new one. 0 or -errno. */
static int write_profile(struct prof *p, struct profile *pf)
{
	bool sliced = p->opts.interval_ms > 0;
	uint64_t now = mono_ns();
	double secs = (double)(now - (pf->slice_start_ns ? pf->slice_start_ns : p->start_ns)) / 1e9;
	struct out *o = pf->file ? pf->file : p->out;
	struct stack_ent **arr;
	size_t nr;
	int err = 0;

	if (pf->bs && (err = pull_bpf(p, pf)))
		return err;
	pull_filter(pf);
	/* the windows --than has not judged yet: their stacks go with this profile */
	if (pf->than)
		than_flush(p, pf, now);
	pf->seq++;
	pf->truncated = 0;
	funcs_clear(pf);
	arr = sorted_stacks(pf, &nr);
	if (!arr)
		return -ENOMEM;
	/* functions (and the truncated count) first: every format's header says them */
	for (size_t i = 0; i < nr; i++)
		count_funcs(pf, arr[i], resolve(p, pf, arr[i]), i + 1);
	pf->truncated_total += pf->truncated;
	if (file_format(pf->fmt)) {
		char *name = NULL;
		const char *what = "standard output";
		FILE *f;

		if (pf->output && pf->seq > 1) {
			f = fopen_slice(p, pf->output, pf->seq, true, &name);
			what = name;
		} else if (pf->output) {
			/* the first file was opened by check (an unwritable -o said at once) */
			int fd = dup(pf->file->fd);

			f = fd >= 0 ? fdopen(fd, "w") : NULL;
			name = sliced ? slice_name(pf->output, 1) : NULL;
			what = name ? name : pf->output;
		} else {
			out__flush(p->out);
			f = fdopen(dup(STDOUT_FILENO), "w");
		}
		err = f ? write_file_format(p, pf, pf->fmt, arr, nr, secs, f, what) : -errno;
		free(name);
	} else if (pf->fmt == PF_JSON) {
		write_json(p, pf, o, secs, arr, nr);
	} else {
		write_text(p, pf, o, secs);
	}
	if (pf->flame_graph) {
		char *name = NULL;
		const char *base = pf->flame_graph;
		char *path = NULL;
		FILE *f;

		/* perf-prof's name: FILE.folded */
		if (asprintf(&path, "%s%s", base, ends_with(base, ".folded") ? "" : ".folded") < 0)
			path = NULL;
		f = path ? fopen_slice(p, path, pf->seq, sliced, &name) : NULL;
		if (f) {
			int e2 = write_file_format(p, pf, PF_FOLDED, arr, nr, secs, f, name);

			err = err ? err : e2;
		} else {
			err = err ? err : -EIO;
		}
		free(name);
		free(path);
	}
	if (o)
		out__flush(o);
	free(arr);
	free_stacks(pf);
	pf->samples = pf->period_sum = pf->lost = 0;
	pf->bpf_kstack_lost = pf->bpf_ustack_lost = pf->bpf_keys_full = 0;
	pf->slice_start_ns = now;
	pf->slice_wall_ns = wall_ns();
	callchain__exits_done(prof__callchain(p));
	return err;
}

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
		int n = resolve(p, pf, top);

		fold(pf, top, n, false);
		snprintf(line + len, sizeof(line) - (size_t)len, ", hottest stack %.0f%%: %s",
			 pct(best, w->n), pf->fold);
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

static void than_sample(struct prof *p, struct profile *pf, int cpu, const struct psc_sample *s,
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
static void than_flush(struct prof *p, struct profile *pf, uint64_t now)
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

/* ---- lifecycle ---- */

static int profile_start(struct prof *p, void *priv)
{
	struct profile *pf = priv;

	/* symbols are read when a profile is written: the maps of exited processes wait for it */
	callchain__hold_exits(prof__callchain(p), true);
	pf->slice_wall_ns = wall_ns();
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
	(void)now_ns;
	/* --than alone prints hot spots as they come; -i makes it judge per interval */
	return write_profile(p, priv);
}

static int profile_report(struct prof *p, void *priv)
{
	struct profile *pf = priv;
	int err;

	/* --bpf: what the kernel counted since the last slice decides as the ring's samples do */
	if (pf->bs && (err = pull_bpf(p, pf)))
		return err;
	/* the last slice of an -i run: only when something was sampled since */
	if (p->opts.interval_ms && !pf->samples && pf->seq)
		err = 0;
	else
		err = write_profile(p, pf);
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

		pull_filter(pf); /* an -i run's last slice is not written when it sampled nothing */

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

	(void)p;
	free_stacks(pf);
	keymap__exit(&pf->stacks);
	funcs_clear(pf);
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
	{ "format", 0, "F", PROF_OPT_FN, 0, 0, 0, parse_format,
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
	{ "than", 0, "PCT", PROF_OPT_FN, 0, 0, 0, parse_than,
	  "hot spots: a line for each CPU busy at least PCT% over a\n"
	  "second (or -i), with its hottest stack (perf-prof's)" },
	{ "bpf", 0, NULL, PROF_OPT_FLAG, OFF(bpf), 0, 0, NULL,
	  "count the samples by stack in the kernel (a BPF program):\n"
	  "no sample crosses the ring buffer; stacks the BPF maps\n"
	  "cannot hold are counted and reported" },
	{ "bpf-stacks", 0, "N", PROF_OPT_LONG, OFF(bpf_stacks), 256, 1048576, NULL,
	  "--bpf: the stacks its stack map holds (default 16384,\n"
	  "about 1 KiB each; the counts map holds 4 x N)" },
	{ "exclude_pid", 0, "PID", PROF_OPT_FN, 0, 0, 0, parse_exclude_pid,
	  "filter (BPF, in the kernel): drop the samples of process\n"
	  "or thread PID (0: the idle tasks)" },
	{ "nr_running_min", 0, "N", PROF_OPT_FN, 0, 0, 0, parse_nr_min,
	  "filter: keep samples while the CPU's runqueue holds at\n"
	  "least N tasks (running one included)" },
	{ "nr_running_max", 0, "N", PROF_OPT_FN, 0, 0, 0, parse_nr_max,
	  "filter: keep samples while it holds at most N" },
	{ "irqs_disabled", 0, "[=0|1]", PROF_OPT_FN, 0, 0, 0, parse_irqs,
	  "filter: keep samples taken with interrupts off (1, the\n"
	  "default) or on (0); x86" },
	{ "tif_need_resched", 0, "[=0|1]", PROF_OPT_FN, 0, 0, 0, parse_resched,
	  "filter: keep samples of a task with TIF_NEED_RESCHED set\n"
	  "(1, the default: it should yield) or clear (0); x86" },
	{ "sched_policy", 0, "POLICY", PROF_OPT_FN, 0, 0, 0, parse_policy,
	  "filter: keep samples of tasks of this policy: 0 NORMAL,\n"
	  "1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE" },
	{ "prio", 0, "N[-M]", PROF_OPT_FN, 0, 0, 0, parse_prio,
	  "filter: keep samples of tasks whose prio is N (to M):\n"
	  "0-99 real-time, 100-139 the others (120 + nice)" },
	{ "top", 0, "N", PROF_OPT_FN, 0, 0, 0, parse_top,
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
		"A frame without a symbol is shown as [module+0xOFFSET] (the offset in the file).",
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
		    "profile -F 999 -a --exclude_pid 0 --prio 100-119 -g --duration 5\n"
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
