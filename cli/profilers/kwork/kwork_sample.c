/* kwork's samples: each event starts or ends a pair of its class, a pair's time goes to its row. */
#include "kwork.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksyms.h"

static const char *const softirq_names[] = { "HI",	 "TIMER",   "NET_TX", "NET_RX",	 "BLOCK",
					     "IRQ_POLL", "TASKLET", "SCHED",  "HRTIMER", "RCU" };

/* What a sample hands the pair engine's hooks (pair_event.ctx). */
struct kw_ev {
	struct kwork *kw;
	struct krow *row;
	int measure;
	enum kw_class cls;
};

struct kw_data {
	struct krow *row;
};

static int impl_start(void *ctx, struct pair_entry *e, void *data, const struct pair_event *ev)
{
	const struct kw_ev *ke = ev->ctx;

	((struct kw_data *)data)->row = ke->row;
	return 0;
}

static void print_over(struct kwork *kw, const struct kw_ev *ke, const struct pair_event *end,
		       uint64_t delta)
{
	struct prof *p = kw->p;
	const char *what = ke->measure == KW_LATENCY ? "waited" : "ran";
	const char *name = ke->row && ke->row->name ? ke->row->name : "?";
	char t[24];

	kw->over++;
	hist_fmt(t, sizeof(t), delta, "ns");
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "class");
		json__str(&p->json, kw->pairs[ke->cls][ke->measure].name);
		JSON_KEY(&p->json, "name");
		json__str(&p->json, name);
		json__key(&p->json, ke->measure == KW_LATENCY ? "latency_ns" : "runtime_ns");
		json__u64(&p->json, delta);
		JSON_KEY(&p->json, "time_ns");
		json__u64(&p->json, end->time);
		JSON_KEY(&p->json, "cpu");
		json__i64(&p->json, end->cpu);
		json__end_line(&p->json);
		return;
	}
	out__printf(p->out, "%llu.%06llu [%03d] %s %s %s\n",
		    (unsigned long long)(end->time / 1000000000),
		    (unsigned long long)(end->time % 1000000000 / 1000), end->cpu, name, what, t);
}

static void impl_paired(void *ctx, const struct pair_entry *start, void *data,
			const struct pair_event *end, uint64_t delta)
{
	const struct kw_ev *ke = end->ctx;
	struct kwork *kw = ke->kw;
	/* the end names it (a work's function); a softirq's exit and raise name it as well */
	struct krow *row = ke->row ? ke->row : ((struct kw_data *)data)->row;
	bool over = kw->than && delta > kw->than;

	if (!row)
		return;
	krow__add(&kw->rows[ke->cls], row, ke->measure, delta, over, kw->ival);
	if (over)
		print_over(kw, ke, end, delta);
}

const struct pair_impl kwork_impl = {
	.name = "kwork",
	.data_size = sizeof(struct kw_data),
	.start = impl_start,
	.paired = impl_paired,
};

/* The row of a sample's irq, vector or work function, named when it is new. */
static struct krow *kw_row(struct kwork *kw, enum kw_class cls, int role, uint64_t id, int cpu,
			   const struct psc_sample *s)
{
	bool created;
	/* --percpu: the id mixed with its CPU (a work function's address is no small number) */
	uint64_t key = kw->percpu ? (id * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)cpu + 1) : id;
	struct krow *r = krows__get(&kw->rows[cls], key, &created);
	char buf[320];
	size_t n;

	if (!created)
		return r;
	r->aux = kw->percpu ? (uint64_t)(cpu + 1) : 0; /* its CPU + 1, 0: all */
	if (cls == KW_SOFTIRQ) {
		snprintf(buf, sizeof(buf), "%s",
			 id < sizeof(softirq_names) / sizeof(softirq_names[0]) ? softirq_names[id]
									       : "?");
	} else if (cls == KW_IRQ) {
		const void *data = NULL;
		uint32_t size = 0;

		if (kw->f_name[role] &&
		    !psc_tp_field__data(kw->f_name[role], s->raw.data, s->raw.size, &data, &size))
			snprintf(buf, sizeof(buf), "%.*s:%llu", (int)strnlen(data, size),
				 (const char *)data, (unsigned long long)id);
		else
			snprintf(buf, sizeof(buf), "irq%llu", (unsigned long long)id);
	} else {
		const struct ksym *k = ksyms__find(kw->text_syms, id, NULL);

		if (k)
			snprintf(buf, sizeof(buf), "%s", k->name);
		else
			snprintf(buf, sizeof(buf), "%llx", (unsigned long long)id);
	}
	n = strlen(buf);
	if (kw->percpu && n < sizeof(buf))
		snprintf(buf + n, sizeof(buf) - n, " [%03d]", cpu);
	r->name = strdup(buf);
	return r;
}

/*
 * Each role: its class, the measure it starts (latency, run time) and the one it ends, -1 none.
 * A softirq's entry ends its latency and starts its run; a work's start the same.
 */
static const struct {
	enum kw_class cls;
	int starts, ends;
} roles[KW_NR_ROLES] = {
	[KW_IRQ_ENTRY] = { KW_IRQ, KW_RUNTIME, -1 },
	[KW_IRQ_EXIT] = { KW_IRQ, -1, KW_RUNTIME },
	[KW_SI_RAISE] = { KW_SOFTIRQ, KW_LATENCY, -1 },
	[KW_SI_ENTRY] = { KW_SOFTIRQ, KW_RUNTIME, KW_LATENCY },
	[KW_SI_EXIT] = { KW_SOFTIRQ, -1, KW_RUNTIME },
	[KW_WQ_ACTIVATE] = { KW_WORKQUEUE, KW_LATENCY, -1 },
	[KW_WQ_START] = { KW_WORKQUEUE, KW_RUNTIME, KW_LATENCY },
	[KW_WQ_END] = { KW_WORKQUEUE, -1, KW_RUNTIME },
};

int kwork__sample(struct prof *p, struct kwork *kw, int role, int cpu, const struct psc_sample *s)
{
	enum kw_class cls = roles[role].cls;
	uint64_t id, key;
	struct pair_event pe;
	struct kw_ev ke = { .kw = kw, .cls = cls };
	struct kw_pair *lat = &kw->pairs[cls][KW_LATENCY];

	if (psc_tp_field__u64(kw->f_id[role], s->raw.data, s->raw.size, &id)) {
		kw->field_errors++;
		return 0;
	}
	/*
	 * Keys: a hardirq runs on its CPU to the end (they do not nest); a softirq is raised and
	 * run on one CPU, once per vector; a work item by its address, wherever it runs.
	 */
	key = cls == KW_WORKQUEUE ? id : (uint64_t)(uint32_t)cpu << 32 | (uint32_t)id;
	pe = (struct pair_event){ .key = key,
				  .time = s->time,
				  .cpu = cpu,
				  .pid = s->pid,
				  .tid = s->tid,
				  .sample = s,
				  .ctx = &ke };
	if (cls == KW_WORKQUEUE) {
		uint64_t fn;

		if (psc_tp_field__u64(kw->f_name[role], s->raw.data, s->raw.size, &fn)) {
			kw->field_errors++;
			return 0;
		}
		ke.row = kw_row(kw, cls, role, fn, cpu, s);
	} else {
		ke.row = kw_row(kw, cls, role, id, cpu, s);
	}
	if (roles[role].ends >= 0 && kw->pairs[cls][roles[role].ends].pr) {
		ke.measure = roles[role].ends;
		pair__end(kw->pairs[cls][roles[role].ends].pr, &pe);
	}
	if (roles[role].starts >= 0 && kw->pairs[cls][roles[role].starts].pr) {
		ke.measure = roles[role].starts;
		/* raised again before it ran: it waits since the first raise */
		if (role == KW_SI_RAISE && pair__find(lat->pr, key)) {
			kw->coalesced++;
			return 0;
		}
		pair__start(kw->pairs[cls][roles[role].starts].pr, &pe);
	}
	return 0;
}
