/* prof_flame: --flame-graph FILE for every profiler that takes it: its name, its file, its line. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "prof.h"

#define FOLDED ".folded"

char *prof__flame_path(const char *arg, uint64_t seq)
{
	size_t n = strlen(arg), m = strlen(FOLDED);
	int base = (int)(n > m && !strcmp(arg + n - m, FOLDED) ? n - m : n);
	char *path;

	/* perf-prof's name, FILE.folded; one file per -i slice: FILE.0001.folded */
	if ((seq ? asprintf(&path, "%.*s.%04" PRIu64 FOLDED, base, arg, seq)
		 : asprintf(&path, "%.*s" FOLDED, base, arg)) < 0)
		return NULL;
	return path;
}

FILE *prof__flame_open(struct prof *p, const char *path)
{
	FILE *f = fopen(path, "we");

	if (!f)
		fprintf(stderr, "perfscope %s: cannot write the folded stacks to '%s': %s\n",
			p->name, path, strerror(errno));
	return f;
}

int prof__flame_write(struct prof *p, const struct flame *fl, FILE *f, const char *path,
		      const char *unit)
{
	int err;

	if (!f)
		f = prof__flame_open(p, path);
	if (!f)
		return 1;
	err = flame__write_file(fl, f); /* closes f */
	if (err) {
		fprintf(stderr, "perfscope %s: cannot write the folded stacks to '%s': %s\n",
			p->name, path, strerror(-err));
		return 1;
	}
	if (!p->opts.quiet)
		fprintf(stderr, "perfscope %s: %" PRIu64 " %s in %zu stacks folded into %s\n",
			p->name, flame__nr_samples(fl), unit, flame__nr_stacks(fl), path);
	return 0;
}

int prof__flame_write_arg(struct prof *p, const char *arg, uint64_t seq, const struct flame *fl,
			  const char *unit)
{
	char *path = prof__flame_path(arg, seq);
	int ret = 1;

	if (path && fl)
		ret = prof__flame_write(p, fl, NULL, path, unit);
	else
		fprintf(stderr, "perfscope %s: cannot write the folded stacks to '%s': %s\n",
			p->name, path ? path : arg, strerror(ENOMEM));
	free(path);
	return ret;
}
