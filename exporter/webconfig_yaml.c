/* YAML accessors of the web-config parser: typed values, mappings, lists, files, errors. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "webconfig_internal.h"

/* Files the config points at are certificates and keys: refuse anything absurdly large. */
#define WC_MAX_FILE (1 << 20)

void wc_yaml__fail(struct wc_ctx *c, const yaml_node_t *node, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (c->failed)
		return;
	c->failed = true;
	if (node)
		n = snprintf(c->err, c->errlen, "%s:%lu: ", c->name,
			     (unsigned long)node->start_mark.line + 1);
	else
		n = snprintf(c->err, c->errlen, "%s: ", c->name);
	if (n < 0 || (size_t)n >= c->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	va_end(ap);
}

const char *wc_yaml__scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* YAML null: "~", "null", or nothing at all (a key with no value), unquoted. */
bool wc_yaml__is_null(const yaml_node_t *n)
{
	const char *s = wc_yaml__scalar(n);

	if (!s || n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	    n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		return false;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

char *wc_yaml__get_string(struct wc_ctx *c, const yaml_node_t *n, const char *key)
{
	const char *s = wc_yaml__scalar(n);
	char *dup;

	if (!s) {
		wc_yaml__fail(c, n, "'%s' must be a string", key);
		return NULL;
	}
	if (strlen(s) != n->data.scalar.length) {
		wc_yaml__fail(c, n, "'%s' contains a NUL byte", key);
		return NULL;
	}
	dup = strdup(s);
	if (!dup)
		wc_yaml__fail(c, n, "out of memory");
	return dup;
}

bool wc_yaml__get_bool(struct wc_ctx *c, const yaml_node_t *n, const char *key)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes",
					   "YES",  "on",   "On",   "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No",
					  "NO",	   "off",   "Off",   "OFF" };
	const char *s = wc_yaml__scalar(n);
	size_t i;

	for (i = 0; s && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]))
			return true;
		if (!strcmp(s, no[i]))
			return false;
	}
	wc_yaml__fail(c, n, "'%s' must be true or false", key);
	return false;
}

/* Go's time.ParseDuration subset: sequences of <number><unit>, units ns us µs ms s m h. */
int64_t wc_yaml__get_duration(struct wc_ctx *c, const yaml_node_t *n, const char *key)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 },  { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "ms", 1e6 },
		      { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 } };
	const char *s = wc_yaml__scalar(n);
	double total = 0;

	if (!s || !*s)
		goto bad;
	if (!strcmp(s, "0"))
		return 0;
	while (*s) {
		double v = 0, scale = 1;
		size_t i, best = 0, best_len = 0;
		int digits = 0;

		/*
		 * Digits, then an optional fraction, as Go has it: no sign, exponent, hex, inf or
		 * nan (which strtod would take, and nan cannot be converted to an integer).
		 */
		for (; *s >= '0' && *s <= '9'; s++, digits++)
			v = v * 10 + (*s - '0');
		if (*s == '.')
			for (s++; *s >= '0' && *s <= '9'; s++, digits++)
				v += (*s - '0') * (scale /= 10);
		if (!digits)
			goto bad;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].unit);

			if (!strncmp(s, units[i].unit, l) && l > best_len) {
				best = i;
				best_len = l;
			}
		}
		if (!best_len)
			goto bad;
		total += v * units[best].ns;
		s += best_len;
	}
	if (!(total <= 9.2e18))
		goto bad;
	return (int64_t)total;
bad:
	wc_yaml__fail(c, n, "'%s' must be a duration such as 500ms, 1s or 1m30s", key);
	return 0;
}

static char *join_dir(struct wc_ctx *c, const char *path)
{
	char *out;

	if (path[0] == '/' || !c->base_dir || !*c->base_dir)
		return strdup(path);
	if (asprintf(&out, "%s/%s", c->base_dir, path) < 0)
		return NULL;
	return out;
}

/* Reads a whole (small) file; NULL with c failed on error. */
char *wc_yaml__read_file(struct wc_ctx *c, const yaml_node_t *n, const char *key, const char *rel)
{
	char *path = join_dir(c, rel), *buf = NULL;
	struct stat st;
	FILE *f = NULL;

	if (!path) {
		wc_yaml__fail(c, n, "out of memory");
		return NULL;
	}
	f = fopen(path, "re");
	if (!f || fstat(fileno(f), &st) < 0) {
		wc_yaml__fail(c, n, "cannot read %s '%s': %s", key, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > WC_MAX_FILE) {
		wc_yaml__fail(c, n, "%s '%s' is not a regular file of at most 1 MiB", key, path);
		goto out;
	}
	buf = calloc(1, (size_t)st.st_size + 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		wc_yaml__fail(c, n, "cannot read %s '%s'", key, path);
		free(buf);
		buf = NULL;
	} else if (memchr(buf, '\0', (size_t)st.st_size)) {
		/*
		 * Read as a C string, the text would end at the NUL: a file of zeros would be an
		 * empty web config, serving without the TLS and passwords it was meant to hold.
		 */
		wc_yaml__fail(
			c, n, "%s '%s' is not a text file (it holds a NUL byte)%s", key, path,
			strcmp(key, "web config file")
				? "; PEM is expected: a DER file converts with 'openssl x509 -inform der'"
				  " (or 'openssl pkey -inform der' for a key)"
				: "");
		free(buf);
		buf = NULL;
	}
out:
	if (f)
		fclose(f);
	free(path);
	return buf;
}

void wc_yaml__each_pair(struct wc_ctx *c, struct webconfig *wc, yaml_node_t *map, const char *what,
			wc_pair_fn fn)
{
	yaml_node_pair_t *p, *q;

	if (wc_yaml__is_null(map))
		return;
	if (map->type != YAML_MAPPING_NODE) {
		wc_yaml__fail(c, map, "%s must be a mapping", what);
		return;
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top && !c->failed;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *key = wc_yaml__scalar(k);

		if (!key) {
			wc_yaml__fail(c, k, "keys of %s must be strings", what);
			return;
		}
		for (q = map->data.mapping.pairs.start; q < p; q++) {
			const char *prev = wc_yaml__scalar(yaml_document_get_node(c->doc, q->key));

			if (prev && !strcmp(prev, key)) {
				wc_yaml__fail(c, k, "key '%s' appears twice in %s", key, what);
				return;
			}
		}
		fn(c, wc, key, k, v);
	}
}

char **wc_yaml__get_string_list(struct wc_ctx *c, yaml_node_t *n, const char *key, int *nr)
{
	yaml_node_item_t *it;
	char **list;
	int i = 0;

	*nr = 0;
	if (wc_yaml__is_null(n))
		return NULL;
	if (n->type != YAML_SEQUENCE_NODE) {
		wc_yaml__fail(c, n, "'%s' must be a list", key);
		return NULL;
	}
	list = calloc((size_t)(n->data.sequence.items.top - n->data.sequence.items.start) + 1,
		      sizeof(*list));
	if (!list) {
		wc_yaml__fail(c, n, "out of memory");
		return NULL;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top && !c->failed;
	     it++) {
		list[i] = wc_yaml__get_string(c, yaml_document_get_node(c->doc, *it), key);
		if (list[i])
			i++;
	}
	*nr = i;
	return list;
}

void wc_yaml__free_list(char **list, int nr)
{
	int i;

	for (i = 0; list && i < nr; i++)
		free(list[i]);
	free(list);
}
