/* Tracepoint lookup for the event parser: ids from <tracefs>/events/<sys>/<name>/id, glob
 * expansion, suggestions. */
#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "parse_internal.h"

static bool has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

static bool is_dir_at(int dfd, const char *name)
{
	struct stat st;

	return !fstatat(dfd, name, &st, 0) && S_ISDIR(st.st_mode);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, int nr)
{
	for (int i = 0; i < nr; i++)
		free(names[i]);
	free(names);
}

/*
 * The sorted subdirectories of path matching pattern (NULL: all). Hidden entries never match.
 * Returns the count or -errno.
 */
static int list_dirs(const char *path, const char *pattern, char ***out)
{
	char **names = NULL;
	int nr = 0, alloc = 0, dfd, err = 0;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	d = opendir(path);
	if (!d)
		return -errno;
	dfd = dirfd(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (pattern && fnmatch(pattern, de->d_name, FNM_PERIOD))
			continue;
		if (de->d_type != DT_DIR &&
		    (de->d_type != DT_UNKNOWN || !is_dir_at(dfd, de->d_name)))
			continue;
		if (nr == alloc) {
			char **n;

			alloc = alloc ? alloc * 2 : 32;
			n = realloc(names, (size_t)alloc * sizeof(*names));
			if (!n) {
				err = -ENOMEM;
				break;
			}
			names = n;
		}
		names[nr] = strdup(de->d_name);
		if (!names[nr]) {
			err = -ENOMEM;
			break;
		}
		nr++;
	}
	closedir(d);
	if (err) {
		free_names(names, nr);
		return err;
	}
	if (nr)
		qsort(names, (size_t)nr, sizeof(*names), cmp_str);
	*out = names;
	return nr;
}

/* Reads a tracepoint's id; -errno when unreadable, -EINVAL when the file holds no number. */
static int read_id(const char *path, uint64_t *id)
{
	char buf[32], *end;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	errno = 0;
	*id = strtoull(buf, &end, 10);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EINVAL;
	return 0;
}

void psc_tp_matches_free(struct psc_tp_match *m, int nr)
{
	for (int i = 0; i < nr; i++) {
		free(m[i].sys);
		free(m[i].name);
	}
	free(m);
}

static int add_match(struct psc_tp_match **m, int *nr, int *alloc, const char *sys,
		     const char *name, uint64_t id)
{
	if (*nr == *alloc) {
		struct psc_tp_match *n;
		int na = *alloc ? *alloc * 2 : 8;

		n = realloc(*m, (size_t)na * sizeof(**m));
		if (!n)
			return -ENOMEM;
		*m = n;
		*alloc = na;
	}
	(*m)[*nr].sys = strdup(sys);
	(*m)[*nr].name = strdup(name);
	(*m)[*nr].id = id;
	if (!(*m)[*nr].sys || !(*m)[*nr].name) {
		free((*m)[*nr].sys);
		free((*m)[*nr].name);
		return -ENOMEM;
	}
	(*nr)++;
	return 0;
}

/* Tracepoint and system names are identifiers with '-' and '.'; globs add * ? [ ] ! ^. */
static int check_chars(struct psc_evparse *p, const char *s, int pos, const char *what)
{
	for (const char *c = s; *c; c++) {
		if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		    (*c >= '0' && *c <= '9') || strchr("_-.*?[]!^", *c))
			continue;
		return psc_evparse_fail(
			p, -EINVAL, pos + (int)(c - s),
			"invalid character '%c' in tracepoint %s '%s'; expected letters, digits, '_', '-' or glob characters (* ? [...])",
			*c, what, s);
	}
	if (!*s)
		return psc_evparse_fail(
			p, -EINVAL, pos,
			"empty tracepoint %s; expected SYSTEM:NAME such as 'sched:sched_switch'",
			what);
	if (s[0] == '.')
		return psc_evparse_fail(p, -EINVAL, pos, "tracepoint %s '%s' cannot start with '.'",
					what, s);
	return 0;
}

static int unknown_system(struct psc_evparse *p, const char *events, const char *sys, int pos)
{
	struct psc_suggest s;
	char **names, hint[400];
	int nr = list_dirs(events, NULL, &names);

	psc_suggest__init(&s, sys, strlen(sys));
	for (int i = 0; i < nr; i++)
		psc_suggest__add(&s, names[i], NULL);
	if (nr > 0)
		free_names(names, nr);
	psc_suggest__format(&s, hint, sizeof(hint));
	return psc_evparse_fail(p, -ENOENT, pos, "unknown tracepoint system '%s' (no %s/%s)%s", sys,
				events, sys, hint);
}

static int unknown_event(struct psc_evparse *p, const char *events, const char *sys,
			 const char *name, int pos)
{
	struct psc_suggest s;
	char path[PATH_MAX], **names, hint[400], disp[300];
	int nr;

	psc_pathf(path, sizeof(path), "%s/%s", events, sys);
	nr = list_dirs(path, NULL, &names);
	psc_suggest__init(&s, name, strlen(name));
	for (int i = 0; i < nr; i++) {
		psc_pathf(disp, sizeof(disp), "%s:%s", sys, names[i]);
		psc_suggest__add(&s, names[i], disp);
	}
	if (nr > 0)
		free_names(names, nr);
	psc_suggest__format(&s, hint, sizeof(hint));
	return psc_evparse_fail(p, -ENOENT, pos, "unknown tracepoint '%s:%s'%s", sys, name, hint);
}

/* Appends the events of one system matching name (or exactly name) to *m. */
static int scan_system(struct psc_evparse *p, const char *events, const char *sys, const char *name,
		       int name_pos, struct psc_tp_match **m, int *nr, int *alloc)
{
	char path[PATH_MAX], **names = NULL;
	int n, err = 0;

	psc_pathf(path, sizeof(path), "%s/%s", events, sys);
	n = list_dirs(path, has_glob(name) ? name : NULL, &names);
	if (n < 0)
		return psc_evparse_fail(p, n, name_pos, "cannot list %s: %s", path, strerror(-n));
	for (int i = 0; i < n && !err; i++) {
		uint64_t id = 0;

		if (!has_glob(name) && strcmp(names[i], name))
			continue;
		if (psc_pathf(path, sizeof(path), "%s/%s/%s/id", events, sys, names[i]))
			continue;
		err = read_id(path, &id);
		if (err == -ENOENT && has_glob(name)) {
			err = 0; /* a directory without an id is not a tracepoint */
			continue;
		}
		if (err) {
			err = psc_evparse_fail(
				p, err == -EINVAL ? -EINVAL : err, name_pos,
				"cannot read the id of tracepoint '%s:%s' from %s: %s%s", sys,
				names[i], path, err == -EINVAL ? "not a number" : strerror(-err),
				err == -EACCES || err == -EPERM
					? " (reading tracefs needs root or CAP_SYS_ADMIN)"
					: "");
			break;
		}
		err = add_match(m, nr, alloc, sys, names[i], id);
		if (err)
			err = psc_evparse_fail(p, err, name_pos, "out of memory");
	}
	free_names(names, n);
	return err;
}

int psc_evparse_tracepoints(struct psc_evparse *p, const char *sys, int sys_pos, const char *name,
			    int name_pos, struct psc_tp_match **out, int *nr_out)
{
	struct psc_tp_match *m = NULL;
	int nr = 0, alloc = 0, err;
	const char *root;
	char events[PATH_MAX], **systems = NULL;
	int nr_sys = 0;

	*out = NULL;
	*nr_out = 0;
	err = check_chars(p, sys, sys_pos, "system");
	if (!err)
		err = check_chars(p, name, name_pos, "name");
	if (err)
		return err;
	root = psc_evparse_tracefs(p, &err);
	if (!root)
		return psc_evparse_fail(p, err, sys_pos,
					"cannot look up tracepoint '%s:%s': tracefs is not mounted",
					sys, name);
	psc_pathf(events, sizeof(events), "%s/events", root);
	/* a root without events/ is no tracefs (an unmounted mount point, a wrong tracefs_dir) */
	if (access(events, F_OK) && (errno == ENOENT || errno == ENOTDIR))
		return psc_evparse_fail(
			p, -ENODEV, sys_pos,
			"cannot look up tracepoint '%s:%s': no tracefs at %s (it has no events/)",
			sys, name, root);

	if (has_glob(sys)) {
		nr_sys = list_dirs(events, sys, &systems);
		if (nr_sys < 0)
			return psc_evparse_fail(p, nr_sys, sys_pos, "cannot list %s: %s", events,
						strerror(-nr_sys));
	} else {
		char path[PATH_MAX];

		psc_pathf(path, sizeof(path), "%s/%s", events, sys);
		if (access(path, F_OK) && errno == EACCES)
			/* tracefs is root's (mode 0700) by default: not an unknown system */
			return psc_evparse_fail(
				p, -EACCES, sys_pos,
				"cannot read %s: permission denied (tracefs is readable by root only by default); run as root, or give this user access to %s",
				path, root);
		if (access(path, F_OK))
			return unknown_system(p, events, sys, sys_pos);
	}
	for (int i = 0; i < (has_glob(sys) ? nr_sys : 1) && !err; i++)
		err = scan_system(p, events, has_glob(sys) ? systems[i] : sys, name, name_pos, &m,
				  &nr, &alloc);
	free_names(systems, nr_sys);
	if (!err && !nr) {
		if (!has_glob(sys) && !has_glob(name))
			err = unknown_event(p, events, sys, name, name_pos);
		else
			err = psc_evparse_fail(p, -ENOENT, sys_pos, "no tracepoint matches '%s:%s'",
					       sys, name);
	}
	if (err) {
		psc_tp_matches_free(m, nr);
		return err;
	}
	*out = m;
	*nr_out = nr;
	return 0;
}

bool psc_evparse_tp_system_exists(struct psc_evparse *p, const char *sys)
{
	char path[PATH_MAX];
	const char *root;
	struct stat st;
	int err;

	if (!sys[0] || sys[0] == '.' || strchr(sys, '/') || has_glob(sys))
		return false;
	root = psc_evparse_tracefs(p, &err);
	if (!root)
		return false;
	psc_pathf(path, sizeof(path), "%s/events/%s", root, sys);
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

void psc_evparse_tp_suggest_all(struct psc_evparse *p, struct psc_suggest *s)
{
	char events[PATH_MAX], path[PATH_MAX], disp[300], **systems, **names;
	const char *root;
	int nr_sys;

	root = p->tracefs_dir ? p->tracefs_dir : psc_tracefs__dir();
	if (!root)
		return;
	psc_pathf(events, sizeof(events), "%s/events", root);
	nr_sys = list_dirs(events, NULL, &systems);
	for (int i = 0; i < nr_sys; i++) {
		int nr;

		psc_pathf(path, sizeof(path), "%s/%s", events, systems[i]);
		nr = list_dirs(path, NULL, &names);
		for (int j = 0; j < nr; j++) {
			psc_pathf(disp, sizeof(disp), "%s:%s", systems[i], names[j]);
			psc_suggest__add(s, names[j], disp);
		}
		if (nr > 0)
			free_names(names, nr);
	}
	if (nr_sys > 0)
		free_names(systems, nr_sys);
}
