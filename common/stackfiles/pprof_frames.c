/* pprof_frames: a symbolized stack (struct frame) into a pprof sample, addresses kept. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pprof_frames.h"

#define BUILD_ID_TEXT (2 * 20 + 1)

int pprof__add_frames(struct pprof *pp, const struct frame *frames, size_t n, const int64_t *values,
		      const struct pprof_label *labels, size_t nr_labels)
{
	/* not zeroed: every field read is written below (a profile adds tens of thousands) */
	struct pprof_frame *pfr = malloc((n ? n : 1) * sizeof(*pfr));
	size_t size = 1, used = 0;
	char *txt = NULL;
	int err = -ENOMEM;

	/* the frames' strings while the sample is added (pprof copies them), in one block */
	for (size_t k = 0; k < n; k++) {
		int l = frame__name(&frames[k], false, NULL, 0);

		size += (size_t)(l < FRAME_NAME_MAX ? l : FRAME_NAME_MAX - 1) + 1 + BUILD_ID_TEXT;
	}
	txt = malloc(size);
	if (!pfr || !txt)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const struct frame *f = &frames[k];
		char *name = txt + used;
		int l;

		/* named as in folded and text ("[libc.so.6+0x1234]", "[unknown]"), so the same
		 * code in two processes is one function */
		l = frame__name(f, false, name, size - used);
		used += (size_t)(l < FRAME_NAME_MAX ? l : FRAME_NAME_MAX - 1) + 1;
		pfr[k] = (struct pprof_frame){
			.addr = f->ip,
			.function = name,
			.module = f->kernel ? f->dso : f->path,
			.map_start = f->map_start,
			.map_limit = f->map_limit,
			.map_offset = f->map_pgoff,
		};
		if (f->build_id_size) {
			char *id = txt + used;

			for (int b = 0; b < f->build_id_size && b < 20; b++)
				snprintf(id + 2 * b, 3, "%02x", f->build_id[b]);
			pfr[k].build_id = id;
			used += BUILD_ID_TEXT;
		}
	}
	err = pprof__add_sample(pp, pfr, n, values, labels, nr_labels);
out:
	free(pfr);
	free(txt);
	return err;
}
