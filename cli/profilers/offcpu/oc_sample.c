/* perfscope offcpu's samples: switch-outs start a task's off-CPU time, switch-ins end it. */
#include <string.h>
#include <linux/perf_event.h>

#include "clock.h"
#include "offcpu.h"

const char *oc_row_name(const struct offcpu *oc, int row)
{
	switch (row) {
	case OC_ROW_PREEMPT:
		return "R+";
	case OC_ROW_UNKNOWN:
		return "?";
	case OC_ROW_RUNQ:
		return "R";
	case OC_ROW_ONCPU:
		return "on-CPU";
	default:
		return tstate_map__letter(&oc->map, row);
	}
}

/* Whether tid of process pid is followed: every task but the idle ones and perfscope itself. */
static bool oc_target(const struct offcpu *oc, uint32_t pid, uint32_t tid)
{
	if (!tid || pid == (uint32_t)oc->self)
		return false;
	if (!oc->nr_pids && !oc->nr_tids)
		return true;
	for (int i = 0; i < oc->nr_tids; i++)
		if ((uint32_t)oc->tids[i] == tid)
			return true;
	for (int i = 0; i < oc->nr_pids; i++)
		if ((uint32_t)oc->pids[i] == pid)
			return true;
	return false;
}

/* ns more (and count more) of e's stack under row (its tag swapped in); NULL: not kept. */
static struct stack_ent *oc_add(struct offcpu *oc, const struct stack_ent *e, int row,
				uint64_t count, uint64_t ns)
{
	uint32_t nr = e->nr < OC_MAX_IPS ? e->nr : OC_MAX_IPS;
	struct stack_ent *to;

	if (OC_TAG_ROW(e->ips[0]) == row)
		to = (struct stack_ent *)e;
	else {
		memcpy(oc->ips, e->ips, nr * sizeof(*oc->ips));
		oc->ips[0] = OC_TAG(row, OC_TAG_WAKER(e->ips[0]));
		to = stack_table__count(&oc->stacks, e->pid, e->tid, e->comm, oc->ips, nr, 0, 0);
		if (!to) {
			oc->loss.dropped += count;
			return NULL;
		}
	}
	to->count += count;
	to->period += ns;
	return to;
}

/*
 * The pending time of d from `from` to `to` into its stacks: the sleep up to its wakeup (with
 * the waker's stack), the wait for a CPU after it. count: 1 when the switch-in ends it.
 */
static void oc_charge(struct offcpu *oc, struct oc_pending *d, uint64_t from, uint64_t to,
		      uint64_t count)
{
	if (to <= from) {
		if (count && d->stack) /* one more switch, no time left to charge */
			oc_add(oc, d->woken_by ? d->woken_by : d->stack, d->row, count, 0);
		return;
	}
	if (!d->stack)
		return;
	if (!d->woken) {
		oc_add(oc, d->stack, d->row, count, to - from);
		return;
	}
	if (d->woken > from)
		oc_add(oc, d->woken_by ? d->woken_by : d->stack, d->row, count,
		       (d->woken < to ? d->woken : to) - from);
	else if (count)
		oc_add(oc, d->woken_by ? d->woken_by : d->stack, d->row, count, 0);
	if (to > d->woken && (oc->shown >> OC_ROW_RUNQ) & 1)
		oc_add(oc, d->stack, OC_ROW_RUNQ, 0, to - (d->woken > from ? d->woken : from));
}

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	struct oc_pending *d = data;
	const struct oc_pending *from = ev->ctx;

	*d = *from;
	return 0;
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	struct offcpu *oc = ctx;
	struct oc_pending *d = data;

	if (delta < oc->than)
		return;
	if (oc->waker && d->row != OC_ROW_PREEMPT && !d->woken)
		oc->loss.no_wakeup++; /* its waker's stack unknown: the time still counts */
	oc_charge(oc, d, d->charged > start->time ? d->charged : start->time, end->time, 1);
}

const struct pair_impl oc_impl = {
	.name = "offcpu",
	.data_size = sizeof(struct oc_pending),
	.start = impl_start,
	.paired = impl_paired,
};

struct charge_ctx {
	struct offcpu *oc;
	uint64_t now;
};

static void charge_one(void *arg, const struct pair_entry *e, const void *data)
{
	struct charge_ctx *c = arg;
	struct pair_entry *me = pair__find(c->oc->pr, e->key); /* the same entry, writable */
	struct oc_pending *d;

	if (!me || c->now < e->time + c->oc->than)
		return;
	d = pair_entry__data(me);
	oc_charge(c->oc, d, d->charged > e->time ? d->charged : e->time, c->now, 0);
	if (c->now > d->charged)
		d->charged = c->now;
}

/* Tasks still off-CPU: their time up to now goes to the profile being written. */
void oc_charge_pending(struct offcpu *oc, uint64_t now)
{
	struct charge_ctx c = { oc, now };

	if (oc->pr)
		pair__for_each_pending(oc->pr, charge_one, &c);
}

static bool oc_field(struct offcpu *oc, const struct psc_tp_field *f, const struct psc_sample *s,
		     uint64_t *v)
{
	if (!psc_tp_field__u64(f, s->raw.data, s->raw.size, v))
		return true;
	oc->loss.field_errors++;
	return false;
}

/* The sample's stack, its tag first, interned with no weight yet; NULL when not kept. */
static struct stack_ent *oc_intern(struct prof *p, struct offcpu *oc, const struct psc_sample *s,
				   uint32_t tid, uint64_t tag, uint64_t count, uint64_t ns)
{
	const char *comm = prof__comm(p, s->pid, tid);
	const uint64_t *ips;
	uint64_t n;
	struct stack_ent *e;

	callchain__see(prof__callchain(p), (pid_t)s->pid);
	n = callchain__sample_ips(prof__callchain(p), s, &ips);
	if (n > OC_MAX_IPS - 1)
		n = OC_MAX_IPS - 1;
	oc->ips[0] = tag;
	memcpy(oc->ips + 1, ips, n * sizeof(*ips));
	e = stack_table__count(&oc->stacks, s->pid, tid, comm && *comm ? comm : "[unknown]",
			       oc->ips, (uint32_t)n + 1, count, ns);
	if (!e)
		oc->loss.dropped += count ? count : 1;
	return e;
}

/* tid is on a CPU again: its off-CPU time ends. */
static void oc_end(struct offcpu *oc, uint64_t tid, uint64_t time, int cpu)
{
	struct pair_event pe = { .key = tid, .time = time, .cpu = cpu, .tid = (uint32_t)tid };

	uint64_t *since;

	if (!tid)
		return;
	if (!pair__find(oc->pr, tid) && !(!oc->nr_pids && oc_target(oc, 0, (uint32_t)tid)) &&
	    !(oc->nr_pids && keymap__find(&oc->member, tid)))
		return; /* not a task followed */
	pair__end(oc->pr, &pe); /* no start: counted */
	/* --wall: the on-CPU time measured too, beside what the samples estimate */
	if (oc->wall && (since = keymap__insert(&oc->on_since, tid, NULL)))
		*since = time;
}

/* --wall: tasks on a CPU now count their time up to now in the profile being written. */
void oc_charge_running(struct offcpu *oc, uint64_t now)
{
	struct keymap_iter it;
	uint64_t tid, *since;

	keymap__for_each(&oc->on_since, &it, tid, since)
	{
		if (*since && now > *since) {
			oc->oncpu_ns += now - *since;
			*since = now;
		}
	}
}

/* A switch-out: the prev task (whose context and stack the sample is) leaves. */
static void oc_switch(struct prof *p, struct offcpu *oc, struct oc_ev *oe, int cpu,
		      const struct psc_sample *s)
{
	struct oc_pending d = { 0 };
	struct pair_event pe = {
		.time = s->time, .cpu = cpu, .pid = s->pid, .tid = s->tid, .sample = s, .ctx = &d
	};
	uint64_t prev, state;

	uint64_t *since;

	if (!oc_field(oc, oe->prev_pid, s, &prev) || !oc_field(oc, oe->state, s, &state))
		return;
	if (oc->wall && (since = keymap__find(&oc->on_since, prev)) && *since) {
		if (s->time > *since)
			oc->oncpu_ns += s->time - *since;
		*since = 0;
	}
	if (!prev || !oc_target(oc, s->pid, (uint32_t)prev)) /* the idle task, another one */
		return;
	int cls = tstate_map__class(&oc->map, state);

	if (cls > 0 && (oc->dead >> cls) & 1) {
		oc->loss.exits++; /* it exits: nothing comes back */
		return;
	}
	d.row = cls < 0 ? OC_ROW_UNKNOWN : cls == TSTATE_RUNNABLE ? OC_ROW_PREEMPT : cls;
	if (!((oc->shown >> d.row) & 1))
		return;
	if (oc->nr_pids && !keymap__find(&oc->member, prev))
		keymap__insert(&oc->member, prev, NULL);
	d.stack = oc_intern(p, oc, s, (uint32_t)prev, OC_TAG(d.row, false), 0, 0);
	if (!d.stack)
		return;
	pe.key = prev;
	pair__start(oc->pr, &pe);
}

/* --waker: the task woken (pid) was switched out asleep; the sample is its waker's. */
static void oc_wakeup(struct prof *p, struct offcpu *oc, struct oc_ev *oe,
		      const struct psc_sample *s)
{
	const char *comm = prof__comm(p, s->pid, s->tid);
	struct pair_entry *e;
	struct oc_pending *d;
	const uint64_t *ips;
	uint64_t pid, n, nr;

	if (!oc_field(oc, oe->pid, s, &pid) || !(e = pair__find(oc->pr, pid)))
		return;
	d = pair_entry__data(e);
	if (d->woken || d->row == OC_ROW_PREEMPT || !d->stack)
		return; /* woken twice, or never asleep */
	d->woken = s->time;
	nr = d->stack->nr < OC_MAX_IPS / 2 ? d->stack->nr : OC_MAX_IPS / 2;
	memcpy(oc->ips, d->stack->ips, nr * sizeof(*oc->ips));
	oc->ips[0] = OC_TAG(d->row, true);
	oc->ips[nr] = OC_SEP;
	oc->ips[nr + 1] = s->pid;
	oc->ips[nr + 2] = s->tid;
	oc->ips[nr + 3] = oc->ips[nr + 4] = 0;
	if (comm)
		strncpy((char *)&oc->ips[nr + 3], comm, 15);
	nr += 5;
	callchain__see(prof__callchain(p), (pid_t)s->pid);
	n = callchain__sample_ips(prof__callchain(p), s, &ips);
	if (n > OC_MAX_IPS - nr)
		n = OC_MAX_IPS - nr;
	memcpy(oc->ips + nr, ips, n * sizeof(*ips));
	d->woken_by = stack_table__count(&oc->stacks, d->stack->pid, d->stack->tid, d->stack->comm,
					 oc->ips, (uint32_t)(nr + n), 0, 0);
}

int oc_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s)
{
	struct offcpu *oc = priv;
	struct oc_ev *oe = ev->priv;

	if (s->time > oc->last_time)
		oc->last_time = s->time;
	if (oe->kind == OC_SWITCH)
		oc_switch(p, oc, oe, cpu, s);
	else if (oe->kind == OC_WAKEUP)
		oc_wakeup(p, oc, oe, s);
	else if (oc_target(oc, s->pid, s->tid)) /* --wall: a task on a CPU */
		oc_intern(p, oc, s, s->tid, OC_TAG(OC_ROW_ONCPU, false), 1, s->period);
	return 0;
}

/* PERF_RECORD_SWITCH_CPU_WIDE of a switch-in: the task coming in (the sched_switch's next). */
int oc_record(struct prof *p, void *priv, const struct psc_record *rec)
{
	struct offcpu *oc = priv;

	if (rec->type == PERF_RECORD_SWITCH_CPU_WIDE && !rec->sw.out && oc->pr &&
	    (rec->sid.present & PERF_SAMPLE_TIME))
		oc_end(oc, rec->sid.tid, rec->sid.time, (int)rec->sid.cpu);
	return 0;
}

/* A loss: no off-CPU time that began before it is measured (pair.h, lost windows). */
void oc_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct offcpu *oc = priv;

	oc->loss.ring_lost += n;
	oc->loss.lost_windows++;
	if (oc->pr)
		pair__lost(oc->pr, mono_ns()); /* a loss heard now happened before now */
}
