/* libperfscope: the event-list parser shared by every tool: perf names, raw/PMU events,
 * tracepoints, perf-prof ATTRs. */
#ifndef PERFSCOPE_PARSE_H
#define PERFSCOPE_PARSE_H

#include <stdbool.h>
#include <linux/perf_event.h>
#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum psc_event_kind {
	PSC_EVENT_HARDWARE,
	PSC_EVENT_SOFTWARE,
	PSC_EVENT_CACHE,
	PSC_EVENT_RAW, /* rNNNN */
	PSC_EVENT_PMU, /* pmu/term=val,.../ or pmu/alias/ from sysfs */
	PSC_EVENT_TRACEPOINT,
	PSC_EVENT_UPROBE, /* uprobe:FUNC@BINARY, uretprobe:FUNC@BINARY, usdt:PROVIDER:NAME@BINARY
			     (probe.h creates them) */
	PSC_EVENT_KPROBE, /* kprobe:FUNC, kretprobe:FUNC */
};

/*
 * Where a uprobe or kprobe goes, as parsed: nothing exists in the kernel until
 * psc_probes__create (probe.h) makes it a trace event.
 */
struct psc_probe_spec {
	bool retprobe; /* uretprobe:/kretprobe: fires at the function's return */
	char *func; /* the symbol */
	uint64_t offset; /* +OFFSET into the function */
	char *binary; /* uprobes: the file, resolved to a path ("libc.so.6" as ld.so finds it) */
	uint64_t file_offset; /* uprobes: where the probe goes in that file */
	/* usdt: the semaphore's file offset (the uprobe's reference counter), 0 when none */
	uint64_t ref_ctr_offset;
	/* usdt: the fetch arguments of the probe ("arg1=%ax:s32 ..."), NULL for the default */
	char *fetch_args;
};

/*
 * One parsed event. `attr` is ready for perf_event_open (type, config, config1/2, exclude_*
 * from modifiers, sample_period/freq from period=/freq=, PERF_SAMPLE_CALLCHAIN from stack);
 * the rest is what profilers consume. Strings are owned by the list.
 */
/* An ATTR the library leaves to the tool: "name" or "name=value" ("value" may be quoted). */
struct psc_event_attr {
	char *name;
	char *value; /* NULL for a flag ATTR (no '=') */
	int pos; /* offset of the name in the parsed string, for error carets */
	int value_pos; /* offset of the value, -1 when none */
};

struct psc_event_spec {
	enum psc_event_kind kind;
	struct perf_event_attr attr;
	char *name; /* canonical: "page-faults", "sched:sched_switch", "msr/tsc/" */
	char *sys; /* tracepoints: "sched"; PMU events: the PMU name */
	char *event; /* tracepoints: "sched_switch"; PMU events: the alias, if any */
	char *filter; /* ftrace filter text, NULL when none */
	char *unit; /* PMU events: from sysfs .unit, else NULL */
	double scale; /* PMU events: from sysfs .scale, else 1.0 */
	/* the ATTRs that change the attr or the name (also applied to attr above) */
	char *alias; /* alias=NAME */
	bool stack; /* stack, or max-stack=N */
	int max_stack; /* 0: not given */
	char *cpus; /* cpus=LIST: opened on these CPUs only (of the run's), NULL: on all */
	/* every other ATTR, in order, for the tool to interpret (key=, top-by=, untraced ...) */
	struct psc_event_attr *attrs;
	int nr_attrs;
	/*
	 * perf's groups, "{a,b}:mods": the index in the list of this spec's group leader; a spec
	 * outside braces is its own leader. nr_members: for a leader, the specs in its group
	 * including itself (1 outside braces); 0 for the other members.
	 */
	int leader;
	int nr_members;
	/* Offsets into the original string of this event's text, for error reporting. */
	int text_pos, text_len;
	/*
	 * PSC_EVENT_UPROBE/KPROBE: where the probe goes; attr is not usable until
	 * psc_probes__create made the probe a trace event: from then on kind is
	 * PSC_EVENT_TRACEPOINT (sys the probe's group, event its name, attr.config its id) and
	 * probe still says what it is. NULL for other events.
	 */
	struct psc_probe_spec *probe;
};

struct psc_event_list {
	int nr;
	struct psc_event_spec *specs;
};

struct psc_parse_opts {
	size_t sz;
	/* Where tracepoint ids are read (events/<sys>/<name>/id); NULL: where tracefs is mounted
	 * (psc_tracefs__dir). Parsing never mounts it. */
	const char *tracefs_dir;
	/* Where PMUs are described; NULL: /sys/bus/event_source/devices. */
	const char *pmu_dir;
	/*
	 * usdt:PROVIDER:NAME@BINARY: finds the SDT probe in the file at path (BINARY resolved),
	 * filling its file offset, semaphore offset (0: none) and fetch arguments (malloc'd, or
	 * NULL); returns 0 or a negative errno with msg saying why (-ENOENT: no such probe).
	 * NULL: usdt: events are refused (the library reads no SDT notes itself).
	 */
	int (*usdt_find)(const char *path, const char *provider, const char *name,
			 struct psc_probe_spec *probe, char *msg, size_t msg_len, void *ctx);
	void *usdt_ctx;
};
/* The last field of psc_parse_opts; a newer caller's bytes after it must be 0 (PSC_OPTS). */
#define psc_parse_opts__last_field usdt_ctx

/*
 * Parses "EVENT[,EVENT...]" (commas inside /.../ belong to the event). Tracepoint wildcards
 * ("sched:sched_*", "*:sys_enter_read") expand to one spec each, sorted. An EVENT is one of
 *   NAME[:MODS]                perf's software/hardware/cache names and aliases, or rHEX (raw)
 *   NAME/FILTER/ATTR/.../[:MODS]  the perf-prof form; FILTER must be empty for non-tracepoints
 *   PMU/TERM=VAL,ALIAS,.../[:MODS] from <pmu_dir>/PMU/{type,format,events}
 *   SYS:NAME[/FILTER/ATTR/.../]  tracepoints, fnmatch globs allowed in SYS and NAME
 *   {EVENT,EVENT...}[:MODS]    a group, the first event leading
 *   uprobe:FUNC[+OFF]@BINARY[+OFF][/FILTER/ATTR/.../]   uretprobe: the same at the return;
 *                              BINARY a path or a library name found as ld.so finds it
 *                              (ld.so.cache, then the standard directories) or a program in
 *                              $PATH; quote it ("...") when it holds '/' and a filter follows
 *   kprobe:FUNC[+OFF][/FILTER/ATTR/.../]   kretprobe:FUNC: where the kernel has kprobe events
 *   usdt:PROVIDER:NAME@BINARY[/FILTER/ATTR/.../]   a USDT probe, found by opts->usdt_find
 * MODS: u k h G H I p (pp, ppp) D e, with perf's meaning. ATTRs the library applies: stack,
 * max-stack=N, alias=NAME, period=N, freq=N; any other NAME or NAME=VALUE (a value in "..." may
 * hold '/' and ',') is kept in spec->attrs, in order, for the tool to check and interpret.
 * Spaces are allowed around events.
 * Probes are parsed and their symbols resolved (the binary's ELF symbols read), not created.
 * Returns 0, or -EINVAL (syntax), -ENOENT (unknown event, PMU term, tracepoint, binary or
 * function), -EOPNOTSUPP (kprobes on a kernel without them), -ENODEV (a
 * tracepoint is named and tracefs is not mounted, or tracefs_dir has no events/: see
 * psc_tracefs__mount), -ENOMEM, or the errno that kept tracefs or sysfs from being read, with
 * *err (may be NULL) saying where and what was expected and suggesting close names for unknown
 * ones. Never mounts anything, and its messages give no advice for a particular tool.
 * Thread-safe.
 */
PSC_API int psc_parse_events(const char *str, const struct psc_parse_opts *opts,
			     struct psc_event_list **out, struct psc_parse_error *err);
PSC_API void psc_event_list__delete(struct psc_event_list *list);

/* Name tables for `list`: the perf names of software, hardware and cache events. */
struct psc_named_event {
	const char *name;
	enum psc_event_kind kind;
	uint64_t config;
	const char *alias; /* a second accepted name, or NULL */
};
/* Iterate: idx from 0 until it returns NULL. Cache events are every id x op x result. */
PSC_API const struct psc_named_event *psc_named_event__at(int idx);

/*
 * The ATTRs the library itself gives meaning to (stack, max-stack, alias, cpus, period, freq):
 * idx from 0 until it returns NULL. Returns the name; *syntax (if not NULL) gets how it is
 * written, e.g. "max-stack=N". Any other ATTR is the tool's (spec->attrs).
 */
PSC_API const char *psc_lib_attr__at(int idx, const char **syntax);

#ifdef __cplusplus
}
#endif
#endif
