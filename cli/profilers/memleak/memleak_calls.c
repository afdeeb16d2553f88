/* perfscope memleak's calls: each allocator entry and return, the blocks into the leak table. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>

#include "callchain.h"
#include "clock.h"
#include "memleak.h"

const struct ml_fn ml_fns[] = {
	{ "malloc", ML_ALLOC, 1, 0, 0, false },
	{ "calloc", ML_ALLOC, 1, 2, 0, false },
	{ "realloc", ML_REALLOC, 2, 0, 1, false },
	{ "reallocarray", ML_REALLOC, 2, 3, 1, false },
	{ "free", ML_FREE, 0, 0, 1, false },
	{ "posix_memalign", ML_MEMALIGN_PTR, 3, 0, 1, false },
	{ "aligned_alloc", ML_ALLOC, 2, 0, 0, false },
	{ "memalign", ML_ALLOC, 2, 0, 0, false },
	{ "valloc", ML_ALLOC, 1, 0, 0, false },
	{ "pvalloc", ML_ALLOC, 1, 0, 0, false },
	{ "mmap", ML_ALLOC, 2, 0, 0, true },
	{ "munmap", ML_FREE, 0, 0, 1, true },
};
_Static_assert(sizeof(ml_fns) / sizeof(ml_fns[0]) == ML_NR_FNS, "ML_NR_FNS: every function");

static uint64_t field(const struct psc_tp_field *f, const struct psc_sample *s)
{
	uint64_t v = 0;

	if (!f || f->offset + 8 > s->raw.size)
		return 0;
	memcpy(&v, (const char *)s->raw.data + f->offset, 8);
	return v;
}

#define MAX_FRAMES CALLCHAIN_MAX_FRAMES

/*
 * The stack at an allocator's entry, with its direct caller: a frame-pointer unwind there starts
 * from the caller's frame, i.e. at the caller's caller, unless the kernel already added the
 * return address (it does when the function starts by pushing %rbp). The probe fetched it.
 */
static const struct psc_sample *with_caller(const struct psc_sample *s, uint64_t caller,
					    struct psc_sample *copy, uint64_t *ips)
{
	uint64_t nr = s->callchain.nr, i = 0;

	if (!caller || !(s->sample_type & PERF_SAMPLE_CALLCHAIN) || !nr || nr >= MAX_FRAMES)
		return s;
	while (i < nr && s->callchain.ips[i] >= PERF_CONTEXT_MAX)
		i++; /* the context markers before the first frame */
	if (i >= nr || (i + 1 < nr && s->callchain.ips[i + 1] == caller))
		return s;
	memcpy(ips, s->callchain.ips, (i + 1) * sizeof(*ips));
	ips[i + 1] = caller;
	memcpy(ips + i + 2, s->callchain.ips + i + 1, (nr - i - 1) * sizeof(*ips));
	*copy = *s;
	copy->callchain.ips = ips;
	copy->callchain.nr = nr + 1;
	return copy;
}

/* Blocks are told apart by process too (-a, -G): its pid above the 47 bits of a user address. */
static uint64_t block_key(uint32_t pid, uint64_t ptr)
{
	return ptr ^ ((uint64_t)pid << 47);
}

static int on_return(struct ml *ml, const struct ml_fn *f, const struct ml_call *c,
		     const struct psc_sample *s, uint64_t r)
{
	switch (f->kind) {
	case ML_ALLOC:
		if (r && !(f->mmap && r == UINT64_MAX))
			leak__alloc(ml->lk, block_key(s->pid, r), c->size, c->stack, s->time,
				    (int)s->cpu, s->pid, s->tid);
		break;
	case ML_REALLOC:
		if (!r)
			break; /* failed: the old block stays; realloc(p, 0) freed it through free
				*/
		if (c->ptr)
			leak__free(ml->lk, block_key(s->pid, c->ptr), s->time, (int)s->cpu, s->pid,
				   s->tid);
		leak__alloc(ml->lk, block_key(s->pid, r), c->size, c->stack, s->time, (int)s->cpu,
			    s->pid, s->tid);
		break;
	case ML_MEMALIGN_PTR: {
		uint64_t block = 0;
		struct iovec local = { &block, sizeof(block) };
		struct iovec remote = { (void *)(uintptr_t)c->ptr, sizeof(block) };

		if (r)
			break; /* an error number: nothing allocated */
		/* the block went to *memptr: in the stack the sample carries, else still there */
		if ((s->sample_type & PERF_SAMPLE_STACK_USER) && s->regs_user.abi &&
		    s->regs_user.nr == 1 && c->ptr >= s->regs_user.regs[0] &&
		    c->ptr - s->regs_user.regs[0] + sizeof(block) <= s->stack_user.dyn_size) {
			memcpy(&block,
			       (const char *)s->stack_user.data + (c->ptr - s->regs_user.regs[0]),
			       sizeof(block));
		} else if (process_vm_readv((pid_t)s->pid, &local, 1, &remote, 1, 0) !=
			   sizeof(block)) {
			ml->memptr_unread++;
			break;
		}
		if (block)
			leak__alloc(ml->lk, block_key(s->pid, block), c->size, c->stack, s->time,
				    (int)s->cpu, s->pid, s->tid);
		break;
	}
	case ML_FREE:
		break;
	}
	return 0;
}

int ml_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s)
{
	struct ml *ml = priv;
	struct ml_ev *me = ev->priv;
	const struct ml_fn *f;
	struct ml_call *c;
	bool created;

	if (me->fn < 0 || s->pid == (uint32_t)ml->self)
		return 0;
	f = &ml_fns[me->fn];
	if (s->time > ml->last_time)
		ml->last_time = s->time;
	if (f->kind == ML_FREE) {
		uint64_t ptr = field(me->arg[f->ptr_arg], s);

		if (ptr)
			leak__free(ml->lk, block_key(s->pid, ptr), s->time, cpu, s->pid, s->tid);
		return 0;
	}
	if (!me->ret) {
		c = keymap__insert(&ml->calls, s->tid, &created);
		if (!c) {
			ml->call_nomem++;
			return 0;
		}
		/* a call nested in another (realloc(NULL, n) calls malloc) takes the thread's slot
		 */
		c->fn = me->fn;
		c->size = field(me->arg[f->size_a], s);
		if (f->size_b)
			c->size *= field(me->arg[f->size_b], s);
		c->ptr = f->ptr_arg ? field(me->arg[f->ptr_arg], s) : 0;
		{
			uint64_t ips[MAX_FRAMES + 1];
			struct psc_sample copy;
			const struct psc_sample *st =
				with_caller(s, field(me->caller, s), &copy, ips);

			c->stack = leak__stack(ml->lk, prof__callchain(p), st,
					       prof__comm(p, s->pid, s->tid));
		}
		return 0;
	}
	c = keymap__find(&ml->calls, s->tid);
	if (!c || c->fn != me->fn) {
		ml->unmatched_ret++;
		return 0;
	}
	on_return(ml, f, c, s, field(me->retval, s));
	keymap__remove(&ml->calls, s->tid);
	return 0;
}

void ml_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct ml *ml = priv;

	/* a free may be what was lost: the allocations before this point are no longer reported */
	leak__lost(ml->lk, mono_ns()); /* a loss heard now happened before now */
}
