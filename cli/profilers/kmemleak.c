/* perfscope kmemleak: what is allocated and not freed over any alloc/free events (by default the
 * kernel's kmalloc and kmem_cache families), grouped by stack; perf-prof's kmemleak. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "expr.h"
#include "flame.h"
#include "leak.h"
#include "profiler.h"

#define DEFAULT_ALLOC "kmem:kmalloc,kmem:kmem_cache_alloc"
#define DEFAULT_FREE "kmem:kfree,kmem:kmem_cache_free"

struct km_ev {
	bool alloc;
	struct expr *ptr, *size; /* ptr= (or key=), size= */
	const struct psc_tp_field *ptr_f, *size_f; /* the default fields */
	const struct psc_tp_field *order_f; /* page events: size is the page size << order */
};

struct km {
	const char *alloc, *free; /* --alloc, --free */
	const char *than_text;
	uint64_t than;
	long top;
	long max_pending;
	const char *flame_path; /* --flame-graph */
	char *events;
	size_t alloc_len; /* events[0, alloc_len) are the allocations */
	struct leak *lk;
	uint64_t last_time;
	uint64_t bad_values; /* ptr= or size= that could not be computed */
};

static const struct prof_attr km_attrs[] = {
	{ "ptr", PROF_ATTR_EXPR, false,
	  "ptr=EXPR: the block's address (default: the field ptr, else pfn)" },
	{ "key", PROF_ATTR_EXPR, false,
	  "key=EXPR: the same as ptr=, in multi-trace's word (//key=pfn/)" },
	{ "size", PROF_ATTR_EXPR, false,
	  "size=EXPR: an allocation's bytes (default: the field bytes_alloc; for page\n"
	  "events with pfn and order, the page size << order; else 0)" },
	{ NULL },
};

static const struct prof_opt km_opts[] = {
	{ "alloc", 0, "EVENTS", PROF_OPT_STRING, offsetof(struct km, alloc), 0, 0, NULL,
	  "the allocation events, with ptr= and size= ATTRs (default: " DEFAULT_ALLOC ")" },
	{ "free", 0, "EVENTS", PROF_OPT_STRING, offsetof(struct km, free), 0, 0, NULL,
	  "the free events, with a ptr= ATTR (default: " DEFAULT_FREE ")" },
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct km, than), 0, 0, NULL,
	  "only allocations older than T (s, ms, us, ns) when reported",
	  .given = PROF_OPT_GIVEN(struct km, than_text) },
	{ "top", 0, "N", PROF_OPT_LONG, offsetof(struct km, top), 1, 1000000, NULL,
	  "only the N stacks holding the most bytes (default: all)" },
	{ "max-pending", 0, "N", PROF_OPT_LONG, offsetof(struct km, max_pending), 1, 1L << 30, NULL,
	  "live allocations followed at most (default 4194304); beyond, the oldest are\n"
	  "dropped and counted" },
	{ "flame-graph", 0, "FILE", PROF_OPT_STRING, offsetof(struct km, flame_path), 0, 0, NULL,
	  "the leaking stacks, folded and weighted by bytes, into FILE.folded at the end" },
	{ NULL },
};

static int km_check(struct prof *p, void *priv)
{
	struct km *km = priv;
	const char *a = km->alloc ? km->alloc : DEFAULT_ALLOC;
	const char *f = km->free ? km->free : DEFAULT_FREE;
	int ret;

	if (!km->alloc != !km->free)
		return prof_usage(p, "give both --alloc and --free, or neither (the kmalloc and "
				     "kmem_cache families)");
	if (asprintf(&km->events, "%s,%s", a, f) < 0) {
		km->events = NULL;
		return -ENOMEM;
	}
	km->alloc_len = strlen(a);
	if ((ret = prof__add_events(p, km->events, NULL)))
		return ret;
	/* the stacks are the report: every allocation is sampled with its callchain */
	p->callchain = true;
	km->lk = leak__new(km->max_pending ? (size_t)km->max_pending : 4u << 20);
	return km->lk ? 0 : -ENOMEM;
}

static int km_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *a)
{
	struct km *km = priv;
	struct km_ev *ke = ev->priv;
	const struct prof_attr_val *ptr = prof_event__attr(ev, "ptr");
	const struct prof_attr_val *key = prof_event__attr(ev, "key");
	const struct prof_attr_val *size = prof_event__attr(ev, "size");

	if (ptr && key)
		return prof_usage(p, "%s has both ptr= and key=, two names of what pairs an "
				     "allocation with its free: give one", ev->name);
	ke->alloc = ev->spec->text_pos < (int)km->alloc_len;
	ke->ptr = ptr ? ptr->expr : key ? key->expr : NULL;
	ke->size = size ? size->expr : NULL;
	if (ev->fmt) {
		/* pages (kmem:mm_page_alloc, mm_page_free) are known by their pfn */
		ke->ptr_f = psc_tp_format__field(ev->fmt, "ptr");
		if (!ke->ptr_f)
			ke->ptr_f = psc_tp_format__field(ev->fmt, "pfn");
		ke->size_f = psc_tp_format__field(ev->fmt, "bytes_alloc");
		if (!ke->size_f && psc_tp_format__field(ev->fmt, "pfn"))
			ke->order_f = psc_tp_format__field(ev->fmt, "order");
	}
	if (!ke->ptr && !ke->ptr_f)
		return prof_usage(p,
				  "%s has no field 'ptr' or 'pfn': give its address as ptr=EXPR "
				  "(or key=EXPR), e.g. %s//ptr=addr/",
				  ev->name, ev->name);
	if (size && !ke->alloc)
		return prof_usage(p, "size= is for allocation events (--alloc), not %s", ev->name);
	/* only the allocations' stacks are shown */
	if (!ke->alloc)
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_CALLCHAIN;
	return 0;
}

static bool value(struct km *km, struct expr *e, const struct psc_tp_field *f,
		  const struct psc_sample *s, uint64_t *out)
{
	struct expr_val v;

	if (e) {
		if (expr__eval(e, s->raw.data, s->raw.size, s, &v)) {
			km->bad_values++;
			return false;
		}
		*out = v.i;
		return true;
	}
	if (!f || f->offset + f->size > s->raw.size || f->size > 8) {
		*out = 0;
		return f == NULL;
	}
	*out = 0;
	memcpy(out, (const char *)s->raw.data + f->offset, f->size);
	return true;
}

static int km_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	struct km *km = priv;
	struct km_ev *ke = ev->priv;
	uint64_t ptr, size = 0;

	if (s->time > km->last_time)
		km->last_time = s->time;
	/* 0, and mm_page_alloc's pfn -1 of a failed allocation, are no block */
	if (!value(km, ke->ptr, ke->ptr_f, s, &ptr) || !ptr || ptr == UINT64_MAX)
		return 0;
	if (!ke->alloc) {
		leak__free(km->lk, ptr, s->time, cpu, s->pid, s->tid);
		return 0;
	}
	if (!ke->size && ke->order_f) {
		uint64_t order;

		if (value(km, NULL, ke->order_f, s, &order) && order < 32)
			size = (uint64_t)sysconf(_SC_PAGESIZE) << order;
	} else if (!value(km, ke->size, ke->size_f, s, &size)) {
		size = 0;
	}
	leak__alloc(km->lk, ptr, size,
		    leak__stack(km->lk, prof__callchain(p), s, prof__comm(p, s->pid, s->tid)),
		    s->time, cpu, s->pid, s->tid);
	return 0;
}

static void km_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct km *km = priv;

	leak__lost(km->lk, mono_ns()); /* a loss heard now happened before now */
}

/* --flame-graph: the leaking stacks weighted by bytes. 1 when they could not be written. */
static int write_flame(struct prof *p, struct km *km, const struct leak_group *g, size_t nr)
{
	struct flame *fl = flame__new();
	char *path = prof__flame_path(km->flame_path, 0);
	int err = fl && path ? 0 : -ENOMEM;

	for (size_t i = 0; i < nr && !err; i++)
		err = flame__add(fl, g[i].folded, strlen(g[i].folded), g[i].bytes);
	if (err)
		fprintf(stderr, "perfscope %s: cannot write the folded stacks to '%s': %s\n",
			p->name, path ? path : km->flame_path, strerror(-err));
	else
		err = prof__flame_write(p, fl, NULL, path, "bytes");
	free(path);
	flame__delete(fl);
	return err ? 1 : 0;
}

static int print_leaks(struct prof *p, struct km *km, bool final)
{
	struct leak_report r = { .now = km->last_time,
				 .than = km->than,
				 .than_text = km->than_text,
				 .top = (size_t)km->top,
				 .final = final,
				 .json = p->json_fmt,
				 /* known at the end of the run; 0 before */
				 .dropped = final ? prof__kernel_dropped(p) : 0 };
	struct leak_group *g;
	size_t nr;
	int err = leak__report(km->lk, p->out, &p->json, &r, &g, &nr);

	if (err)
		return err;
	if (final && km->flame_path)
		err = write_flame(p, km, g, nr);
	free(g);
	return err;
}

static int km_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	return print_leaks(p, priv, false);
}

static int km_report(struct prof *p, void *priv)
{
	struct km *km = priv;
	int err = print_leaks(p, km, true);

	if (!p->opts.quiet) {
		leak__say_outcomes(km->lk, prof__say(p));
		if (km->bad_values)
			fprintf(stderr,
				"perfscope kmemleak: %llu events whose ptr= or size= could not be "
				"computed\n",
				(unsigned long long)km->bad_values);
	}
	return err;
}

static void km_teardown(struct prof *p, void *priv)
{
	struct km *km = priv;

	leak__delete(km->lk);
	free(km->events);
}

const struct profiler profiler_kmemleak = {
	.name = "kmemleak",
	.summary =
		"allocations not freed over any alloc/free events, by stack (kmalloc by default)",
	.usage = "[--alloc EVENTS --free EVENTS] [OPTIONS] [-- COMMAND [ARGS]]",
	.description =
		"Pairs allocation events with free events by the block's address (ptr=, or key=\n"
		"as perf-prof's command lines also say; by default the field ptr, else pfn: pages)\n"
		"and keeps what is not freed, with its size (size=, by default the field\n"
		"bytes_alloc; a page event's page size << order) and the allocation's stack. At the end (and at each -i) it\n"
		"prints what is still allocated, grouped by stack, with counts and bytes, most bytes\n"
		"first. Without --alloc and --free: the kernel's kmalloc and kmem_cache families\n"
		"(" DEFAULT_ALLOC " -> " DEFAULT_FREE ").\n"
		"Frees of blocks allocated before the run, blocks allocated again while live and\n"
		"blocks dropped at --max-pending are counted; after lost events the allocations made\n"
		"before the loss are left out rather than reported as leaks.\n"
		"--format json gives one object per stack: {\"count\", \"bytes\", \"oldest_ns\",\n"
		"\"comm\", \"stack\": [frames, innermost first]}, then {\"summary\":true, \"final\",\n"
		"\"count\", \"bytes\", \"stacks\"}.",
	.events_help =
		"--alloc and --free take events as -e does, with ATTRs ptr=EXPR (or key=EXPR) and\n"
		"size=EXPR",
	.notes =
		"A leak whose free may be an event the kernel dropped (counted, never written to the\n"
		"rings) is marked \"(may be freed: N events dropped by the kernel)\", JSON\n"
		"\"free_maybe_lost\": N.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, or when COMMAND or the -p process exits.\n"
		"Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on a runtime\n"
		"failure, 2 on a usage error.",
	.examples =
		"kmemleak --duration 10 --than 5s\n"
		"kmemleak --alloc 'kmem:kmalloc//ptr=ptr/size=bytes_alloc/' --free "
		"'kmem:kfree//ptr=ptr/' -i 1000 --top 5\n"
		"kmemleak --alloc kmem:mm_page_alloc//ptr=pfn/ --free kmem:mm_page_free//ptr=pfn/ "
		"--flame-graph pages\n"
		"kmemleak --alloc kmem:mm_page_alloc//key=pfn/ --free kmem:mm_page_free//key=pfn/ "
		"-p 1234   # pages by pfn\n"
		"kmemleak --format json -- ./myprog",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_CALLCHAIN | CLI_OPT_INTERVAL | CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_ORDER |
		       CLI_OPT_QUIET | CLI_OPT_USAGE_SELF,
	.opts = km_opts,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS |
		 PROF_SUMMARY,
	.attrs = km_attrs,
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct km),
	.ev_priv_size = sizeof(struct km_ev),
	.check = km_check,
	.event = km_event,
	.sample = km_sample,
	.lost = km_lost,
	.interval = km_interval,
	.report = km_report,
	.teardown = km_teardown,
};
