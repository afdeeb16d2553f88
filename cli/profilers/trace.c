/* perfscope trace: print every event as it happens (tracepoints, software, sampled hardware). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <perfscope/perfscope.h>
#include <perfscope/record.h>
#include <perfscope/ring.h>
#include <perfscope/tp.h>

#include "ksyms.h"
#include "options.h"
#include "output.h"
#include "profiler.h"
#include "session.h"
#include "target.h"
#include "trace_stack.h"

static const char trace_help[] =
	"usage: perfscope trace -e EVENTS [-C CPUS] [-p PID | -t TID | -G CGROUP] [-g] [--no-order]\n"
	"                       [-m PAGES] [--duration S] [-i MS] [--format text|json] [-o FILE]\n"
	"                       [-- COMMAND ARGS...]\n"
	"\n"
	"Prints every event as it happens: time, CPU, comm/pid/tid, event name (or its alias), its\n"
	"fields through the kernel's own print format, and its stack with -g or /stack/. Events are\n"
	"filtered in the kernel and read from per-CPU ring buffers; nothing is written to disk.\n"
	"Standard output carries only the events (pipe it to jq, grep, wc -l); the count of events\n"
	"seen and lost per event goes to standard error each interval and at exit.\n"
	"\n"
	"  -e, --event EVENTS    what to trace: sys:name[/filter/ATTR/.../], wildcards (sched:sched_*),\n"
	"                        software events (page-faults, context-switches: every one;\n"
	"                        cpu-clock, task-clock: sampled at 1000 Hz unless period=/freq=),\n"
	"                        hardware events where the machine has them. The filter is the\n"
	"                        kernel's ftrace filter on the event's fields (a field it does not\n"
	"                        have is answered with the list of them; they are also in\n"
	"                        /sys/kernel/tracing/events/SYS/NAME/format).\n"
	"                        ATTRs: stack, max-stack=N, alias=NAME, period=N, freq=N.\n"
	"                        Repeatable: -e a -e b traces both\n"
	"  -C, --cpu CPUS        trace these CPUs only (default: all, system wide)\n"
	"  -p, --pid PID         trace the threads of a process; stops when it exits\n"
	"  -t, --tid TID         trace one thread; stops when it exits\n"
	"  -G, --cgroup CGROUP   trace tasks of a cgroup\n"
	"  -g, --call-graph      kernel and user stack of every event\n"
	"      --no-order        read each CPU's ring in turn: each CPU's events stay in order, CPUs\n"
	"                        interleave. By default events are merged in time order across CPUs\n"
	"                        (--order: a k-way merge, cheap), which also makes thread names and\n"
	"                        user symbols of new processes known before their events\n"
	"  -m, --mmap-pages N    ring buffer pages per CPU, a power of two (default: 1024 = 4 MiB\n"
	"                        as root, else what perf_event_mlock_kb allows: 128 on all CPUs)\n"
	"      --duration S      stop after S seconds\n"
	"  -i, --interval MS     print events seen and lost per event every MS milliseconds\n"
	"      --format F        text (default) or json: one object per event, fields typed\n"
	"  -o, --output FILE     write the events to FILE, not standard output (COMMAND keeps it)\n"
	"  -v, --verbose         library diagnostics on stderr (with stacks: symbolizer statistics)\n"
	"  -- COMMAND ARGS...    run COMMAND, trace it and its children, stop when it exits and\n"
	"                        exit with its status\n"
	"\n"
	"Stops on SIGINT/SIGTERM, at --duration, when COMMAND or the -p process exits, or when\n"
	"standard output is closed (e.g. '| head'). SIGUSR1 prints the counts so far.\n"
	"Lost events (the kernel found the ring full) are counted and reported per event and CPU:\n"
	"\"lost N events on cpu C\"; raise -m or filter more if you see them.\n"
	"\n"
	"Exit status: COMMAND's status when it exits by itself (127/126 when it cannot be run;\n"
	"128+N when killed by signal N); 0 after any other clean stop (a stopped COMMAND is sent\n"
	"SIGTERM); 1 on a runtime failure (including a failed write to standard output), 2 on a\n"
	"usage error.\n"
	"\n"
	"Examples:\n"
	"  perfscope trace -e sched:sched_switch -C 0 --duration 1\n"
	"  perfscope trace -e 'syscalls:sys_enter_openat//stack/' -- cat /etc/hostname\n"
	"  perfscope trace -e 'sched:sched_wakeup/pid==1/alias=wakeup1/' -p 1\n"
	"  perfscope trace -e 'syscalls:sys_enter_read/fd==0/' --format json | jq .fields.count\n"
	"  perfscope trace -e 'sched:sched_*' -i 1000 > /tmp/sched.txt\n"
	"  perfscope trace -e page-faults -g -- ./a.out\n";

/* What trace keeps per event (evsel priv). */
struct trace_event {
	const char *name; /* alias or canonical name */
	enum psc_event_kind kind;
	struct psc_tp_format *fmt; /* tracepoints */
	int nr_fields;
	const struct psc_tp_field **fields;
	/* --format json: the name as a JSON string and each field's "name": key, rendered once */
	char *json_name;
	size_t json_name_len;
	char **json_keys;
	size_t *json_key_lens;
};

/* tid -> comm: from COMM records, else /proc/TID/comm the first time a tid is seen. */
struct comm_slot {
	uint32_t tid; /* 0: empty (tid 0, the idle task, is handled apart) */
	char comm[16];
};

struct trace {
	struct cli_opts o;
	struct out *out;
	struct json json;
	bool json_fmt;
	struct comm_slot *comms;
	unsigned int comm_mask, nr_comms;
	char *pbuf; /* scratch for print fmt text */
	size_t pbuf_len;
	struct trace_stack *stack;
	struct ksyms *ksyms; /* for kernel functions in print formats, read at first need */
	bool ksyms_tried;
	uint64_t printed;
	int write_err;
};

static unsigned int tid_hash(uint32_t tid)
{
	return (tid * 2654435761u) >> 8;
}

static struct comm_slot *comm_slot(struct trace *t, uint32_t tid)
{
	unsigned int h;

	for (h = tid_hash(tid) & t->comm_mask;; h = (h + 1) & t->comm_mask)
		if (t->comms[h].tid == tid || !t->comms[h].tid)
			return &t->comms[h];
}

static int comm_grow(struct trace *t)
{
	struct comm_slot *old = t->comms;
	unsigned int i, n = old ? t->comm_mask + 1 : 0, size = n ? 2 * n : 1024;

	t->comms = calloc(size, sizeof(*t->comms));
	if (!t->comms) {
		t->comms = old;
		return -ENOMEM;
	}
	t->comm_mask = size - 1;
	for (i = 0; i < n; i++)
		if (old[i].tid)
			*comm_slot(t, old[i].tid) = old[i];
	free(old);
	return 0;
}

static void comm_set(struct trace *t, uint32_t tid, const char *comm, size_t len)
{
	struct comm_slot *c;

	if (!tid)
		return;
	if ((t->nr_comms + 1) * 2 > t->comm_mask + 1 && comm_grow(t))
		return;
	c = comm_slot(t, tid);
	if (!c->tid)
		t->nr_comms++;
	c->tid = tid;
	if (len > sizeof(c->comm) - 1)
		len = sizeof(c->comm) - 1;
	memcpy(c->comm, comm, len);
	c->comm[len] = 0;
}

static const char *comm_get(struct trace *t, uint32_t pid, uint32_t tid)
{
	struct comm_slot *c;
	char path[64], buf[32];
	ssize_t n;
	int fd;

	if (!tid)
		return "swapper";
	c = comm_slot(t, tid);
	if (c->tid)
		return c->comm;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		/* exited before we looked: remembered as unknown rather than retried per event */
		memcpy(buf, "<...>", 5);
		n = 5;
	} else if (buf[n - 1] == '\n') {
		n--;
	}
	comm_set(t, tid, buf, (size_t)n);
	c = comm_slot(t, tid);
	return c->tid ? c->comm : "<...>";
}

/* The threads of one process, named now (tid 0: every thread of pid). */
static void comm_preload_pid(struct trace *t, const char *pid)
{
	char path[64];
	struct dirent *d;
	DIR *task;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	task = opendir(path);
	if (!task)
		return;
	while ((d = readdir(task)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			comm_get(t, (uint32_t)atoi(pid), (uint32_t)atoi(d->d_name));
	closedir(task);
}

/*
 * Threads that exist before the trace starts are named from /proc now, as perf record does: one
 * that exits during the trace is gone from /proc by the time its last events (its exit, say)
 * are printed, and would show as <...>. Threads started later are named by COMM and FORK
 * records; a launched command by its exec.
 */
static void comm_preload(struct trace *t, const struct target *tg)
{
	char pid[16];
	struct dirent *d;
	DIR *proc;

	if (tg->has_command)
		return;
	if (t->o.tid) {
		comm_get(t, (uint32_t)t->o.tid, (uint32_t)t->o.tid);
		return;
	}
	if (t->o.pid) {
		snprintf(pid, sizeof(pid), "%d", (int)t->o.pid);
		comm_preload_pid(t, pid);
		return;
	}
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((d = readdir(proc)))
		if (d->d_name[0] >= '1' && d->d_name[0] <= '9')
			comm_preload_pid(t, d->d_name);
	closedir(proc);
}

/* ---- output of one event ---- */

static void text_tp(struct trace *t, struct trace_event *ev, const struct psc_sample *s)
{
	int n = psc_tp_format__print(ev->fmt, s->raw.data, s->raw.size, t->pbuf, t->pbuf_len);

	if (n >= 0 && (size_t)n >= t->pbuf_len) {
		char *nb = realloc(t->pbuf, (size_t)n + 1);

		if (nb) {
			t->pbuf = nb;
			t->pbuf_len = (size_t)n + 1;
			n = psc_tp_format__print(ev->fmt, s->raw.data, s->raw.size, t->pbuf,
						 t->pbuf_len);
		}
	}
	if (n < 0) {
		out__printf(t->out, "<undecodable: %s>", strerror(-n));
		return;
	}
	out__write(t->out, t->pbuf, strnlen(t->pbuf, t->pbuf_len));
}

static void text_other(struct trace *t, const struct psc_sample *s)
{
	if (s->sample_type & PERF_SAMPLE_IP) {
		out__puts(t->out, "ip=");
		out__hex(t->out, s->ip);
	}
	if (s->sample_type & PERF_SAMPLE_ADDR) {
		out__puts(t->out, " addr=");
		out__hex(t->out, s->addr);
	}
	if (s->sample_type & PERF_SAMPLE_PERIOD) {
		out__puts(t->out, " period=");
		out__u64(t->out, s->period);
	}
}

static void print_text(struct trace *t, struct trace_event *ev, int cpu, const struct psc_sample *s)
{
	struct out *o = t->out;
	const char *comm = comm_get(t, s->pid, s->tid);
	size_t len = strlen(comm);
	char us[8];

	for (; len < 16; len++)
		out__putc(o, ' ');
	out__puts(o, comm);
	out__putc(o, ' ');
	out__u64_width(o, s->pid, 7);
	out__putc(o, '/');
	out__u64(o, s->tid);
	out__puts(o, " [");
	snprintf(us, sizeof(us), "%03d", cpu);
	out__puts(o, us);
	out__puts(o, "] ");
	out__u64(o, s->time / 1000000000ull);
	snprintf(us, sizeof(us), ".%06u", (unsigned int)(s->time % 1000000000ull / 1000));
	out__puts(o, us);
	out__puts(o, ": ");
	out__puts(o, ev->name);
	out__puts(o, ": ");
	if (ev->fmt)
		text_tp(t, ev, s);
	else
		text_other(t, s);
	out__putc(o, '\n');
	if (t->stack && (s->sample_type & PERF_SAMPLE_CALLCHAIN))
		trace_stack__text(t->stack, o, s);
}

static void json_field(struct json *j, const struct trace_event *ev, int idx,
		       const struct psc_sample *s)
{
	const struct psc_tp_field *f = ev->fields[idx];
	uint32_t len, i, nr;
	const char *str;
	uint64_t v;

	json__raw_key(j, ev->json_keys[idx], ev->json_key_lens[idx]);
	switch (f->kind) {
	case PSC_TP_KIND_STRING:
		str = psc_tp_field__str(f, s->raw.data, s->raw.size, &len);
		if (str)
			json__strn(j, str, len);
		else
			json__null(j);
		return;
	case PSC_TP_KIND_ARRAY:
		nr = psc_tp_field__count(f, s->raw.data, s->raw.size);
		json__arr(j);
		for (i = 0; i < nr; i++) {
			if (psc_tp_field__elem(f, s->raw.data, s->raw.size, i, &v))
				break;
			if (f->is_signed)
				json__i64(j, (int64_t)v);
			else
				json__u64(j, v);
		}
		json__end(j);
		return;
	default:
		if (psc_tp_field__u64(f, s->raw.data, s->raw.size, &v)) {
			json__null(j);
		} else if (f->kind == PSC_TP_KIND_POINTER) {
			json__hex(j, v);
		} else if (f->kind == PSC_TP_KIND_SIGNED) {
			json__i64(j, (int64_t)v);
		} else {
			json__u64(j, v);
		}
	}
}

static void print_json(struct trace *t, struct trace_event *ev, int cpu, const struct psc_sample *s)
{
	struct json *j = &t->json;
	int i;

	json__begin(j, t->out);
	JSON_KEY(j, "time");
	json__u64(j, s->time);
	JSON_KEY(j, "cpu");
	json__i64(j, cpu);
	JSON_KEY(j, "pid");
	json__u64(j, s->pid);
	JSON_KEY(j, "tid");
	json__u64(j, s->tid);
	JSON_KEY(j, "comm");
	json__str(j, comm_get(t, s->pid, s->tid));
	JSON_KEY(j, "event");
	json__raw(j, ev->json_name, ev->json_name_len);
	if (!ev->fmt) {
		if (s->sample_type & PERF_SAMPLE_IP) {
			JSON_KEY(j, "ip");
			json__hex(j, s->ip);
		}
		if (s->sample_type & PERF_SAMPLE_ADDR) {
			JSON_KEY(j, "addr");
			json__hex(j, s->addr);
		}
		if (s->sample_type & PERF_SAMPLE_PERIOD) {
			JSON_KEY(j, "period");
			json__u64(j, s->period);
		}
	} else {
		JSON_KEY(j, "fields");
		json__obj(j);
		for (i = 0; i < ev->nr_fields; i++)
			json_field(j, ev, i, s);
		json__end(j);
	}
	if (t->stack && (s->sample_type & PERF_SAMPLE_CALLCHAIN)) {
		JSON_KEY(j, "stack");
		trace_stack__json(t->stack, j, s);
	}
	json__end_line(j);
}

/* ---- session hooks ---- */

static int on_sample(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	struct trace *t = ctx;
	struct trace_event *ev = evsel ? psc_evsel__priv(evsel) : NULL;

	if (!ev)
		return 0; /* counted by the session as seen; cannot be printed without its event */
	if (cpu < 0 && (rec->sample.sample_type & PERF_SAMPLE_CPU))
		cpu = (int)rec->sample.cpu;
	if (t->json_fmt)
		print_json(t, ev, cpu, &rec->sample);
	else
		print_text(t, ev, cpu, &rec->sample);
	t->printed++;
	return out__error(t->out) ? 1 : 0;
}

static int on_record(void *ctx, struct psc_evsel *evsel, int cpu, const struct psc_record *rec)
{
	struct trace *t = ctx;

	if (rec->type == PERF_RECORD_COMM) {
		comm_set(t, rec->comm.tid, rec->comm.comm, strlen(rec->comm.comm));
	} else if (rec->type == PERF_RECORD_FORK && rec->fork.tid && rec->fork.ptid) {
		/* A child is named as its parent until it execs; it may be gone before we look. */
		struct comm_slot *parent = comm_slot(t, rec->fork.ptid);

		if (parent->tid)
			comm_set(t, rec->fork.tid, parent->comm, strlen(parent->comm));
	}
	if (t->stack)
		trace_stack__record(t->stack, rec);
	return 0;
}

static int on_round_end(void *ctx)
{
	struct trace *t = ctx;

	if (t->stack)
		trace_stack__round_end(t->stack);
	return out__flush(t->out) ? 1 : 0;
}

/* ---- setup ---- */

/*
 * Kernel functions in a print format (a timer's function, a kmalloc call site) are named as perf
 * script names them; kallsyms is read only once one is printed. Hidden kernel addresses
 * (kptr_restrict) leave an empty table: the addresses are printed bare.
 */
static const char *trace_ksym(void *priv, uint64_t addr, uint64_t *start)
{
	struct trace *t = priv;
	const struct ksym *sym;
	uint64_t off;

	if (!t->ksyms_tried) {
		t->ksyms_tried = true;
		t->ksyms = ksyms__load(NULL);
	}
	if (!t->ksyms || !(sym = ksyms__find(t->ksyms, addr, &off)))
		return NULL;
	*start = sym->addr;
	return sym->name;
}

static void free_events(struct psc_evlist *evlist)
{
	struct psc_evsel *evsel;
	int i;

	if (!evlist)
		return;
	psc_evlist__for_each(evlist, i, evsel)
	{
		struct trace_event *ev = psc_evsel__priv(evsel);

		if (ev) {
			psc_tp_format__delete(ev->fmt);
			free(ev->fields);
			free(ev->json_name);
			for (int k = 0; ev->json_keys && k < ev->nr_fields; k++)
				free(ev->json_keys[k]);
			free(ev->json_keys);
			free(ev->json_key_lens);
			free(ev);
		}
		psc_evsel__set_priv(evsel, NULL);
	}
}

/* The event's JSON name and field keys, so that no event escapes the same text again. */
static int render_json(struct trace_event *ev)
{
	int i;

	ev->json_name = json_render(ev->name, false, &ev->json_name_len);
	ev->json_keys = calloc(ev->nr_fields > 0 ? ev->nr_fields : 1, sizeof(*ev->json_keys));
	ev->json_key_lens =
		calloc(ev->nr_fields > 0 ? ev->nr_fields : 1, sizeof(*ev->json_key_lens));
	if (!ev->json_name || !ev->json_keys || !ev->json_key_lens)
		return -ENOMEM;
	for (i = 0; i < ev->nr_fields; i++) {
		ev->json_keys[i] =
			json_render(ev->fields[i]->name, true, &ev->json_key_lens[i]);
		if (!ev->json_keys[i])
			return -ENOMEM;
	}
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

static int add_event(struct trace *t, struct psc_evlist *evlist, const struct psc_event_spec *spec,
		     const char *events)
{
	struct psc_parse_error perr = { .pos = -1 };
	struct trace_event *ev;
	struct psc_evsel *evsel;
	struct perf_event_attr *a;
	int i;

	if (spec->filter && spec->kind != PSC_EVENT_TRACEPOINT) {
		fprintf(stderr,
			"perfscope trace: '%s' is not a tracepoint and cannot take a filter; filters "
			"are the kernel's ftrace filters on tracepoint fields (sys:name/filter/)\n",
			spec->name);
		return 2;
	}
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	ev->kind = spec->kind;
	if (spec->kind == PSC_EVENT_TRACEPOINT) {
		ev->fmt = psc_tp_format__load(spec->sys, spec->event);
		if (!ev->fmt) {
			fprintf(stderr, "perfscope trace: cannot read the format of %s: %s\n",
				spec->name, strerror(errno));
			free(ev);
			return 1;
		}
		/* the user-space check, then the kernel's on a scratch event: a refused filter is
		 * a usage error pointing at its part, not a failed open */
		if (spec->filter &&
		    psc_tp__verify_filter(ev->fmt, spec->filter, &perr) == -EINVAL) {
			fprintf(stderr, "perfscope trace: bad filter on %s: %s\n", spec->name,
				perr.msg);
			if (perr.pos >= 0)
				fprintf(stderr, "  %s\n  %*s^\n", spec->filter, perr.pos, "");
			psc_tp_format__delete(ev->fmt);
			free(ev);
			return 2;
		}
		ev->nr_fields = psc_tp_format__nr_fields(ev->fmt);
		ev->fields = calloc(ev->nr_fields > 0 ? ev->nr_fields : 1, sizeof(*ev->fields));
		if (!ev->fields) {
			psc_tp_format__delete(ev->fmt);
			free(ev);
			return -ENOMEM;
		}
		for (i = 0; i < ev->nr_fields; i++)
			ev->fields[i] = psc_tp_format__field_at(ev->fmt, i);
		if (psc_tp_format__set_ksym_resolver(ev->fmt, trace_ksym, t)) {
			psc_tp_format__delete(ev->fmt);
			free(ev->fields);
			free(ev);
			return -ENOMEM;
		}
	}
	evsel = psc_evsel__new_spec(spec);
	if (!evsel || psc_evlist__add(evlist, evsel)) {
		psc_evsel__delete(evsel);
		psc_tp_format__delete(ev->fmt);
		free(ev->fields);
		free(ev);
		return -ENOMEM;
	}
	psc_evsel__set_priv(evsel, ev);
	ev->name = psc_evsel__name(evsel);
	if (t->json_fmt && render_json(ev))
		return -ENOMEM; /* ev is the evsel's now: freed with the evlist */
	a = psc_evsel__attr_mut(evsel);
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
	if (t->o.callchain || spec->stack) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN;
		if (spec->max_stack > 0)
			a->sample_max_stack = (uint16_t)spec->max_stack;
	}
	(void)events;
	return 0;
}

/* Streaming needs per-CPU rings: inherited per-thread events cannot be mmapped. */
static int per_cpu_maps(struct target *tg)
{
	struct psc_cpumap *online;

	if (psc_cpumap__cpu(tg->cpus, 0) >= 0)
		return 0;
	online = psc_cpumap__new_online();
	if (!online)
		return -errno;
	psc_cpumap__put(tg->cpus);
	tg->cpus = online;
	return 0;
}

/* Our events that opened (unsupported ones were skipped with a message). */
static int nr_traced_open(struct psc_evlist *evlist)
{
	struct psc_evsel *evsel;
	int i, n = 0;

	psc_evlist__for_each(evlist, i, evsel)
	{
		if (psc_evsel__priv(evsel) && psc_evsel__is_open(evsel))
			n++;
	}
	return n;
}

static bool wants_stacks(const struct psc_event_list *specs, bool callchain)
{
	int i;

	for (i = 0; i < specs->nr && !callchain; i++)
		callchain = specs->specs[i].stack;
	return callchain;
}

static void report_end(struct trace *t, struct session *s)
{
	int err = out__error(t->out);
	const char *to = t->out->name;

	session__print_stats(s, stderr, false);
	if (err == -EPIPE)
		fprintf(stderr, "perfscope trace: %s was closed after %llu events; stopped\n", to,
			(unsigned long long)t->printed);
	else if (err == -EINTR)
		fprintf(stderr,
			"perfscope trace: stopped while %s was not being read; %llu bytes of events "
			"were not written\n",
			to, (unsigned long long)t->out->dropped);
	else if (err)
		fprintf(stderr,
			"perfscope trace: writing events to %s failed after %llu events: %s; stopped\n",
			to, (unsigned long long)t->printed, strerror(-err));
	switch (session__end(s)) {
	case SESSION_PROCESS:
		fprintf(stderr, "perfscope trace: the traced process exited; stopped\n");
		break;
	default:
		break;
	}
}

/* Well above the shared options' long-only values (256 and up in common/options.c). */
enum { OPT_NO_ORDER = 1024 };

static const struct option trace_longopts[] = {
	{ "no-order", no_argument, NULL, OPT_NO_ORDER },
	{ 0 },
};

static int on_extra(void *ctx, int opt, const char *arg)
{
	bool *no_order = ctx;

	(void)arg;
	if (opt != OPT_NO_ORDER)
		return 2;
	*no_order = true;
	return 0;
}

static int trace_run(int argc, char **argv)
{
	struct trace t = { 0 };
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs = NULL;
	struct psc_evlist *evlist = NULL;
	struct session *sess = NULL;
	struct target tg = { .cgroup_fd = -1 };
	char title[256], msg[512];
	int ret, i, err, stop_fd = -1;
	sigset_t stop;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;

	bool no_order = false;
	const struct extra_opts extra = {
		.longopts = trace_longopts,
		.on_extra = on_extra,
		.ctx = &no_order,
	};

	ret = cli_opts_parse(&t.o, argc, argv,
				 CLI_OPT_EVENTS | CLI_OPT_CPUS | CLI_OPT_TARGET | CLI_OPT_INTERVAL |
					 CLI_OPT_DURATION | CLI_OPT_MMAP | CLI_OPT_FORMAT |
					 CLI_OPT_OUTPUT,
				 &extra, trace_help);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (no_order && t.o.order) {
		fprintf(stderr, "perfscope trace: --order and --no-order contradict each other; "
				"see 'perfscope help trace'\n");
		return 2;
	}
	/* Time order is the default: the merge costs little and keeps side-band records first. */
	t.o.order = !no_order;
	cli_setup_log(t.o.verbose);
	if (!t.o.events) {
		fprintf(stderr, "perfscope trace: which events? give -e EVENTS, e.g. -e "
				"sched:sched_switch; see 'perfscope help trace'\n");
		return 2;
	}
	ret = psc_parse_events(t.o.events, NULL, &specs, &perr);
	if (ret) {
		cli_report_parse_error("trace", t.o.events, &perr);
		/* no memory, or tracefs not readable here: runtime failures, not bad usage */
		return ret == -ENOMEM || ret == -EACCES || ret == -EPERM ? 1 : 2;
	}
	t.json_fmt = t.o.format == FORMAT_JSON;
	t.out = out__open(t.o.output, 256 * 1024);
	if (!t.out && t.o.output) {
		fprintf(stderr, "perfscope trace: cannot write to '%s': %s\n", t.o.output,
			strerror(errno));
		psc_event_list__delete(specs);
		return 1;
	}
	/* a stop signal must not wait behind a pipe nobody reads (output.h) */
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	stop_fd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	if (t.out && stop_fd >= 0)
		out__watch(t.out, stop_fd);
	evlist = psc_evlist__new();
	t.pbuf_len = 4096;
	t.pbuf = malloc(t.pbuf_len);
	if (!t.out || !evlist || !t.pbuf || comm_grow(&t)) {
		ret = 1;
		goto nomem;
	}
	for (i = 0; i < specs->nr; i++) {
		ret = add_event(&t, evlist, &specs->specs[i], t.o.events);
		if (ret < 0)
			goto nomem;
		if (ret)
			goto out;
	}
	if (wants_stacks(specs, t.o.callchain)) {
		t.stack = trace_stack__new();
		if (!t.stack)
			goto nomem;
	}
	err = session_config_evlist(evlist, t.o.mmap_pages,
					SIDEBAND_COMM | (t.stack ? SIDEBAND_MMAP : 0));
	if (err) {
		fprintf(stderr, "perfscope trace: cannot prepare the events: %s\n", strerror(-err));
		ret = 1;
		goto out;
	}

	ret = target_setup(&tg, &t.o, "trace", title, sizeof(title));
	if (ret)
		goto out;
	if (per_cpu_maps(&tg)) {
		ret = 1;
		goto nomem;
	}
	ret = target_open(&tg, evlist, "trace");
	if (ret)
		goto out;
	if (!nr_traced_open(evlist)) {
		/* the side-band event alone opened: nothing would ever be printed */
		fprintf(stderr, "perfscope trace: none of the events can be traced on this machine "
				"(see above); 'perfscope list' shows what it provides\n");
		ret = 1;
		goto out;
	}
	/* no -m: as large as the kernel lets us lock (session_default_ring_pages) */
	if (!t.o.mmap_pages)
		t.o.mmap_pages = (unsigned int)session_default_ring_pages(psc_cpumap__nr(tg.cpus));
	{
		PSC_OPTS(psc_mmap_opts, mo, .pages = t.o.mmap_pages);

		err = psc_evlist__mmap(evlist, &mo);
	}
	if (err) {
		unsigned int pages = t.o.mmap_pages;
		unsigned long long mib =
			(unsigned long long)pages * (unsigned long long)sysconf(_SC_PAGESIZE) >> 20;

		/* EPERM: over perf_event_mlock_kb without CAP_PERFMON; ENOMEM: memory itself */
		if (err == -EPERM)
			fprintf(stderr,
				"perfscope trace: cannot map the ring buffers (%s): -m %u pages per CPU "
				"exceeds what this user may lock; use a smaller -m or raise "
				"/proc/sys/kernel/perf_event_mlock_kb\n",
				strerror(-err), pages);
		else if (err == -ENOMEM)
			fprintf(stderr,
				"perfscope trace: cannot map the ring buffers (%s): -m %u pages is %llu "
				"MiB per CPU, more than the kernel could allocate; use a smaller -m\n",
				strerror(-err), pages, mib);
		else
			fprintf(stderr, "perfscope trace: cannot map the ring buffers: %s\n",
				strerror(-err));
		ret = 1;
		goto out;
	}

	comm_preload(&t, &tg);
	{
		PSC_OPTS(session_opts, so, .order = t.o.order, .interval_ms = t.o.interval_ms,
			 .duration_s = t.o.duration_s, .prof = "trace", .target = &tg,
			 .watch_pid = t.o.pid ? t.o.pid : t.o.tid, .watch_is_thread = t.o.tid != 0,
			 .verbose = t.o.verbose);
		const struct session_hooks hooks = {
			.ctx = &t,
			.sample = on_sample,
			.record = on_record,
			.round_end = on_round_end,
		};

		sess = session__new(evlist, &so, &hooks);
	}
	if (!sess) {
		fprintf(stderr, "perfscope trace: cannot start the session: %s\n", strerror(errno));
		ret = 1;
		goto out;
	}
	/* a slow reader of the pipe: events wait in memory, the rings are still drained */
	out__attach(t.out, sess);
	/* A closed stdout must come back as EPIPE from write, to stop cleanly and say so. */
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old_pipe);
	err = session__run(sess);
	sigaction(SIGPIPE, &old_pipe, NULL);
	out__flush(t.out);
	if (err > 0) {
		ret = err; /* the command could not be run; already said */
		goto out;
	}
	report_end(&t, sess);
	if (t.stack && t.o.verbose)
		trace_stack__print_stats(t.stack, stderr);
	if (t.o.verbose)
		out__print_stats(t.out, stderr, "trace");
	if (err < 0) {
		fprintf(stderr, "perfscope trace: %s\n", strerror(-err));
		ret = 1;
	} else if (out__error(t.out) && out__error(t.out) != -EPIPE &&
		   out__error(t.out) != -EINTR) {
		ret = 1;
	} else if (session__end(sess) == SESSION_COMMAND) {
		/* Its own status when it ended by itself; when we stopped it, ours (a clean stop).
		 */
		ret = session__command_exit(sess);
	} else {
		ret = 0;
	}
	goto out;
nomem:
	fprintf(stderr, "perfscope trace: %s\n", strerror(ENOMEM));
	ret = 1;
out:
	(void)msg;
	session__delete(sess);
	target_release(&tg);
	free_events(evlist);
	psc_evlist__delete(evlist);
	psc_event_list__delete(specs);
	trace_stack__delete(t.stack);
	out__delete(t.out);
	if (stop_fd >= 0)
		close(stop_fd);
	free(t.comms);
	free(t.pbuf);
	ksyms__delete(t.ksyms);
	return ret;
}

const struct profiler profiler_trace = {
	.name = "trace",
	.summary = "print events as they happen: tracepoints with filters, software events, stacks",
	.help = trace_help,
	.run = trace_run,
};
