/* The web-config schema of exporter-toolkit: keys checked, TLS settings resolved, loading. */
#include "webconfig.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <yaml.h>
#include <gnutls/gnutls.h>

#include "webconfig_internal.h"

/* Report a problem and leave the (void) function. */
#define FAIL_RET(...)                       \
	do {                                \
		wc_yaml__fail(__VA_ARGS__); \
		return;                     \
	} while (0)

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

static int get_version(struct wc_ctx *c, yaml_node_t *n, const char *key)
{
	const char *s = wc_yaml__scalar(n);
	size_t i;

	for (i = 0; s && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (!strcmp(s, versions[i].name))
			return versions[i].version;
	wc_yaml__fail(c, n, "'%s' must be one of TLS10, TLS11, TLS12, TLS13", key);
	return 0;
}

static void tls_pair(struct wc_ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
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
		if (wc_yaml__is_null(v))
			return;
		free(*slot);
		*slot = wc_yaml__get_string(c, v, key);
		/* An empty value means "not set", as in Go. */
		if (*slot && !**slot) {
			free(*slot);
			*slot = NULL;
		}
		return;
	}
	if (!strcmp(key, "cipher_suites")) {
		r->cipher_suites = wc_yaml__get_string_list(c, v, key, &r->nr_cipher_suites);
	} else if (!strcmp(key, "curve_preferences")) {
		r->curves = wc_yaml__get_string_list(c, v, key, &r->nr_curves);
	} else if (!strcmp(key, "min_version")) {
		wc->min_version = get_version(c, v, key);
	} else if (!strcmp(key, "max_version")) {
		wc->max_version = get_version(c, v, key);
	} else if (!strcmp(key, "prefer_server_cipher_suites")) {
		wc->prefer_server_cipher_suites = wc_yaml__get_bool(c, v, key);
	} else if (!strcmp(key, "client_allowed_sans")) {
		r->has_sans = !wc_yaml__is_null(v);
		wc->client_allowed_sans =
			wc_yaml__get_string_list(c, v, key, &wc->nr_client_allowed_sans);
	} else {
		wc_yaml__fail(c, k, "unknown key '%s' in tls_server_config", key);
	}
}

/* The response headers exporter-toolkit allows, and the values it insists on for some. */
static bool header_ok(struct wc_ctx *c, yaml_node_t *k, const char *name, const char *value)
{
	static const char *const allowed[] = { "Strict-Transport-Security",
					       "X-Content-Type-Options", "X-Frame-Options",
					       "X-XSS-Protection", "Content-Security-Policy" };
	size_t i;

	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (!strcasecmp(name, allowed[i]))
			break;
	if (i == sizeof(allowed) / sizeof(allowed[0])) {
		wc_yaml__fail(
			c, k,
			"header '%s' is not allowed (allowed: Strict-Transport-Security, X-Content-Type-Options, X-Frame-Options, X-XSS-Protection, Content-Security-Policy)",
			name);
		return false;
	}
	if (!strcasecmp(name, "X-Content-Type-Options") && strcasecmp(value, "nosniff")) {
		wc_yaml__fail(c, k, "X-Content-Type-Options must be 'nosniff'");
		return false;
	}
	if (!strcasecmp(name, "X-Frame-Options") && strcasecmp(value, "deny") &&
	    strcasecmp(value, "sameorigin")) {
		wc_yaml__fail(c, k, "X-Frame-Options must be 'deny' or 'sameorigin'");
		return false;
	}
	if (strpbrk(value, "\r\n")) {
		wc_yaml__fail(c, k, "header '%s' has a line break in its value", name);
		return false;
	}
	return true;
}

static void header_pair(struct wc_ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
			yaml_node_t *v)
{
	struct webconfig_header *h;
	char *value = wc_yaml__get_string(c, v, key);

	if (!value)
		return;
	if (!header_ok(c, k, key, value)) {
		free(value);
		return;
	}
	h = realloc(wc->headers, (size_t)(wc->nr_headers + 1) * sizeof(*h));
	if (!h) {
		free(value);
		wc_yaml__fail(c, k, "out of memory");
		return;
	}
	wc->headers = h;
	h[wc->nr_headers].name = strdup(key);
	h[wc->nr_headers].value = value;
	if (!h[wc->nr_headers].name) {
		free(value);
		wc_yaml__fail(c, k, "out of memory");
		return;
	}
	wc->nr_headers++;
}

static void http_pair(struct wc_ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		      yaml_node_t *v)
{
	if (!strcmp(key, "http2"))
		wc->http2 = wc_yaml__get_bool(c, v, key);
	else if (!strcmp(key, "headers"))
		wc_yaml__each_pair(c, wc, v, "headers", header_pair);
	else
		wc_yaml__fail(c, k, "unknown key '%s' in http_server_config", key);
}

static void rate_pair(struct wc_ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		      yaml_node_t *v)
{
	if (!strcmp(key, "interval")) {
		wc->rate_interval_ns = wc_yaml__get_duration(c, v, key);
	} else if (!strcmp(key, "burst")) {
		const char *s = wc_yaml__scalar(v);
		char *end;
		long b = s ? strtol(s, &end, 10) : -1;

		if (!s || !*s || *end || b < 0 || b > INT_MAX)
			wc_yaml__fail(c, v, "'burst' must be a whole number >= 0");
		wc->rate_burst = (int)b;
	} else {
		wc_yaml__fail(c, k, "unknown key '%s' in rate_limit", key);
	}
}

static void user_pair(struct wc_ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		      yaml_node_t *v)
{
	struct webconfig_user *u;
	char *hash = wc_yaml__get_string(c, v, "basic_auth_users");

	if (!hash)
		return;
	if (!wc_auth__bcrypt_valid(hash)) {
		wc_yaml__fail(
			c, v,
			"password of user '%s' is not a bcrypt hash ($2y$/$2b$/$2a$, e.g. from 'htpasswd -nBC 10 %s')",
			key, key);
		free(hash);
		return;
	}
	if (strchr(key, ':')) {
		wc_yaml__fail(c, k,
			      "user name '%s' contains ':', which HTTP basic auth cannot carry",
			      key);
		free(hash);
		return;
	}
	u = realloc(wc->users, (size_t)(wc->nr_users + 1) * sizeof(*u));
	if (!u) {
		free(hash);
		wc_yaml__fail(c, k, "out of memory");
		return;
	}
	wc->users = u;
	u[wc->nr_users].name = strdup(key);
	u[wc->nr_users].hash = hash;
	if (!u[wc->nr_users].name) {
		free(hash);
		wc_yaml__fail(c, k, "out of memory");
		return;
	}
	wc->nr_users++;
}

static void top_pair(struct wc_ctx *c, struct webconfig *wc, const char *key, yaml_node_t *k,
		     yaml_node_t *v)
{
	if (!strcmp(key, "tls_server_config"))
		wc_yaml__each_pair(c, wc, v, "tls_server_config", tls_pair);
	else if (!strcmp(key, "http_server_config"))
		wc_yaml__each_pair(c, wc, v, "http_server_config", http_pair);
	else if (!strcmp(key, "rate_limit"))
		wc_yaml__each_pair(c, wc, v, "rate_limit", rate_pair);
	else if (!strcmp(key, "basic_auth_users"))
		wc_yaml__each_pair(c, wc, v, "basic_auth_users", user_pair);
	else
		wc_yaml__fail(
			c, k,
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
static void finish_tls(struct wc_ctx *c, struct webconfig *wc)
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
			wc_yaml__fail(
				c, NULL,
				"tls_server_config sets TLS options but no cert_file/key_file");
		return;
	}
	if (!r->cert && !r->cert_file)
		FAIL_RET(c, NULL, "tls_server_config: missing one of cert or cert_file");
	if (!r->key && !r->key_file)
		FAIL_RET(c, NULL, "tls_server_config: missing one of key or key_file");
	wc->cert_pem = r->cert_file ? wc_yaml__read_file(c, NULL, "cert_file", r->cert_file)
				    : strdup(r->cert);
	if (c->failed)
		return;
	wc->key_pem =
		r->key_file ? wc_yaml__read_file(c, NULL, "key_file", r->key_file) : strdup(r->key);
	if (c->failed)
		return;
	if (r->client_ca_file)
		wc->client_ca_pem =
			wc_yaml__read_file(c, NULL, "client_ca_file", r->client_ca_file);
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
	wc_yaml__free_list(r->cipher_suites, r->nr_cipher_suites);
	wc_yaml__free_list(r->curves, r->nr_curves);
}

struct webconfig *webconfig_parse(const char *text, size_t len, const char *name,
				  const char *base_dir, char *err, size_t errlen)
{
	struct tls_raw raw = { 0 };
	struct wc_ctx c = { .name = name ? name : "web config",
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
		wc_yaml__fail(&c, NULL, "out of memory");
		return NULL;
	}
	/* exporter-toolkit's defaults */
	wc->min_version = 0x0303;
	wc->max_version = 0x0304;
	wc->prefer_server_cipher_suites = true;
	wc->http2 = true;
	pthread_mutex_init(&wc->lock, NULL);

	if (!yaml_parser_initialize(&parser)) {
		wc_yaml__fail(&c, NULL, "out of memory");
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
	if (root && !wc_yaml__is_null(root))
		wc_yaml__each_pair(&c, wc, root, "the web config", top_pair);
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
	struct wc_ctx c = { .name = path, .err = err, .errlen = errlen };
	struct webconfig *wc;
	char *text, *dir, *slash;

	text = wc_yaml__read_file(&c, NULL, "web config file", path);
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
	wc_yaml__free_list(wc->client_allowed_sans, wc->nr_client_allowed_sans);
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
