/* CPU maps: parsing "0-3,6,8-10:2" lists strictly, the online set, and refcounting. */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "internal.h"

#define CPU_LIMIT 8192

static struct psc_cpumap *cpumap_alloc(int nr)
{
	struct psc_cpumap *map = calloc(1, sizeof(*map) + (size_t)nr * sizeof(int));

	if (!map)
		return NULL;
	map->refcnt = 1;
	map->nr = nr;
	return map;
}

struct psc_cpumap *psc_cpumap__new_any(void)
{
	struct psc_cpumap *map = cpumap_alloc(1);

	if (map)
		map->cpus[0] = -1;
	return map;
}

static void set_err(struct psc_parse_error *err, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_err(struct psc_parse_error *err, int pos, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
}

static bool parse_cpu_number(const char *s, int *pos, int *out)
{
	long v = 0;
	int start = *pos;

	while (isdigit((unsigned char)s[*pos])) {
		v = v * 10 + (s[*pos] - '0');
		if (v >= CPU_LIMIT) {
			*pos = start; /* point at the number that is too large */
			return false;
		}
		(*pos)++;
	}
	if (*pos == start)
		return false;
	*out = (int)v;
	return true;
}

/* Fills bits[] from the list; shared by the strict and syntax-only parsers. */
static int parse_list(const char *s, unsigned char *bits, struct psc_parse_error *err)
{
	int pos = 0;

	if (!s || !*s) {
		set_err(err, 0, "empty CPU list; expected e.g. '0-3,6'");
		return -EINVAL;
	}
	for (;;) {
		int first, last, stride = 1, item = pos;

		if (!parse_cpu_number(s, &pos, &first)) {
			set_err(err, pos, "expected a CPU number (0-%d) at '%s'", CPU_LIMIT - 1,
				s + pos);
			return -EINVAL;
		}
		last = first;
		if (s[pos] == '-') {
			pos++;
			if (!parse_cpu_number(s, &pos, &last)) {
				set_err(err, pos, "expected the last CPU of the range at '%s'",
					s + pos);
				return -EINVAL;
			}
			if (last < first) {
				set_err(err, item, "range %d-%d goes down; write it as %d-%d",
					first, last, last, first);
				return -EINVAL;
			}
			if (s[pos] == ':') {
				int stride_pos = ++pos;

				if (!parse_cpu_number(s, &pos, &stride) || stride == 0) {
					set_err(err, stride_pos,
						"expected a stride of at least 1 after ':'");
					return -EINVAL;
				}
			}
		}
		for (int c = first; c <= last; c += stride) {
			if (bits[c]) {
				set_err(err, item, "CPU %d is listed twice", c);
				return -EINVAL;
			}
			bits[c] = 1;
		}
		if (s[pos] == '\0')
			return 0;
		if (s[pos] != ',') {
			set_err(err, pos,
				"unexpected '%c'; CPU lists look like '0-3,6,8-10' or '0-7:2'",
				s[pos]);
			return -EINVAL;
		}
		pos++;
	}
}

static struct psc_cpumap *map_from_bits(const unsigned char *bits)
{
	struct psc_cpumap *map;
	int nr = 0, i = 0;

	for (int c = 0; c < CPU_LIMIT; c++)
		nr += bits[c];
	map = cpumap_alloc(nr);
	if (!map)
		return NULL;
	for (int c = 0; c < CPU_LIMIT; c++)
		if (bits[c])
			map->cpus[i++] = c;
	return map;
}

struct psc_cpumap *psc_cpumap__parse_syntax(const char *list, struct psc_parse_error *err)
{
	unsigned char *bits = calloc(CPU_LIMIT, 1);
	struct psc_cpumap *map = NULL;
	int ret;

	if (!bits)
		return NULL;
	ret = parse_list(list, bits, err);
	if (ret == 0)
		map = map_from_bits(bits);
	free(bits);
	if (ret)
		errno = -ret;
	return map;
}

struct psc_cpumap *psc_cpumap__read_sysfs(const char *path)
{
	char buf[4096];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return psc_cpumap__parse_syntax(buf, NULL);
}

struct psc_cpumap *psc_cpumap__new_online(void)
{
	struct psc_cpumap *map = psc_cpumap__read_sysfs("/sys/devices/system/cpu/online");

	if (map)
		return map;
	/* Without sysfs, the CPUs the scheduler reports are the best we know. */
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	map = cpumap_alloc(n > 0 ? (int)n : 1);
	if (!map)
		return NULL;
	for (int i = 0; i < map->nr; i++)
		map->cpus[i] = i;
	return map;
}

int psc_cpu__nr_possible(void)
{
	struct psc_cpumap *map = psc_cpumap__read_sysfs("/sys/devices/system/cpu/possible");
	int nr;

	if (!map)
		return (int)sysconf(_SC_NPROCESSORS_CONF);
	nr = map->cpus[map->nr - 1] + 1;
	psc_cpumap__put(map);
	return nr;
}

struct psc_cpumap *psc_cpumap__parse(const char *list, struct psc_parse_error *err)
{
	struct psc_cpumap *map = psc_cpumap__parse_syntax(list, err);
	struct psc_cpumap *online;

	if (!map)
		return NULL;
	online = psc_cpumap__new_online();
	if (!online) {
		psc_cpumap__put(map);
		return NULL;
	}
	for (int i = 0; i < map->nr; i++) {
		if (psc_cpumap__idx(online, map->cpus[i]) < 0) {
			char on[256] = "";
			int len = 0;

			for (int j = 0; j < online->nr && len < (int)sizeof(on) - 16; j++)
				len += snprintf(on + len, sizeof(on) - len, "%s%d", j ? "," : "",
						online->cpus[j]);
			set_err(err, -1, "CPU %d is not online on this machine (online CPUs: %s)",
				map->cpus[i], on);
			psc_cpumap__put(online);
			psc_cpumap__put(map);
			errno = EINVAL;
			return NULL;
		}
	}
	psc_cpumap__put(online);
	return map;
}

struct psc_cpumap *psc_cpumap__get(struct psc_cpumap *map)
{
	if (map)
		map->refcnt++;
	return map;
}

void psc_cpumap__put(struct psc_cpumap *map)
{
	if (map && --map->refcnt == 0)
		free(map);
}

int psc_cpumap__nr(const struct psc_cpumap *map)
{
	return map ? map->nr : 0;
}

int psc_cpumap__cpu(const struct psc_cpumap *map, int idx)
{
	if (!map || idx < 0 || idx >= map->nr)
		return -1;
	return map->cpus[idx];
}

int psc_cpumap__idx(const struct psc_cpumap *map, int cpu)
{
	for (int i = 0; map && i < map->nr; i++)
		if (map->cpus[i] == cpu)
			return i;
	return -1;
}

struct psc_cpumap *psc_cpumap__intersect(const struct psc_cpumap *a, const struct psc_cpumap *b)
{
	struct psc_cpumap *map = cpumap_alloc(a->nr);

	if (!map)
		return NULL;
	map->nr = 0;
	for (int i = 0; i < a->nr; i++)
		if (psc_cpumap__idx(b, a->cpus[i]) >= 0)
			map->cpus[map->nr++] = a->cpus[i];
	return map;
}
