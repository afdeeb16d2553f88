/* sample_keep: copies of decoded samples that own their parts (raw, callchain, regs, user stack).
 */
#include "sample_keep.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * The parts a sample may point to, as X(member, bytes) with the source sample named s: one list
 * for the size and the copy, so the two never disagree. A part is present when its pointer is.
 */
#define SAMPLE_PARTS(X)                                                                        \
	X(read.group, (size_t)s->read.nr * s->read.stride * sizeof(uint64_t))                  \
	X(callchain.ips, (size_t)s->callchain.nr * sizeof(uint64_t))                           \
	X(raw.data, (size_t)s->raw.size)                                                       \
	X(branch_stack.entries, (size_t)s->branch_stack.nr * sizeof(struct perf_branch_entry)) \
	X(branch_stack.counters, (size_t)s->branch_stack.nr * sizeof(uint64_t))                \
	X(regs_user.regs, (size_t)s->regs_user.nr * sizeof(uint64_t))                          \
	X(stack_user.data, (size_t)s->stack_user.dyn_size)                                     \
	X(regs_intr.regs, (size_t)s->regs_intr.nr * sizeof(uint64_t))                          \
	X(aux.data, (size_t)s->aux.size)

size_t sample_keep__bytes(const struct psc_sample *s)
{
	size_t n = 0;

#define SIZE_OF(member, len) \
	if (s->member)       \
		n += round8(len);
	SAMPLE_PARTS(SIZE_OF)
#undef SIZE_OF
	return n;
}

void sample_keep__into(struct psc_sample *dst, const struct psc_sample *s, void *buf)
{
	char *at = buf;

	*dst = *s;
	/*
	 * A part is re-pointed even when empty (a user stack of which the kernel could copy
	 * nothing: dyn_size 0): present stays present, and no pointer into the record survives.
	 */
#define COPY(member, len)                            \
	if (s->member) {                             \
		size_t len_ = (len);                 \
                                                     \
		if (len_)                            \
			memcpy(at, s->member, len_); \
		dst->member = (const void *)at;      \
		at += round8(len_);                  \
	}
	SAMPLE_PARTS(COPY)
#undef COPY
}

struct psc_sample *sample_keep__dup(const struct psc_sample *s)
{
	struct psc_sample *c = malloc(sizeof(*c) + sample_keep__bytes(s));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	sample_keep__into(c, s, c + 1);
	return c;
}
