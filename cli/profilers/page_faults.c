/* perfscope page-faults: each page fault with its address, the instruction and (-g) the stack. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "callchain.h"
#include "json.h"
#include "ksyms.h"
#include "profiler.h"
#include "stack.h"

/* The faulting instruction by name: "main+0xf4 (workload)", or its address when unknown. */
static void ip_name(struct prof *p, const struct psc_sample *s, char *buf, size_t len,
		    struct frame *f)
{
	struct callchain *cc = prof__callchain(p);
	bool kernel = ksyms__is_kernel_addr(s->ip);

	if (cc && !callchain__frame(cc, (pid_t)s->pid, s->ip, kernel, false, f) && f->sym) {
		snprintf(buf, len, "%s+0x%llx (%s)", f->sym, (unsigned long long)f->off,
			 f->dso ? f->dso : "?");
		return;
	}
	f->sym = NULL;
	snprintf(buf, len, "0x%llx", (unsigned long long)s->ip);
}

/* the event printer writes a fault's JSON members, and its stack */
static int pf_check(struct prof *p, void *priv)
{
	return prof__use_printer(p);
}

static int pf_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		     const struct psc_sample *s)
{
	char name[512];
	struct frame f = { 0 };

	ip_name(p, s, name, sizeof(name), &f);
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		prof__print_members(p, ev, cpu, s);
		json__key(&p->json, "ip_sym");
		if (f.sym)
			json__str(&p->json, name);
		else
			json__null(&p->json);
		json__end_line(&p->json);
		return 0;
	}
	out__printf(p->out, "%16s %7u/%u [%03d] %llu.%06u: page-fault: addr %016llx ip %s\n",
		    prof__comm(p, s->pid, s->tid), s->pid, s->tid, cpu,
		    (unsigned long long)(s->time / 1000000000ull),
		    (unsigned int)(s->time % 1000000000ull / 1000), (unsigned long long)s->addr,
		    name);
	prof__stack_text(p, s);
	return 0;
}

/*
 * page-faults as an event source in another profiler's -e (perf-prof's ...,page-faults//ATTR/):
 * its samples are the software event page-faults', so -g becomes the stack ATTR. A filter in
 * the options' place (page-faults/pid==1/) is left to the event parser, which says why not.
 */
static int pf_as_event(const char *opts, char *buf, size_t len, char *why, size_t why_len)
{
	char copy[512], *save = NULL, *tok;
	const char *mods = "";
	bool stack = false, xuser = false, xkernel = false;
	int n;

	if (*opts && *opts != '-') {
		n = snprintf(buf, len, "page-faults/%s/", opts);
		return n < 0 || (size_t)n >= len ? -1 : 0;
	}
	snprintf(copy, sizeof(copy), "%s", opts);
	for (tok = strtok_r(copy, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (!strcmp(tok, "-g")) {
			stack = true;
		} else if (!strcmp(tok, "--call-graph")) {
			tok = strtok_r(NULL, " \t", &save);
			if (!tok || strcmp(tok, "fp")) {
				snprintf(why, why_len,
					 "--call-graph: only fp can be an event's stack here");
				return -1;
			}
			stack = true;
		} else if (!strcmp(tok, "--exclude-user")) {
			xuser = true;
		} else if (!strcmp(tok, "--exclude-kernel")) {
			xkernel = true;
		} else {
			snprintf(why, why_len,
				 "option '%s' cannot be expressed as an event (its faults join this "
				 "profiler's stream: -N, -C, -p are this profiler's own options); only "
				 "-g, --call-graph fp, --exclude-user, --exclude-kernel here",
				 tok);
			return -1;
		}
	}
	if (xuser && xkernel) {
		snprintf(why, why_len, "--exclude-user and --exclude-kernel leave no fault");
		return -1;
	}
	if (xuser)
		mods = ":k";
	else if (xkernel)
		mods = ":u";
	n = snprintf(buf, len, "page-faults//%s%s", stack ? "stack/" : "", mods);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

const struct profiler profiler_page_faults = {
	.name = "page-faults",
	.summary = "each page fault: the address, the faulting instruction and (-g) its stack",
	.usage = "[-C CPUS] [-p PID | -t TID] [-g] [--flame-graph FILE] [--duration S]\n"
		 "                       [--format text|json] [-o FILE] [-- COMMAND ARGS...]",
	.description =
		"perf-prof's page-faults: the software event page-faults sampled at every fault, with\n"
		"the faulting address (PERF_SAMPLE_ADDR) and instruction. Each fault is a line: time,\n"
		"comm pid/tid [cpu], the address, and the instruction by name (main+0xf4 (workload);\n"
		"kernel ones too: a fault in copy_to_user is the kernel touching a user page), and\n"
		"with -g its stack, kernel and user (--call-graph dwarf for programs without frame\n"
		"pointers). --flame-graph FILE folds the stacks, weighted by faults. The count of\n"
		"faults seen and lost goes to standard error at each -i and at exit.\n"
		"In another profiler's -e list, page-faults/OPTS/ATTR.../ is the software event\n"
		"page-faults (-g: its stack ATTR), as perf-prof's page-faults//ATTR/ is: e.g.\n"
		"multi-trace -e 'sched:sched_wakeup//key=pid/,page-faults//key=_tid/' ...",
	.notes =
		"--format json: one object per fault {\"time\", \"cpu\", \"pid\", \"tid\", \"comm\",\n"
		"\"event\", \"ip\", \"addr\", \"period\", \"ip_sym\" (null when unknown), \"stack\"}.\n"
		"perf-prof also prints the user registers at the fault; the stack says more and is\n"
		"what perfscope gives.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, after -N faults, or when COMMAND or the -p\n"
		"process exits. Exit status: COMMAND's when it ends, 0 after another clean stop, 1 on\n"
		"a runtime failure, 2 on a usage error.",
	.examples = "page-faults -g -- ./a.out\n"
		    "page-faults -p 1234 -g --duration 1\n"
		    "page-faults -C 0 -g --duration 1\n"
		    "page-faults --format json -N 10 -- ls /\n"
		    "page-faults -g --flame-graph faults -- ls /",
	.shared_opts = (CLI_OPTS_EVENT_RUN & ~CLI_OPT_EVENTS) | CLI_OPT_CALLCHAIN | CLI_OPT_FLAME |
		       CLI_OPT_SAMPLING_LIMIT | CLI_OPT_OUTPUT_QUEUE,
	.needs = PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_STACKS | PROF_SYMBOLS,
	.default_groups = (const char *const[]){ "page-faults", NULL },
	.conformance_args = "-C 0",
	.check = pf_check,
	.sample = pf_sample,
	.as_event = pf_as_event,
};
