/* A heatmap written to a file of its own: the SVG document, created or truncated. */
#ifndef PERFSCOPE_COMMON_HEATMAP_FILE_H
#define PERFSCOPE_COMMON_HEATMAP_FILE_H

#include <stdbool.h>

#include "heatmap.h"

/*
 * hm as heatmap__write_svg writes it, into path (created or truncated, 0644). 0, or -errno: then
 * *opened (when not NULL) says whether path was opened, i.e. whether the error was opening it or
 * writing it, so that the caller's message can say which.
 */
int heatmap__write_file(const struct heatmap *hm, const char *path, const struct heatmap_svg *svg,
			bool *opened);

#endif
