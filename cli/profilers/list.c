/* perfscope list: every event this machine offers, each probed, with why it cannot be opened. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "options.h"
#include "output.h"
#include "profiler.h"
#include "target.h"

static const char list_help[] =
	"usage: perfscope list [--format text|json] [-v] [GLOB | KIND] (options may follow GLOB)\n"
	"\n"
	"Lists the events this machine offers: software, hardware and hardware-cache events by\n"
	"their perf names, PMU events from /sys/bus/event_source, and tracepoints. Each event is\n"
	"opened once, as stat opens it, to tell whether this machine can count it: on a task, and\n"
	"system-wide on CPUs for PMUs that count per CPU only (uncore, RAPL's power/energy-*),\n"
	"which are marked \"system-wide only: -a or -C\"; those that cannot be opened are marked\n"
	"with the reason. Tracepoints are opened only when GLOB selects at most 32 of them\n"
	"(closing one makes the kernel wait for an RCU grace period).\n"
	"\n"
	"  GLOB                  only names matching this shell pattern, e.g. 'sched:*', '*fault*'\n"
	"                        (an event also matches through its alias, e.g. 'cs')\n"
	"  KIND                  only events of one kind, as perf list takes them: hardware (hw),\n"
	"                        software (sw), hardware-cache (cache), pmu, tracepoint\n"
	"  uprobe:[GLOB@]BINARY  the functions of BINARY (a path, a library name such as\n"
	"                        libc.so.6, or a program in $PATH) that uprobe: events can probe\n"
	"      --format F        text (default) or json: one object per event and line\n"
	"  -v, --verbose         why each event that cannot be opened cannot (-vv: debug)\n"
	"\n"
	"Examples:\n"
	"  perfscope list                   # everything\n"
	"  perfscope list 'sched:*'         # the scheduler's tracepoints\n"
	"  perfscope list '*cache*'         # cache events, and whether this CPU has them\n"
	"  perfscope list sw                # the software events\n"
	"  perfscope list 'uprobe:*alloc*@libc.so.6'   # libc's allocators, to probe\n"
	"  perfscope list 'power/*' -v      # RAPL energy counters, and why not if not\n"
	"  perfscope list --format json | jq -r 'select(.supported) | .name'\n"
	"\n"
	"Exit status: 0; 1 when no event matches GLOB or KIND, or the list cannot be written; 2 on a\n"
	"usage error (a bad GLOB, more than one GLOB, an unknown option).\n";

static const char *const kind_names[] = {
	[PSC_EVENT_HARDWARE] = "hardware",
	[PSC_EVENT_SOFTWARE] = "software",
	[PSC_EVENT_CACHE] = "hardware-cache",
	[PSC_EVENT_RAW] = "raw",
	[PSC_EVENT_PMU] = "pmu",
	[PSC_EVENT_TRACEPOINT] = "tracepoint",
	[PSC_EVENT_UPROBE] = "uprobe",
	[PSC_EVENT_KPROBE] = "kprobe",
};

/* perf list's selectors of one kind of event, with its short spellings */
static const struct {
	const char *word;
	enum psc_event_kind kind;
} kind_words[] = {
	{ "hardware", PSC_EVENT_HARDWARE },
	{ "hw", PSC_EVENT_HARDWARE },
	{ "software", PSC_EVENT_SOFTWARE },
	{ "sw", PSC_EVENT_SOFTWARE },
	{ "hardware-cache", PSC_EVENT_CACHE },
	{ "cache", PSC_EVENT_CACHE },
	{ "pmu", PSC_EVENT_PMU },
	{ "tracepoint", PSC_EVENT_TRACEPOINT },
};

struct list_ctx {
	const char *glob;
	int kind; /* only events of this kind; -1: every kind */
	enum out_format format;
	struct out *out;
	int nr_shown, nr_unsupported;
};

/* How an event can be opened, as stat would open it (see probe()). */
struct probe {
	int err; /* 0 or the -errno that opening it gave */
	bool probed; /* false: not opened at all (tracepoints of a wide GLOB) */
	bool cpu_only; /* opens only system-wide, on CPUs (-a or -C), not on a task */
};

static void show(struct list_ctx *l, const char *name, const char *alias, enum psc_event_kind kind,
		 struct probe pr)
{
	int probe_err = pr.err;
	bool probed = pr.probed;
	char why[512] = "";

	if (l->kind >= 0 && l->kind != (int)kind)
		return;
	if (l->glob && fnmatch(l->glob, name, 0) && (!alias || fnmatch(l->glob, alias, 0)))
		return;
	l->nr_shown++;
	if (probe_err) {
		l->nr_unsupported++;
		psc_strerror_open(probe_err, NULL, why, sizeof(why));
		/* drop the leading "event: " that names no event here */
		memmove(why, why + 7, strlen(why + 7) + 1);
	}
	if (l->format == FORMAT_JSON) {
		struct json j;

		json__begin(&j, l->out);
		json__key(&j, "name");
		json__str(&j, name);
		if (alias) {
			json__key(&j, "alias");
			json__str(&j, alias);
		}
		json__key(&j, "kind");
		json__str(&j, kind_names[kind]);
		json__key(&j, "supported");
		/*
		 * A tracepoint not opened is still one tracefs gives an id to, which root opens:
		 * supported, with "probed": false saying it was not tried (jq 'select(.supported)'
		 * keeps it); for other users it stays null, unknown.
		 */
		if (probed)
			json__bool(&j, probe_err == 0);
		else if (!geteuid())
			json__bool(&j, true);
		else
			json__null(&j);
		if (!probed) {
			json__key(&j, "probed");
			json__bool(&j, false);
		}
		if (probe_err) {
			json__key(&j, "reason");
			json__str(&j, why);
		}
		if (!probe_err && pr.cpu_only) {
			json__key(&j, "system_wide_only");
			json__bool(&j, true);
		}
		json__end_line(&j);
		return;
	}
	char label[160];

	snprintf(label, sizeof(label), "%s%s%s", name, alias ? " OR " : "", alias ? alias : "");
	if (probe_err)
		out__printf(l->out, "  %-48s [%s]  <cannot open here: %s>\n", label,
				kind_names[kind], why);
	else if (pr.cpu_only)
		out__printf(l->out, "  %-48s [%s]  (system-wide only: -a or -C)\n", label,
				kind_names[kind]);
	else
		out__printf(l->out, "  %-48s [%s]\n", label, kind_names[kind]);
}

/* Opens attr system-wide on cpus (NULL: every online CPU), as stat -a / -C opens it. */
static int probe_cpus(const struct perf_event_attr *attr, struct psc_cpumap *cpus)
{
	struct psc_threadmap *any = psc_threadmap__new_any();
	struct psc_cpumap *online = cpus ? NULL : psc_cpumap__new_online();
	struct psc_evsel *evsel = psc_evsel__new(attr, NULL);
	int ret = -ENOMEM;

	if (any && (cpus || online) && evsel)
		ret = psc_evsel__open(evsel, cpus ? cpus : online, any, NULL);
	psc_evsel__delete(evsel);
	psc_cpumap__put(online);
	psc_threadmap__put(any);
	return ret;
}

/*
 * An event is opened the way stat will open it. On a task first (stat -- COMMAND, -p, -t), unless
 * its PMU names the CPUs it counts on: those (uncore, RAPL's power/energy-*) exist only per CPU,
 * so they are opened system-wide there. A task open the kernel refuses as a context it does not
 * support (EINVAL, EOPNOTSUPP) is tried system-wide too: such an event still counts with -a or -C.
 * pmu is the PMU's sysfs name, or NULL for perf's named events.
 */
static struct probe probe(const struct perf_event_attr *attr, const char *pmu)
{
	struct psc_cpumap *cpus = pmu ? psc_cpumap__new_pmu(pmu) : NULL;
	struct probe pr = { .probed = true };
	int task_err = 0;

	if (!cpus) {
		pr.err = task_err = psc_attr__probe(attr);
		if (pr.err != -EINVAL && pr.err != -EOPNOTSUPP)
			return pr;
	}
	pr.err = probe_cpus(attr, cpus);
	pr.cpu_only = pr.err == 0;
	/*
	 * Refused both ways: a permission is what the user can change (a task open retried for
	 * user space only may have hidden it behind EINVAL), else the task open's reason.
	 */
	if (pr.err && task_err && pr.err != -EACCES && pr.err != -EPERM)
		pr.err = task_err;
	psc_cpumap__put(cpus);
	return pr;
}

static void list_named(struct list_ctx *l)
{
	const struct psc_named_event *ne;

	for (int i = 0; (ne = psc_named_event__at(i)); i++) {
		struct perf_event_attr attr = { 0 };

		if (l->kind >= 0 && l->kind != (int)ne->kind)
			continue;
		if (l->glob && fnmatch(l->glob, ne->name, 0) &&
		    (!ne->alias || fnmatch(l->glob, ne->alias, 0)))
			continue;
		attr.type = ne->kind == PSC_EVENT_HARDWARE ? PERF_TYPE_HARDWARE
			    : ne->kind == PSC_EVENT_CACHE  ? PERF_TYPE_HW_CACHE
							   : PERF_TYPE_SOFTWARE;
		attr.config = ne->config;
		show(l, ne->name, ne->alias, ne->kind, probe(&attr, NULL));
	}
}

/* PMU events are the files in /sys/bus/event_source/devices/PMU/events; the parser decodes them. */
static void list_pmus(struct list_ctx *l)
{
	const char *root = "/sys/bus/event_source/devices";
	DIR *devs = opendir(root);
	struct dirent *pmu;

	if (!devs)
		return;
	while ((pmu = readdir(devs))) {
		char path[512];
		struct dirent *ev;
		DIR *evs;

		if (pmu->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/events", root, pmu->d_name);
		evs = opendir(path);
		if (!evs)
			continue;
		while ((ev = readdir(evs))) {
			struct psc_parse_error perr = { .pos = -1 };
			struct psc_event_list *specs = NULL;
			char name[600];

			if (ev->d_name[0] == '.' || strchr(ev->d_name, '.'))
				continue; /* .scale, .unit ... describe an event, they are not one
					   */
			snprintf(name, sizeof(name), "%s/%s/", pmu->d_name, ev->d_name);
			if (l->glob && fnmatch(l->glob, name, 0))
				continue;
			if (psc_parse_events(name, NULL, &specs, &perr)) {
				show(l, name, NULL, PSC_EVENT_PMU,
				     (struct probe){ .err = -EINVAL, .probed = true });
				continue;
			}
			show(l, name, NULL, PSC_EVENT_PMU,
			     probe(&specs->specs[0].attr, pmu->d_name));
			psc_event_list__delete(specs);
		}
		closedir(evs);
	}
	closedir(devs);
}

/*
 * Opening a tracepoint is cheap but closing it is not: the kernel unregisters its probe and waits
 * for RCU grace periods, about 25 ms per tracepoint on a 2-CPU VM (a minute for all 2300). So
 * tracepoints are opened one by one only when the GLOB narrows them to a few; otherwise they are
 * listed unprobed (JSON: "probed": false; "supported": true for root, null otherwise) and a note on
 * stderr says how to check them.
 */
#define TP_PROBE_MAX 32

static void list_tracepoints(struct list_ctx *l)
{
	struct psc_parse_error perr = { .pos = -1 };
	struct psc_event_list *specs = NULL;
	const char *pattern = "*:*";
	int nr = 0, ret;
	bool check;

	/* A glob shaped like sys:name narrows the expansion the parser does anyway. */
	if (l->glob && strchr(l->glob, ':') && !strchr(l->glob, '/'))
		pattern = l->glob;
	ret = psc_parse_events(pattern, NULL, &specs, &perr);
	if (ret) {
		if (pattern == l->glob && ret == -ENOENT)
			return; /* no tracepoint matches this glob */
		fprintf(stderr, "perfscope list: tracepoints are not available: %s\n", perr.msg);
		if (cli_parse_hint(ret, &perr))
			fprintf(stderr, "perfscope list: %s\n", cli_parse_hint(ret, &perr));
		return;
	}
	for (int i = 0; i < specs->nr; i++)
		nr += !l->glob || !fnmatch(l->glob, specs->specs[i].name, 0);
	check = nr <= TP_PROBE_MAX;
	for (int i = 0; i < specs->nr; i++) {
		const struct psc_event_spec *spec = &specs->specs[i];

		if (l->glob && fnmatch(l->glob, spec->name, 0))
			continue;
		show(l, spec->name, NULL, PSC_EVENT_TRACEPOINT,
		     (struct probe){ .err = check ? psc_attr__probe(&spec->attr) : 0,
				     .probed = check });
	}
	if (!check)
		fprintf(stderr,
			"perfscope list: the %d tracepoints were not opened to check them (each takes "
			"the kernel ~25 ms to close); a GLOB that selects at most %d checks those\n",
			nr, TP_PROBE_MAX);
	psc_event_list__delete(specs);
}

/*
 * fnmatch() takes any string, so a mistyped pattern would silently match nothing: refuse what
 * cannot be what the user meant (an empty pattern, an unclosed [ set, a trailing backslash).
 */
static const char *glob_problem(const char *glob)
{
	if (!*glob)
		return "GLOB is empty; leave it out to list everything";
	for (const char *p = glob; *p; p++) {
		if (*p == '\\') {
			if (!*++p)
				return "GLOB ends with a lone backslash";
		} else if (*p == '[') {
			const char *q = p + 1;

			if (*q == '!' || *q == '^')
				q++;
			if (*q == ']')
				q++; /* a ']' first in the set is literal */
			q = strchr(q, ']');
			if (!q)
				return "GLOB has a '[' set that is never closed with ']'";
			p = q;
		}
	}
	return NULL;
}

/* ---- list uprobe:[GLOB@]BINARY: the functions a binary offers to uprobe: ---- */

struct ufunc {
	char *name;
	uint64_t addr, size;
};

struct ufuncs {
	const char *glob;
	struct ufunc *v;
	size_t nr, alloc;
	bool oom;
};

static int add_ufunc(const char *name, uint64_t addr, uint64_t size, void *ctx)
{
	struct ufuncs *u = ctx;

	if (u->glob && fnmatch(u->glob, name, 0))
		return 0;
	if (u->nr == u->alloc) {
		size_t na = u->alloc ? u->alloc * 2 : 256;
		struct ufunc *n = realloc(u->v, na * sizeof(*n));

		if (!n) {
			u->oom = true;
			return -ENOMEM;
		}
		u->v = n;
		u->alloc = na;
	}
	u->v[u->nr].name = strdup(name);
	if (!u->v[u->nr].name) {
		u->oom = true;
		return -ENOMEM;
	}
	u->v[u->nr].addr = addr;
	u->v[u->nr++].size = size;
	return 0;
}

static int cmp_ufunc(const void *a, const void *b)
{
	const struct ufunc *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

static int list_uprobe(const char *sel, enum out_format format)
{
	const char *kind = strncmp(sel, "uprobe:", 7) ? "uretprobe" : "uprobe";
	const char *rest = strchr(sel, ':') + 1, *at = strrchr(rest, '@');
	const char *bin = at ? at + 1 : rest;
	struct ufuncs u = { 0 };
	char path[4096], *glob = NULL;
	struct out *out;
	int err, shown = 0;

	if (at && !(glob = strndup(rest, (size_t)(at - rest))))
		return 1;
	u.glob = glob && *glob ? glob : NULL;
	err = psc_probe__find_binary(bin, path, sizeof(path));
	if (!err)
		err = psc_probe__for_each_func(path, add_ufunc, &u);
	if (err) {
		fprintf(stderr, "perfscope list: %s: %s%s\n", bin,
			err == -EINVAL ? "no ELF64 file of this machine" : strerror(-err),
			err == -ENOENT && !strchr(bin, '/')
				? " (a name without '/' is a library found as ld.so finds it, or a "
				  "program in $PATH)"
				: "");
		goto out;
	}
	qsort(u.v, u.nr, sizeof(*u.v), cmp_ufunc);
	out = out__new(STDOUT_FILENO, 0);
	if (!out) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < u.nr; i++) {
		char name[512];

		/* aliases at one address (malloc, __libc_malloc) are each a name to probe */
		if (i && !strcmp(u.v[i].name, u.v[i - 1].name))
			continue;
		snprintf(name, sizeof(name), "%s:%s@%s", kind, u.v[i].name, bin);
		shown++;
		if (format == FORMAT_JSON) {
			struct json j;

			json__begin(&j, out);
			json__key(&j, "name");
			json__str(&j, name);
			json__key(&j, "kind");
			json__str(&j, "uprobe");
			json__key(&j, "function");
			json__str(&j, u.v[i].name);
			json__key(&j, "binary");
			json__str(&j, path);
			json__key(&j, "address");
			json__u64(&j, u.v[i].addr);
			json__key(&j, "size");
			json__u64(&j, u.v[i].size);
			json__end_line(&j);
		} else {
			out__printf(out, "  %-60s [uprobe]  %#llx %llu bytes\n", name,
				    (unsigned long long)u.v[i].addr, (unsigned long long)u.v[i].size);
		}
	}
	err = out__flush(out);
	out__delete(out);
	if (err && err != -EPIPE)
		fprintf(stderr, "perfscope list: writing the list failed: %s\n", strerror(-err));
	else
		err = 0;
	if (!err && !shown) {
		fprintf(stderr, "perfscope list: no function of %s matches '%s'\n", path,
			u.glob ? u.glob : "*");
		err = -ENOENT;
	}
out:
	for (size_t i = 0; i < u.nr; i++)
		free(u.v[i].name);
	free(u.v);
	free(glob);
	return err ? 1 : 0;
}

static int list_run(int argc, char **argv)
{
	struct cli_opts o;
	struct list_ctx l = { 0 };
	const char *selector;
	int ret;

	ret = cli_opts_parse(&o, argc, argv, CLI_OPT_FORMAT | CLI_OPT_POSITIONAL, NULL,
				 list_help);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (o.positional && o.positional[1]) {
		fprintf(stderr, "perfscope list: give at most one GLOB (quote it: 'sched:*')\n");
		return 2;
	}
	cli_setup_log(o.verbose);
	l.glob = selector = o.positional ? o.positional[0] : NULL;
	if (selector && (!strncmp(selector, "uprobe:", 7) || !strncmp(selector, "uretprobe:", 10)))
		return list_uprobe(selector, o.format);
	l.kind = -1;
	/* no event is named like a kind, so the word selects the kind instead of matching nothing
	 */
	for (size_t i = 0; l.glob && i < sizeof(kind_words) / sizeof(kind_words[0]); i++) {
		if (!strcmp(l.glob, kind_words[i].word)) {
			l.kind = (int)kind_words[i].kind;
			l.glob = NULL;
		}
	}
	if (l.glob && glob_problem(l.glob)) {
		fprintf(stderr, "perfscope list: %s: '%s'\nSee 'perfscope help list'.\n",
			glob_problem(l.glob), l.glob);
		return 2;
	}
	l.format = o.format;
	psc_tracefs__mount(); /* when it cannot, the tracepoints say why */
	l.out = out__new(STDOUT_FILENO, 0);
	if (!l.out)
		return 1;
	list_named(&l);
	if (l.kind < 0 || l.kind == PSC_EVENT_PMU)
		list_pmus(&l);
	if (l.kind < 0 || l.kind == PSC_EVENT_TRACEPOINT)
		list_tracepoints(&l);
	ret = out__flush(l.out);
	out__delete(l.out);
	if (ret && ret != -EPIPE) {
		fprintf(stderr, "perfscope list: writing the list failed: %s\n", strerror(-ret));
		return 1;
	}
	if (selector && !l.nr_shown) {
		fprintf(stderr, "perfscope list: no event matches '%s'\n", selector);
		return 1;
	}
	return 0;
}

const struct profiler profiler_list = {
	.name = "list",
	.summary = "list the events this machine offers and whether each can be opened",
	.help = list_help,
	.run = list_run,
};
