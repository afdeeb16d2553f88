/* Native flame graphs: folded stacks merged into a tree, laid out, written as interactive SVG. */
#include <errno.h>

#include "flame_svg.h"

int flame_svg__write(const struct flame *f, const struct flame_svg_opts *o, FILE *out,
		     struct flame_svg_stats *stats)
{
	return -ENOSYS;
}

int flame_svg__write_diff(const struct flame *before, const struct flame *after,
			  const struct flame_svg_opts *o, FILE *out, struct flame_svg_stats *stats)
{
	return -ENOSYS;
}
