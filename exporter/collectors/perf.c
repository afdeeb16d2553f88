/* The perf collector: node_exporter's perf metric families and tracepoints, per CPU, one group read
 * per kind. */
#include "perf.h"
#include "clock.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <perfscope/common.h>
#include <perfscope/cpumap.h>
#include <perfscope/evsel.h>
#include <perfscope/parse.h>
#include <perfscope/threadmap.h>
#include <perfscope/tracefs.h>

#include "../expo.h"
#include "../exporter_log.h"
#include "namelist.h"

#define HW(flag, metric, help, event, cfg)                                         \
	{                                                                          \
		PERF_KIND_HARDWARE, flag, metric, help, event, PERF_TYPE_HARDWARE, \
			PERF_COUNT_HW_##cfg                                        \
	}
#define SW(flag, metric, help, event, cfg)                                         \
	{                                                                          \
		PERF_KIND_SOFTWARE, flag, metric, help, event, PERF_TYPE_SOFTWARE, \
			PERF_COUNT_SW_##cfg                                        \
	}
#define CACHE_CFG(id, op, res)                                           \
	(PERF_COUNT_HW_CACHE_##id | (PERF_COUNT_HW_CACHE_OP_##op << 8) | \
	 (PERF_COUNT_HW_CACHE_RESULT_##res << 16))
#define CA(flag, metric, help, event, id, op, res)                              \
	{                                                                       \
		PERF_KIND_CACHE, flag, metric, help, event, PERF_TYPE_HW_CACHE, \
			CACHE_CFG(id, op, res)                                  \
	}

/*
 * Names, HELP texts and allow-list names exactly as node_exporter 1.x's collector/perf_linux.go
 * has them (HELP quirks such as "Number L1 data cache read hits" included), so that existing
 * dashboards, alerts and recording rules see the same series.
 */
static const struct perf_family_def defs[] = {
	HW("CpuCycles", "node_perf_cpucycles", "Number of CPU cycles (frequency scaled)", "cycles",
	   CPU_CYCLES),
	HW("CpuInstr", "node_perf_instructions", "Number of CPU instructions", "instructions",
	   INSTRUCTIONS),
	HW("BranchInstr", "node_perf_branch_instructions", "Number of CPU branch instructions",
	   "branch-instructions", BRANCH_INSTRUCTIONS),
	HW("BranchMisses", "node_perf_branch_misses", "Number of CPU branch misses",
	   "branch-misses", BRANCH_MISSES),
	HW("CacheRef", "node_perf_cache_refs", "Number of cache references (non frequency scaled)",
	   "cache-references", CACHE_REFERENCES),
	HW("CacheMisses", "node_perf_cache_misses", "Number of cache misses", "cache-misses",
	   CACHE_MISSES),
	HW("RefCpuCycles", "node_perf_ref_cpucycles", "Number of CPU cycles", "ref-cycles",
	   REF_CPU_CYCLES),
	HW("StalledCyclesBackend", "node_perf_stalled_cycles_backend",
	   "Number of stalled backend CPU cycles", "stalled-cycles-backend",
	   STALLED_CYCLES_BACKEND),
	HW("StalledCyclesFrontend", "node_perf_stalled_cycles_frontend",
	   "Number of stalled frontend CPU cycles", "stalled-cycles-frontend",
	   STALLED_CYCLES_FRONTEND),
	SW("PageFault", "node_perf_page_faults", "Number of page faults", "page-faults",
	   PAGE_FAULTS),
	SW("ContextSwitch", "node_perf_context_switches", "Number of context switches",
	   "context-switches", CONTEXT_SWITCHES),
	SW("CpuMigration", "node_perf_cpu_migrations", "Number of CPU process migrations",
	   "cpu-migrations", CPU_MIGRATIONS),
	SW("MinorFault", "node_perf_minor_faults", "Number of minor page faults", "minor-faults",
	   PAGE_FAULTS_MIN),
	SW("MajorFault", "node_perf_major_faults", "Number of major page faults", "major-faults",
	   PAGE_FAULTS_MAJ),
	CA("L1DataReadHit", "node_perf_cache_l1d_read_hits", "Number L1 data cache read hits",
	   "L1-dcache-loads", L1D, READ, ACCESS),
	CA("L1DataReadMiss", "node_perf_cache_l1d_read_misses", "Number L1 data cache read misses",
	   "L1-dcache-load-misses", L1D, READ, MISS),
	CA("L1DataWriteHit", "node_perf_cache_l1d_write_hits", "Number L1 data cache write hits",
	   "L1-dcache-stores", L1D, WRITE, ACCESS),
	CA("L1InstrReadMiss", "node_perf_cache_l1_instr_read_misses",
	   "Number instruction L1 instruction read misses", "L1-icache-load-misses", L1I, READ,
	   MISS),
	CA("InstrTLBReadHit", "node_perf_cache_tlb_instr_read_hits",
	   "Number instruction TLB read hits", "iTLB-loads", ITLB, READ, ACCESS),
	CA("InstrTLBReadMiss", "node_perf_cache_tlb_instr_read_misses",
	   "Number instruction TLB read misses", "iTLB-load-misses", ITLB, READ, MISS),
	CA("DataTLBReadHit", "node_perf_cache_tlb_data_read_hits", "Number of data TLB read hits",
	   "dTLB-loads", DTLB, READ, ACCESS),
	CA("DataTLBReadMiss", "node_perf_cache_tlb_data_read_misses",
	   "Number of data TLB read misses", "dTLB-load-misses", DTLB, READ, MISS),
	CA("DataTLBWriteHit", "node_perf_cache_tlb_data_write_hits",
	   "Number of data TLB write hits", "dTLB-stores", DTLB, WRITE, ACCESS),
	CA("DataTLBWriteMiss", "node_perf_cache_tlb_data_write_misses",
	   "Number of data TLB write misses", "dTLB-store-misses", DTLB, WRITE, MISS),
	CA("LLReadHit", "node_perf_cache_ll_read_hits", "Number last level read hits", "LLC-loads",
	   LL, READ, ACCESS),
	CA("LLReadMiss", "node_perf_cache_ll_read_misses", "Number last level read misses",
	   "LLC-load-misses", LL, READ, MISS),
	CA("LLWriteHit", "node_perf_cache_ll_write_hits", "Number last level write hits",
	   "LLC-stores", LL, WRITE, ACCESS),
	CA("LLWriteMiss", "node_perf_cache_ll_write_misses", "Number last level write misses",
	   "LLC-store-misses", LL, WRITE, MISS),
	CA("BPUReadHit", "node_perf_cache_bpu_read_hits", "Number BPU read hits", "branch-loads",
	   BPU, READ, ACCESS),
	CA("BPUReadMiss", "node_perf_cache_bpu_read_misses", "Number BPU read misses",
	   "branch-load-misses", BPU, READ, MISS),
};

static const char *const kind_names[PERF_KIND_NR] = { "hardware", "software", "cache",
						      "tracepoint" };

const struct perf_family_def *perf_family_defs(int *nr)
{
	*nr = (int)(sizeof(defs) / sizeof(defs[0]));
	return defs;
}

struct pc_event {
	enum perf_kind kind;
	char *metric; /* family name without _total */
	char *help;
	char *name; /* perf's event name: the `event` label of the extra metrics */
	struct perf_event_attr attr;
	/* per CPU index */
	struct psc_evsel **evsel; /* NULL when it could not be opened there */
	int *open_errno;
	int *grp; /* index in perf_collector.grp of its group on that CPU */
	uint64_t *value; /* exported: scaled, never going backwards */
	struct psc_counts *counts;
};

struct pc_group {
	struct psc_evsel *leader;
	int cpu_idx;
	bool read_ok;
	bool warned; /* "never scheduled" logged */
};

struct perf_collector {
	struct psc_cpumap *cpus;
	struct psc_cpumap **cpu1; /* one single-CPU map per CPU */
	struct psc_threadmap *any;
	char (*cpu_label)[12];
	int nr_cpus;
	struct pc_event *ev;
	int nr_ev;
	struct pc_group *grp;
	int nr_grp;
	int nr_open;
	pthread_mutex_t lock;
	uint64_t read_errors;
};

static int add_event(struct perf_collector *pc, enum perf_kind kind, const char *metric,
		     const char *help, const char *name, const struct perf_event_attr *attr)
{
	struct pc_event *ev;
	struct pc_event *grown = realloc(pc->ev, (size_t)(pc->nr_ev + 1) * sizeof(*pc->ev));

	if (!grown)
		return -ENOMEM;
	pc->ev = grown;
	ev = &pc->ev[pc->nr_ev];
	memset(ev, 0, sizeof(*ev));
	pc->nr_ev++;
	ev->kind = kind;
	ev->attr = *attr;
	ev->metric = strdup(metric);
	ev->help = strdup(help);
	ev->name = strdup(name);
	ev->evsel = calloc((size_t)pc->nr_cpus, sizeof(*ev->evsel));
	ev->open_errno = calloc((size_t)pc->nr_cpus, sizeof(*ev->open_errno));
	ev->grp = calloc((size_t)pc->nr_cpus, sizeof(*ev->grp));
	ev->value = calloc((size_t)pc->nr_cpus, sizeof(*ev->value));
	ev->counts = calloc((size_t)pc->nr_cpus, sizeof(*ev->counts));
	if (!ev->metric || !ev->help || !ev->name || !ev->evsel || !ev->open_errno || !ev->grp ||
	    !ev->value || !ev->counts)
		return -ENOMEM;
	return 0;
}

static bool allowed(const struct perf_config *cfg, const struct perf_family_def *d)
{
	if (cfg->disable[d->kind])
		return false;
	if (!cfg->nr_allow[d->kind])
		return true;
	for (int i = 0; i < cfg->nr_allow[d->kind]; i++)
		if (!strcmp(cfg->allow[d->kind][i], d->flag_name))
			return true;
	return false;
}

/* Unknown allow-list names are a usage error (node_exporter ignores them silently). */
static int check_allow_lists(const struct perf_config *cfg, char *err, size_t errlen)
{
	static const char *const flag[] = { "hardware", "software", "cache" };

	for (int k = 0; k < PERF_KIND_TRACEPOINT; k++) {
		for (int i = 0; i < cfg->nr_allow[k]; i++) {
			char names[1024] = "";
			size_t n = 0;
			bool found = false;

			for (size_t j = 0; j < sizeof(defs) / sizeof(defs[0]); j++) {
				if ((int)defs[j].kind != k)
					continue;
				if (!strcmp(defs[j].flag_name, cfg->allow[k][i]))
					found = true;
				n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s",
						      n ? ", " : "", defs[j].flag_name);
			}
			if (!found) {
				snprintf(
					err, errlen,
					"--collector.perf.%s-profilers=%s: unknown profiler; known: %s",
					flag[k], cfg->allow[k][i], names);
				return -EINVAL;
			}
		}
	}
	return 0;
}

/* "sys:name" exactly, as node_exporter takes it; resolved through the event parser. */
static int add_tracepoint(struct perf_collector *pc, const char *tp, char *err, size_t errlen)
{
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *list = NULL;
	const char *colon = strchr(tp, ':');
	char metric[256], help[300], label[256];
	int ret;

	if (!colon || colon == tp || !colon[1] || strchr(colon + 1, ':') ||
	    strpbrk(tp, "/*?[,= ")) {
		snprintf(
			err, errlen,
			"--collector.perf.tracepoint=%s: expected SUBSYSTEM:EVENT, e.g. sched:sched_switch (see 'perfscope list tracepoint')",
			tp);
		return -EINVAL;
	}
	for (int i = 0; i < pc->nr_ev; i++) {
		if (pc->ev[i].kind == PERF_KIND_TRACEPOINT && !strcmp(pc->ev[i].name, tp)) {
			snprintf(err, errlen, "--collector.perf.tracepoint=%s is given twice", tp);
			return -EINVAL;
		}
	}
	psc_tracefs__mount(); /* when it cannot, the parse says tracefs is missing (ENODEV) */
	ret = psc_parse_events(tp, NULL, &list, &perr);
	if (ret || !list || list->nr != 1 || list->specs[0].kind != PSC_EVENT_TRACEPOINT) {
		snprintf(err, errlen, "--collector.perf.tracepoint=%s: %s%s", tp,
			 ret && perr.msg[0] ? perr.msg : "not a tracepoint",
			 ret == -ENODEV
				 ? "; run the exporter as root, or mount it: mount -t tracefs "
				   "nodev /sys/kernel/tracing"
				 : "");
		psc_event_list__delete(list);
		return ret == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	/* node_exporter: node_perf_<sys>_<event>; perfscope adds _total, as a counter should have.
	 */
	snprintf(label, sizeof(label), "%.*s_%s", (int)(colon - tp), tp, colon + 1);
	expo_sanitize_name(metric, sizeof(metric), "node_perf_");
	expo_sanitize_name(metric + strlen(metric), sizeof(metric) - strlen(metric), label);
	snprintf(help, sizeof(help), "Perf tracepoint %s", tp);
	ret = add_event(pc, PERF_KIND_TRACEPOINT, metric, help, tp, &list->specs[0].attr);
	psc_event_list__delete(list);
	return ret;
}

/* Opens ev alone on CPU c to learn whether this machine can count it there. */
static struct psc_evsel *probe(struct perf_collector *pc, struct pc_event *ev, int c)
{
	struct psc_evsel *evsel = psc_evsel__new(&ev->attr, ev->name);
	int ret;

	if (!evsel) {
		ev->open_errno[c] = errno ? errno : ENOMEM;
		return NULL;
	}
	ret = psc_evsel__open(evsel, pc->cpu1[c], pc->any, NULL);
	if (ret) {
		ev->open_errno[c] = -ret;
		psc_evsel__delete(evsel);
		return NULL;
	}
	psc_evsel__close(evsel);
	return evsel;
}

static int add_group(struct perf_collector *pc, struct psc_evsel *leader, int c)
{
	struct pc_group *g = realloc(pc->grp, (size_t)(pc->nr_grp + 1) * sizeof(*pc->grp));

	if (!g)
		return -ENOMEM;
	pc->grp = g;
	pc->grp[pc->nr_grp++] = (struct pc_group){ .leader = leader, .cpu_idx = c };
	return 0;
}

/*
 * One CPU, one kind: the events that opened alone are grouped (hardware and cache ones in
 * groups of at most max_group_size, since a group needs all its counters on the PMU at once)
 * so that a scrape reads each group with one read(2).
 */
static int open_groups(struct perf_collector *pc, enum perf_kind kind, int c, int max_group)
{
	struct psc_evsel *leader = NULL;
	int in_group = 0, ret;

	/* Membership first: the leader's read format depends on having members when it opens. */
	for (int i = 0; i < pc->nr_ev; i++) {
		struct pc_event *ev = &pc->ev[i];
		struct psc_evsel *evsel;

		if (ev->kind != kind)
			continue;
		evsel = probe(pc, ev, c);
		if (!evsel)
			continue;
		ev->evsel[c] = evsel;
		if (!leader || (max_group > 0 && in_group >= max_group)) {
			ret = add_group(pc, evsel, c);
			if (ret)
				return ret;
			leader = evsel;
			in_group = 1;
			ev->grp[c] = pc->nr_grp - 1;
			continue;
		}
		ev->grp[c] = pc->nr_grp - 1;
		ret = psc_evsel__set_leader(evsel, leader);
		if (ret)
			return ret;
		in_group++;
	}
	/* Then leader, then members, with the leader's fd as their group. */
	for (int i = 0; i < pc->nr_ev; i++) {
		struct pc_event *ev = &pc->ev[i];
		struct psc_evsel *evsel = ev->evsel[c];

		if (ev->kind != kind || !evsel || !psc_evsel__is_leader(evsel))
			continue;
		ret = psc_evsel__open(evsel, pc->cpu1[c], pc->any, NULL);
		if (ret)
			ev->open_errno[c] = -ret;
	}
	for (int i = 0; i < pc->nr_ev; i++) {
		struct pc_event *ev = &pc->ev[i];
		struct psc_evsel *evsel = ev->evsel[c];

		if (ev->kind != kind || !evsel || psc_evsel__is_leader(evsel))
			continue;
		/* A member the kernel refuses stays closed; the rest of its group still counts. */
		if (!psc_evsel__is_open(psc_evsel__leader(evsel))) {
			ret = psc_evsel__open_errno(psc_evsel__leader(evsel));
			ev->open_errno[c] = ret > 0 ? ret : EINVAL;
			continue;
		}
		ret = psc_evsel__open(evsel, pc->cpu1[c], pc->any, NULL);
		if (ret)
			ev->open_errno[c] = -ret;
	}
	return 0;
}

/*
 * Events that cannot be counted: those this machine does not provide at all (every hardware and
 * cache event without a PMU: expected in a VM) in one warning naming them, the reason for each at
 * debug level; any other failure, or one on some CPUs only, a warning each. The gauge
 * node_perf_event_supported says 0 for every one of them.
 */
static void log_unsupported(struct perf_collector *pc)
{
	struct namelist absent;
	char names[sizeof(absent.buf) + 32];

	namelist__init(&absent, sizeof(absent.buf));
	for (int i = 0; i < pc->nr_ev; i++) {
		struct pc_event *ev = &pc->ev[i];
		char cpus[256] = "", why[512];
		size_t n = 0;
		int err = 0, nr = 0;
		bool same = true;

		for (int c = 0; c < pc->nr_cpus; c++) {
			if (!ev->open_errno[c])
				continue;
			same = same && (!err || err == ev->open_errno[c]);
			err = ev->open_errno[c];
			nr++;
			if (n < sizeof(cpus) - 16)
				n += (size_t)snprintf(cpus + n, sizeof(cpus) - n, "%s%s",
						      n ? "," : "", pc->cpu_label[c]);
		}
		if (!nr)
			continue;
		psc_strerror_open(err, ev->name, why, sizeof(why));
		if (nr == pc->nr_cpus && same && psc_errno_is_unsupported(err)) {
			namelist__add(&absent, ev->name);
			xlog(XLOG_DEBUG, "%s event %s (%s_total) cannot be counted on CPU %s: %s",
			     kind_names[ev->kind], ev->name, ev->metric, cpus, why);
			continue;
		}
		xlog(XLOG_WARN, "%s event %s (%s_total) cannot be counted on CPU %s: %s",
		     kind_names[ev->kind], ev->name, ev->metric, cpus, why);
	}
	if (absent.nr)
		xlog(XLOG_WARN,
		     "%d perf events are not supported on this machine (no PMU or no such event), "
		     "exported as node_perf_event_supported 0: %s (--log.level=debug says why for each)",
		     absent.nr, namelist__str(&absent, names, sizeof(names)));
}

struct perf_collector *perf_collector_new(const struct perf_config *cfg, char *err, size_t errlen)
{
	struct perf_collector *pc = calloc(1, sizeof(*pc));
	int ret = -ENOMEM;

	if (!pc) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&pc->lock, NULL);
	pc->cpus = psc_cpumap__get(cfg->cpus);
	pc->nr_cpus = psc_cpumap__nr(pc->cpus);
	pc->any = psc_threadmap__new_any();
	pc->cpu1 = calloc((size_t)pc->nr_cpus, sizeof(*pc->cpu1));
	pc->cpu_label = calloc((size_t)pc->nr_cpus, sizeof(*pc->cpu_label));
	if (!pc->any || !pc->cpu1 || !pc->cpu_label)
		goto fail;
	for (int c = 0; c < pc->nr_cpus; c++) {
		snprintf(pc->cpu_label[c], sizeof(pc->cpu_label[c]), "%d",
			 psc_cpumap__cpu(pc->cpus, c));
		pc->cpu1[c] = psc_cpumap__parse_syntax(pc->cpu_label[c], NULL);
		if (!pc->cpu1[c])
			goto fail;
	}
	ret = check_allow_lists(cfg, err, errlen);
	if (ret)
		goto fail_msg;
	for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
		struct perf_event_attr attr = { .type = defs[i].type,
						.config = defs[i].config,
						.size = sizeof(attr) };

		if (!allowed(cfg, &defs[i]))
			continue;
		ret = add_event(pc, defs[i].kind, defs[i].metric, defs[i].help, defs[i].event,
				&attr);
		if (ret)
			goto fail;
	}
	for (int i = 0; i < cfg->nr_tracepoints; i++) {
		ret = add_tracepoint(pc, cfg->tracepoints[i], err, errlen);
		if (ret == -ENOMEM)
			goto fail;
		if (ret)
			goto fail_msg;
	}
	if (!pc->nr_ev) {
		snprintf(err, errlen,
			 "no perf events are configured: every profiler kind is disabled");
		ret = -EINVAL;
		goto fail_msg;
	}
	for (int c = 0; c < pc->nr_cpus; c++) {
		for (int k = 0; k < PERF_KIND_NR; k++) {
			bool limited = k == PERF_KIND_HARDWARE || k == PERF_KIND_CACHE;

			ret = open_groups(pc, (enum perf_kind)k, c,
					  limited ? cfg->max_group_size : 0);
			if (ret)
				goto fail;
		}
	}
	for (int i = 0; i < pc->nr_ev; i++) {
		for (int c = 0; c < pc->nr_cpus; c++) {
			if (!pc->ev[i].open_errno[c] && pc->ev[i].evsel[c]) {
				pc->nr_open++;
				break;
			}
		}
	}
	log_unsupported(pc);
	if (!pc->nr_open) {
		char why[512];

		psc_strerror_open(pc->ev[0].open_errno[0], pc->ev[0].name, why, sizeof(why));
		snprintf(err, errlen,
			 "none of the %d configured perf events can be counted here (%s)",
			 pc->nr_ev, why);
		ret = -pc->ev[0].open_errno[0];
		if (ret == -EINVAL || !ret)
			ret = -ENOTSUP;
		goto fail_msg;
	}
	for (int g = 0; g < pc->nr_grp; g++) {
		if (!psc_evsel__is_open(pc->grp[g].leader))
			continue;
		ret = psc_evsel__enable(pc->grp[g].leader);
		if (ret) {
			snprintf(err, errlen, "cannot enable %s on CPU %s: %s",
				 psc_evsel__name(pc->grp[g].leader),
				 pc->cpu_label[pc->grp[g].cpu_idx], strerror(-ret));
			goto fail_msg;
		}
	}
	return pc;
fail:
	snprintf(err, errlen, "%s", strerror(-ret));
fail_msg:
	perf_collector_delete(pc);
	errno = -ret;
	return NULL;
}

void perf_collector_delete(struct perf_collector *pc)
{
	if (!pc)
		return;
	/* Members before leaders: a leader owns the array its group is read through. */
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < pc->nr_ev; i++) {
			for (int c = 0; pc->ev[i].evsel && c < pc->nr_cpus; c++) {
				struct psc_evsel *e = pc->ev[i].evsel[c];

				if (e && psc_evsel__is_leader(e) == (pass == 1)) {
					psc_evsel__delete(e);
					pc->ev[i].evsel[c] = NULL;
				}
			}
		}
	}
	for (int i = 0; i < pc->nr_ev; i++) {
		free(pc->ev[i].metric);
		free(pc->ev[i].help);
		free(pc->ev[i].name);
		free(pc->ev[i].evsel);
		free(pc->ev[i].open_errno);
		free(pc->ev[i].grp);
		free(pc->ev[i].value);
		free(pc->ev[i].counts);
	}
	free(pc->ev);
	free(pc->grp);
	for (int c = 0; pc->cpu1 && c < pc->nr_cpus; c++)
		psc_cpumap__put(pc->cpu1[c]);
	free(pc->cpu1);
	free(pc->cpu_label);
	psc_threadmap__put(pc->any);
	psc_cpumap__put(pc->cpus);
	pthread_mutex_destroy(&pc->lock);
	free(pc);
}

int perf_collector_nr_open(const struct perf_collector *pc)
{
	return pc->nr_open;
}

int perf_collector_nr_groups(const struct perf_collector *pc)
{
	int n = 0;

	for (int g = 0; g < pc->nr_grp; g++)
		n += psc_evsel__is_open(pc->grp[g].leader);
	return n;
}

static bool is_open(const struct pc_event *ev, int c)
{
	return ev->evsel[c] && !ev->open_errno[c];
}

uint64_t perf_counter_value(uint64_t prev, const struct psc_counts *c)
{
	double scaled = psc_counts__scaled(c);
	uint64_t v;

	if (!(scaled >= 0))
		return prev;
	v = scaled >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)llround(scaled);
	/*
	 * Multiplexed counts are estimates (val * enabled / running) that can dip between
	 * scrapes; a counter must not, or Prometheus sees a reset.
	 */
	return v > prev ? v : prev;
}

/* The reads: one per group per CPU, then scaled values that never go backwards. */
static bool collect(struct perf_collector *pc)
{
	bool ok = true;

	for (int g = 0; g < pc->nr_grp; g++) {
		struct pc_group *grp = &pc->grp[g];
		int ret;

		grp->read_ok = false;
		if (!psc_evsel__is_open(grp->leader))
			continue;
		ret = psc_evsel__read_group(grp->leader, 0, 0);
		grp->read_ok = ret == 0;
		if (ret) {
			pc->read_errors++;
			ok = false;
			if (!grp->warned)
				xlog(XLOG_WARN, "reading the group of %s on CPU %s failed: %s",
				     psc_evsel__name(grp->leader), pc->cpu_label[grp->cpu_idx],
				     strerror(-ret));
			grp->warned = true;
		}
	}
	for (int i = 0; i < pc->nr_ev; i++) {
		struct pc_event *ev = &pc->ev[i];

		for (int c = 0; c < pc->nr_cpus; c++) {
			struct psc_counts *cnt = &ev->counts[c];

			if (!is_open(ev, c) || psc_evsel__counts(ev->evsel[c], 0, 0, cnt))
				continue;
			ev->value[c] = perf_counter_value(ev->value[c], cnt);
		}
	}
	return ok;
}

/* Whether the group ev is counted in on CPU c was read in this scrape. */
static bool group_ok(const struct perf_collector *pc, const struct pc_event *ev, int c)
{
	return pc->grp[ev->grp[c]].read_ok;
}

static void warn_unscheduled(struct perf_collector *pc)
{
	for (int g = 0; g < pc->nr_grp; g++) {
		struct pc_group *grp = &pc->grp[g];
		struct psc_counts cnt;

		if (grp->warned || !grp->read_ok || psc_evsel__counts(grp->leader, 0, 0, &cnt) ||
		    cnt.run || cnt.ena < 2000000000ULL)
			continue;
		grp->warned = true;
		xlog(XLOG_WARN,
		     "the group of %s on CPU %s has never been on the PMU (too many counters at once?); lower --collector.perf.max-group-size",
		     psc_evsel__name(grp->leader), pc->cpu_label[grp->cpu_idx]);
	}
}

int perf_collector_scrape(struct perf_collector *pc, struct expo *e, uint64_t *collect_ns)
{
	struct expo_label l[2] = { { "cpu", NULL }, { "event", NULL } };
	struct expo_label collector = { "collector", "perf" };
	uint64_t t0, t1;
	bool ok;

	pthread_mutex_lock(&pc->lock);
	t0 = mono_ns();
	ok = collect(pc);
	t1 = mono_ns();
	warn_unscheduled(pc);

	for (int i = 0; i < pc->nr_ev; i++) {
		struct pc_event *ev = &pc->ev[i];
		bool header = false;

		for (int c = 0; c < pc->nr_cpus; c++) {
			if (!is_open(ev, c) || !group_ok(pc, ev, c))
				continue;
			if (!header)
				expo_family(e, ev->metric, EXPO_COUNTER, ev->help);
			header = true;
			l[0].value = pc->cpu_label[c];
			expo_u64(e, l, 1, ev->value[c]);
		}
	}
	expo_family(
		e, "node_perf_event_supported", EXPO_GAUGE,
		"perfscope: whether the perf event could be opened on the CPU (the reason it could not is logged at start)");
	for (int i = 0; i < pc->nr_ev; i++) {
		for (int c = 0; c < pc->nr_cpus; c++) {
			l[0].value = pc->cpu_label[c];
			l[1].value = pc->ev[i].name;
			expo_u64(e, l, 2, is_open(&pc->ev[i], c));
		}
	}
	expo_family(
		e, "node_perf_event_enabled_seconds", EXPO_COUNTER,
		"perfscope: time the perf event was enabled (multiplexing: compare with node_perf_event_running_seconds_total)");
	for (int i = 0; i < pc->nr_ev; i++) {
		for (int c = 0; c < pc->nr_cpus; c++) {
			if (!is_open(&pc->ev[i], c) || !group_ok(pc, &pc->ev[i], c))
				continue;
			l[0].value = pc->cpu_label[c];
			l[1].value = pc->ev[i].name;
			expo_ns_as_seconds(e, l, 2, pc->ev[i].counts[c].ena);
		}
	}
	expo_family(
		e, "node_perf_event_running_seconds", EXPO_COUNTER,
		"perfscope: time the perf event was counting on the PMU; counts are scaled by enabled/running");
	for (int i = 0; i < pc->nr_ev; i++) {
		for (int c = 0; c < pc->nr_cpus; c++) {
			if (!is_open(&pc->ev[i], c) || !group_ok(pc, &pc->ev[i], c))
				continue;
			l[0].value = pc->cpu_label[c];
			l[1].value = pc->ev[i].name;
			expo_ns_as_seconds(e, l, 2, pc->ev[i].counts[c].run);
		}
	}
	expo_family(e, "node_perf_read_errors", EXPO_COUNTER,
		    "perfscope: failed reads of perf counter groups since start");
	expo_u64(e, NULL, 0, pc->read_errors);
	expo_family(e, "node_scrape_collector_duration_seconds", EXPO_GAUGE,
		    "node_exporter: Duration of a collector scrape.");
	expo_double(e, &collector, 1, (double)(t1 - t0) / 1e9);
	expo_family(e, "node_scrape_collector_success", EXPO_GAUGE,
		    "node_exporter: Whether a collector succeeded.");
	expo_u64(e, &collector, 1, ok);
	pthread_mutex_unlock(&pc->lock);
	if (collect_ns)
		*collect_ns = t1 - t0;
	return e->oom ? -ENOMEM : 0;
}
