/* capdir: captures in a directory, named by time, trimmed oldest first to a disk budget. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capdir.h"

int capdir__prepare(const char *dir)
{
	char path[PATH_MAX];
	size_t n = strlen(dir);

	if (!n || n >= sizeof(path))
		return -ENAMETOOLONG;
	memcpy(path, dir, n + 1);
	for (char *s = path + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return access(path, W_OK | X_OK) ? -errno : 0;
}

int capdir__stem(char *stem, size_t len, const char *dir, const char *prefix, uint64_t realtime_ns,
		 const char *tag)
{
	time_t sec = (time_t)(realtime_ns / 1000000000ull);
	struct tm tm;
	char when[32], clean[96];
	size_t i;

	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y%m%d-%H%M%S", &tm);
	for (i = 0; tag[i] && i < sizeof(clean) - 1; i++) {
		char c = tag[i];

		clean[i] = isalnum((unsigned char)c) || c == '-' || c == '_' ? c : '_';
	}
	clean[i] = '\0';
	return snprintf(stem, len, "%s/%s%s.%03u-%s", dir, prefix, when,
			(unsigned int)(realtime_ns / 1000000ull % 1000), clean);
}

/* One capture: its stem (file name up to the first '.' after the stamp) and its bytes. */
struct cap {
	char *stem;
	uint64_t bytes;
};

static int cmp_cap(const void *a, const void *b)
{
	return strcmp(((const struct cap *)a)->stem, ((const struct cap *)b)->stem);
}

/* The stem of a capture file: up to the first '.' after the time stamp's ".mmm". */
static size_t stem_len(const char *name, size_t prefix_len)
{
	const char *dot = strchr(name + prefix_len, '.'); /* the stamp's milliseconds */

	dot = dot ? strchr(dot + 1, '.') : NULL;
	return dot ? (size_t)(dot - name) : strlen(name);
}

int capdir__enforce(const char *dir, const char *prefix, uint64_t budget, const char *keep,
		    struct capdir_stats *st)
{
	size_t plen = strlen(prefix), nr = 0, cap = 0;
	const char *keep_name = keep ? strrchr(keep, '/') : NULL;
	struct cap *caps = NULL;
	uint64_t total = 0;
	struct dirent *de;
	int dfd, ret = 0;
	DIR *d;

	keep_name = keep_name ? keep_name + 1 : keep;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat sb;
		size_t sl;

		if (strncmp(de->d_name, prefix, plen) || fstatat(dfd, de->d_name, &sb, 0) ||
		    !S_ISREG(sb.st_mode))
			continue;
		sl = stem_len(de->d_name, plen);
		total += (uint64_t)sb.st_blocks * 512;
		/* files of one capture are next to each other once sorted; merge them after */
		if (nr == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct cap *c = realloc(caps, ncap * sizeof(*c));

			if (!c) {
				ret = -ENOMEM;
				goto out;
			}
			caps = c;
			cap = ncap;
		}
		caps[nr].stem = strndup(de->d_name, sl);
		caps[nr].bytes = (uint64_t)sb.st_blocks * 512;
		if (!caps[nr].stem) {
			ret = -ENOMEM;
			goto out;
		}
		nr++;
	}
	if (nr) /* an empty directory: no array at all, and qsort's base must not be NULL */
		qsort(caps, nr, sizeof(*caps), cmp_cap);
	/* one entry per stem, with the bytes of all its files */
	{
		size_t w = 0;

		for (size_t i = 0; i < nr; i++) {
			if (w && !strcmp(caps[w - 1].stem, caps[i].stem)) {
				caps[w - 1].bytes += caps[i].bytes;
				free(caps[i].stem);
				continue;
			}
			caps[w++] = caps[i];
		}
		nr = w;
	}
	for (size_t i = 0; budget && total > budget && i < nr; i++) {
		if (keep_name && !strcmp(caps[i].stem, keep_name))
			continue;
		/* every file of the stem: NAME.* */
		rewinddir(d);
		while ((de = readdir(d))) {
			size_t sl = strlen(caps[i].stem);

			if (!strncmp(de->d_name, caps[i].stem, sl) && de->d_name[sl] == '.' &&
			    stem_len(de->d_name, plen) == sl)
				unlinkat(dfd, de->d_name, 0);
		}
		total -= caps[i].bytes;
		st->removed++;
		st->removed_bytes += caps[i].bytes;
		caps[i].bytes = 0;
		free(caps[i].stem);
		caps[i].stem = NULL;
	}
	st->bytes = total;
	st->captures = 0;
	for (size_t i = 0; i < nr; i++)
		st->captures += caps[i].stem != NULL;
out:
	for (size_t i = 0; i < nr; i++)
		free(caps[i].stem);
	free(caps);
	closedir(d);
	return ret;
}

int capdir__parse_size(const char *text, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	unsigned int shift = 0;

	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno || end == text || *text == '-')
		return -EINVAL;
	if (*end && strchr("kKmMgGtT", *end)) {
		shift = 10 *
			(unsigned int)(strchr("kmgt", tolower((unsigned char)*end)) - "kmgt" + 1);
		end++;
	}
	if (*end == 'i' && shift)
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || (shift && v > (UINT64_MAX >> shift)))
		return -EINVAL;
	*bytes = (uint64_t)v << shift;
	return 0;
}
