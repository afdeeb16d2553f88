/* prof_print: the one event printer a profiler's events are printed with (prof__use_printer). */
#include <errno.h>
#include <stdlib.h>

#include "evprint.h"
#include "prof_internal.h"

int prof__use_printer(struct prof *p)
{
	struct prof_state *st = p->state;

	if (st->ep)
		return 0;
	st->ep = evprint__new(NULL);
	return st->ep ? 0 : -errno;
}

struct evprint *prof__printer(struct prof *p)
{
	return p->state->ep;
}

int prof_print__event(struct prof *p, struct prof_event *ev)
{
	struct prof_state *st = p->state;
	int err;

	if (!st->ep)
		return 0;
	ev->print = calloc(1, sizeof(*ev->print));
	if (!ev->print)
		return -ENOMEM;
	err = evprint_event__init(ev->print, st->ep, ev->name ? ev->name : ev->spec->name, ev->fmt);
	if (err) {
		free(ev->print);
		ev->print = NULL;
	}
	return err;
}

void prof__print(struct prof *p, const struct prof_event *ev, int cpu, const struct psc_sample *s)
{
	struct prof_state *st = p->state;
	const char *comm = prof__comm(p, s->pid, s->tid);

	if (p->json_fmt)
		evprint__json(st->ep, p->out, ev->print, cpu, comm, s);
	else
		evprint__text(st->ep, p->out, ev->print, cpu, comm, s);
}

void prof__print_line(struct prof *p, const struct prof_event *ev, int cpu,
		      const struct psc_sample *s)
{
	evprint__text_line(p->state->ep, p->out, ev->print, cpu, prof__comm(p, s->pid, s->tid), s);
}

void prof__print_members(struct prof *p, const struct prof_event *ev, int cpu,
			 const struct psc_sample *s)
{
	evprint__json_members(p->state->ep, &p->json, ev->print, cpu,
			      prof__comm(p, s->pid, s->tid), s);
}
