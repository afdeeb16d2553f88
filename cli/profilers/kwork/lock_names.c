/* lock's names: a lock's address as its kernel symbol and type, a stack as its caller. */
#include "lock_contention.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "callchain.h"
#include "ksyms.h"

/* lock:contention_begin's flags (include/trace/events/lock.h), as perf lock names them. */
#define LCB_F_SPIN (1u << 0)
#define LCB_F_READ (1u << 1)
#define LCB_F_WRITE (1u << 2)
#define LCB_F_RT (1u << 3)
#define LCB_F_PERCPU (1u << 4)
#define LCB_F_MUTEX (1u << 5)

/* The furthest a lock may lie inside a named variable (rcu_state's locks are a few KiB in). */
#define LOCK_SYM_SPAN (64 * 1024)

const char *lock__type(uint32_t flags)
{
	static const struct {
		uint32_t flags;
		const char *name;
	} types[] = {
		{ LCB_F_SPIN, "spinlock" },
		{ LCB_F_SPIN | LCB_F_READ, "rwlock:R" },
		{ LCB_F_SPIN | LCB_F_WRITE, "rwlock:W" },
		{ LCB_F_READ, "rwsem:R" },
		{ LCB_F_WRITE, "rwsem:W" },
		{ LCB_F_RT, "rt-mutex" },
		{ LCB_F_RT | LCB_F_READ, "rwlock-rt:R" },
		{ LCB_F_RT | LCB_F_WRITE, "rwlock-rt:W" },
		{ LCB_F_PERCPU | LCB_F_READ, "pcpu-sem:R" },
		{ LCB_F_PERCPU | LCB_F_WRITE, "pcpu-sem:W" },
		{ LCB_F_MUTEX, "mutex" },
		{ LCB_F_MUTEX | LCB_F_SPIN, "mutex-spin" },
		{ 0, "semaphore" },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].flags == flags)
			return types[i].name;
	return "unknown";
}

char *lock__name(const struct lockc *lc, uint64_t addr, uint32_t flags)
{
	uint64_t off = 0;
	const struct ksym *s = lc->data_syms ? ksyms__find(lc->data_syms, addr, &off) : NULL;
	char buf[320];

	/* far past a variable's start is past its end: kallsyms has no sizes */
	if (s && off >= LOCK_SYM_SPAN)
		s = NULL;

	if (s && off)
		snprintf(buf, sizeof(buf), "%016llx %s+0x%llx (%s)", (unsigned long long)addr,
			 s->name, (unsigned long long)off, lock__type(flags));
	else if (s)
		snprintf(buf, sizeof(buf), "%016llx %s (%s)", (unsigned long long)addr, s->name,
			 lock__type(flags));
	else
		snprintf(buf, sizeof(buf), "%016llx (%s)", (unsigned long long)addr,
			 lock__type(flags));
	return strdup(buf);
}

static bool in(const uint64_t r[2], uint64_t ip)
{
	return ip >= r[0] && ip < r[1];
}

/* Functions that take locks or wait for them, outside the kernel's lock and sched sections. */
static bool lock_like(const char *name)
{
	static const char *const prefixes[] = { "queued_",    "native_queued_", "__pv_queued_",
						"do_raw_",    "_raw_",		"__mutex_lock",
						"mutex_lock", "rwsem_",		"__down",
						"down_",      "percpu_down",	"rt_mutex",
						"__rt_mutex", "__lock_",	"lock_" };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/*
 * The first kernel frame that is not the lock's own code (its slow path, the lock and scheduler
 * text sections), as perf lock contention names a caller: "func+0x1a".
 */
char *lock__caller(struct lockc *lc, const struct psc_sample *s)
{
	struct callchain *cc = prof__callchain(lc->p);
	char buf[320];

	for (uint64_t i = 0; cc && i < s->callchain.nr; i++) {
		uint64_t ip = s->callchain.ips[i];
		struct frame f;

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_USER)
				break;
			continue;
		}
		if (in(lc->lock_text, ip) || in(lc->sched_text, ip))
			continue;
		if (callchain__frame(cc, (pid_t)s->pid, ip, true, false, &f) || !f.sym)
			continue;
		if (lock_like(f.sym))
			continue;
		snprintf(buf, sizeof(buf), "%s+0x%llx", f.sym, (unsigned long long)f.off);
		return strdup(buf);
	}
	return strdup("[unknown]");
}

static void range(struct ksyms *ks, const char *start, const char *end, uint64_t r[2])
{
	const struct ksym *a = ksyms__lookup(ks, start), *b = ksyms__lookup(ks, end);

	r[0] = r[1] = 0;
	if (a && b && a->addr < b->addr) {
		r[0] = a->addr;
		r[1] = b->addr;
	}
}

/* Before the events are enabled: reading kallsyms takes tens of ms, too long inside the loop. */
void lock__load_syms(struct lockc *lc, bool stacks)
{
	lc->data_syms = ksyms__load_data(NULL);
	if (!stacks)
		return;
	lc->text_syms = ksyms__load(NULL);
	if (!lc->text_syms)
		return;
	range(lc->text_syms, "__lock_text_start", "__lock_text_end", lc->lock_text);
	range(lc->text_syms, "__sched_text_start", "__sched_text_end", lc->sched_text);
}
