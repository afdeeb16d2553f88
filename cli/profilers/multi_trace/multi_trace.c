/* perfscope multi-trace: the profiler and its engine, -e groups' events paired by key (pair.h). */
#include "multi_trace.h"
#include "clock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expr.h"
#include "heatmap.h"

/* ---- setup ---- */

static const char *short_name(const struct prof_event *ev)
{
	if (ev->spec->alias)
		return ev->spec->alias;
	return ev->spec->event ? ev->spec->event : ev->name;
}

/* "a,b -> c": the events of group g (traced ones). */
static void group_name(struct prof *p, int g, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (int i = 0; i < p->nr_events && n < len; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct mt_ev *me = ev->priv;

		if (me->group != g || me->untraced)
			continue;
		n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? "," : "", short_name(ev));
	}
}

static struct mt_stat *stat_new(uint64_t id)
{
	struct mt_stat *st = calloc(1, sizeof(*st));

	if (st)
		st->id = id;
	return st;
}

static void stat_delete(struct mt_stat *st)
{
	if (!st)
		return;
	hist__exit(&st->total);
	hist__exit(&st->ival);
	free(st);
}

static const struct pair_impl mt_pair_impl;

int mt_start(struct prof *p, void *priv)
{
	struct mt *mt = priv;
	int nr_traced[MT_MAX_GROUPS] = { 0 };

	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		if (!me->untraced)
			nr_traced[me->group]++;
	}
	for (int g = 0; g < mt->nr_groups; g++)
		if (!nr_traced[g])
			return prof_usage(p, "-e group %d has only untraced events: each group needs "
					     "an event to pair",
					  g + 1);
	if (mt->impl == MT_CALL || mt->impl == MT_CALL_DELAY) {
		int ret = mt_call__start(p, mt, nr_traced);

		if (ret)
			return ret;
		goto links_done;
	}
	if (mt->nr_groups < 2 && !mt->cycle)
		return prof_usage(p, "pairs need two -e groups (starts, then ends), or --cycle "
				     "to pair one group with itself");
	mt->nr_links = mt->cycle ? mt->nr_groups : mt->nr_groups - 1;
	/*
	 * perf-prof keys events without key= by their instance: the CPU when no task is given, the
	 * thread otherwise. A cycle of one event (sched_switch out, then in) pairs on a CPU: keyed
	 * by thread, prev_pid and next_pid of one switch are different threads and never pair.
	 */
	mt->key_cpu = mt->cycle && !p->opts.nr_pids && !p->opts.nr_tids && !p->opts.command;
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct pair_opts po = { .impl = &mt_pair_impl, .ctx = lk,
					.max_pending = (size_t)mt->max_pending,
					.unordered = !p->order };
		char a[80], b[80];

		lk->mt = mt;
		lk->from = l;
		lk->to = (l + 1) % mt->nr_groups;
		group_name(p, lk->from, a, sizeof(a));
		group_name(p, lk->to, b, sizeof(b));
		snprintf(lk->name, sizeof(lk->name), "%s -> %s", a, b);
		lk->pr = pair__new(&po);
		if (mt->impl == MT_KMEMPROF && mt_kmem__new(lk))
			return -ENOMEM;
		lk->all = stat_new(0);
		if (!lk->pr || !lk->all || keymap__init(&lk->by, sizeof(struct mt_stat *), 0))
			return -ENOMEM;
		if (mt->heatmap) {
			lk->hm = heatmap__new(NULL);
			if (!lk->hm)
				return -errno;
		}
	}
links_done:
	if (mt->detail && mt_detail__init(p, mt))
		return -ENOMEM;
	if (mt->ep)
		evprint__set_callchain(mt->ep, prof__callchain(p));
	mt->ival_start = mono_ns();
	return 0;
}

/* ---- the impl: what a pair does ---- */

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct mt_link *lk = ctx;
	struct mt_data *d = data;

	if (lk->kmem)
		mt_kmem__alloc(ev->ctx, lk, d, ev);
	if (!lk->mt->print_outliers || !ev->sample)
		return 0;
	d->copy = mt_copy__new(ev->sample, ev->idx, ev->cpu, ev->key);
	return d->copy ? 0 : -ENOMEM;
}

static void impl_release(void *ctx, void *data)
{
	struct mt_data *d = data;

	free(d->copy);
	d->copy = NULL;
}

static struct mt_stat *stat_by(struct mt_link *lk, uint64_t id)
{
	bool created;
	struct mt_stat **slot = keymap__insert(&lk->by, id, &created);

	if (!slot)
		return NULL;
	if (created)
		*slot = stat_new(id);
	return *slot;
}

static void stat_add(struct mt_stat *st, uint64_t delta, bool over, bool error, bool ival)
{
	hist__add(&st->total, delta);
	st->over += over;
	st->errors += error;
	if (ival) {
		hist__add(&st->ival, delta);
		st->ival_over += over;
		st->ival_errors += error;
	}
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct mt_link *lk = ctx;
	struct mt *mt = lk->mt;
	struct prof *p = end->ctx;
	bool over = (mt->than && delta > mt->than) || (mt->lower && delta < mt->lower);
	bool error = false;

	if (lk->kmem)
		mt_kmem__free(lk, data);
	if (mt->impl == MT_SYSCALLS) {
		/* per system call only: the pair's total is their sum, merged when printed */
		struct mt_ev *me = p->events_arr[end->idx].priv;
		const struct psc_sample *s = end->sample;
		uint64_t id = UINT64_MAX, ret;
		struct mt_stat *st;

		if (me->sc_id && s && !psc_tp_field__u64(me->sc_id, s->raw.data, s->raw.size, &ret))
			id = ret;
		if (me->sc_ret && s && !psc_tp_field__u64(me->sc_ret, s->raw.data, s->raw.size, &ret))
			error = (int64_t)ret < 0;
		/* --perins: a row per thread and call, the thread (the pair's key) above the id */
		if (mt->perins)
			st = lk->last && lk->last->id == id && lk->last->tid == start->key
				     ? lk->last
				     : stat_by(lk, start->key << 20 | (id & 0xfffff));
		else
			st = lk->last && lk->last->id == id ? lk->last : stat_by(lk, id);
		if (st && mt->perins) {
			st->id = id;
			st->tid = start->key;
		}
		if (st) {
			lk->last = st;
			stat_add(st, delta, over, error, mt->ival);
		} else {
			lk->dropped++;
		}
	} else {
		if (mt->perins) {
			struct mt_stat *st = stat_by(lk, start->key);

			if (st)
				stat_add(st, delta, over, false, mt->ival);
			else
				lk->dropped++;
		}
		stat_add(lk->all, delta, over, error, mt->ival);
	}
	if (lk->hm)
		heatmap__add(lk->hm, end->time, delta);
	if (over) {
		mt->outliers++;
		mt_outlier(lk, start, data, end, delta);
	}
}

static const struct pair_impl mt_pair_impl = {
	.name = "multi-trace",
	.data_size = sizeof(struct mt_data),
	.start = impl_start,
	.paired = impl_paired,
	.release = impl_release,
};

/* ---- events ---- */

static bool eval_u64(struct expr *e, const struct psc_sample *s, uint64_t *out, uint64_t *errors)
{
	struct expr_val v;

	if (expr__eval(e, s->raw.data, s->raw.size, s, &v)) {
		(*errors)++;
		return false;
	}
	*out = v.i;
	return true;
}

int mt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s)
{
	struct mt *mt = priv;
	struct mt_ev *me = ev->priv;
	struct pair_event pe = { .time = s->time, .cpu = cpu, .pid = s->pid, .tid = s->tid,
				 .idx = ev->idx, .sample = s, .ctx = p };
	uint64_t role = 3;
	int g = me->group;

	if (s->time > mt->last_time)
		mt->last_time = s->time;
	if (mt->preset == MT_PRESET_RUNDELAY && !mt_rundelay_pass(p, mt, ev, s))
		return 0;
	/* the thread; the idle tasks are all tid 0, one per CPU: told apart by their CPU */
	pe.key = s->tid ? s->tid : (1ull << 63) | (uint32_t)cpu;
	if (mt->key_cpu)
		pe.key = (uint32_t)cpu;
	if (me->key && !eval_u64(me->key, s, &pe.key, &me->key_errors))
		return 0;
	if (mt->dt)
		mt_detail__add(p, mt, ev->idx, cpu, s, pe.key);
	if (me->untraced)
		return me->trigger ? mt_interval(p, mt, s->time) : 0;
	if (me->role && !eval_u64(me->role, s, &role, &me->role_errors))
		return 0;
	if (mt->call) {
		mt_call__sample(mt, me, &pe);
		role = 0;
	}
	/* the end of the pair into this group first, then the start of the pair out of it */
	if (role & 2) {
		int l = g - 1 < 0 ? (mt->cycle ? mt->nr_groups - 1 : -1) : g - 1;

		if (l >= 0 && l < mt->nr_links)
			pair__end(mt->links[l].pr, &pe);
	}
	if ((role & 1) && g < mt->nr_links)
		pair__start(mt->links[g].pr, &pe);
	if (mt->dt)
		mt_detail__flush(p, mt, false);
	/* perf-prof's trigger: the event, not a timer, says when the interval's tables come */
	if (me->trigger)
		return mt_interval(p, mt, s->time);
	return 0;
}

/*
 * A loss: the kernel dropped events before now. No start older than now may pair any more (its
 * end may be among those lost); the sample clock is CLOCK_MONOTONIC (session.c).
 */
void mt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct mt *mt = priv;
	uint64_t barrier = mono_ns();

	mt->lost_windows++;
	for (int l = 0; l < mt->nr_links; l++)
		pair__lost(mt->links[l].pr, barrier);
}

static void reset_interval(struct mt *mt)
{
	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct keymap_iter it;
		struct mt_stat **v;
		uint64_t key;

		hist__reset(&lk->all->ival);
		lk->all->ival_over = lk->all->ival_errors = 0;
		keymap__for_each(&lk->by, &it, key, v) {
			hist__reset(&(*v)->ival);
			(*v)->ival_over = (*v)->ival_errors = 0;
		}
		memcpy(lk->ival_counts, pair__counts(lk->pr), sizeof(lk->ival_counts));
	}
}

int mt_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct mt *mt = priv;
	time_t t = time(NULL);
	struct tm tm;
	char buf[32];

	if (!p->json_fmt && !mt->only_than) {
		localtime_r(&t, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
		out__printf(p->out, "%s\n", buf);
	}
	if (mt->call)
		mt_call__print(p, mt, false);
	for (int l = 0; l < mt->nr_links; l++)
		mt_print_link(p, mt, &mt->links[l], false);
	reset_interval(mt);
	return 0;
}

int mt_report(struct prof *p, void *priv)
{
	struct mt *mt = priv;
	uint64_t key_errors = 0;

	for (int l = 0; l < mt->nr_links; l++)
		pair__finish(mt->links[l].pr);
	if (mt->dt) {
		mt_detail__flush(p, mt, true);
		mt_detail__report(p, mt);
	}
	if (mt->call)
		mt_call__print(p, mt, true);
	for (int l = 0; l < mt->nr_links; l++)
		mt_print_link(p, mt, &mt->links[l], true);
	if (!p->json_fmt && mt->print_outliers)
		out__printf(p->out, "outliers: %llu\n", (unsigned long long)mt->outliers);
	if (!p->json_fmt && mt->lost_windows)
		out__printf(p->out, "lost windows: %llu (pending starts invalidated, counted as "
				    "lost; no latency is measured across them)\n",
			    (unsigned long long)mt->lost_windows);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "outliers");
		json__u64(&p->json, mt->outliers);
		JSON_KEY(&p->json, "lost_windows");
		json__u64(&p->json, mt->lost_windows);
		JSON_KEY(&p->json, "kernel_dropped");
		json__u64(&p->json, prof__kernel_dropped(p));
		JSON_KEY(&p->json, "final");
		json__bool(&p->json, true);
		json__end_line(&p->json);
	}
	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		key_errors += me->key_errors + me->role_errors + me->pass_errors;
	}
	for (int l = 0; l < mt->nr_links; l++)
		if (mt->links[l].dropped)
			fprintf(stderr, "perfscope %s: %s: %llu latencies not in the tables (no memory)\n",
				p->name, mt->links[l].name,
				(unsigned long long)mt->links[l].dropped);
	if (key_errors)
		fprintf(stderr, "perfscope %s: %llu events whose key= or role= could not be "
				"computed were skipped\n",
			p->name, (unsigned long long)key_errors);
	if (mt->heatmap)
		return mt_write_heatmaps(p, mt);
	return 0;
}

void mt_teardown(struct prof *p, void *priv)
{
	struct mt *mt = priv;

	for (int l = 0; l < mt->nr_links; l++) {
		struct mt_link *lk = &mt->links[l];
		struct keymap_iter it;
		struct mt_stat **v;
		uint64_t key;

		pair__delete(lk->pr);
		stat_delete(lk->all);
		keymap__for_each(&lk->by, &it, key, v)
			stat_delete(*v);
		keymap__exit(&lk->by);
		heatmap__delete(lk->hm);
		mt_kmem__delete(lk->kmem);
	}
	for (int i = 0; i < p->nr_events; i++) {
		struct mt_ev *me = p->events_arr[i].priv;

		if (!me)
			continue;
		if (me->own_key)
			expr__delete(me->key);
		expr__delete(me->pass);
		if (me->own_size)
			expr__delete(me->size);
		if (me->print_ok)
			evprint_event__exit(&me->print);
	}
	mt_detail__delete(mt->dt);
	mt_call__delete(mt->call);
	evprint__delete(mt->ep);
}

/* ---- for mt_call.c ---- */

struct mt_stat *mt_stat_new(uint64_t id)
{
	return stat_new(id);
}

void mt_stat_delete(struct mt_stat *st)
{
	stat_delete(st);
}

void mt_stat_add(struct mt_stat *st, uint64_t delta, bool over, bool ival)
{
	stat_add(st, delta, over, false, ival);
}

const char *mt_short_name(const struct prof_event *ev)
{
	return short_name(ev);
}

const struct profiler profiler_multi_trace = {
	.name = "multi-trace",
	.summary = "pair events by key across -e groups: latency statistics, outliers, what never "
		   "paired",
	.usage = "-e EVENTS -e EVENTS [-e ...] [-k EXPR] [--impl IMPL] [--than T | --only-than T]\n"
		 "                       [--lower T] [--perins] [--heatmap FILE] [--detail[=SPEC]] "
		 "[--cycle]\n"
		 "                       [-i MS] [-C CPUS] [-p PID | -t TID] [--format text|json] "
		 "[-o FILE]\n"
		 "                       [-- COMMAND ARGS...]",
	.description =
		"The events of the first -e group start something, those of the second end it; more\n"
		"groups make a chain reduced to consecutive pairs (A -> B, B -> C; --cycle adds C -> A).\n"
		"A start waits, under its key (key=EXPR on the event, or -k EXPR; default the thread),\n"
		"for the next end with the same key. Each pair's latency goes into a log-linear\n"
		"histogram (calls, min, mean, p50, p95, p99, p99.9, max within 1/64); --than T prints\n"
		"each pair slower than T (both events and the latency) and counts them.\n"
		"\n"
		"Every event ends in one counted outcome: paired; replaced (a newer start of the same\n"
		"key came first); no_start (an end with no start); open (still waiting at the end);\n"
		"evicted (more than --max-pending starts waiting: the oldest goes); lost (the kernel\n"
		"dropped events after the start: its latency could span them, so it is never\n"
		"measured); reversed (an end older than its start, out of order); nomem.\n"
		"\n"
		"role=EXPR on an event of a middle group says per event whether it may start (bit 0)\n"
		"and end (bit 1); untraced events are not paired but shown by --detail, which prints\n"
		"the events around each outlier from a backlog of the last 65536 events.\n"
		"\n"
		"--impl call and call-delay (perf-prof's nested-trace) read each -e group as one\n"
		"function, ENTER,EXIT, nested per key (the thread): the end prints the call tree.",
	.events_help = "a group of starts, then a group of ends (-e again); ATTRs: key=EXPR,\n"
		       "printkey=EXPR, role=EXPR, untraced, trigger, stack, size=EXPR,\n"
		       "alias=NAME",
	.notes = "With -i the table of the interval is printed every MS milliseconds; at the end the\n"
		 "totals. --format json gives one object per line: per pair {\"pair\", \"count\",\n"
		 "\"min_ns\", \"max_ns\", \"mean_ns\", \"p50_ns\", \"p95_ns\", \"p99_ns\", \"p999_ns\",\n"
		 "\"total_ns\", \"over_than\", \"outcomes\":{...}, \"pending\", \"final\"}, per key\n"
		 "(--perins) or system call (--impl syscalls) the same with \"key\" (and the thread's\n"
		 "\"comm\" when keyed by thread) or \"syscall\" and \"id\", and per outlier\n"
		 "{\"outlier\":true, \"key\", \"latency_ns\", \"start\", \"end\"}.\n"
		 "\n"
		 "Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		 "process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		 "a runtime failure, 2 on a usage error.",
	.examples =
		"multi-trace -e 'syscalls:sys_enter_clock_nanosleep//key=common_pid/' -e "
		"'syscalls:sys_exit_clock_nanosleep//key=common_pid/' --than 20ms -- sleep 0.03\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000 --impl "
		"pair\n"
		"multi-trace -e irq:softirq_entry/vec==1/ -e irq:softirq_exit/vec==1/ -i 1000 --than "
		"100us --detail=-1ms\n"
		"multi-trace -e 'sched:sched_wakeup,sched:sched_wakeup_new,sched:sched_switch/"
		"prev_state==0&&prev_pid>0/key=prev_pid/' -e 'sched:sched_switch//key=next_pid/' "
		"-k pid --than 20ms --detail=samecpu\n"
		"multi-trace -e 'sched:sched_switch//role=(next_pid?1:0)|(prev_pid?2:0)/' --cycle -i "
		"1000\n"
		"multi-trace -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit --impl syscalls "
		"--format json -- ls\n"
		"multi-trace -e 'kmem:kmalloc//key=ptr/stack/' -e 'kmem:kfree//key=ptr/' --impl "
		"kmemprof --duration 1\n"
		"multi-trace -e syscalls:sys_enter_write,syscalls:sys_exit_write -e "
		"'irq:softirq_entry/vec==3/,irq:softirq_exit/vec==3/' --impl call-delay -- bash -c "
		"'echo x >/dev/udp/127.0.0.1/9'",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL |
		       CLI_OPT_DURATION | CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT |
		       CLI_OPT_ORDER | CLI_OPT_CALLCHAIN | CLI_OPT_EXIT_N | CLI_OPT_QUIET |
		       CLI_OPT_USAGE_SELF,
	.opts = mt_opts,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS |
		 PROF_SUMMARY,
	.attrs = mt_attrs,
	.conformance_args = "-e sched:sched_wakeup//key=pid/ -e sched:sched_switch//key=next_pid/ "
			    "-i 200",
	.priv_size = sizeof(struct mt),
	.ev_priv_size = sizeof(struct mt_ev),
	.check = mt_check,
	.event = mt_event,
	.start = mt_start,
	.sample = mt_sample,
	.lost = mt_lost,
	.interval = mt_interval,
	.report = mt_report,
	.teardown = mt_teardown,
};
