/* perfscope lock: kernel lock contention, wait time per lock and per caller stack. */
#include "lock_contention.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ksyms.h"
#include "pair_out.h"

#define LOCK_BEGIN "lock:contention_begin"
#define LOCK_END "lock:contention_end"

/* What a pending begin keeps. */
struct lk_data {
	uint64_t addr;
	uint32_t flags;
	struct krow *caller; /* its stack's row (-g); rows live until the end */
};

/* What a sample hands the pair engine's hooks (pair_event.ctx). */
struct lk_ev {
	uint64_t addr;
	uint32_t flags;
};

/* clang-format off */
static const struct prof_opt lock_opts[] = {
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct lockc, than), 0, 0, NULL,
	  "print each wait longer than T (s, ms, us, ns) as it ends,\n"
	  "with its stack under -g, and count them (over_than)" },
	{ "top", 0, "N", PROF_OPT_LONG, offsetof(struct lockc, top), 0, 1L << 30, NULL,
	  "rows per table (default 20; 0: all)", 0, PROF_ARG_AUTO,
	  PROF_OPT_GIVEN(struct lockc, top_given) },
	{ NULL },
};
/* clang-format on */

/* The pair key: thread and lock (a thread waits for a spinlock inside a mutex's slow path). */
static uint64_t lock_key(uint32_t tid, int cpu, uint64_t addr)
{
	uint64_t t = tid ? tid : (1ull << 40) | (uint32_t)cpu; /* idle tasks: one per CPU */

	return addr ^ (t * 0x9e3779b97f4a7c15ull);
}

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct lockc *lc = ctx;
	struct lk_data *d = data;
	const struct psc_sample *s = ev->sample;
	uint64_t h = 0xcbf29ce484222325ull;
	const struct lk_ev *le = ev->ctx;
	bool created;

	d->addr = le->addr;
	d->flags = le->flags;
	if (!s || !(s->sample_type & PERF_SAMPLE_CALLCHAIN) || !s->callchain.nr)
		return 0;
	for (uint64_t i = 0; i < s->callchain.nr; i++) /* FNV-1a: the same stack, one row */
		h = (h ^ s->callchain.ips[i]) * 0x100000001b3ull;
	d->caller = krows__get(&lc->callers, h, &created);
	if (created) {
		d->caller->name = lock__caller(lc, s);
		d->caller->sample = pair_copy__new(s, ev->idx, ev->cpu, ev->key);
	}
	return 0;
}

static void print_over(struct lockc *lc, const struct krow *lock, const struct pair_event *end,
		       uint64_t delta)
{
	struct prof *p = lc->p;
	char t[24];

	hist_fmt(t, sizeof(t), delta, "ns");
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "wait_ns");
		json__u64(&p->json, delta);
		JSON_KEY(&p->json, "time_ns");
		json__u64(&p->json, end->time);
		JSON_KEY(&p->json, "cpu");
		json__i64(&p->json, end->cpu);
		JSON_KEY(&p->json, "tid");
		json__u64(&p->json, end->tid);
		JSON_KEY(&p->json, "comm");
		json__str(&p->json, prof__comm(p, end->pid, end->tid));
		JSON_KEY(&p->json, "lock");
		json__str(&p->json, lock ? lock->name : "?");
		if (end->sample && (end->sample->sample_type & PERF_SAMPLE_CALLCHAIN)) {
			JSON_KEY(&p->json, "stack");
			prof__stack_json(p, end->sample);
		}
		json__end_line(&p->json);
		return;
	}
	out__printf(p->out, "%llu.%06llu [%03d] %s/%u waited %s for %s\n",
		    (unsigned long long)(end->time / 1000000000),
		    (unsigned long long)(end->time % 1000000000 / 1000), end->cpu,
		    prof__comm(p, end->pid, end->tid), end->tid, t, lock ? lock->name : "?");
	if (end->sample && (end->sample->sample_type & PERF_SAMPLE_CALLCHAIN))
		prof__stack_text(p, end->sample);
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct lockc *lc = ctx;
	struct lk_data *d = data;
	uint64_t addr = ((const struct lk_ev *)end->ctx)->addr;
	bool over = lc->than && delta > lc->than, created;
	struct krow *r;

	if (start->tid != end->tid || d->addr != addr) { /* two keys alike: never measured */
		lc->mismatched++;
		return;
	}
	r = krows__get(&lc->locks, addr, &created);
	if (created) {
		r->name = lock__name(lc, addr, d->flags);
		r->aux = d->flags;
	}
	if (r)
		krow__add(&lc->locks, r, 0, delta, over, lc->ival);
	if (d->caller)
		krow__add(&lc->callers, d->caller, 0, delta, over, lc->ival);
	if (over) {
		lc->over++;
		print_over(lc, r, end, delta);
	}
}

static const struct pair_impl lock_impl = {
	.name = "lock",
	.data_size = sizeof(struct lk_data),
	.start = impl_start,
	.paired = impl_paired,
};

static int lock_check(struct prof *p, void *priv)
{
	struct lockc *lc = priv;

	lc->p = p;
	lc->begin_idx = lc->end_idx = -1;
	if (!lc->top_given)
		lc->top = 20;
	lc->ival = p->opts.interval_ms > 0;
	return 0;
}

static int lock_event(struct prof *p, void *priv, struct prof_event *ev,
		      struct perf_event_attr *attr)
{
	struct lockc *lc = priv;
	const char *name = ev->spec->event;
	bool begin = name && !strcmp(name, "contention_begin");

	if (!ev->fmt || !ev->spec->sys || strcmp(ev->spec->sys, "lock") ||
	    (!begin && strcmp(name, "contention_end")))
		return prof_usage(p,
				  "%s: lock takes lock:contention_begin and "
				  "lock:contention_end (with filters, e.g. "
				  "'lock:contention_begin/flags==1/'), nothing else",
				  ev->name);
	if ((begin ? lc->begin_idx : lc->end_idx) >= 0)
		return prof_usage(p, "%s given twice", ev->name);
	if (begin) {
		lc->begin_idx = ev->idx;
		lc->b_addr = psc_tp_format__field(ev->fmt, "lock_addr");
		lc->b_flags = psc_tp_format__field(ev->fmt, "flags");
	} else {
		lc->end_idx = ev->idx;
		lc->e_addr = psc_tp_format__field(ev->fmt, "lock_addr");
		lc->e_ret = psc_tp_format__field(ev->fmt, "ret");
	}
	if (!(begin ? lc->b_addr : lc->e_addr)) {
		fprintf(stderr, "perfscope %s: %s has no lock_addr field on this kernel\n", p->name,
			ev->name);
		return -EINVAL;
	}
	return 0;
}

static int lock_start(struct prof *p, void *priv)
{
	struct lockc *lc = priv;
	struct pair_opts po = { .impl = &lock_impl, .ctx = lc, .unordered = !p->order };

	if (lc->begin_idx < 0 || lc->end_idx < 0)
		return prof_usage(p, "both lock:contention_begin and lock:contention_end are "
				     "needed (-e 'lock:contention_begin,lock:contention_end')");
	if (krows__init(&lc->locks, 1) || krows__init(&lc->callers, 1))
		return -ENOMEM;
	lc->pr = pair__new(&po);
	if (!lc->pr)
		return -errno;
	lock__load_syms(lc, p->callchain);
	return 0;
}

static int lock_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		       const struct psc_sample *s)
{
	struct lockc *lc = priv;
	bool begin = ev->idx == lc->begin_idx;
	uint64_t addr, flags = 0, ret = 0;
	struct pair_event pe;
	struct lk_ev le;

	if (psc_tp_field__u64(begin ? lc->b_addr : lc->e_addr, s->raw.data, s->raw.size, &addr) ||
	    (begin && lc->b_flags &&
	     psc_tp_field__u64(lc->b_flags, s->raw.data, s->raw.size, &flags)) ||
	    (!begin && lc->e_ret && psc_tp_field__u64(lc->e_ret, s->raw.data, s->raw.size, &ret))) {
		lc->field_errors++;
		return 0;
	}
	le = (struct lk_ev){ .addr = addr, .flags = (uint32_t)flags };
	pe = (struct pair_event){ .key = lock_key(s->tid, cpu, addr),
				  .time = s->time,
				  .cpu = cpu,
				  .pid = s->pid,
				  .tid = s->tid,
				  .idx = ev->idx,
				  .sample = s,
				  .ctx = &le };
	if (!begin) {
		lc->ends++;
		lc->failed += (int64_t)ret != 0; /* a killable wait interrupted: -EINTR */
		pair__end(lc->pr, &pe);
		return 0;
	}
	lc->begins++;
	pair__start(lc->pr, &pe);
	return 0;
}

static void lock_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct lockc *lc = priv;

	lc->lost_windows++;
	pair__lost(lc->pr, mono_ns());
}

static void print_tables(struct prof *p, struct lockc *lc, bool final, const uint64_t *c)
{
	struct krows_print kp = { .title = "lock (wait)",
				  .table = "locks",
				  .final = final,
				  .top = lc->top,
				  .over = lc->than ? "over_than" : NULL };

	krows__print(p, &lc->locks, &kp);
	if (p->callchain) {
		kp.title = "caller (wait)";
		kp.table = "callers";
		kp.stacks = true;
		krows__print(p, &lc->callers, &kp);
	}
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "begins");
		json__u64(&p->json, lc->begins);
		JSON_KEY(&p->json, "ends");
		json__u64(&p->json, lc->ends);
		pair_out__json(&p->json, c);
		JSON_KEY(&p->json, "mismatched");
		json__u64(&p->json, lc->mismatched);
		JSON_KEY(&p->json, "failed");
		json__u64(&p->json, lc->failed);
		JSON_KEY(&p->json, "over_than");
		json__u64(&p->json, lc->over);
		JSON_KEY(&p->json, "lost_windows");
		json__u64(&p->json, lc->lost_windows);
		JSON_KEY(&p->json, "field_errors");
		json__u64(&p->json, lc->field_errors);
		JSON_KEY(&p->json, "no_row");
		json__u64(&p->json, lc->locks.nomem + lc->callers.nomem);
		prof__json_end_counts(p, final);
		return;
	}
	out__printf(p->out,
		    "  begins %llu, ends %llu (failed waits %llu), mismatched %llu, "
		    "lost windows %llu\n",
		    (unsigned long long)lc->begins, (unsigned long long)lc->ends,
		    (unsigned long long)lc->failed, (unsigned long long)lc->mismatched,
		    (unsigned long long)lc->lost_windows);
	pair_out__text(p->out, lc->pr, c);
	if (lc->field_errors || lc->locks.nomem || lc->callers.nomem)
		out__printf(p->out,
			    "  events unreadable %llu, waits without a row (no memory) "
			    "%llu\n",
			    (unsigned long long)lc->field_errors,
			    (unsigned long long)(lc->locks.nomem + lc->callers.nomem));
}

static int lock_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct lockc *lc = priv;

	krows__interval_head(p);
	print_tables(p, lc, false, pair__counts(lc->pr));
	krows__reset_ival(&lc->locks);
	krows__reset_ival(&lc->callers);
	return 0;
}

static int lock_report(struct prof *p, void *priv)
{
	struct lockc *lc = priv;

	pair__finish(lc->pr);
	print_tables(p, lc, true, pair__counts(lc->pr));
	return 0;
}

static void lock_teardown(struct prof *p, void *priv)
{
	struct lockc *lc = priv;

	pair__delete(lc->pr);
	krows__exit(&lc->locks);
	krows__exit(&lc->callers);
	ksyms__delete(lc->data_syms);
	ksyms__delete(lc->text_syms);
}

const struct profiler profiler_lock = {
	.name = "lock",
	.summary = "kernel lock contention: wait time per lock and caller stack, percentiles",
	.usage = "[-e 'lock:contention_begin[/F/],lock:contention_end[/F/]'] [-g] [--than T]\n"
		 "                       [--top N] [-i MS] [-C CPUS] [-p PID | -t TID] "
		 "[--format text|json]\n"
		 "                       [-o FILE] [-- COMMAND ARGS...]",
	.description =
		"Each wait for a kernel lock, from lock:contention_begin to the contention_end of the\n"
		"same thread and lock (a spinlock waited for inside a mutex's slow path is a wait of\n"
		"its own), goes to the row of its lock, named by its address, its kernel symbol when it\n"
		"is a variable (a lock inside an object has none) and its type (spinlock, mutex,\n"
		"rwsem:R ... from the begin's flags), and with -g to the row of the waiter's kernel\n"
		"stack, named by its caller: the first function that is not the lock's own code, as\n"
		"perf lock contention names it. Each row has the count, total, min, mean, p50, p95,\n"
		"p99, p99.9 and max wait, most total wait first. Waits are paired with the pair\n"
		"engine: a begin with no end is open, an end with no begin no_start, a begin older\n"
		"than a lost window is lost; all counted, in text and JSON. The lock's owner is not\n"
		"in the tracepoints: the stack is the waiter's.",
	.events_help = "optional (the default): lock:contention_begin,lock:contention_end;\n"
		       "filters narrow them ('lock:contention_begin/flags==1/' spinlocks)",
	.notes =
		"--format json: one object per row {\"table\":\"locks\"|\"callers\", \"name\", \"lock\",\n"
		"\"count\", \"min_ns\", ..., \"p999_ns\", \"total_ns\", \"stack\" (callers)}, then\n"
		"{\"begins\", \"ends\", \"outcomes\":{...}, \"mismatched\", \"failed\", \"lost_windows\",\n"
		"\"final\":true}; with --than one object per long wait {\"wait_ns\", \"tid\", \"lock\"}.\n"
		"-i prints the interval's tables. Also called lock-contention.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, or when COMMAND or the -p process exits.\n"
		"Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on a runtime\n"
		"failure, 2 on a usage error.",
	.examples = "lock --duration 1\n"
		    "lock -g --top 5 --duration 2\n"
		    "lock-contention -p 1234 --top 10\n"
		    "lock -i 1000 --duration 3 --than 100us\n"
		    "lock -e 'lock:contention_begin/flags==1/,lock:contention_end' --duration 1\n"
		    "lock --format json --duration 1",
	.shared_opts = CLI_OPTS_EVENT_RUN | CLI_OPT_CALLCHAIN,
	.opts = lock_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS | PROF_SUMMARY,
	.default_groups = (const char *const[]){ LOCK_BEGIN "," LOCK_END, NULL },
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct lockc),
	.check = lock_check,
	.event = lock_event,
	.start = lock_start,
	.sample = lock_sample,
	.lost = lock_lost,
	.interval = lock_interval,
	.report = lock_report,
	.teardown = lock_teardown,
};
