/* Registry of loaded binaries keyed by device/inode and build-id: each binary's symbols are read
 * once. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "dso.h"

#define NR_BUCKETS 1024

struct dso_entry {
	struct dso_entry *next;
	uint64_t dev, ino;
	char *path; /* the key when ino is 0 */
	struct dso *dso;
	bool owner; /* false: shares another entry's dso (same build-id) */
};

struct dsos {
	struct dso_opts opts;
	char *debug_dir;
	struct dso_entry *buckets[NR_BUCKETS];
	size_t nr_dsos;
};

struct dsos *dsos__new(const struct dso_opts *opts)
{
	struct dsos *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	if (opts) {
		d->opts = *opts;
		if (opts->debug_dir) {
			d->debug_dir = strdup(opts->debug_dir);
			if (!d->debug_dir) {
				free(d);
				return NULL;
			}
			d->opts.debug_dir = d->debug_dir;
		}
	}
	return d;
}

void dsos__delete(struct dsos *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < NR_BUCKETS; i++) {
		struct dso_entry *e = d->buckets[i], *n;

		for (; e; e = n) {
			n = e->next;
			if (e->owner)
				dso__delete(e->dso);
			free(e->path);
			free(e);
		}
	}
	free(d->debug_dir);
	free(d);
}

size_t dsos__nr(const struct dsos *d)
{
	return d ? d->nr_dsos : 0;
}

static size_t str_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static size_t bucket_of(uint64_t dev, uint64_t ino, const char *path)
{
	uint64_t h = ino ? (ino * 0x9E3779B97F4A7C15ull) ^ dev : str_hash(path);

	return (size_t)(h ^ (h >> 29)) % NR_BUCKETS;
}

static struct dso_entry *lookup(struct dsos *d, uint64_t dev, uint64_t ino, const char *path)
{
	struct dso_entry *e = d->buckets[bucket_of(dev, ino, path)];

	for (; e; e = e->next) {
		if (ino ? (e->ino == ino && e->dev == dev) : (!e->ino && !strcmp(e->path, path)))
			return e;
	}
	return NULL;
}

static struct dso *find_by_build_id(struct dsos *d, const uint8_t *id, uint8_t size)
{
	for (size_t i = 0; i < NR_BUCKETS; i++)
		for (struct dso_entry *e = d->buckets[i]; e; e = e->next)
			if (e->owner && e->dso->build_id_size == size &&
			    !memcmp(e->dso->build_id, id, size))
				return e->dso;
	return NULL;
}

/*
 * Where to read the file: through the process's root (another mount namespace) first, then the
 * path itself. With an inode to compare, a file replaced since it was mapped is refused.
 */
static bool pick_open_path(const struct dso_key *key, const char *path, pid_t pid, char *out,
			   size_t len)
{
	char cand[2][PATH_MAX];
	int n = 0;

	if (pid > 0 && snprintf(cand[n], sizeof(cand[n]), "/proc/%d/root%s", (int)pid, path) <
			       (int)sizeof(cand[n]))
		n++;
	snprintf(cand[n++], sizeof(cand[0]), "%s", path);
	for (int i = 0; i < n; i++) {
		struct stat st;

		if (stat(cand[i], &st))
			continue;
		if (key->ino &&
		    (st.st_ino != key->ino || (key->dev && (uint64_t)st.st_dev != key->dev)))
			continue;
		if (strlen(cand[i]) >= len)
			continue;
		memcpy(out, cand[i], strlen(cand[i]) + 1);
		return true;
	}
	return false;
}

/* "/usr/lib/libfoo.so (deleted)": the name without the kernel's suffix. */
static void strip_deleted(char *path)
{
	size_t len = strlen(path);
	const char *suf = " (deleted)";
	size_t sl = strlen(suf);

	if (len > sl && !strcmp(path + len - sl, suf))
		path[len - sl] = '\0';
}

struct dso *dsos__get(struct dsos *d, const struct dso_key *key, const char *path,
			      pid_t pid)
{
	struct dso_entry *e;
	struct dso *dso = NULL;
	char open_path[PATH_MAX], name[PATH_MAX];
	size_t b;

	if (!d || !key || !path)
		return NULL;
	e = lookup(d, key->dev, key->ino, path);
	if (e)
		return e->dso;

	snprintf(name, sizeof(name), "%s", path);
	strip_deleted(name);
	if (key->build_id && key->build_id_size)
		dso = find_by_build_id(d, key->build_id, key->build_id_size);

	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->dev = key->dev;
	e->ino = key->ino;
	e->path = strdup(path);
	if (!e->path) {
		free(e);
		return NULL;
	}
	if (!dso) {
		if (name[0] != '/') {
			/* [vdso] is read from memory; other pseudo files have no symbols */
			dso = dso__load(name, NULL, &d->opts);
		} else if (pick_open_path(key, name, pid, open_path, sizeof(open_path))) {
			dso = dso__load(name, open_path, &d->opts);
			if (dso && dso->build_id_size && !dso->load_err) {
				struct dso *same =
					find_by_build_id(d, dso->build_id, dso->build_id_size);

				if (same) {
					/* one binary reached through two inodes */
					dso__delete(dso);
					dso = same;
					goto shared;
				}
			}
		} else {
			dso = dso__load(name, "", &d->opts);
			if (dso)
				dso->load_err = key->ino ? ESTALE : ENOENT;
		}
		if (!dso) {
			free(e->path);
			free(e);
			return NULL;
		}
		e->owner = true;
		d->nr_dsos++;
	}
shared:
	e->dso = dso;
	b = bucket_of(e->dev, e->ino, e->path);
	e->next = d->buckets[b];
	d->buckets[b] = e;
	return dso;
}
