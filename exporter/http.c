/* The exporter's HTTP(S) server on libmicrohttpd: routes, auth, client certs, negotiation, gzip. */
#include "http_internal.h"
#include "clock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <zlib.h>

#include "exporter_log.h"
#include "http_pprof.h"
#include "webconfig.h"

void http_add_common_headers(struct http_server *srv, struct MHD_Response *r)
{
	const struct webconfig *wc = srv->opts.webconfig;
	bool full;

	for (int i = 0; wc && i < wc->nr_headers; i++)
		MHD_add_response_header(r, wc->headers[i].name, wc->headers[i].value);
	/*
	 * A connection is kept for the next request only while slots are free: at the limit, a
	 * client asking again and again on its connection would keep those waiting to be
	 * accepted out for as long as it liked.
	 */
	pthread_mutex_lock(&srv->lock);
	full = srv->nr_live >= srv->opts.max_connections;
	pthread_mutex_unlock(&srv->lock);
	if (full)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
}

static enum MHD_Result reply_text(struct http_server *srv, struct MHD_Connection *conn,
				  unsigned int status, const char *text, const char *allow)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (allow)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
	http_add_common_headers(srv, r);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * One deflate state per server thread, reset between scrapes. deflateInit2 allocates and clears
 * about 270 KiB; freed after every scrape, glibc handed those pages back to the kernel (madvise,
 * a TLB-shootdown IPI to every CPU) and faulted them in again on the next one, which cost more
 * CPU than everything else a scrape does.
 */
static pthread_key_t deflate_key;
static pthread_once_t deflate_once = PTHREAD_ONCE_INIT;
static bool deflate_key_ok;

static void deflate_free(void *p)
{
	deflateEnd(p);
	free(p);
}

static void deflate_key_init(void)
{
	deflate_key_ok = pthread_key_create(&deflate_key, deflate_free) == 0;
}

static z_stream *thread_deflate(void)
{
	z_stream *z;

	pthread_once(&deflate_once, deflate_key_init);
	if (!deflate_key_ok)
		return NULL;
	z = pthread_getspecific(deflate_key);
	if (z)
		return deflateReset(z) == Z_OK ? z : NULL;
	z = calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	if (deflateInit2(z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(z);
		return NULL;
	}
	if (pthread_setspecific(deflate_key, z)) {
		deflate_free(z);
		return NULL;
	}
	return z;
}

/* gzip (RFC 1952) of in; NULL when zlib fails or memory runs out. */
static char *gzip_buf(const char *in, size_t len, size_t *out_len)
{
	z_stream *z = thread_deflate();
	uLong bound;
	char *out;

	if (!z)
		return NULL;
	bound = deflateBound(z, (uLong)len) + 32;
	out = malloc(bound);
	if (!out)
		return NULL;
	z->next_in = (Bytef *)in;
	z->avail_in = (uInt)len;
	z->next_out = (Bytef *)out;
	z->avail_out = (uInt)bound;
	if (deflate(z, Z_FINISH) != Z_STREAM_END) {
		free(out);
		return NULL;
	}
	*out_len = z->total_out;
	return out;
}

static enum MHD_Result serve_metrics(struct http_server *srv, struct MHD_Connection *conn)
{
	const char *accept =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	const char *enc =
		MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *om_version;
	enum expo_format fmt = expo_negotiate(accept, &om_version);
	struct MHD_Response *r;
	enum MHD_Result ret;
	bool gz = false;
	char *buf = NULL;
	size_t len = 0;
	int err;

	err = srv->opts.scrape(srv->opts.ctx, fmt, &buf, &len);
	if (err) {
		xlog(XLOG_ERROR, "scrape failed: %s", strerror(-err));
		return reply_text(
			srv, conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			"An error has occurred while serving metrics; see the exporter's log.\n",
			NULL);
	}
	if (expo_accepts_gzip(enc)) {
		size_t zlen;
		char *z = gzip_buf(buf, len, &zlen);

		if (z) {
			free(buf);
			buf = z;
			len = zlen;
			gz = true;
		}
	}
	r = MHD_create_response_from_buffer_with_free_callback(len, buf, free);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				expo_content_type(fmt, om_version));
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, "Accept-Encoding");
	http_add_common_headers(srv, r);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/*
 * Client certificates, checked per request since libmicrohttpd only asks for them (when it
 * has CAs) and leaves verification to the application. Returns NULL when acceptable, else why not.
 */
static const char *check_client_cert(struct http_server *srv, struct MHD_Connection *conn)
{
	const struct webconfig *wc = srv->opts.webconfig;
	const union MHD_ConnectionInfo *ci;
	gnutls_session_t session;
	const gnutls_datum_t *certs;
	unsigned int nr = 0, status = 0;
	gnutls_x509_crt_t crt;
	bool san_ok = false;

	if (!wc || !wc->tls || wc->client_auth == WC_NO_CLIENT_CERT)
		return NULL;
	ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	if (!ci)
		return "no TLS session";
	session = (gnutls_session_t)ci->tls_session;
	certs = gnutls_certificate_get_peers(session, &nr);
	if (!certs || !nr) {
		if (wc->client_auth == WC_REQUIRE_ANY_CLIENT_CERT ||
		    wc->client_auth == WC_REQUIRE_AND_VERIFY_CLIENT_CERT)
			return "a client certificate is required";
		return NULL;
	}
	if (wc->client_auth == WC_VERIFY_CLIENT_CERT_IF_GIVEN ||
	    wc->client_auth == WC_REQUIRE_AND_VERIFY_CLIENT_CERT) {
		if (gnutls_certificate_verify_peers2(session, &status) < 0 || status)
			return "the client certificate does not verify against client_ca_file";
	}
	if (!wc->nr_client_allowed_sans)
		return NULL;
	if (gnutls_x509_crt_init(&crt) < 0)
		return "out of memory";
	if (gnutls_x509_crt_import(crt, &certs[0], GNUTLS_X509_FMT_DER) < 0) {
		gnutls_x509_crt_deinit(crt);
		return "cannot parse the client certificate";
	}
	for (unsigned int i = 0; !san_ok; i++) {
		char san[512], text[INET6_ADDRSTRLEN];
		size_t sz = sizeof(san) - 1;
		int type = gnutls_x509_crt_get_subject_alt_name(crt, i, san, &sz, NULL);

		if (type < 0)
			break;
		san[sz] = '\0';
		if (type == GNUTLS_SAN_IPADDRESS) {
			if (!inet_ntop(sz == 4 ? AF_INET : AF_INET6, san, text, sizeof(text)))
				continue;
			snprintf(san, sizeof(san), "%s", text);
		}
		for (int j = 0; j < wc->nr_client_allowed_sans; j++)
			if (!strcmp(san, wc->client_allowed_sans[j]))
				san_ok = true;
	}
	gnutls_x509_crt_deinit(crt);
	return san_ok ? NULL : "no allowed SAN in the client certificate";
}

static bool has_body(struct MHD_Connection *conn)
{
	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH) ||
	       MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
					   MHD_HTTP_HEADER_TRANSFER_ENCODING);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct http_server *srv = cls;
	struct webconfig *wc = srv->opts.webconfig;
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET);
	bool head = !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool metrics = !strcmp(url, srv->opts.telemetry_path);
	bool profile = srv->opts.profile_begin && !strcmp(url, HTTP_PPROF_PATH);
	const char *why;

	/* a profile request resumed: its checks were passed when it came */
	if (*req_cls && *req_cls != srv)
		return http_pprof_serve(srv, conn, req_cls);
	http_conn__request_started(srv, conn);
	/*
	 * A response queued at the first call, when only the headers are in, makes
	 * libmicrohttpd close the connection after it (it will not read what may follow): every
	 * scrape paid a new connection (and TLS handshake), and pipelined requests after the
	 * first went unanswered. A GET or HEAD without a body is answered at the second call,
	 * keeping the connection; anything else still gets its answer, and the close, at once.
	 */
	if (!*req_cls) {
		*req_cls = srv;
		if ((get || head) && !has_body(conn))
			return MHD_YES;
	}
	if (wc && !webconfig_rate_allow(wc, mono_ns()))
		return reply_text(srv, conn, MHD_HTTP_TOO_MANY_REQUESTS, "Too Many Requests\n",
				  NULL);
	why = check_client_cert(srv, conn);
	if (why) {
		xlog(XLOG_DEBUG, "refused a client: %s", why);
		return reply_text(srv, conn, MHD_HTTP_FORBIDDEN, "Forbidden\n", NULL);
	}
	if (wc && wc->nr_users) {
		char *pass = NULL;
		char *user = MHD_basic_auth_get_username_password(conn, &pass);
		bool ok = webconfig_check_user(wc, user, pass);
		struct MHD_Response *r;
		enum MHD_Result ret;

		if (pass) {
			explicit_bzero(pass, strlen(pass));
			MHD_free(pass);
		}
		if (user)
			MHD_free(user);
		if (!ok) {
			static const char unauth[] = "Unauthorized\n";

			r = MHD_create_response_from_buffer(sizeof(unauth) - 1, (void *)unauth,
							    MHD_RESPMEM_PERSISTENT);
			if (!r)
				return MHD_NO;
			http_add_common_headers(srv, r);
			ret = MHD_queue_basic_auth_fail_response(conn, "perfscope exporter", r);
			MHD_destroy_response(r);
			return ret;
		}
	}
	if (profile && (get || head))
		return http_pprof_serve(srv, conn, req_cls);
	if (!metrics && !profile && strcmp(url, "/"))
		return reply_text(srv, conn, MHD_HTTP_NOT_FOUND, "404 page not found\n", NULL);
	if (!get && !head)
		return reply_text(srv, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "Method Not Allowed\n",
				  "GET, HEAD");
	if (metrics)
		return serve_metrics(srv, conn);
	{
		struct MHD_Response *r = MHD_create_response_from_buffer(
			srv->landing_len, srv->landing, MHD_RESPMEM_PERSISTENT);
		enum MHD_Result ret;

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
					"text/html; charset=utf-8");
		http_add_common_headers(srv, r);
		ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
}

/* A request ended: a profile request's state is freed, the connection's deadline set again. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	http_pprof_completed(cls, req_cls);
	http_conn__on_completed(cls, c, req_cls, toe);
}

/* libmicrohttpd's printf-style messages. */
__attribute__((format(printf, 2, 0))) static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	xlog(XLOG_DEBUG, "http: %s", msg);
}

/* The landing page: what this is and where the metrics are; the path is escaped for HTML. */
static char *make_landing(const char *path, size_t *len)
{
	char esc[1024];
	size_t o = 0;
	char *page;
	int n;

	for (const char *p = path; *p && o + 7 < sizeof(esc); p++) {
		const char *rep = *p == '<'   ? "&lt;"
				  : *p == '>' ? "&gt;"
				  : *p == '&' ? "&amp;"
				  : *p == '"' ? "&quot;"
					      : NULL;

		if (rep) {
			memcpy(esc + o, rep, strlen(rep));
			o += strlen(rep);
		} else {
			esc[o++] = *p;
		}
	}
	esc[o] = '\0';
	n = asprintf(&page,
		     "<!DOCTYPE html>\n<html><head><title>perfscope exporter</title></head>\n"
		     "<body><h1>perfscope exporter</h1>\n"
		     "<p>Linux perf counters per CPU for Prometheus, with node_exporter's perf "
		     "collector metric names.</p>\n"
		     "<p><a href=\"%s\">Metrics</a></p>\n</body></html>\n",
		     esc);
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return page;
}

struct http_server *http_start(int listen_fd, const struct http_opts *opts, char *err,
			       size_t errlen)
{
	struct http_server *srv = calloc(1, sizeof(*srv));
	const struct webconfig *wc = opts->webconfig;
	struct MHD_OptionItem o[20];
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;

	/* a profile request waits for its seconds suspended, not holding a server thread */
	if (opts->profile_begin)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	int n = 0;

	if (!srv) {
		snprintf(err, errlen, "out of memory");
		close(listen_fd);
		return NULL;
	}
	srv->opts = *opts;
	srv->listen_fd = listen_fd;
	srv->landing = make_landing(opts->telemetry_path, &srv->landing_len);
	if (!srv->landing) {
		snprintf(err, errlen, "out of memory");
		close(listen_fd);
		free(srv);
		return NULL;
	}
	if (http_conn__start(srv)) {
		snprintf(err, errlen, "cannot start the request deadline thread");
		http_conn__stop(srv);
		close(listen_fd);
		free(srv->landing);
		free(srv);
		return NULL;
	}
	/* First, so that libmicrohttpd sends its messages for the options after it there too. */
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION,
					  (intptr_t)http_conn__on_connection, srv };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed,
					  srv };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, opts->threads, NULL };
	/*
	 * libmicrohttpd stops accepting at its limit, leaving new clients in the listening
	 * socket's queue; a slot over ours per thread (it splits the limit between them) lets it
	 * accept the connection that makes conn_started drop an idle one instead.
	 */
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT,
					  (intptr_t)opts->max_connections + opts->threads, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, opts->timeout_s, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_MEMORY_LIMIT,
					  (intptr_t)opts->max_request_bytes, NULL };
	/*
	 * Refuse HTTP/1.1 without Host and URLs with spaces outright (libmicrohttpd 0.9.75; bare LF
	 * line ends stay accepted, as RFC 9112 allows a recipient to).
	 */
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_STRICT_FOR_CLIENT, 1, NULL };
	if (wc && wc->tls) {
		flags |= MHD_USE_TLS;
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, wc->cert_pem };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, wc->key_pem };
		o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						  (void *)wc->priorities };
		if (wc->client_ca_pem)
			o[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
							  wc->client_ca_pem };
	}
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	srv->daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, srv, MHD_OPTION_ARRAY, o,
				       MHD_OPTION_END);
	if (!srv->daemon) {
		snprintf(
			err, errlen, "cannot start the HTTP%s server%s", wc && wc->tls ? "S" : "",
			wc && wc->tls
				? " (check that cert_file and key_file are a matching PEM certificate and key)"
				: "");
		/* Whether libmicrohttpd closed it on the way out depends on where it failed. */
		if (fcntl(listen_fd, F_GETFD) >= 0)
			close(listen_fd);
		http_conn__stop(srv);
		free(srv->landing);
		free(srv);
		return NULL;
	}
	return srv;
}

void http_stop(struct http_server *srv)
{
	if (!srv)
		return;
	/* libmicrohttpd closes the listening socket it was given. */
	MHD_stop_daemon(srv->daemon);
	http_conn__stop(srv);
	free(srv->landing);
	free(srv);
}
