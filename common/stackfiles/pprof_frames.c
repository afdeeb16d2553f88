/* pprof_frames: a symbolized stack (struct cc_frame) into a pprof sample, addresses kept. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "pprof_frames.h"

/* A frame's strings while its sample is added: pprof copies them. */
struct frame_text {
	char build_id[2 * 20 + 1];
	char name[512];
};

int pprof__add_frames(struct pprof *pp, const struct cc_frame *frames, size_t n,
		      const int64_t *values, const struct pprof_label *labels, size_t nr_labels)
{
	/* not zeroed: every field read is written below (a profile adds tens of thousands) */
	struct pprof_frame *pfr = malloc((n ? n : 1) * sizeof(*pfr));
	struct frame_text *txt = malloc((n ? n : 1) * sizeof(*txt));
	int err = -ENOMEM;

	if (!pfr || !txt)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const struct cc_frame *f = &frames[k];

		/* named as in folded and text ("[libc.so.6+0x1234]", "[unknown]"), so the same
		 * code in two processes is one function */
		cc_frame__name(f, false, txt[k].name, sizeof(txt[k].name));
		pfr[k] = (struct pprof_frame){
			.addr = f->ip,
			.function = txt[k].name,
			.module = f->kernel ? f->dso : f->path,
			.map_start = f->map_start,
			.map_limit = f->map_limit,
			.map_offset = f->map_pgoff,
		};
		if (f->build_id_size) {
			for (int b = 0; b < f->build_id_size && b < 20; b++)
				snprintf(txt[k].build_id + 2 * b, 3, "%02x", f->build_id[b]);
			pfr[k].build_id = txt[k].build_id;
		}
	}
	err = pprof__add_sample(pp, pfr, n, values, labels, nr_labels);
out:
	free(pfr);
	free(txt);
	return err;
}
