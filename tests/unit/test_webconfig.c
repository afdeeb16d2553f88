/* Unit tests of exporter/webconfig.c: exporter-toolkit web-config parsing, bcrypt users, rate
 * limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "webconfig.h"

static char dir[64];

static void write_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/psc-webconfig-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	write_file("server.crt", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
	write_file("server.key", "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n");
	write_file("ca.crt", "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n");
	return 0;
}

static int teardown(void **state)
{
	char path[256];
	const char *files[] = { "server.crt", "server.key", "ca.crt", "web.yml",
				"zeros.yml",  "der.crt",    "der.yml" };
	size_t i;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	return rmdir(dir);
}

/* A fresh bcrypt hash made by libcrypt itself, so the test needs no other tool. */
static char *make_hash(const char *password)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];
	char *out;

	assert_non_null(cd);
	/* Cost 4, the lowest bcrypt allows, keeps the test quick. */
	assert_non_null(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)));
	out = strdup(crypt_r(password, salt, cd));
	free(cd);
	assert_int_equal(strlen(out), 60);
	return out;
}

static struct webconfig *parse(const char *text, char *err, size_t errlen)
{
	return webconfig_parse(text, strlen(text), "web.yml", dir, err, errlen);
}

static void expect_error(const char *text, const char *needle)
{
	char err[512];
	struct webconfig *wc = parse(text, err, sizeof(err));

	if (wc)
		fail_msg("accepted: %s", text);
	if (!strstr(err, needle))
		fail_msg("error '%s' does not mention '%s'", err, needle);
}

static void test_empty(void **state)
{
	char err[256];
	struct webconfig *wc = parse("", err, sizeof(err));

	assert_non_null(wc);
	assert_false(wc->tls);
	assert_int_equal(wc->nr_users, 0);
	webconfig_free(wc);
	wc = parse("# just a comment\n", err, sizeof(err));
	assert_non_null(wc);
	webconfig_free(wc);
	wc = parse("basic_auth_users:\ntls_server_config:\n", err, sizeof(err));
	assert_non_null(wc);
	assert_false(wc->tls);
	webconfig_free(wc);
}

static void test_full(void **state)
{
	char *hash = make_hash("s3cret");
	char *text, err[512];
	struct webconfig *wc;

	assert_true(asprintf(&text,
			     "tls_server_config:\n"
			     "  cert_file: server.crt\n"
			     "  key_file: %s/server.key\n"
			     "  client_auth_type: RequireAndVerifyClientCert\n"
			     "  client_ca_file: ca.crt\n"
			     "  client_allowed_sans: [\"scraper.example\", 10.0.0.1]\n"
			     "  min_version: TLS13\n"
			     "  prefer_server_cipher_suites: false\n"
			     "http_server_config:\n"
			     "  http2: false\n"
			     "  headers:\n"
			     "    X-Frame-Options: deny\n"
			     "    Strict-Transport-Security: max-age=31536000\n"
			     "rate_limit:\n"
			     "  interval: 1s\n"
			     "  burst: 2\n"
			     "basic_auth_users:\n"
			     "  alice: '%s'\n"
			     "  bob: %s\n",
			     dir, hash, hash) > 0);
	wc = parse(text, err, sizeof(err));
	if (!wc)
		fail_msg("%s", err);
	assert_true(wc->tls);
	assert_non_null(strstr(wc->cert_pem, "BEGIN CERTIFICATE"));
	assert_non_null(strstr(wc->key_pem, "BEGIN PRIVATE KEY"));
	assert_non_null(strstr(wc->client_ca_pem, "MIIC"));
	assert_int_equal(wc->client_auth, WC_REQUIRE_AND_VERIFY_CLIENT_CERT);
	assert_int_equal(wc->nr_client_allowed_sans, 2);
	assert_string_equal(wc->client_allowed_sans[1], "10.0.0.1");
	assert_int_equal(wc->min_version, 0x0304);
	assert_string_equal(wc->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3");
	assert_false(wc->http2);
	assert_int_equal(wc->nr_headers, 2);
	assert_string_equal(wc->headers[0].name, "X-Frame-Options");
	assert_string_equal(wc->headers[0].value, "deny");
	assert_int_equal(wc->rate_interval_ns, 1000000000LL);
	assert_int_equal(wc->rate_burst, 2);
	assert_int_equal(wc->nr_users, 2);
	assert_string_equal(wc->users[0].name, "alice");
	assert_string_equal(wc->users[0].hash, hash);
	webconfig_free(wc);
	free(text);
	free(hash);
}

static void test_load_relative(void **state)
{
	char path[256], err[512];
	struct webconfig *wc;

	/* cert_file is relative to the config file's directory, not the current directory. */
	write_file("web.yml",
		   "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	wc = webconfig_load(path, err, sizeof(err));
	if (!wc)
		fail_msg("%s", err);
	assert_true(wc->tls);
	assert_int_equal(wc->client_auth, WC_NO_CLIENT_CERT);
	/* Defaults: TLS 1.2 to 1.3, server cipher order. */
	assert_string_equal(wc->priorities,
			    "NORMAL:%SERVER_PRECEDENCE:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3");
	webconfig_free(wc);

	wc = webconfig_load("/nonexistent/web.yml", err, sizeof(err));
	assert_null(wc);
	assert_non_null(strstr(err, "/nonexistent/web.yml"));
}

/* A file holding a NUL byte is refused, not read as text that ends there. */
static void test_load_binary(void **state)
{
	static const char zeros[64];
	char path[256], err[512];
	struct webconfig *wc;
	FILE *f;

	/* a file of zeros read as a C string was an empty config: no TLS, no passwords */
	snprintf(path, sizeof(path), "%s/zeros.yml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(zeros, 1, sizeof(zeros), f), sizeof(zeros));
	fclose(f);
	wc = webconfig_load(path, err, sizeof(err));
	assert_null(wc);
	assert_non_null(strstr(err, "NUL byte"));

	/* a DER certificate (binary) where PEM is expected */
	snprintf(path, sizeof(path), "%s/der.crt", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fwrite("\x30\x82\x01\x00\x00\x01", 1, 6, f);
	fclose(f);
	write_file("der.yml", "tls_server_config:\n  cert_file: der.crt\n  key_file: server.key\n");
	snprintf(path, sizeof(path), "%s/der.yml", dir);
	wc = webconfig_load(path, err, sizeof(err));
	assert_null(wc);
	assert_non_null(strstr(err, "cert_file"));
	assert_non_null(strstr(err, "PEM is expected"));
}

static void test_ciphers(void **state)
{
	char err[512];
	struct webconfig *wc =
		parse("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		      "  cipher_suites:\n    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
		      "    - TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384\n"
		      "  curve_preferences: [X25519, CurveP256]\n",
		      err, sizeof(err));

	if (!wc)
		fail_msg("%s", err);
	assert_non_null(strstr(wc->priorities, ":+ECDHE-RSA"));
	assert_non_null(strstr(wc->priorities, ":+ECDHE-ECDSA"));
	assert_non_null(strstr(wc->priorities, ":-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1"));
	webconfig_free(wc);
}

static void test_errors(void **state)
{
	expect_error("bogus: 1\n", "web.yml:1: unknown key 'bogus'");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  certfile: x\n",
		     "web.yml:4: unknown key 'certfile' in tls_server_config");
	expect_error("http_server_config:\n  http2: true\n  http2: false\n",
		     "key 'http2' appears twice");
	expect_error("basic_auth_users:\n  alice: plaintext\n", "not a bcrypt hash");
	expect_error("basic_auth_users:\n  alice: $1$abc$defghijklmnopqrstuv\n",
		     "not a bcrypt hash");
	expect_error("basic_auth_users: [a, b]\n", "must be a mapping");
	expect_error("tls_server_config:\n  cert_file: server.crt\n",
		     "missing one of key or key_file");
	expect_error("tls_server_config:\n  key_file: server.key\n",
		     "missing one of cert or cert_file");
	expect_error("tls_server_config:\n  cert_file: nope.crt\n  key_file: server.key\n",
		     "nope.crt");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  client_auth_type: Sometimes\n",
		     "invalid client_auth_type 'Sometimes'");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  client_ca_file: ca.crt\n",
		     "without a client_auth_type");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  client_auth_type: RequestClientCert\n  client_allowed_sans: [a]\n",
		     "client_allowed_sans requires");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  min_version: TLS14\n",
		     "'min_version' must be one of");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  min_version: TLS13\n  max_version: TLS12\n",
		     "min_version is above max_version");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  cipher_suites: [TLS_FOO]\n",
		     "unknown cipher: TLS_FOO");
	expect_error("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		     "  curve_preferences: [P999]\n",
		     "unknown curve: P999");
	expect_error("http_server_config:\n  headers:\n    Server: x\n",
		     "header 'Server' is not allowed");
	expect_error("http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
		     "X-Frame-Options must be");
	expect_error("http_server_config:\n  http2: maybe\n", "must be true or false");
	expect_error("rate_limit:\n  interval: soon\n", "must be a duration");
	/* What strtod would take but Go's durations are not (nan cannot become an integer). */
	expect_error("rate_limit:\n  interval: nans\n", "must be a duration");
	expect_error("rate_limit:\n  interval: infs\n", "must be a duration");
	expect_error("rate_limit:\n  interval: 0x10s\n", "must be a duration");
	expect_error("rate_limit:\n  interval: 1e3s\n", "must be a duration");
	expect_error("rate_limit:\n  interval: -1s\n", "must be a duration");
	expect_error("rate_limit:\n  interval: ' 1s'\n", "must be a duration");
	expect_error("rate_limit:\n  interval: .s\n", "must be a duration");
	expect_error("rate_limit:\n  interval: 99999999999h\n", "must be a duration");
	expect_error("rate_limit:\n  burst: -1\n", "whole number");
	expect_error("tls_server_config: [\n", "YAML error");
	expect_error("basic_auth_users:\n  - a\n", "must be a mapping");
}

/* Go duration syntax: units combined, fractions, the bare 0. */
static void test_durations(void **state)
{
	static const struct {
		const char *text;
		int64_t ns;
	} cases[] = { { "0", 0 },
		      { "250ms", 250000000LL },
		      { "1.5s", 1500000000LL },
		      { ".5s", 500000000LL },
		      { "1m30s", 90000000000LL },
		      { "2h", 7200000000000LL },
		      { "10us", 10000LL },
		      { "10\xc2\xb5s", 10000LL } };
	char text[128], err[512];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct webconfig *wc;

		snprintf(text, sizeof(text), "rate_limit:\n  interval: %s\n  burst: 1\n",
			 cases[i].text);
		wc = parse(text, err, sizeof(err));
		if (!wc)
			fail_msg("%s: %s", cases[i].text, err);
		assert_int_equal(wc->rate_interval_ns, cases[i].ns);
		webconfig_free(wc);
	}
}

static void test_users(void **state)
{
	char *hash = make_hash("s3cret"), *text, err[512];
	struct webconfig *wc;

	assert_true(asprintf(&text, "basic_auth_users:\n  alice: %s\n", hash) > 0);
	wc = parse(text, err, sizeof(err));
	if (!wc)
		fail_msg("%s", err);
	assert_false(webconfig_check_user(wc, "alice", "wrong"));
	assert_int_equal(wc->auth_cache_nr, 0);
	assert_true(webconfig_check_user(wc, "alice", "s3cret"));
	assert_int_equal(wc->auth_cache_nr, 1);
	/* The second success comes from the cache and adds nothing. */
	assert_true(webconfig_check_user(wc, "alice", "s3cret"));
	assert_int_equal(wc->auth_cache_nr, 1);
	assert_false(webconfig_check_user(wc, "alice", "s3cre"));
	assert_false(webconfig_check_user(wc, "alice", "s3cret "));
	assert_false(webconfig_check_user(wc, "mallory", "s3cret"));
	assert_false(webconfig_check_user(wc, "alice", NULL));
	assert_false(webconfig_check_user(wc, NULL, "s3cret"));
	webconfig_free(wc);
	free(text);
	free(hash);
}

static void test_rate(void **state)
{
	char err[256];
	struct webconfig *wc =
		parse("rate_limit:\n  interval: 500ms\n  burst: 2\n", err, sizeof(err));
	int64_t t = 1000000000LL;

	assert_non_null(wc);
	assert_true(webconfig_rate_allow(wc, t));
	assert_true(webconfig_rate_allow(wc, t));
	assert_false(webconfig_rate_allow(wc, t));
	/* One interval later one more request may go. */
	assert_true(webconfig_rate_allow(wc, t + 500000000LL));
	assert_false(webconfig_rate_allow(wc, t + 500000000LL));
	webconfig_free(wc);

	wc = parse("", err, sizeof(err));
	assert_true(webconfig_rate_allow(wc, t));
	webconfig_free(wc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),	      cmocka_unit_test(test_full),
		cmocka_unit_test(test_load_relative), cmocka_unit_test(test_ciphers),
		cmocka_unit_test(test_errors),	      cmocka_unit_test(test_users),
		cmocka_unit_test(test_rate),	      cmocka_unit_test(test_durations),
		cmocka_unit_test(test_load_binary),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
