/* web-config file of Prometheus' exporter-toolkit, read with libyaml; bcrypt checks through
 * crypt(3). */
#include "webconfig.h"

#include <crypt.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <yaml.h>
#include <gnutls/gnutls.h>
#include <gnutls/crypto.h>

/* Files the config points at are certificates and keys: refuse anything absurdly large. */
#define WC_MAX_FILE (1 << 20)

struct tls_raw;

/* Report a problem and leave the (void) function. */
#define FAIL_RET(...)              \
	do {                       \
		fail(__VA_ARGS__); \
		return;            \
	} while (0)

struct ctx {
	yaml_document_t *doc;
	const char *name;
	const char *base_dir;
	char *err;
	size_t errlen;
	bool failed;
	struct tls_raw *raw; /* tls_server_config as written, before files are read */
};

static void fail(struct ctx *c, const yaml_node_t *node, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail(struct ctx *c, const yaml_node_t *node, const char *fmt, ...)
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

static const char *scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* YAML null: "~", "null", or nothing at all (a key with no value), unquoted. */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);

	if (!s || n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
	    n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		return false;
	return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") ||
	       !strcmp(s, "NULL");
}

static char *get_string(struct ctx *c, const yaml_node_t *n, const char *key)
{
	const char *s = scalar(n);
	char *dup;

	if (!s) {
		fail(c, n, "'%s' must be a string", key);
		return NULL;
	}
	if (strlen(s) != n->data.scalar.length) {
		fail(c, n, "'%s' contains a NUL byte", key);
		return NULL;
	}
	dup = strdup(s);
	if (!dup)
		fail(c, n, "out of memory");
	return dup;
}

static bool get_bool(struct ctx *c, const yaml_node_t *n, const char *key)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes",
					   "YES",  "on",   "On",   "ON" };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No",
					  "NO",	   "off",   "Off",   "OFF" };
	const char *s = scalar(n);
	size_t i;

	for (i = 0; s && i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(s, yes[i]))
			return true;
		if (!strcmp(s, no[i]))
			return false;
	}
	fail(c, n, "'%s' must be true or false", key);
	return false;
}

/* Go's time.ParseDuration subset: sequences of <number><unit>, units ns us µs ms s m h. */
static int64_t get_duration(struct ctx *c, const yaml_node_t *n, const char *key)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "ns", 1 },  { "us", 1e3 }, { "\xc2\xb5s", 1e3 }, { "ms", 1e6 },
		      { "s", 1e9 }, { "m", 60e9 }, { "h", 3600e9 } };
	const char *s = scalar(n);
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
	fail(c, n, "'%s' must be a duration such as 500ms, 1s or 1m30s", key);
	return 0;
}

static char *join_dir(struct ctx *c, const char *path)
{
	char *out;

	if (path[0] == '/' || !c->base_dir || !*c->base_dir)
		return strdup(path);
	if (asprintf(&out, "%s/%s", c->base_dir, path) < 0)
		return NULL;
	return out;
}

/* Reads a whole (small) file; NULL with c failed on error. */
static char *read_file(struct ctx *c, const yaml_node_t *n, const char *key, const char *rel)
{
	char *path = join_dir(c, rel), *buf = NULL;
	struct stat st;
	FILE *f = NULL;

	if (!path) {
		fail(c, n, "out of memory");
		return NULL;
	}
	f = fopen(path, "re");
	if (!f || fstat(fileno(f), &st) < 0) {
		fail(c, n, "cannot read %s '%s': %s", key, path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > WC_MAX_FILE) {
		fail(c, n, "%s '%s' is not a regular file of at most 1 MiB", key, path);
		goto out;
	}
	buf = calloc(1, (size_t)st.st_size + 1);
	if (!buf || fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
		fail(c, n, "cannot read %s '%s'", key, path);
		free(buf);
		buf = NULL;
	} else if (memchr(buf, '\0', (size_t)st.st_size)) {
		/*
		 * Read as a C string, the text would end at the NUL: a file of zeros would be an
		 * empty web config, serving without the TLS and passwords it was meant to hold.
		 */
		fail(c, n, "%s '%s' is not a text file (it holds a NUL byte)%s", key, path,
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

/* Calls fn for each key: value of a mapping node, refusing duplicate keys as yaml.v2 strict does.
 */
typedef void (*pair_fn)(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *keynode,
			yaml_node_t *val);

static void each_pair(struct ctx *c, struct webconfig *wc, yaml_node_t *map, const char *what,
		      pair_fn fn)
{
	yaml_node_pair_t *p, *q;

	if (is_null(map))
		return;
	if (map->type != YAML_MAPPING_NODE) {
		fail(c, map, "%s must be a mapping", what);
		return;
	}
	for (p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top && !c->failed;
	     p++) {
		yaml_node_t *k = yaml_document_get_node(c->doc, p->key);
		yaml_node_t *v = yaml_document_get_node(c->doc, p->value);
		const char *key = scalar(k);

		if (!key) {
			fail(c, k, "keys of %s must be strings", what);
			return;
		}
		for (q = map->data.mapping.pairs.start; q < p; q++) {
			const char *prev = scalar(yaml_document_get_node(c->doc, q->key));

			if (prev && !strcmp(prev, key)) {
				fail(c, k, "key '%s' appears twice in %s", key, what);
				return;
			}
		}
		fn(c, wc, key, k, v);
	}
}

static char **get_string_list(struct ctx *c, yaml_node_t *n, const char *key, int *nr)
{
	yaml_node_item_t *it;
	char **list;
	int i = 0;

	*nr = 0;
	if (is_null(n))
		return NULL;
	if (n->type != YAML_SEQUENCE_NODE) {
		fail(c, n, "'%s' must be a list", key);
		return NULL;
	}
	list = calloc((size_t)(n->data.sequence.items.top - n->data.sequence.items.start) + 1,
		      sizeof(*list));
	if (!list) {
		fail(c, n, "out of memory");
		return NULL;
	}
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top && !c->failed;
	     it++) {
		list[i] = get_string(c, yaml_document_get_node(c->doc, *it), key);
		if (list[i])
			i++;
	}
	*nr = i;
	return list;
}

static void free_list(char **list, int nr)
{
	int i;

	for (i = 0; list && i < nr; i++)
		free(list[i]);
	free(list);
}

/* Go's cipher suite names -> gnutls priority keywords (key exchange, cipher, MAC). */
static const struct cipher_map {
	const char *go;
	const char *kx, *cipher, *mac;
} ciphers[] = {
	{ "TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1" },
	{ "TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD" },
	{ "TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305",
	  "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD" },
	{ "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD" },
	/* TLS 1.3 suites: Go does not let them be configured; accepted, no restriction. */
	{ "TLS_AES_128_GCM_SHA256", NULL, NULL, NULL },
	{ "TLS_AES_256_GCM_SHA384", NULL, NULL, NULL },
	{ "TLS_CHACHA20_POLY1305_SHA256", NULL, NULL, NULL },
};

static const struct {
	const char *go, *gnutls;
} curves[] = {
	{ "CurveP256", "SECP256R1" },
	{ "CurveP384", "SECP384R1" },
	{ "CurveP521", "SECP521R1" },
	{ "X25519", "X25519" },
};

static const struct {
	const char *name;
	int version;
	const char *gnutls;
} versions[] = {
	{ "TLS10", 0x0301, "VERS-TLS1.0" },
	{ "TLS11", 0x0302, "VERS-TLS1.1" },
	{ "TLS12", 0x0303, "VERS-TLS1.2" },
	{ "TLS13", 0x0304, "VERS-TLS1.3" },
};

struct tls_raw {
	char *cert, *key, *client_ca, *cert_file, *key_file, *client_ca_file, *client_auth;
	char **cipher_suites, **curves;
	int nr_cipher_suites, nr_curves;
	bool has_sans;
};

static int get_version(struct ctx *c, yaml_node_t *n, const char *key)
{
	const char *s = scalar(n);
	size_t i;

	for (i = 0; s && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (!strcmp(s, versions[i].name))
			return versions[i].version;
	fail(c, n, "'%s' must be one of TLS10, TLS11, TLS12, TLS13", key);
	return 0;
}

static void tls_pair(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		     yaml_node_t *v)
{
	struct tls_raw *r = c->raw;
	char **slot = NULL;

	if (!strcmp(key, "cert"))
		slot = &r->cert;
	else if (!strcmp(key, "key"))
		slot = &r->key;
	else if (!strcmp(key, "client_ca"))
		slot = &r->client_ca;
	else if (!strcmp(key, "cert_file"))
		slot = &r->cert_file;
	else if (!strcmp(key, "key_file"))
		slot = &r->key_file;
	else if (!strcmp(key, "client_ca_file"))
		slot = &r->client_ca_file;
	else if (!strcmp(key, "client_auth_type"))
		slot = &r->client_auth;
	if (slot) {
		if (is_null(v))
			return;
		free(*slot);
		*slot = get_string(c, v, key);
		/* An empty value means "not set", as in Go. */
		if (*slot && !**slot) {
			free(*slot);
			*slot = NULL;
		}
		return;
	}
	if (!strcmp(key, "cipher_suites")) {
		r->cipher_suites = get_string_list(c, v, key, &r->nr_cipher_suites);
	} else if (!strcmp(key, "curve_preferences")) {
		r->curves = get_string_list(c, v, key, &r->nr_curves);
	} else if (!strcmp(key, "min_version")) {
		wc->min_version = get_version(c, v, key);
	} else if (!strcmp(key, "max_version")) {
		wc->max_version = get_version(c, v, key);
	} else if (!strcmp(key, "prefer_server_cipher_suites")) {
		wc->prefer_server_cipher_suites = get_bool(c, v, key);
	} else if (!strcmp(key, "client_allowed_sans")) {
		r->has_sans = !is_null(v);
		wc->client_allowed_sans = get_string_list(c, v, key, &wc->nr_client_allowed_sans);
	} else {
		fail(c, k, "unknown key '%s' in tls_server_config", key);
	}
}

/* The response headers exporter-toolkit allows, and the values it insists on for some. */
static bool header_ok(struct ctx *c, yaml_node_t *k, const char *name, const char *value)
{
	static const char *const allowed[] = { "Strict-Transport-Security",
					       "X-Content-Type-Options", "X-Frame-Options",
					       "X-XSS-Protection", "Content-Security-Policy" };
	size_t i;

	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (!strcasecmp(name, allowed[i]))
			break;
	if (i == sizeof(allowed) / sizeof(allowed[0])) {
		fail(c, k,
		     "header '%s' is not allowed (allowed: Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, Content-Security-Policy)",
		     name);
		return false;
	}
	if (!strcasecmp(name, "X-Content-Type-Options") && strcasecmp(value, "nosniff")) {
		fail(c, k, "X-Content-Type-Options must be 'nosniff'");
		return false;
	}
	if (!strcasecmp(name, "X-Frame-Options") && strcasecmp(value, "deny") &&
	    strcasecmp(value, "sameorigin")) {
		fail(c, k, "X-Frame-Options must be 'deny' or 'sameorigin'");
		return false;
	}
	if (strpbrk(value, "\r\n")) {
		fail(c, k, "header '%s' has a line break in its value", name);
		return false;
	}
	return true;
}

static void header_pair(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
			yaml_node_t *v)
{
	struct webconfig_header *h;
	char *value = get_string(c, v, key);

	if (!value)
		return;
	if (!header_ok(c, k, key, value)) {
		free(value);
		return;
	}
	h = realloc(wc->headers, (size_t)(wc->nr_headers + 1) * sizeof(*h));
	if (!h) {
		free(value);
		fail(c, k, "out of memory");
		return;
	}
	wc->headers = h;
	h[wc->nr_headers].name = strdup(key);
	h[wc->nr_headers].value = value;
	if (!h[wc->nr_headers].name) {
		free(value);
		fail(c, k, "out of memory");
		return;
	}
	wc->nr_headers++;
}

static void http_pair(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		      yaml_node_t *v)
{
	if (!strcmp(key, "http2"))
		wc->http2 = get_bool(c, v, key);
	else if (!strcmp(key, "headers"))
		each_pair(c, wc, v, "headers", header_pair);
	else
		fail(c, k, "unknown key '%s' in http_server_config", key);
}

static void rate_pair(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		      yaml_node_t *v)
{
	if (!strcmp(key, "interval")) {
		wc->rate_interval_ns = get_duration(c, v, key);
	} else if (!strcmp(key, "burst")) {
		const char *s = scalar(v);
		char *end;
		long b = s ? strtol(s, &end, 10) : -1;

		if (!s || !*s || *end || b < 0 || b > INT_MAX)
			fail(c, v, "'burst' must be a whole number >= 0");
		wc->rate_burst = (int)b;
	} else {
		fail(c, k, "unknown key '%s' in rate_limit", key);
	}
}

/* bcrypt as crypt(3) writes it: $2a$ / $2b$ / $2y$, two-digit cost 04..31, 53 characters more. */
static bool bcrypt_hash_valid(const char *h)
{
	size_t i;
	int cost;

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    h[6] != '$')
		return false;
	if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9')
		return false;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return false;
	for (i = 7; i < 60; i++)
		if (!strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
			    h[i]))
			return false;
	return true;
}

static void user_pair(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		      yaml_node_t *v)
{
	struct webconfig_user *u;
	char *hash = get_string(c, v, "basic_auth_users");

	if (!hash)
		return;
	if (!bcrypt_hash_valid(hash)) {
		fail(c, v,
		     "password of user '%s' is not a bcrypt hash ($2y$/$2b$/$2a$, e.g. from 'htpasswd -nBC 10 %s')",
		     key, key);
		free(hash);
		return;
	}
	if (strchr(key, ':')) {
		fail(c, k, "user name '%s' contains ':', which HTTP basic auth cannot carry", key);
		free(hash);
		return;
	}
	u = realloc(wc->users, (size_t)(wc->nr_users + 1) * sizeof(*u));
	if (!u) {
		free(hash);
		fail(c, k, "out of memory");
		return;
	}
	wc->users = u;
	u[wc->nr_users].name = strdup(key);
	u[wc->nr_users].hash = hash;
	if (!u[wc->nr_users].name) {
		free(hash);
		fail(c, k, "out of memory");
		return;
	}
	wc->nr_users++;
}

static void top_pair(struct ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		     yaml_node_t *v)
{
	if (!strcmp(key, "tls_server_config"))
		each_pair(c, wc, v, "tls_server_config", tls_pair);
	else if (!strcmp(key, "http_server_config"))
		each_pair(c, wc, v, "http_server_config", http_pair);
	else if (!strcmp(key, "rate_limit"))
		each_pair(c, wc, v, "rate_limit", rate_pair);
	else if (!strcmp(key, "basic_auth_users"))
		each_pair(c, wc, v, "basic_auth_users", user_pair);
	else
		fail(c, k,
		     "unknown key '%s' (expected tls_server_config, http_server_config, rate_limit, basic_auth_users)",
		     key);
}

static void appendf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void appendf(char *buf, size_t len, const char *fmt, ...)
{
	size_t n = strlen(buf);
	va_list ap;

	if (n >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + n, len - n, fmt, ap);
	va_end(ap);
}

/* Adds "+TOKEN" once to a priority string. */
static void add_once(char *buf, size_t len, const char *tok)
{
	char needle[64];

	snprintf(needle, sizeof(needle), ":+%s", tok);
	if (!strstr(buf, needle))
		appendf(buf, len, "%s", needle);
}

/* TLS settings as exporter-toolkit's ConfigToTLSConfig validates them, read into PEM texts. */
static void finish_tls(struct ctx *c, struct webconfig *wc)
{
	struct tls_raw *r = c->raw;
	gnutls_priority_t prio;
	const char *errpos = NULL;
	int i, v, ret;
	size_t j;

	wc->tls = r->cert || r->key || r->client_ca || r->cert_file || r->key_file ||
		  r->client_ca_file || r->client_auth;
	if (!wc->tls) {
		if (wc->nr_client_allowed_sans || r->nr_cipher_suites || r->nr_curves)
			fail(c, NULL,
			     "tls_server_config sets TLS options but no cert_file/key_file");
		return;
	}
	if (!r->cert && !r->cert_file)
		FAIL_RET(c, NULL, "tls_server_config: missing one of cert or cert_file");
	if (!r->key && !r->key_file)
		FAIL_RET(c, NULL, "tls_server_config: missing one of key or key_file");
	wc->cert_pem =
		r->cert_file ? read_file(c, NULL, "cert_file", r->cert_file) : strdup(r->cert);
	if (c->failed)
		return;
	wc->key_pem = r->key_file ? read_file(c, NULL, "key_file", r->key_file) : strdup(r->key);
	if (c->failed)
		return;
	if (r->client_ca_file)
		wc->client_ca_pem = read_file(c, NULL, "client_ca_file", r->client_ca_file);
	else if (r->client_ca)
		wc->client_ca_pem = strdup(r->client_ca);
	if (c->failed)
		return;
	if (!wc->cert_pem || !wc->key_pem)
		FAIL_RET(c, NULL, "out of memory");

	if (!r->client_auth || !strcmp(r->client_auth, "NoClientCert"))
		wc->client_auth = WC_NO_CLIENT_CERT;
	else if (!strcmp(r->client_auth, "RequestClientCert"))
		wc->client_auth = WC_REQUEST_CLIENT_CERT;
	else if (!strcmp(r->client_auth, "RequireAnyClientCert") ||
		 !strcmp(r->client_auth, "RequireClientCert"))
		wc->client_auth = WC_REQUIRE_ANY_CLIENT_CERT;
	else if (!strcmp(r->client_auth, "VerifyClientCertIfGiven"))
		wc->client_auth = WC_VERIFY_CLIENT_CERT_IF_GIVEN;
	else if (!strcmp(r->client_auth, "RequireAndVerifyClientCert"))
		wc->client_auth = WC_REQUIRE_AND_VERIFY_CLIENT_CERT;
	else
		FAIL_RET(
			c, NULL,
			"invalid client_auth_type '%s' (NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert)",
			r->client_auth);
	if (wc->client_ca_pem && wc->client_auth == WC_NO_CLIENT_CERT)
		FAIL_RET(c, NULL, "client CA's have been configured without a client_auth_type");
	if ((wc->client_auth == WC_VERIFY_CLIENT_CERT_IF_GIVEN ||
	     wc->client_auth == WC_REQUIRE_AND_VERIFY_CLIENT_CERT) &&
	    !wc->client_ca_pem)
		FAIL_RET(
			c, NULL,
			"client_auth_type %s needs client_ca_file (or client_ca) to verify against",
			r->client_auth);
	if (r->has_sans && wc->client_auth != WC_REQUIRE_ANY_CLIENT_CERT &&
	    wc->client_auth != WC_REQUIRE_AND_VERIFY_CLIENT_CERT)
		FAIL_RET(
			c, NULL,
			"client_allowed_sans requires client_auth_type to be one of RequireAnyClientCert or RequireAndVerifyClientCert");
	if (wc->min_version > wc->max_version)
		FAIL_RET(c, NULL, "min_version is above max_version");

	/* gnutls priorities: versions, then ciphers and groups when restricted. */
	snprintf(wc->priorities, sizeof(wc->priorities), "NORMAL%s:-VERS-ALL",
		 wc->prefer_server_cipher_suites ? ":%SERVER_PRECEDENCE" : "");
	for (j = 0; j < sizeof(versions) / sizeof(versions[0]); j++) {
		v = versions[j].version;
		if (v >= wc->min_version && v <= wc->max_version)
			appendf(wc->priorities, sizeof(wc->priorities), ":+%s", versions[j].gnutls);
	}
	if (r->nr_cipher_suites) {
		bool restricted = false;

		for (i = 0; i < r->nr_cipher_suites; i++) {
			for (j = 0; j < sizeof(ciphers) / sizeof(ciphers[0]); j++)
				if (!strcmp(r->cipher_suites[i], ciphers[j].go))
					break;
			if (j == sizeof(ciphers) / sizeof(ciphers[0]))
				FAIL_RET(c, NULL, "unknown cipher: %s", r->cipher_suites[i]);
			if (!ciphers[j].kx)
				continue;
			if (!restricted) {
				/* TLS 1.3 keeps its AEAD ciphers, as in Go. */
				appendf(wc->priorities, sizeof(wc->priorities),
					":-CIPHER-ALL:-KX-ALL:-MAC-ALL:+AES-128-GCM:+AES-256-GCM:+CHACHA20-POLY1305:+AEAD");
				restricted = true;
			}
			add_once(wc->priorities, sizeof(wc->priorities), ciphers[j].kx);
			add_once(wc->priorities, sizeof(wc->priorities), ciphers[j].cipher);
			add_once(wc->priorities, sizeof(wc->priorities), ciphers[j].mac);
		}
	}
	if (r->nr_curves) {
		appendf(wc->priorities, sizeof(wc->priorities), ":-GROUP-ALL");
		for (i = 0; i < r->nr_curves; i++) {
			for (j = 0; j < sizeof(curves) / sizeof(curves[0]); j++)
				if (!strcmp(r->curves[i], curves[j].go))
					break;
			if (j == sizeof(curves) / sizeof(curves[0]))
				FAIL_RET(c, NULL, "unknown curve: %s", r->curves[i]);
			appendf(wc->priorities, sizeof(wc->priorities), ":+GROUP-%s",
				curves[j].gnutls);
		}
	}
	ret = gnutls_priority_init(&prio, wc->priorities, &errpos);
	if (ret < 0)
		FAIL_RET(c, NULL,
			 "TLS settings give gnutls priorities '%s' that it rejects at '%s': %s",
			 wc->priorities, errpos ? errpos : "?", gnutls_strerror(ret));
	gnutls_priority_deinit(prio);
}

static void free_raw(struct tls_raw *r)
{
	free(r->cert);
	free(r->key);
	free(r->client_ca);
	free(r->cert_file);
	free(r->key_file);
	free(r->client_ca_file);
	free(r->client_auth);
	free_list(r->cipher_suites, r->nr_cipher_suites);
	free_list(r->curves, r->nr_curves);
}

struct webconfig *webconfig_parse(const char *text, size_t len, const char *name,
				  const char *base_dir, char *err, size_t errlen)
{
	struct tls_raw raw = { 0 };
	struct ctx c = { .name = name ? name : "web config",
			 .base_dir = base_dir,
			 .err = err,
			 .errlen = errlen,
			 .raw = &raw };
	yaml_parser_t parser;
	yaml_document_t doc;
	struct webconfig *wc;
	yaml_node_t *root;

	if (errlen)
		err[0] = '\0';
	wc = calloc(1, sizeof(*wc));
	if (!wc) {
		fail(&c, NULL, "out of memory");
		return NULL;
	}
	/* exporter-toolkit's defaults */
	wc->min_version = 0x0303;
	wc->max_version = 0x0304;
	wc->prefer_server_cipher_suites = true;
	wc->http2 = true;
	pthread_mutex_init(&wc->lock, NULL);

	if (!yaml_parser_initialize(&parser)) {
		fail(&c, NULL, "out of memory");
		goto out_wc;
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, errlen, "%s:%lu:%lu: YAML error: %s", c.name,
			 (unsigned long)parser.problem_mark.line + 1,
			 (unsigned long)parser.problem_mark.column + 1,
			 parser.problem ? parser.problem : "malformed");
		c.failed = true;
		yaml_parser_delete(&parser);
		goto out_wc;
	}
	c.doc = &doc;
	root = yaml_document_get_root_node(&doc);
	/* An empty file is a valid config that changes nothing, as in exporter-toolkit. */
	if (root && !is_null(root))
		each_pair(&c, wc, root, "the web config", top_pair);
	if (!c.failed)
		finish_tls(&c, wc);
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
out_wc:
	free_raw(&raw);
	if (c.failed) {
		webconfig_free(wc);
		return NULL;
	}
	return wc;
}

struct webconfig *webconfig_load(const char *path, char *err, size_t errlen)
{
	struct ctx c = { .name = path, .err = err, .errlen = errlen };
	struct webconfig *wc;
	char *text, *dir, *slash;

	text = read_file(&c, NULL, "web config file", path);
	if (!text)
		return NULL;
	dir = strdup(path);
	if (!dir) {
		free(text);
		snprintf(err, errlen, "%s: out of memory", path);
		return NULL;
	}
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	if (slash == dir)
		strcpy(dir, "/");
	wc = webconfig_parse(text, strlen(text), path, dir, err, errlen);
	free(dir);
	free(text);
	return wc;
}

void webconfig_free(struct webconfig *wc)
{
	int i;

	if (!wc)
		return;
	free(wc->cert_pem);
	if (wc->key_pem) {
		/* A private key: do not leave it in freed memory. */
		explicit_bzero(wc->key_pem, strlen(wc->key_pem));
		free(wc->key_pem);
	}
	free(wc->client_ca_pem);
	free_list(wc->client_allowed_sans, wc->nr_client_allowed_sans);
	for (i = 0; i < wc->nr_headers; i++) {
		free(wc->headers[i].name);
		free(wc->headers[i].value);
	}
	free(wc->headers);
	for (i = 0; i < wc->nr_users; i++) {
		free(wc->users[i].name);
		free(wc->users[i].hash);
	}
	free(wc->users);
	pthread_mutex_destroy(&wc->lock);
	free(wc);
}

static bool ct_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;
	size_t i;

	for (i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

/* SHA-256 over user NUL password NUL hash: the cache key of a successful login. */
static bool auth_digest(const char *user, const char *password, const char *hash,
			unsigned char out[32])
{
	size_t lu = strlen(user), lp = strlen(password), lh = strlen(hash);
	char *buf = malloc(lu + lp + lh + 2);
	int ret;

	if (!buf)
		return false;
	memcpy(buf, user, lu + 1);
	memcpy(buf + lu + 1, password, lp + 1);
	memcpy(buf + lu + lp + 2, hash, lh);
	ret = gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, lu + lp + lh + 2, out);
	explicit_bzero(buf, lu + lp + lh + 2);
	free(buf);
	return ret == 0;
}

/* A valid bcrypt hash of nothing anyone knows, to spend the same time on unknown users. */
static const char dummy_hash[] = "$2b$10$OXwa1EpmGy9dV4ZbzILuE.35YD4L/mxA6xhMADj1vR6jUC6UOemgS";

bool webconfig_check_user(struct webconfig *wc, const char *user, const char *password)
{
	const struct webconfig_user *u = NULL;
	struct crypt_data *cd;
	unsigned char digest[32];
	bool have_digest, ok = false;
	const char *res;
	int i;

	if (!user || !password)
		return false;
	for (i = 0; i < wc->nr_users; i++)
		if (!strcmp(wc->users[i].name, user))
			u = &wc->users[i];
	have_digest = u && auth_digest(user, password, u->hash, digest);
	if (have_digest) {
		pthread_mutex_lock(&wc->lock);
		for (i = 0; i < wc->auth_cache_nr && !ok; i++)
			ok = ct_equal(wc->auth_cache[i], digest, sizeof(digest));
		pthread_mutex_unlock(&wc->lock);
		if (ok)
			return true;
	}
	/*
	 * struct crypt_data is ~32 KiB: too big for a server thread's stack. crypt_rn (libxcrypt)
	 * rather than crypt_r: it returns NULL on failure, and sanitizer runtimes intercept
	 * crypt_r, whose definition then satisfies the link so that --as-needed drops libcrypt and
	 * the interceptor calls a NULL "real" crypt_r.
	 */
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	res = crypt_rn(password, u ? u->hash : dummy_hash, cd, (int)sizeof(*cd));
	ok = u && res && res[0] != '*' && strlen(res) == strlen(u->hash) &&
	     ct_equal(res, u->hash, strlen(u->hash));
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok && have_digest) {
		pthread_mutex_lock(&wc->lock);
		memcpy(wc->auth_cache[wc->auth_cache_next], digest, sizeof(digest));
		wc->auth_cache_next = (wc->auth_cache_next + 1) % WC_AUTH_CACHE;
		if (wc->auth_cache_nr < WC_AUTH_CACHE)
			wc->auth_cache_nr++;
		pthread_mutex_unlock(&wc->lock);
	}
	return ok;
}

bool webconfig_rate_allow(struct webconfig *wc, int64_t now_ns)
{
	bool ok;

	if (!wc->rate_interval_ns)
		return true;
	pthread_mutex_lock(&wc->lock);
	if (!wc->rate_last_ns) {
		wc->rate_tokens = wc->rate_burst;
	} else if (now_ns > wc->rate_last_ns) {
		wc->rate_tokens +=
			(double)(now_ns - wc->rate_last_ns) / (double)wc->rate_interval_ns;
		if (wc->rate_tokens > wc->rate_burst)
			wc->rate_tokens = wc->rate_burst;
	}
	wc->rate_last_ns = now_ns;
	ok = wc->rate_tokens >= 1.0;
	if (ok)
		wc->rate_tokens -= 1.0;
	pthread_mutex_unlock(&wc->lock);
	return ok;
}
