/* perfscope list's events: perf's named ones, PMUs' and tracepoints', each opened as stat would. */
#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "list.h"
#include "profiler.h"

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

void list_named(struct list_ctx *l)
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
void list_pmus(struct list_ctx *l)
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

void list_tracepoints(struct list_ctx *l)
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
