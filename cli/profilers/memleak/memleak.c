/* perfscope memleak: a process's heap allocations never freed, by user stack (uprobes on libc). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <asm/perf_regs.h>
#endif
#include <unistd.h>

#include <perfscope/probe.h>

#include "memleak.h"

static const struct prof_opt ml_opts[] = {
	{ "libc", 0, "PATH", PROF_OPT_STRING, offsetof(struct ml, libc_opt), 0, 0, NULL,
	  "the C library to probe (default: the one the process maps, else libc.so.6 as ld.so\n"
	  "finds it; for a static binary, the binary itself)" },
	{ "mmap", 0, NULL, PROF_OPT_FLAG, offsetof(struct ml, mmap), 0, 0, NULL,
	  "count mmap and munmap too (a munmap of part of a mapping is not followed)" },
	{ "than", 0, "T", PROF_OPT_DURATION, offsetof(struct ml, than), 0, 0, NULL,
	  "only allocations older than T (s, ms, us, ns) when reported",
	  .given = PROF_OPT_GIVEN(struct ml, than_text) },
	{ "top", 0, "N", PROF_OPT_LONG, offsetof(struct ml, top), 1, 1000000, NULL,
	  "only the N stacks holding the most bytes (default: all)" },
	{ "max-pending", 0, "N", PROF_OPT_LONG, offsetof(struct ml, max_pending), 1, 1L << 30, NULL,
	  "live allocations followed at most (default 4194304); beyond, the oldest are\n"
	  "dropped and counted" },
	{ NULL },
};

/* The C library process pid maps, as a path this process can open. */
static int libc_of(pid_t pid, char *buf, size_t len)
{
	char path[64], line[PATH_MAX + 128];
	FILE *f;
	int ret = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *file = strchr(line, '/'), *base;

		if (!file)
			continue;
		file[strcspn(file, "\n")] = '\0';
		base = strrchr(file, '/') + 1;
		if (strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5))
			continue;
		/* a process in another mount namespace: its file through its root */
		if (access(file, F_OK))
			snprintf(buf, len, "/proc/%d/root%s", (int)pid, file);
		else
			snprintf(buf, len, "%s", file);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

struct have {
	bool found[ML_NR_FNS];
};

static int mark_fn(const char *name, uint64_t addr, uint64_t size, void *ctx)
{
	struct have *h = ctx;

	for (size_t i = 0; i < ML_NR_FNS; i++)
		if (!strcmp(name, ml_fns[i].name))
			h->found[i] = true;
	return 0;
}

static int ml_check(struct prof *p, void *priv)
{
	struct ml *ml = priv;
	struct have have = { 0 };
	size_t len = 0, cap = 8192;
	char self[48];
	int err;

	bool every = !p->opts.nr_pids && !p->opts.nr_tids && !p->opts.cgroup && !p->opts.command;

	if (ml->libc_opt)
		err = psc_probe__find_binary(ml->libc_opt, ml->libc, sizeof(ml->libc));
	else if (p->opts.nr_pids)
		err = libc_of(p->opts.pids[0], ml->libc, sizeof(ml->libc));
	else
		err = psc_probe__find_binary("libc.so.6", ml->libc, sizeof(ml->libc));
	if (err) {
		if (!ml->libc_opt && p->opts.nr_pids)
			fprintf(stderr,
				"perfscope memleak: process %d maps no C library (%s): statically "
				"linked? give --libc with the binary itself\n",
				(int)p->opts.pids[0], strerror(-err));
		else
			fprintf(stderr, "perfscope memleak: no C library '%s': %s\n",
				ml->libc_opt ? ml->libc_opt : "libc.so.6", strerror(-err));
		return ml->libc_opt ? 2 : 1;
	}
	err = psc_probe__for_each_func(ml->libc, mark_fn, &have);
	if (err) {
		fprintf(stderr, "perfscope memleak: cannot read the functions of %s: %s\n",
			ml->libc, strerror(-err));
		return 1;
	}
	if (!have.found[0] || !have.found[4]) {
		fprintf(stderr, "perfscope memleak: %s has no malloc or free: not a C library\n",
			ml->libc);
		return 2;
	}
	/* never itself: with every process followed, its own allocations would feed back */
	ml->self = getpid();
	snprintf(self, sizeof(self), "common_pid!=%d", (int)ml->self);
	ml->events = malloc(cap);
	if (!ml->events)
		return -ENOMEM;
	ml->events[0] = '\0';
	for (size_t i = 0; i < ML_NR_FNS; i++) {
		const struct ml_fn *f = &ml_fns[i];
		int n;

		if (!have.found[i] || (f->mmap && !ml->mmap))
			continue;
		/* the stack is taken at the entry; the return has the pointer */
		if (f->kind == ML_FREE)
			n = snprintf(ml->events + len, cap - len, "%suprobe:%s@\"%s\"/%s/",
				     len ? "," : "", f->name, ml->libc, self);
		else
			n = snprintf(ml->events + len, cap - len,
				     "%suprobe:%s@\"%s\"/%s/stack/,uretprobe:%s@\"%s\"/%s/",
				     len ? "," : "", f->name, ml->libc, self, f->name, ml->libc,
				     self);
		if (n < 0 || (size_t)n >= cap - len)
			return prof_usage(p, "the path of the C library is too long: %s", ml->libc);
		len += (size_t)n;
	}
	if ((err = prof__add_events(p, ml->events, NULL)))
		return err;
	if (every && !p->opts.quiet)
		fprintf(stderr,
			"perfscope memleak: following every process that uses %s (-p PID or -- "
			"COMMAND for one)\n",
			ml->libc);
	/* the user stack only: the kernel part is the uprobe's trap */
	if (p->opts.kernel_callchain < 0)
		p->opts.kernel_callchain = 0;
	ml->lk = leak__new(ml->max_pending ? (size_t)ml->max_pending : 4u << 20);
	if (!ml->lk || keymap__init(&ml->calls, sizeof(struct ml_call), 64))
		return -ENOMEM;
	return 0;
}

static int ml_event(struct prof *p, void *priv, struct prof_event *ev, struct perf_event_attr *a)
{
	struct ml_ev *me = ev->priv;
	const struct psc_probe_spec *pr = ev->spec->probe;
	static const char *const names[] = { NULL, "arg1", "arg2", "arg3" };

	me->fn = -1;
	if (!pr || !ev->fmt)
		return 0;
	for (size_t i = 0; i < ML_NR_FNS; i++)
		if (!strcmp(pr->func, ml_fns[i].name))
			me->fn = (int)i;
	me->ret = pr->retprobe;
	for (int i = 1; i <= 3; i++)
		me->arg[i] = psc_tp_format__field(ev->fmt, names[i]);
	me->retval = psc_tp_format__field(ev->fmt, "ret");
	me->caller = psc_tp_format__field(ev->fmt, "caller");
	/* the user stack only: callers of malloc are what the report is about */
	if (!me->ret)
		a->exclude_callchain_kernel = 1;
#if defined(__x86_64__)
	/*
	 * posix_memalign's block is written to *memptr, which no register holds at the return; it
	 * is mostly the caller's stack, so the return's sample carries the top of the user stack
	 * and sp, race-free (read from the process later, it may have exited).
	 */
	if (me->ret && me->fn >= 0 && ml_fns[me->fn].kind == ML_MEMALIGN_PTR) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = 1ull << PERF_REG_X86_SP;
		a->sample_stack_user = 4096;
	}
#endif
	return 0;
}

static int print_leaks(struct prof *p, struct ml *ml, bool final)
{
	struct leak_report r = { .now = ml->last_time,
				 .than = ml->than,
				 .than_text = ml->than_text,
				 .top = (size_t)ml->top,
				 .final = final,
				 .json = p->json_fmt,
				 /* known at the end of the run; 0 before */
				 .dropped = final ? prof__kernel_dropped(p) : 0 };

	return leak__report(ml->lk, p->out, &p->json, &r, NULL, NULL);
}

static int ml_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	return print_leaks(p, priv, false);
}

static int ml_report(struct prof *p, void *priv)
{
	struct ml *ml = priv;
	int err = print_leaks(p, ml, true);

	if (!p->opts.quiet) {
		leak__say_outcomes(ml->lk, prof__say(p));
		if (ml->unmatched_ret || ml->memptr_unread || ml->call_nomem)
			fprintf(stderr,
				"perfscope memleak: %llu returns without their call (nested or "
				"begun before the run), %llu posix_memalign results unread, %llu "
				"calls not followed (no memory)\n",
				(unsigned long long)ml->unmatched_ret,
				(unsigned long long)ml->memptr_unread,
				(unsigned long long)ml->call_nomem);
	}
	return err;
}

static void ml_teardown(struct prof *p, void *priv)
{
	struct ml *ml = priv;

	leak__delete(ml->lk);
	if (ml->calls.slots)
		keymap__exit(&ml->calls);
	free(ml->events);
}

const struct profiler profiler_memleak = {
	.name = "memleak",
	.summary = "a process's heap allocations never freed, by user stack (uprobes on libc)",
	.usage = "[OPTIONS] [-p PID | -- COMMAND [ARGS]]",
	.description =
		"Follows the C library's allocator functions of one process (without -p, -t, -G or\n"
		"a COMMAND: of every process using that library, a heavy load) through uprobes:\n"
		"malloc, calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign,\n"
		"valloc, pvalloc and free (mmap and munmap with --mmap). Each allocation's size and\n"
		"user stack come from the call, its address from the return; a free removes it.\n"
		"At the end (and at each -i) it prints what is still allocated, grouped by stack,\n"
		"with counts and bytes, most bytes first. Frees of memory allocated before the run\n"
		"and allocations at an address still live are counted; after lost events the\n"
		"allocations made before the loss are left out rather than reported as leaks (their\n"
		"free may be what was lost). The probes are made for the run and removed after.\n"
		"--format json gives one object per stack: {\"count\", \"bytes\", \"oldest_ns\",\n"
		"\"comm\", \"stack\": [frames, innermost first]}, then {\"summary\":true, \"final\",\n"
		"\"count\", \"bytes\", \"stacks\"}.",
	.notes =
		"A leak whose free may be an event the kernel dropped (counted, never written to the\n"
		"rings) is marked \"(may be freed: N events dropped by the kernel)\", JSON\n"
		"\"free_maybe_lost\": N.\n"
		"\n"
		"Stops on SIGINT/SIGTERM, at --duration, or when COMMAND or the -p process exits.\n"
		"Exit status: 0 after a clean stop (COMMAND's own when it ends), 1 on a runtime\n"
		"failure, 2 on a usage error.",
	.examples = "memleak -- ./myprog\n"
		    "memleak -p 1234 -i 10000 --than 5s --top 10\n"
		    "memleak --mmap --format json -- ./myprog | jq -c 'select(.bytes > 4096)'",
	.shared_opts = CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_CALLCHAIN | CLI_OPT_INTERVAL |
		       CLI_OPT_DURATION | CLI_OPT_MMAP | CLI_OPT_FORMAT | CLI_OPT_OUTPUT |
		       CLI_OPT_QUIET | CLI_OPT_USAGE_SELF,
	.opts = ml_opts,
	.needs = PROF_EVENTS | PROF_RINGS | PROF_ORDER | PROF_COMM | PROF_TP_FORMAT | PROF_STACKS |
		 PROF_SUMMARY,
	.conformance_args = "-i 200",
	.priv_size = sizeof(struct ml),
	.ev_priv_size = sizeof(struct ml_ev),
	.check = ml_check,
	.event = ml_event,
	.sample = ml_sample,
	.lost = ml_lost,
	.interval = ml_interval,
	.report = ml_report,
	.teardown = ml_teardown,
};
