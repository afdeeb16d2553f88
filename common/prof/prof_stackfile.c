/* prof_stackfile: a stack profile's -o file (folded, SVG, pprof), one per -i slice, written. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "flame_svg.h"
#include "pprof.h"
#include "prof.h"

static const char *const stackfile_names[] = {
	[PROF_STACKFILE_FOLDED] = "folded",
	[PROF_STACKFILE_SVG] = "svg",
	[PROF_STACKFILE_PPROF] = "pprof",
};

bool prof__ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

char *prof__slice_name(const char *path, uint64_t seq)
{
	const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
	char *name;

	if (!dot || (slash && dot < slash) || dot == path || (slash && dot == slash + 1))
		dot = path + strlen(path);
	/* pprof's double extension stays whole: cpu.pb.gz -> cpu.0001.pb.gz */
	if (prof__ends_with(path, ".pb.gz"))
		dot = path + strlen(path) - 6;
	if (asprintf(&name, "%.*s.%04" PRIu64 "%s", (int)(dot - path), path, seq, dot) < 0)
		return NULL;
	return name;
}

FILE *prof__fopen_slice(struct prof *p, const char *path, uint64_t seq, bool sliced, char **name)
{
	FILE *f;

	*name = sliced ? prof__slice_name(path, seq) : strdup(path);
	if (!*name)
		return NULL;
	f = fopen(*name, "we");
	if (!f)
		fprintf(stderr, "perfscope %s: cannot write to '%s': %s\n", p->name, *name,
			strerror(errno));
	return f;
}

int prof__stackfile_write(struct prof *p, enum prof_stackfile fmt, const struct flame *fl,
			  struct pprof *pp, const struct flame_svg_opts *svg, FILE *f,
			  const char *what)
{
	int err = -ENOMEM;

	if (fmt == PROF_STACKFILE_PPROF) {
		if (pp)
			err = pprof__write(pp, f);
		if (fclose(f) && !err)
			err = -errno;
	} else if (fmt == PROF_STACKFILE_SVG) {
		if (fl)
			err = flame_svg__write(fl, svg, f, NULL);
		if (fclose(f) && !err)
			err = -errno;
	} else {
		err = fl ? flame__write_file(fl, f) : (fclose(f), -ENOMEM);
	}
	if (err)
		fprintf(stderr, "perfscope %s: cannot write the %s profile to %s: %s\n", p->name,
			stackfile_names[fmt], what, strerror(-err));
	return err;
}
