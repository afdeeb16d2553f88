/* perfscope list uprobe:[GLOB@]BINARY: the functions a binary offers to uprobe:, sorted. */
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "list.h"

struct ufunc {
	char *name;
	uint64_t addr, size;
};

struct ufuncs {
	const char *glob;
	struct ufunc *v;
	size_t nr, alloc;
	bool oom;
};

static int add_ufunc(const char *name, uint64_t addr, uint64_t size, void *ctx)
{
	struct ufuncs *u = ctx;

	if (u->glob && fnmatch(u->glob, name, 0))
		return 0;
	if (u->nr == u->alloc) {
		size_t na = u->alloc ? u->alloc * 2 : 256;
		struct ufunc *n = realloc(u->v, na * sizeof(*n));

		if (!n) {
			u->oom = true;
			return -ENOMEM;
		}
		u->v = n;
		u->alloc = na;
	}
	u->v[u->nr].name = strdup(name);
	if (!u->v[u->nr].name) {
		u->oom = true;
		return -ENOMEM;
	}
	u->v[u->nr].addr = addr;
	u->v[u->nr++].size = size;
	return 0;
}

static int cmp_ufunc(const void *a, const void *b)
{
	const struct ufunc *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

int list_uprobe(const char *sel, enum out_format format)
{
	const char *kind = strncmp(sel, "uprobe:", 7) ? "uretprobe" : "uprobe";
	const char *rest = strchr(sel, ':') + 1, *at = strrchr(rest, '@');
	const char *bin = at ? at + 1 : rest;
	struct ufuncs u = { 0 };
	char path[4096], *glob = NULL;
	struct out *out;
	int err, shown = 0;

	if (at && !(glob = strndup(rest, (size_t)(at - rest))))
		return 1;
	u.glob = glob && *glob ? glob : NULL;
	err = psc_probe__find_binary(bin, path, sizeof(path));
	if (!err)
		err = psc_probe__for_each_func(path, add_ufunc, &u);
	if (err) {
		fprintf(stderr, "perfscope list: %s: %s%s\n", bin,
			err == -EINVAL ? "no ELF64 file of this machine" : strerror(-err),
			err == -ENOENT && !strchr(bin, '/')
				? " (a name without '/' is a library found as ld.so finds it, or a "
				  "program in $PATH)"
				: "");
		goto out;
	}
	qsort(u.v, u.nr, sizeof(*u.v), cmp_ufunc);
	out = out__new(STDOUT_FILENO, 0);
	if (!out) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < u.nr; i++) {
		char name[512];

		/* aliases at one address (malloc, __libc_malloc) are each a name to probe */
		if (i && !strcmp(u.v[i].name, u.v[i - 1].name))
			continue;
		snprintf(name, sizeof(name), "%s:%s@%s", kind, u.v[i].name, bin);
		shown++;
		if (format == FORMAT_JSON) {
			struct json j;

			json__begin(&j, out);
			json__key(&j, "name");
			json__str(&j, name);
			json__key(&j, "kind");
			json__str(&j, "uprobe");
			json__key(&j, "function");
			json__str(&j, u.v[i].name);
			json__key(&j, "binary");
			json__str(&j, path);
			json__key(&j, "address");
			json__u64(&j, u.v[i].addr);
			json__key(&j, "size");
			json__u64(&j, u.v[i].size);
			json__end_line(&j);
		} else {
			out__printf(out, "  %-60s [uprobe]  %#llx %llu bytes\n", name,
				    (unsigned long long)u.v[i].addr,
				    (unsigned long long)u.v[i].size);
		}
	}
	err = out__flush(out);
	out__delete(out);
	if (err && err != -EPIPE)
		fprintf(stderr, "perfscope list: writing the list failed: %s\n", strerror(-err));
	else
		err = 0;
	if (!err && !shown) {
		fprintf(stderr, "perfscope list: no function of %s matches '%s'\n", path,
			u.glob ? u.glob : "*");
		err = -ENOENT;
	}
out:
	for (size_t i = 0; i < u.nr; i++)
		free(u.v[i].name);
	free(u.v);
	free(glob);
	return err ? 1 : 0;
}
