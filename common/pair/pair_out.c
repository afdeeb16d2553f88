/* pair_out: the pair engine's outcomes, as a text line and as a JSON member. */
#include "pair_out.h"

void pair_out__text(struct out *o, const struct pair *pr, const uint64_t *c)
{
	out__printf(o, "  outcomes:");
	for (int i = 0; i < PAIR_NR_OUTCOMES; i++)
		out__printf(o, "%s %s %llu", i ? "," : "", pair_outcome__name(i),
			    (unsigned long long)c[i]);
	out__printf(o, "; pending %zu (peak %zu, bound %zu)\n", pair__nr_pending(pr),
		    pair__peak_pending(pr), pair__max_pending(pr));
}

void pair_out__json(struct json *j, const uint64_t *c)
{
	JSON_KEY(j, "outcomes");
	json__obj(j);
	for (int i = 0; i < PAIR_NR_OUTCOMES; i++) {
		json__key(j, pair_outcome__name(i));
		json__u64(j, c[i]);
	}
	json__end(j);
}
