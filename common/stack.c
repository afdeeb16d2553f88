/* PERF_SAMPLE_CALLCHAIN walking and stack text: "func+0xoff (module)" frames and folded stacks. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>

#include "stack.h"

enum ctx { CTX_NONE, CTX_KERNEL, CTX_USER, CTX_SKIP };

int stack__resolve(struct symcache *sc, pid_t pid, const uint64_t *ips, uint64_t nr,
		       unsigned int flags, struct frame *frames, int max)
{
	enum ctx ctx = CTX_NONE;
	bool first_in_ctx = true;
	int n = 0;

	for (uint64_t i = 0; i < nr && n < max; i++) {
		uint64_t ip = ips[i], lookup;
		struct sym sym;
		bool kernel;

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
				ctx = CTX_KERNEL;
			else if (ip == (uint64_t)PERF_CONTEXT_USER)
				ctx = CTX_USER;
			else
				ctx = CTX_SKIP; /* hypervisor, guest: not ours to name */
			first_in_ctx = true;
			continue;
		}
		if (ctx == CTX_SKIP)
			continue;
		/* no marker (a hand-made chain): the address says whose it is */
		kernel = ctx == CTX_KERNEL || (ctx == CTX_NONE && ksyms__is_kernel_addr(ip));
		if ((kernel && (flags & STACK_NO_KERNEL)) ||
		    (!kernel && (flags & STACK_NO_USER))) {
			first_in_ctx = false;
			continue;
		}
		/*
		 * Caller frames hold return addresses, the instruction after the call: look up
		 * ip - 1 so a call ending a function (noreturn callee) names that function.
		 */
		lookup = first_in_ctx || !ip ? ip : ip - 1;
		first_in_ctx = false;
		symcache__resolve(sc, pid, lookup, kernel, &sym);
		frames[n] = (struct frame){
			.ip = ip,
			.sym = sym.name,
			.off = sym.name ? ip - sym.start : 0,
			.dso = sym.dso,
			.kernel = kernel,
		};
		n++;
	}
	return n;
}

int frame__snprint(const struct frame *f, char *buf, size_t len)
{
	int n;

	if (f->sym)
		n = snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", f->sym, f->off,
			     f->dso ? f->dso : "[unknown]");
	else if (f->dso)
		n = snprintf(buf, len, "[unknown] (%s)", f->dso);
	else
		n = snprintf(buf, len, "0x%" PRIx64 " ([unknown])", f->ip);
	return n;
}

struct out {
	char *buf;
	size_t len, pos;
};

static void out_char(struct out *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos] = c;
	o->pos++;
}

/* A name with the characters that would break the folded format replaced. */
static void out_name(struct out *o, const char *s)
{
	for (; *s; s++) {
		char c = *s;

		out_char(o, (c == ';' || (unsigned char)c < 0x20 || c == 0x7f) ? '_' : c);
	}
}

int stack__fold(const struct frame *frames, int nr, const char *prefix, unsigned int flags,
		    char *buf, size_t len)
{
	struct out o = { .buf = buf, .len = len };
	bool first = true;

	if (prefix) {
		out_name(&o, prefix);
		first = false;
	}
	for (int i = nr - 1; i >= 0; i--) {
		const struct frame *f = &frames[i];

		if (!first)
			out_char(&o, ';');
		first = false;
		if (f->sym) {
			out_name(&o, f->sym);
		} else if ((flags & FOLD_WITH_DSO) && f->dso) {
			out_char(&o, '[');
			out_name(&o, f->dso);
			out_char(&o, ']');
		} else {
			out_name(&o, "[unknown]");
		}
		if (f->kernel && (flags & FOLD_KERNEL_SUFFIX))
			out_name(&o, "_[k]");
	}
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return (int)o.pos;
}
