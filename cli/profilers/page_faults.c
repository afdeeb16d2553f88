/* perfscope page-faults: each page fault with its address, the instruction and (-g) the stack. */
#include <stdio.h>

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
		"faults seen and lost goes to standard error at each -i and at exit.",
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
};
