/* perfmap: JIT symbols from a process's /tmp/perf-PID.map, found through /proc/PID/root. */
#include "perfmap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bsearch.h"
#include "clock.h"
#include "jitdump.h"
#include "keymap.h"

struct pm_sym {
	uint64_t start, end;
	const char *name;
	uint64_t seq; /* the line's order: a later line wins */
};

/* A block of names: never moved nor freed before perfmaps__delete (names were handed out). */
struct pm_chunk {
	struct pm_chunk *next;
	size_t used, cap;
	char data[];
};

struct pm_file {
	char *path; /* the perf map, or the jitdump the process mapped */
	char dso[32];
	bool dump; /* path is a jitdump */
	uint64_t looked_ns; /* when its maps were last searched for a jitdump */
	long ns_pid;
	off_t read_to; /* bytes read (whole lines, whole records) */
	ino_t ino;
	struct pm_sym *syms; /* sorted by start */
	size_t nr, cap;
	uint64_t seq;
};

struct perfmaps {
	char root[64];
	struct keymap files; /* pid -> struct pm_file * */
	struct pm_chunk *chunks;
	uint64_t nr_syms;
};

struct perfmaps *perfmaps__new(const char *root)
{
	struct perfmaps *pm = calloc(1, sizeof(*pm));

	if (!pm)
		return NULL;
	snprintf(pm->root, sizeof(pm->root), "%s", root ? root : "/proc");
	if (keymap__init(&pm->files, sizeof(void *), 16)) {
		free(pm);
		return NULL;
	}
	return pm;
}

static void file_free(struct pm_file *f)
{
	if (f) {
		free(f->syms);
		free(f->path);
	}
	free(f);
}

void perfmaps__delete(struct perfmaps *pm)
{
	struct keymap_iter it;
	struct pm_file **f;
	uint64_t key;

	if (!pm)
		return;
	keymap__for_each(&pm->files, &it, key, f) file_free(*f);
	keymap__exit(&pm->files);
	while (pm->chunks) {
		struct pm_chunk *n = pm->chunks->next;

		free(pm->chunks);
		pm->chunks = n;
	}
	free(pm);
}

static const char *keep_name(struct perfmaps *pm, const char *s, size_t len)
{
	struct pm_chunk *c = pm->chunks;
	char *out;

	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > 65536 ? len + 1 : 65536;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		c->next = pm->chunks;
		pm->chunks = c;
	}
	out = c->data + c->used;
	memcpy(out, s, len);
	out[len] = '\0';
	c->used += len + 1;
	return out;
}

/* pid's pid in its own namespace (the last of NSpid), for the file's name; pid when unknown. */
static long ns_pid(const struct perfmaps *pm, pid_t pid)
{
	char path[96], line[256];
	long ns = pid;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/status", pm->root, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6))
			continue;
		for (char *tok = strtok(line + 6, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			ns = strtol(tok, NULL, 10);
		break;
	}
	fclose(f);
	return ns;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct pm_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

struct add_ctx {
	struct perfmaps *pm;
	struct pm_file *f;
};

static int add_sym(void *ctx, uint64_t start, uint64_t size, const char *name, size_t len)
{
	struct add_ctx *c = ctx;
	struct pm_file *f = c->f;

	if (!size)
		return 0;
	if (f->nr == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 64;
		struct pm_sym *n = realloc(f->syms, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->syms = n;
		f->cap = cap;
	}
	f->syms[f->nr] = (struct pm_sym){ .start = start,
					  .end = start + size,
					  .name = keep_name(c->pm, name, len),
					  .seq = f->seq++ };
	if (!f->syms[f->nr].name)
		return -ENOMEM;
	f->nr++;
	c->pm->nr_syms++;
	return 0;
}

/* The whole "START SIZE name" lines of a perf map from f->read_to on. */
static int read_lines(struct add_ctx *c, const char *path)
{
	char line[4096];
	FILE *in = fopen(path, "re");
	int err = 0;

	if (!in)
		return -errno;
	if (fseeko(in, c->f->read_to, SEEK_SET)) {
		fclose(in);
		return -errno;
	}
	while (!err && fgets(line, sizeof(line), in)) {
		size_t len = strlen(line);
		uint64_t start, size;
		int name_at = 0;

		if (!len || line[len - 1] != '\n')
			break; /* a line being written: read again when whole */
		c->f->read_to += (off_t)len;
		line[--len] = '\0';
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &name_at) < 2 ||
		    !name_at)
			continue;
		err = add_sym(c, start, size, line + name_at, len - (size_t)name_at);
	}
	fclose(in);
	return err;
}

/* What was appended since the last read. 0 or -errno (-ENOENT: no map). */
static int read_more(struct perfmaps *pm, struct pm_file *f)
{
	struct add_ctx c = { pm, f };
	struct stat st;
	size_t before = f->nr;

	if (stat(f->path, &st))
		return -errno;
	if (st.st_ino != f->ino) { /* a new file (a new process with this pid): from the start */
		f->ino = st.st_ino;
		f->read_to = 0;
		f->nr = before = 0;
	}
	if (st.st_size <= f->read_to)
		return 0;
	if (f->dump)
		jitdump__read(f->path, &f->read_to, add_sym, &c);
	else
		read_lines(&c, f->path);
	if (f->nr != before)
		qsort(f->syms, f->nr, sizeof(*f->syms), cmp_sym);
	return 0;
}

/*
 * No perf map: a jitdump the process mapped (perf finds it the same way, by its MMAP), at most
 * once a second. f->path becomes it when found.
 */
static void find_dump(struct perfmaps *pm, pid_t pid, struct pm_file *f)
{
	char maps[96], line[4352], want[40];
	uint64_t now = mono_ns();
	FILE *in;

	if (f->looked_ns && now - f->looked_ns < 1000000000ull)
		return;
	f->looked_ns = now;
	snprintf(maps, sizeof(maps), "%s/%d/maps", pm->root, (int)pid);
	snprintf(want, sizeof(want), "/jit-%ld.dump", f->ns_pid);
	in = fopen(maps, "re");
	if (!in)
		return;
	while (fgets(line, sizeof(line), in)) {
		size_t len = strcspn(line, "\n"), wl = strlen(want);
		char *file = strchr(line, '/'), *path;

		line[len] = '\0';
		if (!file || len < wl || strcmp(line + len - wl, want))
			continue;
		if (asprintf(&path, "%s/%d/root%s", pm->root, (int)pid, file) < 0)
			break;
		free(f->path);
		f->path = path;
		f->dump = true;
		f->ino = 0;
		snprintf(f->dso, sizeof(f->dso), "jit-%ld.dump", f->ns_pid);
		break;
	}
	fclose(in);
}

static const struct pm_sym *lookup(const struct pm_file *f, uint64_t ip)
{
	ptrdiff_t i = bsearch_last_le(f->syms, f->nr, sizeof(*f->syms),
				      offsetof(struct pm_sym, start), ip);

	/* the last line starting at or below ip that holds it; an older, longer one may */
	for (; i >= 0; i--) {
		if (ip < f->syms[i].end)
			return &f->syms[i];
		if (f->syms[i].start + (1ull << 24) < ip)
			break; /* no JIT function is 16 MiB long */
	}
	return NULL;
}

int perfmaps__find(struct perfmaps *pm, pid_t pid, uint64_t ip, const char **name, uint64_t *start,
		   const char **dso)
{
	struct pm_file **slot = keymap__find(&pm->files, (uint64_t)pid), *f;
	const struct pm_sym *s;

	if (!slot) {
		long ns = ns_pid(pm, pid);

		f = calloc(1, sizeof(*f));
		slot = f ? keymap__insert(&pm->files, (uint64_t)pid, NULL) : NULL;
		if (!slot) {
			free(f);
			return -ENOENT;
		}
		*slot = f;
		f->ns_pid = ns;
		if (asprintf(&f->path, "%s/%d/root/tmp/perf-%ld.map", pm->root, (int)pid, ns) < 0)
			f->path = NULL;
		snprintf(f->dso, sizeof(f->dso), "perf-%ld.map", ns);
		if (f->path && read_more(pm, f) == -ENOENT)
			find_dump(pm, pid, f);
		if (f->dump)
			read_more(pm, f);
	} else {
		f = *slot;
	}
	if (!f->path)
		return -ENOENT;
	s = lookup(f, ip);
	if (!s) {
		/* not there: read what the runtime appended since */
		int err = read_more(pm, f);

		if (err == -ENOENT && !f->dump) {
			find_dump(pm, pid, f);
			if (f->dump)
				err = read_more(pm, f);
		}
		if (err)
			return -ENOENT;
		s = lookup(f, ip);
		if (!s)
			return -ENODATA;
	}
	*name = s->name;
	*start = s->start;
	*dso = f->dso;
	return 0;
}

void perfmaps__forget(struct perfmaps *pm, pid_t pid)
{
	struct pm_file **slot = keymap__find(&pm->files, (uint64_t)pid);

	if (!slot)
		return;
	file_free(*slot);
	keymap__remove(&pm->files, (uint64_t)pid);
}

void perfmaps__stats(const struct perfmaps *pm, uint64_t *maps, uint64_t *syms)
{
	*maps = pm->files.nr;
	*syms = pm->nr_syms;
}
