/* perfscope list: every event this machine offers, each probed, with why it cannot be opened. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "list.h"
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
	"                        (an event also matches through its alias, e.g. 'cs'); a plain\n"
	"                        word that names no event is a part of names, as perf-prof's\n"
	"                        'list trace' takes it: 'trace' is '*trace*'\n"
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
	"  perfscope list trace             # every event with 'trace' in its name\n"
	"  perfscope list sw                # the software events\n"
	"  perfscope list 'uprobe:*alloc*@libc.so.6'   # libc's allocators, to probe\n"
	"  perfscope list 'power/*' -v      # RAPL energy counters, and why not if not\n"
	"  perfscope list --format json | jq -r 'select(.supported) | .name'\n"
	"\n"
	"Exit status: 0; 1 when no event matches GLOB or KIND, or the list cannot be written; 2 on a\n"
	"usage error (a bad GLOB, more than one GLOB, an unknown option).\n";

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

static void list_all(struct list_ctx *l)
{
	list_named(l);
	if (l->kind < 0 || l->kind == PSC_EVENT_PMU)
		list_pmus(l);
	if (l->kind < 0 || l->kind == PSC_EVENT_TRACEPOINT)
		list_tracepoints(l);
}

static int list_run(int argc, char **argv)
{
	struct cli_opts o;
	struct list_ctx l = { 0 };
	const char *selector;
	char *part = NULL;
	int ret;

	ret = cli_opts_parse(&o, argc, argv, CLI_OPT_FORMAT | CLI_OPT_POSITIONAL, list_help);
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
	list_all(&l);
	/* perf-prof's and perf's 'list WORD': a plain word no event is named is a part of names */
	if (l.glob && !l.nr_shown && !strpbrk(l.glob, "*?[\\")) {
		if (asprintf(&part, "*%s*", l.glob) < 0) {
			out__delete(l.out);
			return 1;
		}
		l.glob = part;
		list_all(&l);
	}
	free(part);
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
