/* web-config file of Prometheus' exporter-toolkit (TLS, basic auth, headers, rate limit): parsing
 * and auth checks. */
#ifndef PERFSCOPE_EXPORTER_WEBCONFIG_H
#define PERFSCOPE_EXPORTER_WEBCONFIG_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum webconfig_client_auth {
	WC_NO_CLIENT_CERT,
	WC_REQUEST_CLIENT_CERT,
	WC_REQUIRE_ANY_CLIENT_CERT,
	WC_VERIFY_CLIENT_CERT_IF_GIVEN,
	WC_REQUIRE_AND_VERIFY_CLIENT_CERT,
};

struct webconfig_user {
	char *name;
	char *hash; /* bcrypt, $2a$/$2b$/$2y$ */
};

struct webconfig_header {
	char *name;
	char *value;
};

#define WC_AUTH_CACHE 32

struct webconfig {
	/* tls_server_config; PEM texts are loaded from the *_file paths at parse time. */
	bool tls;
	char *cert_pem, *key_pem, *client_ca_pem;
	enum webconfig_client_auth client_auth;
	char **client_allowed_sans;
	int nr_client_allowed_sans;
	int min_version, max_version; /* 0x0301 TLS 1.0 ... 0x0304 TLS 1.3 */
	bool prefer_server_cipher_suites;
	/* gnutls priority string built from versions, cipher_suites and curve_preferences */
	char priorities[1024];
	/* http_server_config */
	bool http2;
	struct webconfig_header *headers;
	int nr_headers;
	/* rate_limit: a token bucket of `burst` tokens refilled every interval; 0 = off */
	int64_t rate_interval_ns;
	int rate_burst;
	/* basic_auth_users */
	struct webconfig_user *users;
	int nr_users;

	/* Runtime state (thread-safe through lock): successful logins and the rate bucket. */
	pthread_mutex_t lock;
	unsigned char auth_cache[WC_AUTH_CACHE][32];
	int auth_cache_nr, auth_cache_next;
	double rate_tokens;
	int64_t rate_last_ns;
};

/*
 * Parses a web-config file as exporter-toolkit does: unknown or duplicate keys are errors,
 * relative file paths are relative to the file's directory, TLS files are read and hashes
 * validated now. Returns NULL with a message in err ("FILE:LINE: what is wrong") on failure.
 */
struct webconfig *webconfig_load(const char *path, char *err, size_t errlen);
/* The same from text; base_dir resolves relative paths (NULL = current directory). */
struct webconfig *webconfig_parse(const char *text, size_t len, const char *name,
				  const char *base_dir, char *err, size_t errlen);
void webconfig_free(struct webconfig *wc);

/*
 * True when user/password match a configured user. bcrypt is slow on purpose (tens of ms);
 * successful checks are remembered as a SHA-256 of user, password and hash so that a scraper
 * presenting the same credentials every 15 s does not pay it again. Unknown users still cost
 * a bcrypt run so that timing does not reveal which names exist. Thread-safe.
 */
bool webconfig_check_user(struct webconfig *wc, const char *user, const char *password);
/* True when the request may proceed under rate_limit (always when none). Thread-safe. */
bool webconfig_rate_allow(struct webconfig *wc, int64_t now_ns);

#endif
