/* pprof_frames: a symbolized stack (struct frame) into a pprof sample, addresses kept. */
#ifndef PERFSCOPE_COMMON_PPROF_FRAMES_H
#define PERFSCOPE_COMMON_PPROF_FRAMES_H

#include <stddef.h>
#include <stdint.h>

#include "callchain.h"
#include "pprof.h"

/*
 * pprof__add_sample of frames[0..n) (innermost first, as callchain__frames gives them): each
 * named by frame__name, with its address, mapping and build-id, so pprof can map it back to
 * its file. 0 or -ENOMEM.
 */
int pprof__add_frames(struct pprof *pp, const struct frame *frames, size_t n, const int64_t *values,
		      const struct pprof_label *labels, size_t nr_labels);

#endif
