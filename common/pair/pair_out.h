/* pair_out: the pair engine's outcomes, as a text line and as a JSON member. */
#ifndef PERFSCOPE_PAIR_OUT_H
#define PERFSCOPE_PAIR_OUT_H

#include <stdint.h>

#include "output.h"
#include "pair.h"

/* "  outcomes: paired N, replaced N, ...; pending N (peak N, bound N)\n"; c: PAIR_NR_OUTCOMES */
void pair_out__text(struct out *o, const struct pair *pr, const uint64_t *c);
/* "outcomes":{"paired":N,...} into the object j has open */
void pair_out__json(struct json *j, const uint64_t *c);

#endif
