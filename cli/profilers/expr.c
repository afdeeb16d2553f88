/* perfscope expr: try an expression on live events, its type and its value for each one. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "caret.h"
#include "expr.h"
#include "profiler.h"

struct expr_prof {
	const char *text;
};

/* Per event: the expression compiled against its format. */
struct expr_ev {
	struct expr *e;
};

static int expr_check(struct prof *p, void *priv)
{
	struct expr_prof *x = priv;

	if (!p->opts.nr_positional)
		return prof_usage(p, "give the expression to try: perfscope expr -e EVENT 'EXPR' "
				     "(or 'help' for the event's fields)");
	if (p->opts.nr_positional > 1)
		return prof_usage(p,
				  "one expression, in quotes: '%s %s' is two arguments (a COMMAND "
				  "to run goes after --)",
				  p->opts.positional[0], p->opts.positional[1]);
	x->text = p->opts.positional[0];
	return prof__use_printer(p);
}

static int expr_event(struct prof *p, void *priv, struct prof_event *ev,
		      struct perf_event_attr *attr)
{
	struct expr_prof *x = priv;
	struct expr_ev *xe = ev->priv;
	struct expr_opts o;
	struct expr_error err;

	prof__expr_opts(p, ev, &o);
	/* perf-prof's 'help': the names an expression on this event may use */
	if (!strcmp(x->text, "help") && !(ev->fmt && psc_tp_format__field(ev->fmt, "help"))) {
		expr_print_names(stdout, "", ev->spec->name, &o);
		fflush(stdout);
		return ev->idx == p->nr_events - 1 ? 1 : 0;
	}
	xe->e = expr__compile(x->text, &o, &err);
	if (!xe->e) {
		if (errno == ENOMEM)
			return -ENOMEM;
		fprintf(stderr, "perfscope expr: %s%s%s\n", p->nr_events > 1 ? ev->spec->name : "",
			p->nr_events > 1 ? ": " : "", err.msg);
		caret__print(stderr, "  ", NULL, x->text, err.pos);
		if (err.unknown_name)
			expr_print_names(stderr, "  ", ev->spec->name, &o);
		return 2;
	}
	if (!p->opts.quiet)
		fprintf(stderr, "perfscope expr: %s on %s is %s %s\n", x->text, ev->spec->name,
			expr__type(xe->e).kind == EXPR_STR ? "a" : "of type",
			expr_type__name(expr__type(xe->e)));
	if (p->opts.verbose)
		expr__dump(xe->e, stderr);
	return 0;
}

static const char *run_error(int err)
{
	return err == -EDOM ? "division by zero" : "a field outside the record";
}

static int expr_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		       const struct psc_sample *s)
{
	struct expr_ev *xe = ev->priv;
	struct expr_type t = expr__type(xe->e);
	struct expr_val v;
	int err = expr__eval(xe->e, s->raw.data, s->raw.size, s, &v);
	char buf[64];

	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		prof__print_members(p, ev, cpu, s);
		JSON_KEY(&p->json, "type");
		json__str(&p->json, expr_type__name(t));
		if (err) {
			JSON_KEY(&p->json, "error");
			json__str(&p->json, run_error(err));
		} else {
			JSON_KEY(&p->json, "value");
			if (t.kind == EXPR_STR)
				json__strn(&p->json, v.s, v.len);
			else if (t.is_ptr)
				json__hex(&p->json, v.i);
			else if (t.is_signed)
				json__i64(&p->json, (int64_t)v.i);
			else
				json__u64(&p->json, v.i);
		}
		json__end_line(&p->json);
		return 0;
	}
	prof__print(p, ev, cpu, s);
	if (err) {
		out__printf(p->out, "result: error: %s\n", run_error(err));
	} else if (t.kind == EXPR_STR) {
		out__printf(p->out, "result: \"%.*s\" (string)\n", (int)v.len, v.s);
	} else {
		expr_val__snprint(t, &v, buf, sizeof(buf));
		/* hex beside the number, as perf-prof shows results */
		if (t.is_ptr)
			out__printf(p->out, "result: %s (%s)\n", buf, expr_type__name(t));
		else
			out__printf(p->out, "result: %s 0x%llx (%s)\n", buf,
				    (unsigned long long)v.i, expr_type__name(t));
	}
	return 0;
}

static int expr_report(struct prof *p, void *priv)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct expr_ev *xe = p->events_arr[i].priv;
		int last;
		uint64_t n = xe && xe->e ? expr__nr_errors(xe->e, &last) : 0;

		if (n)
			fprintf(stderr,
				"perfscope expr: %s: %llu events where it could not run (%s)\n",
				p->events_arr[i].name, (unsigned long long)n, run_error(last));
	}
	return 0;
}

static void expr_teardown(struct prof *p, void *priv)
{
	for (int i = 0; i < p->nr_events; i++) {
		struct expr_ev *xe = p->events_arr[i].priv;

		if (!xe)
			continue;
		expr__delete(xe->e);
		xe->e = NULL;
	}
}

const struct profiler profiler_expr = {
	.name = "expr",
	.summary = "try an expression on events: its type, and its value for each event",
	.usage = "-e EVENT [-C CPUS] [-p PID | -t TID] [-N N] [-v] [--format text|json] "
		 "[-o FILE]\n"
		 "                       'EXPR' [-- COMMAND ARGS...]",
	.description =
		"Compiles EXPR against each event's format, says its type, and prints every event\n"
		"with the value EXPR has on it, so that an expression can be tried before it goes into\n"
		"key=, top-by=, num=, comm=, printkey= or a filter. EXPR is C: its operators and their\n"
		"precedence on 64-bit integers (fields signed or unsigned as the format says), strings\n"
		"compared with == and != and matched with ~ \"glob*\", casts, field[i] on arrays,\n"
		"pointers into the event as perf-prof writes them ((unsigned int *)comm + 2, &pid,\n"
		"*p: a pointer is its offset in the record, read inside it only); names\n"
		"are the event's fields (common_* too), _cpu, _pid, _tid, _time and _period; functions\n"
		"ksymbol(addr), syscall_name(id), comm_get(pid), printf(fmt, ...), ntohl(x), ntohs(x);\n"
		"numbers may carry a time unit (10ms = 10000000). 'help' as EXPR lists the names.\n"
		"perfscope-expr(1) describes the language.",
	.events_help = "the events to evaluate EXPR on (tracepoints have fields; any event\n"
		       "has _cpu, _pid, _tid, _time, _period), with /filter/ if wanted",
	.notes =
		"Each event prints as trace prints it, then 'result: VALUE (TYPE)' (integers also\n"
		"in hex); with --format json, trace's object with \"type\" and \"value\" (or\n"
		"\"error\") added. A record EXPR cannot run on (a field outside it, a division by\n"
		"zero) says so, and the count is given at the end. -v prints the bytecode.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N events, or when COMMAND or the -p\n"
		"process exits. Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on\n"
		"a runtime failure, 2 on a usage error (an expression that does not compile).",
	.examples =
		"expr -e sched:sched_wakeup help\n"
		"expr -e sched:sched_switch 'prev_pid + 1' -N 3\n"
		"expr -e 'kmem:mm_page_alloc/order>0/' '1<<order' -v\n"
		"expr -e sched:sched_wakeup 'comm ~ \"*sh\"' -N 5\n"
		"expr -e sched:sched_switch 'prev_comm ~ \"systemd*\" || next_comm ~ \"systemd*\"'\n"
		"expr -e raw_syscalls:sys_enter 'syscall_name(id)' -- ls\n"
		"expr -e sched:sched_wakeup 'printf(\"%s/%d on %d\", comm, pid, _cpu)' -N 3\n"
		"expr -e sched:sched_wakeup '*(unsigned int *)&pid' -N 3\n"
		"expr -e sched:sched_wakeup '(unsigned int *)comm + 2' -N 3",
	.shared_opts = CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_DURATION |
		       CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT | CLI_OPT_ORDER |
		       CLI_OPT_EXIT_N | CLI_OPT_QUIET | CLI_OPT_POSITIONAL,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT,
	.conformance_args = "-e sched:sched_switch prev_pid",
	.priv_size = sizeof(struct expr_prof),
	.ev_priv_size = sizeof(struct expr_ev),
	.check = expr_check,
	.event = expr_event,
	.sample = expr_sample,
	.report = expr_report,
	.teardown = expr_teardown,
};
