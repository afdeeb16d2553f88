/* PERF_SAMPLE_CALLCHAIN walking and stack text: "func+0xoff (module)" frames and folded stacks. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>

#include "stack.h"

int stack__resolve(struct symcache *sc, pid_t pid, const uint64_t *ips, uint64_t nr,
		   unsigned int flags, struct frame *frames, int max)
{
	struct stack_walk w;
	uint64_t ip;
	bool kernel, ret;
	int n = 0;

	stack_walk__init(&w, ips, nr);
	while (n < max && stack_walk__next(&w, &ip, &kernel, &ret)) {
		struct sym sym;

		if ((kernel && (flags & STACK_NO_KERNEL)) || (!kernel && (flags & STACK_NO_USER)))
			continue;
		/*
		 * Caller frames hold return addresses, the instruction after the call: look up
		 * ip - 1 so a call ending a function (noreturn callee) names that function.
		 */
		symcache__resolve(sc, pid, ret ? ip - 1 : ip, kernel, &sym);
		frames[n++] = (struct frame){
			.ip = ip,
			.sym = sym.name,
			.off = sym.name ? ip - sym.start : 0,
			.dso = sym.dso,
			.path = sym.dso,
			.file_off = sym.mapped ? ip - sym.map_base : 0,
			.mapped = sym.mapped,
			.kernel = kernel,
		};
	}
	return n;
}

int frame__name(const struct frame *f, bool ksuffix, char *buf, size_t len)
{
	const char *k = ksuffix && f->kernel ? "_[k]" : "";

	if (len > FRAME_NAME_MAX)
		len = FRAME_NAME_MAX; /* the one cut of every writer */
	if (f->sym)
		return snprintf(buf, len, "%s%s", f->sym, k);
	if (!f->kernel && f->mapped && f->dso)
		return snprintf(buf, len, "[%s+0x%" PRIx64 "]", f->dso, f->file_off);
	return snprintf(buf, len, "[unknown]%s", k);
}

const char *frame__root(const char *comm)
{
	/* comm.h's name of a thread gone before it was named */
	return comm && *comm && strcmp(comm, "<...>") ? comm : "[unknown]";
}

bool frame__is_root(const char *sym)
{
	static const char *const roots[] = {
		"main",
		"_start",
		"__libc_start_main",
		"__libc_start_call_main",
		"start_thread",
		"clone",
		"clone3",
		"__clone",
		"__clone3",
		"thread_start",
		"_dl_start",
		"_dl_start_user",
	};

	if (!sym)
		return false;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
		if (!strcmp(sym, roots[i]))
			return true;
	return false;
}

int frame__snprint(const struct frame *f, char *buf, size_t len)
{
	int n;

	if (f->sym)
		return snprintf(buf, len, "%.*s+0x%" PRIx64 " (%s)", FRAME_NAME_MAX - 1, f->sym,
				f->off, f->dso ? f->dso : "[unknown]");
	n = frame__name(f, false, buf, len);
	if (n > FRAME_NAME_MAX - 1)
		n = FRAME_NAME_MAX - 1; /* what frame__name wrote */
	if (n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " (%s)", f->dso ? f->dso : "[unknown]");
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
	char name[FRAME_NAME_MAX];

	if (prefix) {
		out_name(&o, frame__root(prefix));
		first = false;
	}
	for (int i = nr - 1; i >= 0; i--) {
		if (!first)
			out_char(&o, ';');
		first = false;
		frame__name(&frames[i], flags & FOLD_KERNEL_SUFFIX, name, sizeof(name));
		out_name(&o, name);
	}
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return (int)o.pos;
}
