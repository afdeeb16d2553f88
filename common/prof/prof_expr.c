/* Expressions on a profiler's events: EXPR ATTRs compiled against the format, and the /filter/
 * the kernel refuses run in user space instead. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/perfscope.h>

#include "caret.h"
#include "expr.h"
#include "ksyms.h"
#include "prof_internal.h"

/* ksymbol(): the table loaded once for every expression of the run. */
static const struct ksyms *get_ksyms(void *ctx)
{
	struct prof *p = ctx;

	if (!p->ksyms) {
		p->ksyms = ksyms__load(NULL);
		if (!p->ksyms)
			fprintf(stderr, "perfscope %s: ksymbol(): cannot read /proc/kallsyms: %s\n",
				p->name, strerror(errno));
		else if (ksyms__problem(p->ksyms))
			fprintf(stderr, "perfscope %s: ksymbol(): %s\n", p->name,
				ksyms__problem(p->ksyms));
	}
	return p->ksyms;
}

/* comm_get(pid): the engine's thread names. */
static const char *get_comm(void *ctx, uint32_t pid)
{
	return prof__comm(ctx, pid, pid);
}

void prof__expr_opts(struct prof *p, const struct prof_event *ev, struct expr_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->fmt = ev->fmt;
	o->ksyms = get_ksyms;
	o->comm = (p->decl->needs & PROF_COMM) ? get_comm : NULL;
	o->ctx = p;
}

int prof__expr_compile(struct prof *p, struct prof_event *ev, const char *what, const char *text,
		       bool want_int, struct expr **out)
{
	struct expr_opts o;
	struct expr_error err;

	prof__expr_opts(p, ev, &o);
	o.want_int = want_int;
	*out = expr__compile(text, &o, &err);
	if (*out)
		return 0;
	if (errno == ENOMEM)
		return -ENOMEM;
	fprintf(stderr, "perfscope %s: %s %s on %s: %s\n", p->name, what, text, ev->name, err.msg);
	caret__print(stderr, "  ", NULL, text, err.pos > 0 ? err.pos : 0);
	if (err.unknown_name)
		expr_print_names(stderr, "  ", ev->spec->name, &o);
	return PROF_USAGE;
}

int prof__opt_expr(struct prof *p, struct prof_event *ev, const char *name, struct expr **out)
{
	char what[64];

	*out = NULL;
	for (const struct prof_opt *o = p->decl->opts; o && o->name; o++) {
		const char *text;

		if (o->type != PROF_OPT_EXPR || strcmp(o->name, name))
			continue;
		text = *(const char **)((char *)p->priv + o->offset);
		if (!text)
			return 0;
		if (o->short_name)
			snprintf(what, sizeof(what), "-%c", o->short_name);
		else
			snprintf(what, sizeof(what), "--%s", o->name);
		return prof__expr_compile(p, ev, what, text, true, out);
	}
	return -EINVAL;
}

int prof_expr__bind(struct prof *p, struct prof_event *ev, const struct psc_event_attr *in,
		    struct prof_attr_val *out)
{
	const struct prof_attr *decl = out->decl;
	struct expr_opts o;
	struct expr_error err;

	prof__expr_opts(p, ev, &o);
	o.vars = decl->vars;
	o.want_int = !decl->any_type;
	out->expr = expr__compile(in->value, &o, &err);
	if (out->expr)
		return 0;
	if (errno == ENOMEM)
		return -ENOMEM;
	fprintf(stderr, "perfscope %s: %s=%s: %s\n", p->name, decl->name, in->value, err.msg);
	prof_events_caret(p, in->value_pos + (err.pos > 0 ? err.pos : 0));
	if (err.unknown_name)
		expr_print_names(stderr, "  ", ev->spec->name, &o);
	return PROF_USAGE;
}

int prof_expr__filter(struct prof *p, struct prof_event *ev, const struct psc_parse_error *perr)
{
	const char *filter = ev->spec->filter;
	struct expr_opts o;
	struct expr_error err;

	prof__expr_opts(p, ev, &o);
	o.want_int = true;
	/* counting happens in the kernel: a filter there is the kernel's or none */
	if (p->decl->needs & PROF_RINGS)
		ev->filter = expr__compile(filter, &o, &err);
	if (ev->filter) {
		if (!p->opts.quiet)
			fprintf(stderr,
				"perfscope %s: the kernel refuses the filter on %s (%s); it runs in "
				"user space instead, on every event the kernel sends\n",
				p->name, ev->spec->name, perr->msg);
		return 0;
	}
	if (errno == ENOMEM)
		return -ENOMEM;
	fprintf(stderr, "perfscope %s: bad filter on %s: %s\n", p->name, ev->spec->name, perr->msg);
	caret__print(stderr, "  ", NULL, filter, perr->pos);
	if (!(p->decl->needs & PROF_RINGS)) {
		fprintf(stderr,
			"  (perfscope %s counts in the kernel, where only the kernel's filters "
			"run)\n",
			p->name);
		return PROF_USAGE;
	}
	fprintf(stderr, "  nor can it run in user space: %s\n", err.msg);
	caret__print(stderr, "  ", NULL, filter, err.pos);
	if (err.unknown_name)
		expr_print_names(stderr, "  ", ev->spec->name, &o);
	return PROF_USAGE;
}

bool prof_expr__pass(struct prof_event *ev, const struct psc_sample *s)
{
	struct expr_val v;

	ev->filter_seen++;
	if (expr__eval(ev->filter, s->raw.data, s->raw.size, s, &v)) {
		ev->filter_errors++;
		return false;
	}
	if (!v.i)
		ev->filter_dropped++;
	return v.i != 0;
}

void prof_expr__report(struct prof *p)
{
	for (int i = 0; i < p->nr_events; i++) {
		const struct prof_event *ev = &p->events_arr[i];
		int last;

		if (!ev->filter)
			continue;
		if (!p->opts.quiet)
			fprintf(stderr,
				"perfscope %s: %s: the user-space filter kept %llu of %llu events "
				"(%llu dropped)\n",
				p->name, ev->name,
				(unsigned long long)(ev->filter_seen - ev->filter_dropped -
						     ev->filter_errors),
				(unsigned long long)ev->filter_seen,
				(unsigned long long)ev->filter_dropped);
		if (ev->filter_errors) {
			expr__nr_errors(ev->filter, &last);
			fprintf(stderr,
				"perfscope %s: %s: %llu events dropped because the filter could not "
				"run on them: %s\n",
				p->name, ev->name, (unsigned long long)ev->filter_errors,
				last == -EDOM ? "a division by zero"
					      : "a field outside the record");
		}
	}
}

void prof_expr__free(struct prof *p)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct prof_event *ev = &p->events_arr[i];

		for (int k = 0; k < ev->nr_attrs; k++)
			expr__delete(ev->attrs[k].expr);
		expr__delete(ev->filter);
		ev->filter = NULL;
	}
	ksyms__delete(p->ksyms);
	p->ksyms = NULL;
}
