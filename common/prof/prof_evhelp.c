/* prof_evhelp: perf-prof's `PROFILER -e EVENTS help`: the events' fields; see prof_evhelp.h. */
#include "prof_evhelp.h"

#include <string.h>

#include <perfscope/parse.h>
#include <perfscope/tracefs.h>

#include "prof.h"
#include "prof_internal.h"

bool prof_evhelp__asked(const struct prof *p, int argc, char **argv)
{
	char **cmd = p->opts.command;
	long at;

	if (!cmd || !cmd[0] || strcmp(cmd[0], "help") || cmd[1])
		return false;
	at = cmd - argv;
	/* after "--" it is a command of that name, as the user said */
	return at > 0 && at < argc && strcmp(argv[at - 1], "--");
}

/* The kernel's format file of a tracepoint, as it is (perf-prof prints it too). */
static void print_format(FILE *f, const struct psc_event_spec *sp)
{
	char path[4096], line[1024];
	const char *dir = psc_tracefs__dir();
	FILE *in;

	if (!dir ||
	    snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, sp->sys, sp->event) >=
		    (int)sizeof(path) ||
	    !(in = fopen(path, "re"))) {
		fprintf(f,
			"  (its format cannot be read: tracefs is not mounted or not readable)\n");
		return;
	}
	while (fgets(line, sizeof(line), in))
		fputs(line, f);
	fclose(in);
}

int prof_evhelp__print(const struct prof *p, char **argv, FILE *f)
{
	char attrs[1024];

	prof_attrs_list(p->decl, attrs, sizeof(attrs));
	fputs("perfscope", f);
	for (char **a = argv; a < p->opts.command; a++)
		fprintf(f, strpbrk(*a, " \t\"'()|&<>;*?$") ? " '%s'" : " %s", *a);
	fputs("\n", f);
	fprintf(f, "  each event: NAME[/FILTER/ATTR/...]; ATTRs %s takes: %s\n", p->name, attrs);
	fprintf(f, "  options: perfscope help %s\n", p->name);
	for (int i = 0; i < p->specs->nr; i++) {
		const struct psc_event_spec *sp = &p->specs->specs[i];

		fprintf(f, "\n%s\n", sp->name);
		if (sp->kind == PSC_EVENT_TRACEPOINT && !sp->probe)
			print_format(f, sp);
		else if (sp->probe)
			fprintf(f,
				"  a probe: its fields are the fetch arguments it was given "
				"(perfscope list %s shows what the binary offers)\n",
				sp->probe->binary ? "uprobe:BINARY" : "kprobe:");
		else
			fprintf(f,
				"  no fields: not a tracepoint (filters and field ATTRs need one)\n");
	}
	fflush(f);
	return ferror(f) ? 1 : 0;
}
