/* perfscope kwork: hardirq, softirq and workqueue latency and run time per name, percentiles. */
#include "kwork.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "ksyms.h"
#include "pair_out.h"

static const char *const class_names[KW_NR_CLASSES] = { "irq", "softirq", "workqueue" };

/* Each role's event and the fields it is read by: id (irq, vec, work), then name or function. */
static const struct {
	const char *event, *id, *name;
} role_events[KW_NR_ROLES] = {
	[KW_IRQ_ENTRY] = { "irq:irq_handler_entry", "irq", "name" },
	[KW_IRQ_EXIT] = { "irq:irq_handler_exit", "irq", NULL },
	[KW_SI_RAISE] = { "irq:softirq_raise", "vec", NULL },
	[KW_SI_ENTRY] = { "irq:softirq_entry", "vec", NULL },
	[KW_SI_EXIT] = { "irq:softirq_exit", "vec", NULL },
	[KW_WQ_ACTIVATE] = { "workqueue:workqueue_activate_work", "work", "function" },
	[KW_WQ_START] = { "workqueue:workqueue_execute_start", "work", "function" },
	[KW_WQ_END] = { "workqueue:workqueue_execute_end", "work", "function" },
};

static const enum kw_class role_class[KW_NR_ROLES] = {
	KW_IRQ,	    KW_IRQ,	  KW_SOFTIRQ,	KW_SOFTIRQ,
	KW_SOFTIRQ, KW_WORKQUEUE, KW_WORKQUEUE, KW_WORKQUEUE,
};

/* clang-format off */
static const struct prof_opt kwork_opts[] = {
	{ "class", 'k', "CLASSES", PROF_OPT_STRING, offsetof(struct kwork, class_text), 0, 0, NULL,
	  "what to measure, comma separated: irq, softirq, workqueue\n"
	  "(default: all three; perf kwork's -k)" },
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct kwork, than), 0, 0, NULL,
	  "print each latency or run time longer than T (s, ms, us,\n"
	  "ns) as it ends, and count them (over_than)" },
	{ "top", 0, "N", PROF_OPT_LONG, offsetof(struct kwork, top), 0, 1L << 30, NULL,
	  "rows per table (default 20; 0: all)", 0, PROF_ARG_AUTO,
	  PROF_OPT_GIVEN(struct kwork, top_given) },
	{ "percpu", 0, NULL, PROF_OPT_FLAG, offsetof(struct kwork, percpu), 0, 0, NULL,
	  "a row per name and CPU (where it ran), as perf kwork's:\n"
	  "NET_RX [001]; JSON adds \"cpu\"" },
	{ NULL },
};
/* clang-format on */

static int kwork_classes(struct prof *p, struct kwork *kw)
{
	const char *c = kw->class_text ? kw->class_text : "irq,softirq,workqueue";

	while (*c) {
		size_t l = strcspn(c, ",");
		int i;

		for (i = 0; i < KW_NR_CLASSES; i++)
			if (strlen(class_names[i]) == l && !strncmp(c, class_names[i], l))
				break;
		if (i == KW_NR_CLASSES)
			return prof_usage(p,
					  "--class '%.*s': the classes are irq, softirq and "
					  "workqueue (comma separated)",
					  (int)l, c);
		kw->classes[i] = true;
		c += l + (c[l] == ',');
	}
	return 0;
}

static int kwork_check(struct prof *p, void *priv)
{
	struct kwork *kw = priv;
	int ret = kwork_classes(p, kw);

	if (ret)
		return ret;
	kw->p = p;
	kw->ival = p->opts.interval_ms > 0;
	if (!kw->top_given)
		kw->top = 20;
	for (int r = 0; r < KW_NR_ROLES; r++) {
		kw->role_idx[r] = -1;
		if (kw->classes[role_class[r]] &&
		    (ret = prof__add_events(p, role_events[r].event, NULL)))
			return ret;
	}
	return 0;
}

static int kwork_event(struct prof *p, void *priv, struct prof_event *ev,
		       struct perf_event_attr *attr)
{
	struct kwork *kw = priv;
	int *role = ev->priv;

	for (int r = 0; r < KW_NR_ROLES; r++) {
		const char *n = role_events[r].event;
		size_t sl = strcspn(n, ":");

		if (!ev->spec->sys || !ev->spec->event || strncmp(ev->spec->sys, n, sl) ||
		    ev->spec->sys[sl] || strcmp(ev->spec->event, n + sl + 1))
			continue;
		*role = r;
		kw->role_idx[r] = ev->idx;
		kw->f_id[r] = ev->fmt ? psc_tp_format__field(ev->fmt, role_events[r].id) : NULL;
		if (role_events[r].name)
			kw->f_name[r] = psc_tp_format__field(ev->fmt, role_events[r].name);
		if (!kw->f_id[r] || (role_events[r].name && !kw->f_name[r] && r != KW_IRQ_ENTRY)) {
			fprintf(stderr, "perfscope %s: %s lacks the field %s on this kernel\n",
				p->name, n, kw->f_id[r] ? role_events[r].name : role_events[r].id);
			return -EINVAL;
		}
		return 0;
	}
	return prof_usage(p, "%s is not one of kwork's events", ev->name);
}

static int kwork_start(struct prof *p, void *priv)
{
	struct kwork *kw = priv;
	static const char *const names[KW_NR_CLASSES][2] = {
		{ NULL, "hardirq runtime" },
		{ "softirq latency", "softirq runtime" },
		{ "workqueue latency", "workqueue runtime" },
	};

	for (int c = 0; c < KW_NR_CLASSES; c++) {
		if (!kw->classes[c])
			continue;
		if (krows__init(&kw->rows[c], c == KW_IRQ ? 2 : 3))
			return -ENOMEM;
		for (int m = c == KW_IRQ ? KW_RUNTIME : KW_LATENCY; m <= KW_RUNTIME; m++) {
			struct pair_opts po = { .impl = &kwork_impl, .unordered = !p->order };

			kw->pairs[c][m].name = names[c][m];
			kw->pairs[c][m].pr = pair__new(&po);
			if (!kw->pairs[c][m].pr)
				return -errno;
		}
	}
	if (kw->classes[KW_WORKQUEUE])
		kw->text_syms = ksyms__load(NULL); /* before the events: tens of ms */
	return 0;
}

static int kwork_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
			const struct psc_sample *s)
{
	return kwork__sample(p, priv, *(int *)ev->priv, cpu, s);
}

static void kwork_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct kwork *kw = priv;
	uint64_t now = mono_ns();

	kw->lost_windows++;
	for (int c = 0; c < KW_NR_CLASSES; c++)
		for (int m = 0; m < 2; m++)
			if (kw->pairs[c][m].pr)
				pair__lost(kw->pairs[c][m].pr, now);
}

/* A row's own JSON member: its CPU (--percpu). */
static void row_json(struct prof *p, const struct krow *r, void *arg)
{
	if (!r->aux)
		return;
	JSON_KEY(&p->json, "cpu");
	json__u64(&p->json, r->aux - 1);
}

static void kwork_print(struct prof *p, struct kwork *kw, bool final)
{
	for (int c = 0; c < KW_NR_CLASSES; c++) {
		for (int m = 0; m < 2; m++) {
			struct kw_pair *kp = &kw->pairs[c][m];
			struct krows_print pr = { .title = kp->name,
						  .table = kp->name,
						  .meas = m,
						  .final = final,
						  .top = kw->top,
						  .json = row_json,
						  .over = kw->than ? "over_than" : NULL };
			const uint64_t *counts;

			if (!kp->pr)
				continue;
			counts = pair__counts(kp->pr);
			krows__print(p, &kw->rows[c], &pr);
			if (!p->json_fmt) {
				pair_out__text(p->out, kp->pr, counts);
				continue;
			}
			json__begin(&p->json, p->out);
			JSON_KEY(&p->json, "pair");
			json__str(&p->json, kp->name);
			pair_out__json(&p->json, counts);
			JSON_KEY(&p->json, "pending");
			json__u64(&p->json, pair__nr_pending(kp->pr));
			json__end_line(&p->json);
		}
	}
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "coalesced_raises");
		json__u64(&p->json, kw->coalesced);
		JSON_KEY(&p->json, "over_than");
		json__u64(&p->json, kw->over);
		JSON_KEY(&p->json, "lost_windows");
		json__u64(&p->json, kw->lost_windows);
		JSON_KEY(&p->json, "field_errors");
		json__u64(&p->json, kw->field_errors);
		prof__json_end_counts(p, final);
		return;
	}
	out__printf(p->out,
		    "softirq raises while pending (latency from the first) %llu, lost "
		    "windows %llu, unreadable events %llu\n",
		    (unsigned long long)kw->coalesced, (unsigned long long)kw->lost_windows,
		    (unsigned long long)kw->field_errors);
}

static int kwork_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	struct kwork *kw = priv;

	krows__interval_head(p);
	kwork_print(p, kw, false);
	for (int c = 0; c < KW_NR_CLASSES; c++)
		if (kw->classes[c])
			krows__reset_ival(&kw->rows[c]);
	return 0;
}

static int kwork_report(struct prof *p, void *priv)
{
	struct kwork *kw = priv;

	for (int c = 0; c < KW_NR_CLASSES; c++)
		for (int m = 0; m < 2; m++)
			if (kw->pairs[c][m].pr)
				pair__finish(kw->pairs[c][m].pr);
	kwork_print(p, kw, true);
	return 0;
}

static void kwork_teardown(struct prof *p, void *priv)
{
	struct kwork *kw = priv;

	for (int c = 0; c < KW_NR_CLASSES; c++) {
		for (int m = 0; m < 2; m++)
			pair__delete(kw->pairs[c][m].pr);
		krows__exit(&kw->rows[c]);
	}
	ksyms__delete(kw->text_syms);
}

const struct profiler profiler_kwork = {
	.name = "kwork",
	.summary = "kernel work: hardirq, softirq, workqueue latency and run time per name",
	.usage = "[-k irq,softirq,workqueue] [--percpu] [--than T] [--top N] [-i MS] [-C CPUS]\n"
		 "                       [--duration S] [--format text|json] [-o FILE] "
		 "[-- COMMAND ARGS...]",
	.description =
		"perf kwork's report and latency in one run, with percentiles. Per hardirq (name:irq)\n"
		"its run time, irq_handler_entry -> irq_handler_exit on its CPU; per softirq vector\n"
		"(TIMER, NET_RX, RCU ...) its latency, softirq_raise -> softirq_entry on the raising\n"
		"CPU (a vector raised again while pending waits since its first raise), and its run\n"
		"time, softirq_entry -> softirq_exit; per workqueue function its latency,\n"
		"workqueue_activate_work -> workqueue_execute_start (as perf kwork measures it: a work\n"
		"held back by max_active waits from its activation), and its run time, execute_start\n"
		"-> execute_end, keyed by the work's address. Each row has the count, total, min,\n"
		"mean, p50, p95, p99, p99.9 and max, most total time first, and each measure the pair\n"
		"engine's outcomes (an exit whose entry came before the run is no_start, a run going\n"
		"on at the end open, a start before a lost window lost). Kernel work is system wide:\n"
		"-- COMMAND only bounds the run.",
	.notes =
		"--format json: one object per row {\"table\":\"softirq latency\", \"name\":\"NET_RX\",\n"
		"\"count\", \"min_ns\", ..., \"p999_ns\", \"total_ns\"}, one per measure {\"pair\",\n"
		"\"outcomes\":{...}, \"pending\"}, then {\"coalesced_raises\", \"lost_windows\", \"final\":\n"
		"true}; with --than one object per long one {\"class\", \"name\", \"runtime_ns\"}.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, or when COMMAND exits. Exit status: 0 after\n"
		"a clean stop (COMMAND's own when it ends), 1 on a runtime failure, 2 on a usage\n"
		"error.",
	.examples = "kwork --duration 1\n"
		    "kwork -k softirq --top 5 -- sleep 1\n"
		    "kwork -k workqueue --than 1ms -i 1000 --duration 3\n"
		    "kwork -k irq,softirq -C 0 --format json --duration 1\n"
		    "kwork -k softirq --percpu --top 10 --duration 1",
	.shared_opts = (CLI_OPTS_EVENT_RUN & ~CLI_OPT_EVENTS),
	.opts = kwork_opts,
	.needs = PROF_RINGS | PROF_ORDER | PROF_TP_FORMAT | PROF_SUMMARY | PROF_WATCH_TASKS,
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct kwork),
	.ev_priv_size = sizeof(int),
	.check = kwork_check,
	.event = kwork_event,
	.start = kwork_start,
	.sample = kwork_sample,
	.lost = kwork_lost,
	.interval = kwork_interval,
	.report = kwork_report,
	.teardown = kwork_teardown,
};
