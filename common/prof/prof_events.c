/* The -e events of a profiler: filters and ATTRs checked and bound once, evsels configured. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/perfscope.h>
#include <perfscope/tp.h>

#include "caret.h"
#include "evprint.h"
#include "prof_internal.h"
#include "unwind.h"

const struct prof_attr_val *prof_event__attr(const struct prof_event *ev, const char *name)
{
	for (int i = 0; i < ev->nr_attrs; i++)
		if (!strcmp(ev->attrs[i].decl->name, name))
			return &ev->attrs[i];
	return NULL;
}

/* "EVENT has fields: a, b, c" for a typo in a field name. */
static void print_fields(const struct prof_event *ev)
{
	int n = psc_tp_format__nr_fields(ev->fmt);

	fprintf(stderr, "  %s has fields:", ev->spec->name);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", psc_tp_format__field_at(ev->fmt, i)->name);
	fputc('\n', stderr);
}

static int load_format(struct prof *p, struct prof_event *ev)
{
	const struct psc_event_spec *spec = ev->spec;

	if (ev->fmt || spec->kind != PSC_EVENT_TRACEPOINT)
		return 0;
	ev->fmt = psc_tp_format__load(spec->sys, spec->event);
	if (!ev->fmt) {
		fprintf(stderr, "perfscope %s: cannot read the format of %s: %s\n", p->name,
			spec->name, strerror(errno));
		return 1;
	}
	return 0;
}

/*
 * The user-space check, then the kernel's on a scratch event. A filter the kernel refuses (a field
 * against a field, arithmetic) runs in user space as an expression (prof_expr.c); one neither
 * takes is a usage error pointing at its part, not a failed open.
 */
/* Whether filter names only common_* fields (outside its quoted strings). */
static bool filter_common_only(const char *f)
{
	while (*f) {
		if (*f == '"' || *f == '\'') {
			char q = *f++;

			while (*f && *f != q)
				f += f[0] == '\\' && f[1] ? 2 : 1;
			f += *f != '\0';
		} else if (isalpha((unsigned char)*f) || *f == '_') {
			const char *w = f;

			while (isalnum((unsigned char)*f) || *f == '_')
				f++;
			if (strncmp(w, "common_", 7))
				return false;
		} else if (isdigit((unsigned char)*f)) {
			while (isalnum((unsigned char)*f) || *f == '.')
				f++; /* 0x1f, 1e3: one number */
		} else {
			f++;
		}
	}
	return true;
}

/*
 * The same filter over the common_* fields alone, accepted on an earlier event: every tracepoint
 * has those fields with the same types, so the kernel takes it here too. Opening a scratch event
 * is not free: on a uprobe it registers the probe in every process mapping the binary, and its
 * close waits for RCU (~0.1 s each: memleak's 19 probes took 3 s before its run began).
 */
static bool filter_known_good(struct prof *p, const struct prof_event *ev)
{
	const char *f = ev->spec->filter;

	if (!filter_common_only(f))
		return false;
	for (int i = 0; i < ev->idx; i++) {
		const struct prof_event *e = &p->events_arr[i];

		if (e->fmt && e->spec->filter && !e->filter && !strcmp(e->spec->filter, f))
			return true;
	}
	return false;
}

static int check_filter(struct prof *p, struct prof_event *ev)
{
	struct psc_parse_error perr = { .pos = -1 };

	if (!ev->spec->filter || !ev->fmt || filter_known_good(p, ev))
		return 0;
	if (psc_tp__verify_filter(ev->fmt, ev->spec->filter, &perr) != -EINVAL)
		return 0;
	return prof_expr__filter(p, ev, &perr);
}

static const struct prof_attr *find_attr(const struct profiler *decl, const char *name)
{
	for (const struct prof_attr *a = decl->attrs; a && a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

/* A problem with an ATTR: the message, then the event list with a caret under pos. */
static int attr_error(struct prof *p, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int attr_error(struct prof *p, int pos, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "perfscope %s: ", p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	prof_events_caret(p, pos);
	return PROF_USAGE;
}

static int bind_attr(struct prof *p, struct prof_event *ev, const struct psc_event_attr *in,
		     struct prof_attr_val *out)
{
	const struct prof_attr *decl = find_attr(p->decl, in->name);
	char list[512], *end;
	int err;

	if (!decl) {
		struct psc_suggest sg;
		const char *lib_attr;
		char hint[448];

		psc_suggest__init(&sg, in->name, strlen(in->name));
		for (int i = 0; (lib_attr = psc_lib_attr__at(i, NULL)); i++)
			psc_suggest__add(&sg, lib_attr, NULL);
		for (const struct prof_attr *a = p->decl->attrs; a && a->name; a++)
			psc_suggest__add(&sg, a->name, NULL);
		psc_suggest__format(&sg, hint, sizeof(hint));
		prof_attrs_list(p->decl, list, sizeof(list));
		fprintf(stderr,
			"perfscope %s: ATTR '%s' on %s means nothing to %s%s%s%s takes: %s\n",
			p->name, in->name, ev->spec->name, p->name, hint, hint[0] ? " " : "; ",
			p->name, list);
		prof_events_caret(p, in->pos);
		return PROF_USAGE;
	}
	if (!decl->repeat && prof_event__attr(ev, decl->name))
		return attr_error(p, in->pos, "ATTR '%s' is given twice on %s", decl->name,
				  ev->spec->name);
	out->decl = decl;
	out->value = in->value;
	switch (decl->kind) {
	case PROF_ATTR_FLAG:
		if (in->value)
			return attr_error(p, in->pos, "ATTR '%s' takes no value; write /%s/",
					  decl->name, decl->name);
		return 0;
	case PROF_ATTR_STRING:
		break;
	case PROF_ATTR_NUM:
		if (!in->value)
			break;
		errno = 0;
		out->num = strtoull(in->value, &end, 0);
		if (errno || end == in->value || *end || in->value[0] == '-')
			return attr_error(p, in->value_pos,
					  "ATTR '%s' needs a whole number, not '%s'", decl->name,
					  in->value);
		return 0;
	case PROF_ATTR_EXPR:
		if (!in->value)
			break;
		/* a tracepoint's fields are names; other events have the sample's (_cpu, _pid) */
		err = load_format(p, ev);
		return err ? err : prof_expr__bind(p, ev, in, out);
	case PROF_ATTR_FIELD:
		if (!in->value)
			break;
		if (ev->spec->kind != PSC_EVENT_TRACEPOINT)
			return attr_error(p, in->pos,
					  "ATTR '%s' names a tracepoint field, and %s is not a "
					  "tracepoint",
					  decl->name, ev->spec->name);
		err = load_format(p, ev);
		if (err)
			return err;
		out->field = psc_tp_format__field(ev->fmt, in->value);
		if (!out->field) {
			attr_error(p, in->value_pos, "%s=%s: no such field", decl->name, in->value);
			print_fields(ev);
			return PROF_USAGE;
		}
		return 0;
	}
	if (!in->value)
		return attr_error(p, in->pos, "ATTR '%s' needs a value: %s", decl->name,
				  decl->help);
	return 0;
}

/* Sampling policy: every occurrence of discrete events, a rate for the clock-like ones. */
static void config_period(const struct psc_event_spec *spec, struct perf_event_attr *a)
{
	if (a->sample_period || a->freq)
		return;
	if (spec->kind == PSC_EVENT_TRACEPOINT ||
	    (spec->kind == PSC_EVENT_SOFTWARE && a->config != PERF_COUNT_SW_CPU_CLOCK &&
	     a->config != PERF_COUNT_SW_TASK_CLOCK)) {
		a->sample_period = 1;
	} else {
		a->freq = 1;
		a->sample_freq = 1000;
	}
}

/* What every streamed sample carries, beyond what the session adds (tid, time, cpu, id). */
static void config_sampling(struct prof *p, struct prof_event *ev, struct perf_event_attr *a)
{
	const struct psc_event_spec *spec = ev->spec;

	config_period(spec, a);
	/*
	 * PERF_SAMPLE_PERIOD makes every hit one sample carrying its count: without it, a
	 * tracepoint whose count is not 1 per hit (sched_stat_runtime counts nanoseconds through
	 * __perf_count) is emitted once per unit of count, the same record hundreds of times,
	 * until the kernel throttles it and the real events are lost.
	 */
	a->sample_type |= PERF_SAMPLE_PERIOD;
	if (spec->kind == PSC_EVENT_TRACEPOINT)
		a->sample_type |= PERF_SAMPLE_RAW;
	else
		a->sample_type |= PERF_SAMPLE_IP;
	if (spec->kind == PSC_EVENT_SOFTWARE &&
	    (a->config == PERF_COUNT_SW_PAGE_FAULTS || a->config == PERF_COUNT_SW_PAGE_FAULTS_MIN ||
	     a->config == PERF_COUNT_SW_PAGE_FAULTS_MAJ))
		a->sample_type |= PERF_SAMPLE_ADDR;
	if (p->callchain || spec->stack) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (spec->max_stack > 0)
			a->sample_max_stack = (uint16_t)spec->max_stack;
		/*
		 * perf-prof's switches: --no-X leaves part X out; --X alone (no -g, no stack
		 * ATTR, not the other one) asks for that part only.
		 */
		bool only = !p->opts.callchain && !spec->stack;

		if (p->opts.user_callchain == 0 ||
		    (only && p->opts.kernel_callchain == 1 && p->opts.user_callchain != 1))
			a->exclude_callchain_user = 1;
		if (p->opts.kernel_callchain == 0 ||
		    (only && p->opts.user_callchain == 1 && p->opts.kernel_callchain != 1))
			a->exclude_callchain_kernel = 1;
		/*
		 * --call-graph dwarf: the kernel gives the user registers and a copy of the user
		 * stack, unwound here (unwind.c); its frame-pointer walk of the user stack would
		 * only be thrown away.
		 */
		if (p->opts.dwarf && !a->exclude_callchain_user) {
			a->exclude_callchain_user = 1;
			a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
			a->sample_regs_user = UNWIND_REGS_MASK;
			a->sample_stack_user = p->opts.stack_dump_size;
		}
	}
	if (p->opts.overwrite)
		a->write_backward = 1;
}

static int setup_one(struct prof *p, struct prof_event *ev)
{
	const struct psc_event_spec *spec = ev->spec;
	int err;

	if ((p->decl->needs & PROF_TP_FORMAT) || spec->filter) {
		err = load_format(p, ev);
		if (err)
			return err;
	}
	err = check_filter(p, ev);
	if (err)
		return err;
	if (spec->nr_attrs) {
		ev->attrs = calloc((size_t)spec->nr_attrs, sizeof(*ev->attrs));
		if (!ev->attrs)
			return -ENOMEM;
	}
	for (int i = 0; i < spec->nr_attrs; i++) {
		err = bind_attr(p, ev, &spec->attrs[i], &ev->attrs[ev->nr_attrs]);
		if (err)
			return err;
		ev->nr_attrs++;
	}
	if (p->decl->ev_priv_size) {
		ev->priv = calloc(1, p->decl->ev_priv_size);
		if (!ev->priv)
			return -ENOMEM;
	}
	return 0;
}

int prof_events__setup(struct prof *p)
{
	const struct psc_event_list *specs = p->specs;
	bool rings = p->decl->needs & PROF_RINGS;
	int i, err;

	p->events_arr = calloc(specs->nr ? (size_t)specs->nr : 1, sizeof(*p->events_arr));
	p->evlist = psc_evlist__new();
	if (!p->events_arr || !p->evlist)
		return -ENOMEM;
	p->nr_events = specs->nr;
	for (i = 0; i < specs->nr; i++) {
		p->events_arr[i].idx = i;
		p->events_arr[i].spec = &specs->specs[i];
		err = setup_one(p, &p->events_arr[i]);
		if (err)
			return err;
	}
	/* counting keeps perf's groups ({a,b}); streaming samples each event on its own */
	if (!rings) {
		err = psc_evlist__add_specs(p->evlist, specs, false);
		if (err)
			return err;
	}
	for (i = 0; i < specs->nr; i++) {
		struct prof_event *ev = &p->events_arr[i];
		struct perf_event_attr *a;

		if (rings) {
			/* a filter run in user space is not given to the kernel */
			struct psc_event_spec unfiltered = *ev->spec;

			unfiltered.filter = ev->filter ? NULL : unfiltered.filter;
			ev->evsel = psc_evsel__new_spec(&unfiltered);
			if (!ev->evsel)
				return -errno;
			if ((err = psc_evlist__add(p->evlist, ev->evsel))) {
				psc_evsel__delete(ev->evsel);
				ev->evsel = NULL;
				return err;
			}
		} else {
			ev->evsel = psc_evlist__at(p->evlist, i);
		}
		psc_evsel__set_priv(ev->evsel, ev);
		ev->name = psc_evsel__name(ev->evsel);
		if ((err = prof_print__event(p, ev)))
			return err;
		a = psc_evsel__attr_mut(ev->evsel);
		if (rings)
			config_sampling(p, ev, a);
		if (p->decl->event && (err = p->decl->event(p, p->priv, ev, a)))
			return err == PROF_DONE ? PROF_SETUP_DONE : err;
	}
	return 0;
}

void prof_events__free(struct prof *p)
{
	prof_expr__free(p);
	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];

		if (ev->evsel)
			psc_evsel__set_priv(ev->evsel, NULL);
		if (ev->print)
			evprint_event__exit(ev->print);
		free(ev->print);
		psc_tp_format__delete(ev->fmt);
		free(ev->attrs);
		free(ev->priv);
	}
	free(p->events_arr);
	p->events_arr = NULL;
	p->nr_events = 0;
}
