/* capwrite: folded, SVG and pprof files of one set of stacks, each written whatever the others do.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capwrite.h"
#include "callchain.h"
#include "flame_svg.h"
#include "pprof.h"

#define MAX_FRAMES CALLCHAIN_MAX_FRAMES

struct to_pprof {
	struct pprof *pp;
	int64_t period;
	bool root_is_comm;
	int err;
};

/* "comm;outer;...;leaf" -> frames leaf first, the comm as a label. */
static int add_stack(void *ctx, const char *text, size_t len, uint64_t count)
{
	struct to_pprof *tp = ctx;
	struct pprof_frame frames[MAX_FRAMES];
	const char *names[MAX_FRAMES];
	size_t lens[MAX_FRAMES], n = 0;
	char buf[8192], comm[64] = "";
	struct pprof_label label = { "comm", comm };
	int64_t values[2] = { (int64_t)count, (int64_t)count * tp->period };
	const char *s = text, *end = text + len;
	size_t used = 0;
	int err;

	while (s < end && n < MAX_FRAMES) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		size_t l = semi ? (size_t)(semi - s) : (size_t)(end - s);

		names[n] = s;
		lens[n++] = l;
		s += l + 1;
	}
	if (tp->root_is_comm && n) {
		snprintf(comm, sizeof(comm), "%.*s", (int)lens[0], names[0]);
		memmove(names, names + 1, (n - 1) * sizeof(names[0]));
		memmove(lens, lens + 1, (n - 1) * sizeof(lens[0]));
		n--;
	}
	/* innermost first; names copied NUL-terminated into buf */
	for (size_t i = 0; i < n; i++) {
		const char *name = names[n - 1 - i];
		size_t l = lens[n - 1 - i];

		if (used + l + 1 > sizeof(buf)) {
			n = i;
			break;
		}
		memcpy(buf + used, name, l);
		buf[used + l] = '\0';
		frames[i] = (struct pprof_frame){ .function = buf + used };
		used += l + 1;
	}
	err = pprof__add_sample(tp->pp, frames, n, values, comm[0] ? &label : NULL,
				comm[0] ? 1 : 0);
	if (err)
		tp->err = err;
	return err;
}

static void done(struct capwrite_result *res, const char *path, int err)
{
	if (!err) {
		snprintf(res->files[res->nr++], CAPWRITE_PATH, "%s", path);
		return;
	}
	unlink(path);
	if (!res->err) {
		res->err = err;
		res->failed = strrchr(path, '.');
	}
}

static int write_svg(const struct flame *f, const char *path, const struct capwrite_opts *o)
{
	struct flame_svg_opts so = { .title = o->title, .subtitle = o->subtitle };
	FILE *out = fopen(path, "we");
	int err;

	if (!out)
		return -errno;
	err = flame_svg__write(f, &so, out, NULL);
	if (fclose(out) && !err)
		err = -errno;
	return err;
}

static int write_pprof(const struct flame *f, const char *path, const struct capwrite_opts *o)
{
	const struct pprof_value_type types[] = { { "samples", "count" },
						  { "cpu", "nanoseconds" } };
	const struct pprof_value_type period = { "cpu", "nanoseconds" };
	struct to_pprof tp = { .period = o->freq > 0 ? 1000000000 / o->freq : 1,
			       .root_is_comm = o->root_is_comm };
	int err;

	tp.pp = pprof__new(types, 2, &period, tp.period);
	if (!tp.pp)
		return -errno;
	pprof__set_time(tp.pp, (int64_t)o->start_real_ns, (int64_t)o->duration_ns);
	if (o->title)
		pprof__add_comment(tp.pp, o->title);
	err = flame__for_each(f, add_stack, &tp);
	if (!err)
		err = pprof__write_path(tp.pp, path);
	pprof__delete(tp.pp);
	return err < 0 ? err : tp.err;
}

int capwrite__all(const struct flame *f, const char *stem, const struct capwrite_opts *o,
		  struct capwrite_result *res)
{
	char path[CAPWRITE_PATH];

	memset(res, 0, sizeof(*res));
	snprintf(path, sizeof(path), "%s.folded", stem);
	done(res, path, flame__write(f, path));
	snprintf(path, sizeof(path), "%s.svg", stem);
	done(res, path, write_svg(f, path, o));
	snprintf(path, sizeof(path), "%s.pb.gz", stem);
	done(res, path, write_pprof(f, path, o));
	return res->err;
}
