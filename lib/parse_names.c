/* perf's names for software, hardware and hardware-cache events, with their aliases and uapi
 * encodings. */
#include <strings.h>

#include "parse_internal.h"

#define SW(n, c, a)                                         \
	{                                                   \
		n, PSC_EVENT_SOFTWARE, PERF_COUNT_SW_##c, a \
	}
#define HW(n, c, a)                                         \
	{                                                   \
		n, PSC_EVENT_HARDWARE, PERF_COUNT_HW_##c, a \
	}
#define CACHE_CONFIG(id, op, res)                                        \
	(PERF_COUNT_HW_CACHE_##id | (PERF_COUNT_HW_CACHE_OP_##op << 8) | \
	 ((uint64_t)PERF_COUNT_HW_CACHE_RESULT_##res << 16))
/* perf names a cache event "<id>-<ops>" for accesses and "<id>-<op>-misses" for misses. */
#define CACHE_OP(idname, id, opname, opsname, op)                                              \
	{ idname "-" opsname, PSC_EVENT_CACHE, CACHE_CONFIG(id, op, ACCESS), NULL },           \
	{                                                                                      \
		idname "-" opname "-misses", PSC_EVENT_CACHE, CACHE_CONFIG(id, op, MISS), NULL \
	}
#define CACHE(idname, id)                                       \
	CACHE_OP(idname, id, "load", "loads", READ),            \
		CACHE_OP(idname, id, "store", "stores", WRITE), \
		CACHE_OP(idname, id, "prefetch", "prefetches", PREFETCH)

/* Order: perf list's order (software, hardware, then cache id x op x result). */
static const struct psc_named_event named_events[] = {
	SW("cpu-clock", CPU_CLOCK, NULL),
	SW("task-clock", TASK_CLOCK, NULL),
	SW("page-faults", PAGE_FAULTS, "faults"),
	SW("context-switches", CONTEXT_SWITCHES, "cs"),
	SW("cpu-migrations", CPU_MIGRATIONS, "migrations"),
	SW("minor-faults", PAGE_FAULTS_MIN, NULL),
	SW("major-faults", PAGE_FAULTS_MAJ, NULL),
	SW("alignment-faults", ALIGNMENT_FAULTS, NULL),
	SW("emulation-faults", EMULATION_FAULTS, NULL),
	SW("dummy", DUMMY, NULL),
	SW("bpf-output", BPF_OUTPUT, NULL),
	SW("cgroup-switches", CGROUP_SWITCHES, NULL),
	HW("cpu-cycles", CPU_CYCLES, "cycles"),
	HW("instructions", INSTRUCTIONS, NULL),
	HW("cache-references", CACHE_REFERENCES, NULL),
	HW("cache-misses", CACHE_MISSES, NULL),
	HW("branch-instructions", BRANCH_INSTRUCTIONS, "branches"),
	HW("branch-misses", BRANCH_MISSES, NULL),
	HW("bus-cycles", BUS_CYCLES, NULL),
	HW("stalled-cycles-frontend", STALLED_CYCLES_FRONTEND, "idle-cycles-frontend"),
	HW("stalled-cycles-backend", STALLED_CYCLES_BACKEND, "idle-cycles-backend"),
	HW("ref-cycles", REF_CPU_CYCLES, NULL),
	CACHE("L1-dcache", L1D),
	CACHE("L1-icache", L1I),
	CACHE("LLC", LL),
	CACHE("dTLB", DTLB),
	CACHE("iTLB", ITLB),
	CACHE("branch", BPU),
	CACHE("node", NODE),
};

#define NR_NAMED (int)(sizeof(named_events) / sizeof(named_events[0]))
#define FIRST_CACHE 22

_Static_assert(PERF_COUNT_SW_MAX == 12, "a new PERF_COUNT_SW_* needs a name above");
_Static_assert(PERF_COUNT_HW_MAX == 10, "a new PERF_COUNT_HW_* needs a name above");
_Static_assert(NR_NAMED == FIRST_CACHE + PERF_COUNT_HW_CACHE_MAX * PERF_COUNT_HW_CACHE_OP_MAX *
						 PERF_COUNT_HW_CACHE_RESULT_MAX,
	       "cache table must hold every id x op x result");

const struct psc_named_event *psc_named_event__at(int idx)
{
	if (idx < 0 || idx >= NR_NAMED)
		return NULL;
	return &named_events[idx];
}

/* perf's spellings for the three parts of a cache event name (evsel.c's evsel__hw_cache*). */
#define MAX_ALIASES 6
static const char *const cache_ids[PERF_COUNT_HW_CACHE_MAX][MAX_ALIASES] = {
	{ "L1-dcache", "l1-d", "l1d", "L1-data" },
	{ "L1-icache", "l1-i", "l1i", "L1-instruction" },
	{ "LLC", "L2" },
	{ "dTLB", "d-tlb", "Data-TLB" },
	{ "iTLB", "i-tlb", "Instruction-TLB" },
	{ "branch", "branches", "bpu", "btb", "bpc" },
	{ "node" },
};
static const char *const cache_ops[PERF_COUNT_HW_CACHE_OP_MAX][MAX_ALIASES] = {
	{ "load", "loads", "read" },
	{ "store", "stores", "write" },
	{ "prefetch", "prefetches", "speculative-read", "speculative-load" },
};
static const char *const cache_results[PERF_COUNT_HW_CACHE_RESULT_MAX][MAX_ALIASES] = {
	{ "refs", "Reference", "ops", "access" },
	{ "misses", "miss" },
};

/*
 * The longest alias in names[] that s[0..len) starts with, ending at len or a '-'. Returns its
 * row and sets *used, or -1.
 */
static int match_part(const char *s, size_t len, const char *const names[][MAX_ALIASES], int rows,
		      size_t *used)
{
	int best = -1;

	*used = 0;
	for (int i = 0; i < rows; i++) {
		for (int j = 0; j < MAX_ALIASES && names[i][j]; j++) {
			size_t n = strlen(names[i][j]);

			if (n <= *used || n > len || strncasecmp(s, names[i][j], n))
				continue;
			if (n < len && s[n] != '-')
				continue;
			best = i;
			*used = n;
		}
	}
	return best;
}

/* perf's decoding: ID[-OP][-RESULT] or ID[-RESULT][-OP], each part by any alias; reads and accesses
 * by default. */
static const struct psc_named_event *find_cache(const char *s, size_t len)
{
	int id, op = -1, res = -1;
	size_t used;

	id = match_part(s, len, cache_ids, PERF_COUNT_HW_CACHE_MAX, &used);
	if (id < 0)
		return NULL;
	for (int part = 0; part < 2 && used < len; part++) {
		int r;

		s += used + 1; /* skip the '-' */
		len -= used + 1;
		if (op < 0 &&
		    (r = match_part(s, len, cache_ops, PERF_COUNT_HW_CACHE_OP_MAX, &used)) >= 0)
			op = r;
		else if (res < 0 && (r = match_part(s, len, cache_results,
						    PERF_COUNT_HW_CACHE_RESULT_MAX, &used)) >= 0)
			res = r;
		else
			return NULL;
	}
	if (used < len)
		return NULL;
	if (op < 0)
		op = PERF_COUNT_HW_CACHE_OP_READ;
	if (res < 0)
		res = PERF_COUNT_HW_CACHE_RESULT_ACCESS;
	return &named_events[FIRST_CACHE +
			     (id * PERF_COUNT_HW_CACHE_OP_MAX + op) *
				     PERF_COUNT_HW_CACHE_RESULT_MAX +
			     res];
}

const struct psc_named_event *psc_named_event__find(const char *name, size_t len)
{
	/* Software and hardware names first: "branches" is branch-instructions, not the BPU cache.
	 */
	for (int i = 0; i < FIRST_CACHE; i++) {
		const struct psc_named_event *e = &named_events[i];

		if ((strlen(e->name) == len && !memcmp(e->name, name, len)) ||
		    (e->alias && strlen(e->alias) == len && !memcmp(e->alias, name, len)))
			return e;
	}
	return find_cache(name, len);
}

void psc_named_event__suggest(struct psc_suggest *s)
{
	for (int i = 0; i < NR_NAMED; i++) {
		psc_suggest__add(s, named_events[i].name, NULL);
		if (named_events[i].alias)
			psc_suggest__add(s, named_events[i].alias, NULL);
	}
}
