/* perfscope flamegraph: any folded stack file (perf's, bcc's, ours) as a native interactive SVG. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "flame.h"
#include "flame_svg.h"
#include "options.h"
#include "profiler.h"

static const char flamegraph_help[] =
	"usage: perfscope flamegraph [options] FILE.folded\n"
	"       perfscope flamegraph [options] --diff BEFORE.folded AFTER.folded\n"
	"\n"
	"Renders folded stacks (\"comm;outer;...;leaf COUNT\" lines: perfscope's --flame-graph,\n"
	"perf script | stackcollapse-perf.pl, bcc's profile -f, inferno-collapse) as a flame graph:\n"
	"one self-contained SVG with its own script, no network needed. Hover a frame for its\n"
	"count and share, click to zoom, Ctrl-F (or Search) highlights the frames matching a\n"
	"regular expression and says which share of the samples they cover, Esc resets. Frames\n"
	"narrower than --min-width pixels, or past --max-frames, are left out, and the subtitle\n"
	"says how many. Kernel frames (\"_[k]\" suffix) are blue, user frames warm, unknown ones\n"
	"grey. FILE \"-\" is standard input. Blank lines are skipped; lines that are not\n"
	"\"STACK COUNT\" are skipped and counted, with the first one's number and why.\n"
	"\n"
	"  FILE.folded           the folded stacks to draw\n"
	"  -o, --output FILE     write the SVG to FILE, not standard output\n"
	"      --reverse         callers view: stacks merged from their leaf, drawn top-down\n"
	"                        as an icicle (which paths lead to each hot function)\n"
	"      --diff BEFORE     differential: widths are AFTER's (the FILE operand), colors\n"
	"                        say how each frame's share changed since BEFORE (red grew,\n"
	"                        blue shrank), each profile normalised by its own total\n"
	"      --title TEXT      the title (default \"Flame Graph\")\n"
	"      --subtitle TEXT   a line under the title, before the counts\n"
	"      --count-name NAME what a count is (default \"samples\")\n"
	"      --width PX        image width in pixels (default 1200)\n"
	"      --min-width PX    leave out frames narrower than PX pixels (default 0.1)\n"
	"      --max-frames N    draw at most N frames (default 25000, about 3 MB): past it the\n"
	"                        narrowest are left out too, and the subtitle says the width\n"
	"  -v, --verbose         also say how many blank lines and zero counts were skipped\n"
	"\n"
	"Exit status: 0 drawn (skipped lines are reported on stderr), 1 a file could not be\n"
	"read or written or held no stack, 2 usage error.\n"
	"\n"
	"Examples:\n"
	"  perfscope flamegraph cpu.folded -o cpu.svg\n"
	"  perfscope trace -e sched:sched_switch -g --flame-graph sw && perfscope flamegraph "
	"sw.folded -o sw.svg\n"
	"  perf script | stackcollapse-perf.pl | perfscope flamegraph - -o perf.svg\n"
	"  perfscope flamegraph --reverse --title 'who calls malloc' cpu.folded -o callers.svg\n"
	"  perfscope flamegraph --diff before.folded after.folded -o diff.svg\n";

struct fg_opts {
	struct flame_svg_opts svg;
	const char *diff;
};

__attribute__((format(printf, 1, 2))) static int usage(const char *fmt, ...)
{
	va_list ap;

	fputs("perfscope flamegraph: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nSee 'perfscope help flamegraph'.\n", stderr);
	return 2;
}

/* A number written as a double (1e3 too), as the options always took it. 0 or -EINVAL. */
static int number(const char *arg, double *d)
{
	char *end;

	errno = 0;
	*d = strtod(arg, &end);
	return errno || end == arg || *end ? -EINVAL : 0;
}

static int opt_width(struct prof *p, void *priv, const char *arg)
{
	struct fg_opts *o = priv;
	double d;

	if (number(arg, &d) || d < 100 || d > 100000 || d != (unsigned int)d)
		return usage("--width takes whole pixels from 100 to 100000, not '%s'", arg);
	o->svg.width = (unsigned int)d;
	return 0;
}

static int opt_min_width(struct prof *p, void *priv, const char *arg)
{
	struct fg_opts *o = priv;
	double d;

	if (number(arg, &d) || !(d > 0 && d <= 1000))
		return usage("--min-width takes pixels above 0 and up to 1000 (e.g. 0.5), not '%s'",
			     arg);
	o->svg.min_width = d;
	return 0;
}

static int opt_max_frames(struct prof *p, void *priv, const char *arg)
{
	struct fg_opts *o = priv;
	double d;

	if (number(arg, &d) || d < 1 || d > 10000000 || d != (unsigned int)d)
		return usage("--max-frames takes a count from 1 to 10000000, not '%s'", arg);
	o->svg.max_frames = (unsigned int)d;
	return 0;
}

#define FG(field) offsetof(struct fg_opts, field)

/* Its own options, parsed by the option parser every profiler uses; the help text above. */
static const struct prof_opt flamegraph_opts[] = {
	{ "reverse", 0, NULL, PROF_OPT_FLAG, FG(svg.reverse) },
	{ "diff", 0, "BEFORE", PROF_OPT_TEXT, FG(diff) },
	{ "title", 0, "TEXT", PROF_OPT_TEXT, FG(svg.title) },
	{ "subtitle", 0, "TEXT", PROF_OPT_TEXT, FG(svg.subtitle) },
	{ "count-name", 0, "NAME", PROF_OPT_TEXT, FG(svg.count_name) },
	{ "width", 0, "PX", PROF_OPT_FN, 0, 0, 0, opt_width },
	{ "min-width", 0, "PX", PROF_OPT_FN, 0, 0, 0, opt_min_width },
	{ "max-frames", 0, "N", PROF_OPT_FN, 0, 0, 0, opt_max_frames },
	{ 0 },
};

/* Reads one folded file (or stdin for "-") into f; says what was skipped. 0, or 1 (said). */
static int read_folded(const char *path, struct flame *f, int verbose)
{
	struct flame_parse_stats st = { 0 };
	bool is_stdin = !strcmp(path, "-");
	const char *name = is_stdin ? "standard input" : path;
	FILE *in = is_stdin ? stdin : fopen(path, "re");
	int err;

	if (!in) {
		fprintf(stderr, "perfscope flamegraph: cannot read '%s': %s\n", path,
			strerror(errno));
		return 1;
	}
	err = flame__read_file(f, in, &st);
	if (!is_stdin)
		fclose(in);
	if (err) {
		fprintf(stderr, "perfscope flamegraph: reading %s failed: %s\n", name,
			strerror(-err));
		return 1;
	}
	if (st.bad)
		fprintf(stderr,
			"perfscope flamegraph: %s: skipped %llu of %llu lines that are not "
			"'STACK COUNT' (the first, line %llu: %s)\n",
			name, (unsigned long long)st.bad, (unsigned long long)st.lines,
			(unsigned long long)st.first_bad_line, st.first_bad_why);
	if (verbose && (st.blank || st.zero))
		fprintf(stderr,
			"perfscope flamegraph: %s: %llu blank lines and %llu stacks counted 0 "
			"skipped\n",
			name, (unsigned long long)st.blank, (unsigned long long)st.zero);
	if (!flame__nr_samples(f)) {
		fprintf(stderr,
			"perfscope flamegraph: %s holds no stack to draw (%llu lines, %llu not "
			"'STACK COUNT'); it should hold folded lines like 'main;work;leaf 12'\n",
			name, (unsigned long long)st.lines, (unsigned long long)st.bad);
		return 1;
	}
	return 0;
}

static int flamegraph_run(int argc, char **argv)
{
	struct fg_opts fo = { 0 };
	struct prof p = { .name = "flamegraph" };
	struct flame_svg_stats stats = { 0 };
	struct flame *after = NULL, *before = NULL;
	struct cli_opts o;
	struct stat sb;
	bool regular;
	FILE *out;
	int ret, err;

	ret = opts__parse(&p, &o, CLI_OPT_OUTPUT | CLI_OPT_POSITIONAL, flamegraph_opts, &fo, argc,
			  argv, flamegraph_help);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (!o.positional)
		return usage(
			fo.diff ? "--diff BEFORE needs the AFTER file too"
				: "which folded file? give FILE.folded (or - for standard input)");
	if (o.positional[1])
		return usage("give one folded file (two with --diff BEFORE AFTER), not also '%s'",
			     o.positional[1]);
	if (fo.diff && !strcmp(fo.diff, "-") && !strcmp(o.positional[0], "-"))
		return usage("only one of the files can be standard input ('-')");
	if (!o.output && isatty(STDOUT_FILENO))
		return usage(
			"an SVG is not for a terminal: give -o OUT.svg or redirect the output");
	cli_setup_log(o.verbose);

	ret = 1;
	after = flame__new();
	before = fo.diff ? flame__new() : NULL;
	if (!after || (fo.diff && !before)) {
		fprintf(stderr, "perfscope flamegraph: out of memory\n");
		goto out;
	}
	if ((fo.diff && read_folded(fo.diff, before, o.verbose)) ||
	    read_folded(o.positional[0], after, o.verbose))
		goto out;
	out = o.output ? fopen(o.output, "we") : stdout;
	if (!out) {
		fprintf(stderr, "perfscope flamegraph: cannot write '%s': %s\n", o.output,
			strerror(errno));
		goto out;
	}
	/* only a regular file is removed after a failed write, never a device or a pipe */
	regular = o.output && !fstat(fileno(out), &sb) && S_ISREG(sb.st_mode);
	err = fo.diff ? flame_svg__write_diff(before, after, &fo.svg, out, &stats)
		      : flame_svg__write(after, &fo.svg, out, &stats);
	if (o.output && fclose(out) && !err)
		err = -errno;
	if (!o.output && fflush(stdout) && !err)
		err = -errno;
	if (err) {
		fprintf(stderr, "perfscope flamegraph: writing %s failed: %s\n",
			o.output ? o.output : "the SVG", strerror(-err));
		if (regular)
			unlink(o.output); /* not a truncated SVG that looks whole */
		goto out;
	}
	if (o.output)
		fprintf(stderr,
			"perfscope flamegraph: %s: %llu samples in %zu stacks, %llu frames drawn, "
			"%llu narrower than %.2g px left out\n",
			o.output, (unsigned long long)flame__nr_samples(after),
			flame__nr_stacks(after), (unsigned long long)stats.drawn,
			(unsigned long long)stats.elided, stats.min_width);
	ret = 0;
out:
	flame__delete(after);
	flame__delete(before);
	return ret;
}

const struct profiler profiler_flamegraph = {
	.name = "flamegraph",
	.summary = "render folded stacks as an interactive SVG flame graph, or a differential one",
	.help = flamegraph_help,
	.run = flamegraph_run,
};
