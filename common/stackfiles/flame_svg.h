/* Native flame graphs: folded stacks (struct flame) as a self-contained interactive SVG. */
#ifndef PERFSCOPE_COMMON_FLAME_SVG_H
#define PERFSCOPE_COMMON_FLAME_SVG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "flame.h"

/*
 * The stacks are merged into a tree (siblings sorted by name, as flamegraph.pl does), laid out,
 * and each frame at least min_width pixels wide (and within max_frames) is drawn as a rectangle
 * with a <title> (hover text without script) and a label when it fits; narrower frames are elided
 * and counted, and the subtitle says how many. The SVG carries its own script and style (no
 * external resource): hover details, click to zoom, Ctrl-F/search with a regular expression
 * highlighting the matching frames and the share of samples they cover, reset. Colors say the kind
 * of a frame: user (warm red-yellow), kernel ("_[k]" suffix, blue-aqua; the suffix is not shown),
 * unknown ("[unknown]", a bare address or a "[module]", grey).
 */
struct flame_svg_opts {
	const char
		*title; /* NULL: "Flame Graph" ("Icicle Graph" reversed, "Differential ..." diff) */
	const char *subtitle; /* NULL: none (the counts and elision line is always there) */
	const char *count_name; /* what a count is: NULL: "samples" */
	/*
	 * Callers view: stacks merged from their leaf (each hot function at the root, the paths
	 * that call it below), drawn top-down as an icicle.
	 */
	bool reverse;
	unsigned int width; /* pixels, 0: 1200 */
	unsigned int frame_height; /* pixels, 0: 16 */
	double min_width; /* pixels: narrower frames are elided; 0: 0.1 */
	/*
	 * At most this many frames drawn, 0: 25000 (about 3 MB of SVG, still quick in a browser):
	 * when more are wider than min_width, the threshold rises to the narrowest that keeps
	 * within it, and the subtitle says the threshold used.
	 */
	unsigned int max_frames;
};

/* What a write drew and left out. */
struct flame_svg_stats {
	uint64_t frames; /* tree nodes (merged frames) */
	uint64_t drawn; /* rectangles written */
	uint64_t elided; /* frames narrower than min_width (with everything above them) */
	unsigned int depth; /* deepest drawn level */
	double min_width; /* the threshold used (above min_width when max_frames was reached) */
};

/*
 * Writes f as an SVG flame graph to out (left open: the caller closes it and checks that
 * close). o and stats may be NULL. 0 or -errno (-EIO when out failed, -ENOMEM, -ERANGE when the
 * counts overflow).
 */
int flame_svg__write(const struct flame *f, const struct flame_svg_opts *o, FILE *out,
		     struct flame_svg_stats *stats);

/*
 * A differential flame graph, from `before` to `after`: widths are after's counts; a frame's
 * color says how its share of all samples (its total, normalised by each profile's samples, so
 * runs of different lengths compare) changed: red grew, blue shrank, white unchanged, the
 * intensity relative to the largest change. Hover shows both counts and the change in points.
 * Frames found only in `before` have no width to draw: counted in the subtitle.
 */
int flame_svg__write_diff(const struct flame *before, const struct flame *after,
			  const struct flame_svg_opts *o, FILE *out, struct flame_svg_stats *stats);

#endif
