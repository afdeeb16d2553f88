/* A heatmap written to a file of its own (multi-trace --heatmap, num-dist --heatmap). */
#include "heatmap_file.h"

#include <errno.h>

#include "output.h"

int heatmap__write_file(const struct heatmap *hm, const char *path, const struct heatmap_svg *svg,
			bool *opened)
{
	struct out *o = out__open(path, 0);
	int ret;

	if (opened)
		*opened = o != NULL;
	if (!o)
		return -errno;
	ret = heatmap__write_svg(hm, o, svg);
	out__delete(o);
	return ret;
}
