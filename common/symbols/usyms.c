/* Per-process executable mappings, fed by /proc/PID/maps and MMAP2/FORK/EXIT/exec records. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "bsearch.h"
#include "usyms.h"

#define NR_PROC_BUCKETS 4096
#define NR_NAME_BUCKETS 1024

struct umap {
	uint64_t start, end, pgoff;
	uint64_t dev, ino;
	uint64_t time; /* its record's, or when /proc was read; 0 unknown */
	const char *name; /* interned: lives as long as the usyms */
	struct dso *dso;
	bool dso_tried;
	uint8_t build_id_size;
	uint8_t build_id[BUILD_ID_MAX];
};

struct proc {
	struct proc *next;
	pid_t pid;
	uint64_t gen;
	uint64_t born; /* its fork, exec or /proc read (usyms__born); 0 unknown */
	uint64_t exec_time; /* its last exec; 0 none seen */
	struct umap *maps; /* sorted by start, no overlaps */
	size_t nr, cap;
	bool gone; /* /proc/PID vanished before we saw it: don't retry on every sample */
};

struct name_ent {
	struct name_ent *next;
	char name[];
};

struct usyms {
	struct dsos *dsos;
	struct proc *buckets[NR_PROC_BUCKETS];
	size_t nr_procs;
	uint64_t next_gen; /* 0 is the kernel's generation in the symcache */
	struct proc *last; /* samples come in runs from one process */
	struct name_ent *names[NR_NAME_BUCKETS];
};

static size_t name_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h % NR_NAME_BUCKETS;
}

static const char *intern(struct usyms *u, const char *s)
{
	size_t b = name_hash(s), len;
	struct name_ent *e;

	for (e = u->names[b]; e; e = e->next)
		if (!strcmp(e->name, s))
			return e->name;
	len = strlen(s);
	e = malloc(sizeof(*e) + len + 1);
	if (!e)
		return NULL;
	memcpy(e->name, s, len + 1);
	e->next = u->names[b];
	u->names[b] = e;
	return e->name;
}

struct usyms *usyms__new(struct dsos *dsos)
{
	struct usyms *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->dsos = dsos;
	u->next_gen = 1;
	return u;
}

static void proc_free(struct proc *p)
{
	free(p->maps);
	free(p);
}

void usyms__delete(struct usyms *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < NR_PROC_BUCKETS; i++) {
		struct proc *p = u->buckets[i], *n;

		for (; p; p = n) {
			n = p->next;
			proc_free(p);
		}
	}
	for (size_t i = 0; i < NR_NAME_BUCKETS; i++) {
		struct name_ent *e = u->names[i], *n;

		for (; e; e = n) {
			n = e->next;
			free(e);
		}
	}
	free(u);
}

size_t usyms__nr_procs(const struct usyms *u)
{
	return u ? u->nr_procs : 0;
}

static struct proc **proc_slot(struct usyms *u, pid_t pid)
{
	struct proc **pp = &u->buckets[(uint32_t)pid % NR_PROC_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

static struct proc *proc_find(struct usyms *u, pid_t pid)
{
	if (u->last && u->last->pid == pid)
		return u->last;
	return *proc_slot(u, pid);
}

static struct proc *proc_new(struct usyms *u, pid_t pid)
{
	struct proc **pp = proc_slot(u, pid), *p;

	if (*pp)
		return *pp;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->gen = u->next_gen++;
	*pp = p;
	u->nr_procs++;
	return p;
}

static void proc_remove(struct usyms *u, pid_t pid)
{
	struct proc **pp = proc_slot(u, pid), *p = *pp;

	if (!p)
		return;
	*pp = p->next;
	if (u->last == p)
		u->last = NULL;
	proc_free(p);
	u->nr_procs--;
}

/* Makes room for n more maps. */
static int maps_reserve(struct proc *p, size_t n)
{
	struct umap *m;
	size_t cap;

	if (p->nr + n <= p->cap)
		return 0;
	cap = p->cap ? p->cap * 2 : 32;
	while (cap < p->nr + n)
		cap *= 2;
	m = realloc(p->maps, cap * sizeof(*m));
	if (!m)
		return -ENOMEM;
	p->maps = m;
	p->cap = cap;
	return 0;
}

/*
 * Inserts [start, end) as mmap(2) would: whatever it overlaps is cut away (a part left of it and
 * a part right of it survive). When m is NULL only the cutting happens (a non-exec mapping).
 */
static int maps_insert(struct proc *p, uint64_t start, uint64_t end, const struct umap *m)
{
	size_t i = 0, j;
	int err = maps_reserve(p, 2);

	if (err)
		return err;
	/* first map ending after start */
	while (i < p->nr && p->maps[i].end <= start)
		i++;
	if (i < p->nr && p->maps[i].start < start && p->maps[i].end > end) {
		/* one map contains the new range: split it in three */
		struct umap right = p->maps[i];

		right.pgoff += end - right.start;
		right.start = end;
		p->maps[i].end = start;
		memmove(&p->maps[i + 2], &p->maps[i + 1], (p->nr - i - 1) * sizeof(*p->maps));
		p->maps[i + 1] = right;
		p->nr++;
		i++;
	} else {
		if (i < p->nr && p->maps[i].start < start) {
			p->maps[i].end = start; /* keep its left part */
			i++;
		}
		j = i;
		while (j < p->nr && p->maps[j].end <= end)
			j++; /* wholly covered: dropped */
		if (j < p->nr && p->maps[j].start < end) {
			p->maps[j].pgoff += end - p->maps[j].start; /* keep its right part */
			p->maps[j].start = end;
		}
		memmove(&p->maps[i], &p->maps[j], (p->nr - j) * sizeof(*p->maps));
		p->nr -= j - i;
	}
	if (m) {
		memmove(&p->maps[i + 1], &p->maps[i], (p->nr - i) * sizeof(*p->maps));
		p->maps[i] = *m;
		p->nr++;
	}
	return 0;
}

static int add_map(struct usyms *u, struct proc *p, uint64_t start, uint64_t len,
		   uint64_t pgoff, const struct umap_file *file)
{
	struct umap m = { 0 };
	bool exec = !file->prot || (file->prot & PROT_EXEC);

	if (!len || start + len < start)
		return -EINVAL;
	/* the old image's, read after its exec (another CPU's ring): gone with it */
	if (file->time && file->time < p->exec_time)
		return 0;
	p->gen = u->next_gen++;
	if (!exec)
		return maps_insert(p, start, start + len, NULL);
	m.start = start;
	m.end = start + len;
	m.pgoff = pgoff;
	m.dev = (file->maj || file->min) ? makedev(file->maj, file->min) : 0;
	m.ino = file->ino;
	m.time = file->time;
	m.name = intern(u, file->path && *file->path ? file->path : "//anon");
	if (!m.name)
		return -ENOMEM;
	if (file->build_id && file->build_id_size && file->build_id_size <= BUILD_ID_MAX) {
		memcpy(m.build_id, file->build_id, file->build_id_size);
		m.build_id_size = file->build_id_size;
	}
	return maps_insert(p, m.start, m.end, &m);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* the clock of the records' times (the session asks for it: use_clockid) */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int usyms__load_proc(struct usyms *u, pid_t pid)
{
	char path[64], *line = NULL;
	uint64_t now = now_ns();
	size_t cap = 0;
	struct proc *p;
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ENOENT : -errno;
	proc_remove(u, pid);
	p = proc_new(u, pid);
	if (!p) {
		fclose(f);
		return -ENOMEM;
	}
	p->born = now;
	while (!err && getline(&line, &cap, f) > 0) {
		uint64_t start, end, off, ino;
		unsigned int maj, min;
		char perms[8];
		int name_at = 0;
		struct umap_file file = { 0 };

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &start, &end, perms, &off, &maj, &min, &ino, &name_at) < 7 ||
		    !name_at)
			continue;
		if (perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = '\0';
		file.path = line + name_at;
		file.maj = maj;
		file.min = min;
		file.ino = ino;
		file.prot = PROT_EXEC;
		file.time = now;
		err = add_map(u, p, start, end - start, off, &file);
	}
	free(line);
	fclose(f);
	return err;
}

int usyms__mmap(struct usyms *u, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		    const struct umap_file *file)
{
	struct proc *p = proc_find(u, pid);

	if (!file)
		return -EINVAL;
	if (!p || p->gone) {
		/* first news of a process started before us: take what it already maps */
		if (usyms__load_proc(u, pid) == -ENOMEM)
			return -ENOMEM;
		p = proc_find(u, pid);
		if (!p || p->gone) {
			proc_remove(u, pid);
			p = proc_new(u, pid);
		}
		if (!p)
			return -ENOMEM;
	}
	return add_map(u, p, start, len, pgoff, file);
}

/* Puts back over the child the maps it had that are newer than t (out-of-order records). */
static int keep_newer(struct usyms *u, struct proc *child, const struct umap *old, size_t nr,
		      uint64_t t)
{
	int err = 0;

	for (size_t i = 0; i < nr && !err; i++)
		if (old[i].time > t)
			err = maps_insert(child, old[i].start, old[i].end, &old[i]);
	return err;
}

int usyms__fork(struct usyms *u, pid_t ppid, pid_t pid, uint64_t time)
{
	struct proc *parent, *child = proc_find(u, pid);
	struct umap *old = NULL;
	size_t nr_old = 0;
	int err = 0;

	if (ppid == pid)
		return 0; /* a new thread shares its process's maps */
	if (child && time && child->born > time) {
		/*
		 * The child's exec, mmaps or /proc read came first: what it holds is newer than
		 * this fork (an entry of an earlier process of this pid would be older).
		 */
		return 0;
	}
	if (child && time) {
		/* the child's own mmaps after the fork, read before it: they stay */
		old = child->maps;
		nr_old = child->nr;
		child->maps = NULL;
		child->nr = child->cap = 0;
	}
	parent = proc_find(u, ppid);
	proc_remove(u, pid);
	if (!parent || parent->gone) {
		if (!nr_old)
			goto out; /* learnt from /proc on first use */
		parent = NULL;
	}
	child = proc_new(u, pid);
	if (!child) {
		err = -ENOMEM;
		goto out;
	}
	child->born = time;
	if (parent && parent->nr) {
		child->maps = malloc(parent->nr * sizeof(*child->maps));
		if (!child->maps) {
			proc_remove(u, pid);
			err = -ENOMEM;
			goto out;
		}
		memcpy(child->maps, parent->maps, parent->nr * sizeof(*child->maps));
		child->nr = child->cap = parent->nr;
	}
	err = keep_newer(u, child, old, nr_old, time);
out:
	free(old);
	return err;
}

void usyms__exit(struct usyms *u, pid_t pid)
{
	proc_remove(u, pid);
}

void usyms__exec(struct usyms *u, pid_t pid, uint64_t time)
{
	struct proc *p = proc_find(u, pid);
	size_t n = 0;

	if (!p && !time)
		return;
	if (!p) {
		/*
		 * First news of it: /proc shows the new image, or a later state (its maps are
		 * newer than the exec and stay); else its own mmaps will tell. Either way a FORK
		 * read after this one is older and must not replace it.
		 */
		if (usyms__load_proc(u, pid) == -ENOMEM)
			return;
		p = proc_find(u, pid);
		if (!p && !(p = proc_new(u, pid)))
			return;
	}
	/* what the new image mapped before this record was read (another CPU's ring) stays */
	for (size_t i = 0; time && i < p->nr; i++)
		if (p->maps[i].time > time)
			p->maps[n++] = p->maps[i];
	p->nr = n;
	p->gone = false;
	p->gen = u->next_gen++;
	if (time > p->exec_time)
		p->exec_time = time;
	if (time > p->born)
		p->born = time;
}

uint64_t usyms__born(struct usyms *u, pid_t pid)
{
	struct proc *p = proc_find(u, pid);

	return p ? p->born : 0;
}

/* The process, loading it from /proc on first sight; NULL when nothing can be known. */
static struct proc *proc_get(struct usyms *u, pid_t pid)
{
	struct proc *p = proc_find(u, pid);

	if (!p) {
		if (usyms__load_proc(u, pid) < 0) {
			p = proc_new(u, pid);
			if (p)
				p->gone = true;
		} else {
			p = proc_find(u, pid);
		}
	}
	if (p)
		u->last = p;
	return p;
}

int usyms__gen(struct usyms *u, pid_t pid, uint64_t *gen)
{
	struct proc *p = proc_get(u, pid);

	if (!p)
		return -ESRCH;
	*gen = p->gen;
	return 0;
}

/* The binary of a mapping, loaded on first use. */
static struct dso *map_dso(struct usyms *u, pid_t pid, struct umap *m)
{
	if (!m->dso_tried) {
		struct dso_key key = { .dev = m->dev,
					   .ino = m->ino,
					   .build_id = m->build_id_size ? m->build_id : NULL,
					   .build_id_size = m->build_id_size };

		m->dso_tried = true;
		if (m->name[0] == '/' || !strcmp(m->name, "[vdso]"))
			m->dso = dsos__get(u->dsos, &key, m->name, pid);
	}
	return m->dso;
}

int usyms__find(struct usyms *u, pid_t pid, uint64_t ip, struct uaddr *hit)
{
	struct proc *p = proc_get(u, pid);
	struct umap *m;
	ptrdiff_t i;
	uint64_t off;

	memset(hit, 0, sizeof(*hit));
	if (!p)
		return -ESRCH;
	hit->gen = p->gen;
	i = BSEARCH_LAST_LE(p->maps, p->nr, start, ip);
	if (i < 0)
		return p->gone ? -ESRCH : -ENOENT;
	m = &p->maps[i];
	if (ip >= m->end)
		return -ENOENT;
	hit->dso = map_dso(u, pid, m);
	hit->map_start = m->start;
	hit->map_end = m->end;
	hit->map_pgoff = m->pgoff;
	hit->map_name = m->name;
	off = ip - m->start + m->pgoff;
	if (!m->dso || !dso__offset_to_vaddr(m->dso, off, &hit->vaddr))
		hit->vaddr = off;
	return 0;
}
