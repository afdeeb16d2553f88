/* prof_report: the end of a run: losses, drops, folded stacks and the output's fate, said. */
#include <signal.h>

#include "prof_internal.h"
#include "session.h"

/* ---- the end ---- */

uint64_t prof_total_lost(const struct prof *p)
{
	struct session_stats st;

	session__stats(p->session, &st);
	return st.lost + st.lost_records * !st.lost;
}

uint64_t prof__kernel_dropped(const struct prof *p)
{
	struct session_stats st;

	if (!p->session)
		return 0;
	session__stats(p->session, &st);
	return st.kernel_dropped;
}

void prof__json_end_counts(struct prof *p, bool final)
{
	if (final) {
		JSON_KEY(&p->json, "kernel_dropped");
		json__u64(&p->json, prof__kernel_dropped(p));
		JSON_KEY(&p->json, "final");
		json__bool(&p->json, true);
	}
	json__end_line(&p->json);
}

/* --flame-graph: the folded stacks into FILE.folded. 1 when they could not be written. */
int prof_write_flame(struct prof *p)
{
	struct prof_state *st = p->state;
	int err;

	if (!st->flame || !st->flame_file)
		return 0;
	err = prof__flame_write(p, st->flame, st->flame_file, st->flame_path, "samples");
	st->flame_file = NULL; /* closed */
	if (!err && p->flame_dropped)
		fprintf(stderr, "perfscope %s: %llu stacks left out of %s: out of memory\n",
			p->name, (unsigned long long)p->flame_dropped, st->flame_path);
	return err;
}

/* Events dropped because the output queue and the raw backlog were full: by event, with why. */
static void report_dropped(struct prof *p)
{
	uint64_t max = prof_defer_queue_bytes(p);
	int i;

	if (p->out_unwritten)
		fprintf(stderr,
			"perfscope %s: %llu events that waited raw for the reader were not written\n",
			p->name, (unsigned long long)p->out_unwritten);
	if (!p->out_dropped)
		return;
	for (i = 0; i < p->nr_events; i++)
		if (p->events_arr[i].out_dropped)
			fprintf(stderr,
				"perfscope %s: %s: %llu events dropped: the output queue was full "
				"(%llu MiB waiting for %s to read); raise it with --output-queue MIB\n",
				p->name, p->events_arr[i].name,
				(unsigned long long)p->events_arr[i].out_dropped,
				(unsigned long long)(max >> 20),
				p->out->name ? p->out->name : "the output");
}

void prof_report_stats(struct prof *p)
{
	if (!(p->decl->needs & PROF_RINGS))
		return;
	if (!p->opts.quiet || prof_total_lost(p) || prof__kernel_dropped(p))
		session__say_stats(p->session, false);
	prof_expr__report(p);
	if (p->state->perfeval)
		prof_perfeval__report(p, true);
	if (p->limited)
		fprintf(stderr,
			"perfscope %s: %llu events dropped by --sampling-limit %lu (per second and "
			"CPU)\n",
			p->name, (unsigned long long)p->limited, p->opts.sampling_limit);
	if (p->state->cc)
		callchain__say_unwind(p->state->cc, p->opts.quiet);
	if (p->state->cc && p->opts.verbose)
		callchain__say_stats(p->state->cc);
	report_dropped(p);
	if (p->opts.verbose)
		out__say_stats(p->out, prof__say(p));
	if (p->opts.verbose && p->state->backlog && rawq__peak(p->state->backlog))
		fprintf(stderr,
			"perfscope %s: output: events waited raw for the reader: at most %.1f MiB, "
			"%llu events (bound %.1f MiB)\n",
			p->name, (double)rawq__peak(p->state->backlog) / (1 << 20),
			(unsigned long long)rawq__peak_count(p->state->backlog),
			(double)rawq__max(p->state->backlog) / (1 << 20));
}

/* What happened to the output, on stderr; 1 when the results were not written. */
int prof_report_output(struct prof *p)
{
	int err = out__error(p->out);
	const char *to = p->out->name;

	if (!err)
		return 0;
	if (err == -EPIPE) {
		fprintf(stderr, "perfscope %s: %s was closed; stopped\n", p->name, to);
		return 0; /* a reader that left (| head) is no failure */
	}
	if (err == -EINTR) {
		fprintf(stderr,
			"perfscope %s: stopped while %s was not being read; %llu bytes of output "
			"were not written\n",
			p->name, to, (unsigned long long)p->out->dropped);
		/* streamed events are shown as they come; a report at the end is the result */
		return p->decl->report ? 1 : 0;
	}
	fprintf(stderr, "perfscope %s: writing to %s failed: %s; stopped\n", p->name, to,
		strerror(-err));
	return 1;
}

/* A command killed by the stop signals (Ctrl-C reaches the whole process group): no more runs. */
bool prof_stopped_by_user(const struct prof *p)
{
	int code = session__command_exit(p->session);

	return session__end(p->session) != SESSION_COMMAND || code == 128 + SIGINT ||
	       code == 128 + SIGTERM;
}

/*
 * One run of the session, and the report after the last one. *again: the profiler asked for
 * more runs (p->repeat) and this one ended as a run should (its command exited by itself).
 */
