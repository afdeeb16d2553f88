/* --help of a declared profiler, generated from its declaration and the option tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/parse.h>

#include "prof.h"
#include "prof_internal.h"

static void emit_line(void *ctx, const char *line)
{
	fputs(line, ctx);
	fputc('\n', ctx);
}

/* The text with every line indented by two spaces. */
static void indented(FILE *out, const char *text, const char *prefix)
{
	const char *nl;

	for (; text && *text; text = nl ? nl + 1 : NULL) {
		nl = strchr(text, '\n');
		fprintf(out, "  %s%.*s\n", prefix, nl ? (int)(nl - text) : (int)strlen(text), text);
		if (!nl)
			break;
	}
}

void prof_attrs_list(const struct profiler *decl, char *buf, size_t len)
{
	size_t used = 0;
	const char *syntax;

	buf[0] = '\0';
	for (int i = 0; psc_lib_attr__at(i, &syntax) && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", syntax);
	for (const struct prof_attr *a = decl->attrs; a && a->name && used < len; a++)
		used += (size_t)snprintf(buf + used, len - used, ", %s%s", a->name,
					 a->kind == PROF_ATTR_FLAG    ? ""
					 : a->kind == PROF_ATTR_FIELD ? "=FIELD"
					 : a->kind == PROF_ATTR_NUM   ? "=N"
					 : a->kind == PROF_ATTR_EXPR  ? "=EXPR"
								      : "=TEXT");
}

void prof__help(const struct profiler *decl, FILE *out)
{
	fprintf(out, "usage: perfscope %s %s\n\n", decl->name, decl->usage ? decl->usage : "");
	if (decl->description) {
		fputs(decl->description, out);
		fputs("\n\n", out);
	}
	fputs("Options:\n", out);
	opts__help(cli_shared_opts, decl->shared_opts, decl->events_help, decl->opts, emit_line,
		   out);
	opts__help(decl->opts, 0, NULL, NULL, emit_line, out);
	emit_line(out, "  -v, --verbose            each event's own line on stderr, a line once running (-vv: debug)");
	emit_line(out, "  -h, --help               this text");
	emit_line(out, "  -V, --version            perfscope's version");
	if (decl->shared_opts & CLI_OPT_TARGET)
		emit_line(out,
			  "  -- COMMAND ARGS...       run COMMAND, follow it and its children, "
			  "stop when it\n"
			  "                           exits and exit with its status");
	if (decl->shared_opts & CLI_OPT_EVENTS) {
		fputs("\nATTRs (sys:name/filter/ATTR/.../):\n", out);
		emit_line(out, "  stack                    this event's stack (as -g)");
		emit_line(out, "  max-stack=N              at most N frames");
		emit_line(out, "  alias=NAME               the name shown for the event");
		emit_line(out, "  cpus=LIST                open it on these CPUs only (0-1,3), of the run's");
		emit_line(out, "  period=N, freq=N         sample every N events, or N times a "
			       "second");
		for (const struct prof_attr *a = decl->attrs; a && a->name; a++)
			indented(out, a->help, "");
	}
	if (decl->notes) {
		fputc('\n', out);
		fputs(decl->notes, out);
		fputc('\n', out);
	}
	if (decl->needs & PROF_SUMMARY)
		fputs("\nReports: with a COMMAND (it has standard output) and no -o, the text report goes\n"
		      "to standard error, as perf trace -s and strace -c do; --format json stays on\n"
		      "standard output. A report missing events (lost, or dropped by the kernel) says\n"
		      "so in it: an 'incomplete: N% ... missing' footer, a JSON \"incomplete\" object\n"
		      "(lost, kernel_dropped, seen, share, and the worst event's missing of all).\n",
		      out);
	if (decl->examples) {
		fputs("\nExamples:\n", out);
		indented(out, decl->examples, "perfscope ");
	}
}

char *prof_help_text(const struct profiler *decl)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return NULL;
	prof__help(decl, f);
	if (fclose(f)) {
		free(text);
		return NULL;
	}
	return text;
}
