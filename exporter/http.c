/* The exporter's HTTP(S) server on libmicrohttpd: routes, basic auth, client certs, negotiation,
 * gzip, limits. */
#include "http.h"
#include "clock.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netdb.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <microhttpd.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <zlib.h>

#include "keymap.h"
#include "exporter_log.h"
#include "webconfig.h"

/*
 * A connection as the request deadline and the eviction see it (libmicrohttpd's socket context).
 * libmicrohttpd's own timeout only closes connections that are silent; one that trickles a byte
 * now and then would keep its slot for as long as its headers fit in the request limit (an hour
 * at a byte per 0.2 s), and max_connections of those would lock every scraper out.
 *
 * A connection waiting for a request is on one of two lists, each in the order it began to wait
 * (appended under the lock with the time taken there, so each list is sorted by waiting_since):
 * fresh ones have never delivered a complete request, kept ones wait for the next one after an
 * answer. One being served is on neither, and one shut down waits only for libmicrohttpd to see
 * the end of the stream and close it.
 */
enum conn_state { CONN_FRESH, CONN_KEPT, CONN_BUSY, CONN_SHUT };

struct conn {
	struct conn *prev, *next; /* in srv->fresh or srv->kept while FRESH or KEPT */
	int fd;
	enum conn_state state;
	uint64_t addr; /* the client's address key (addr_key) */
	int64_t waiting_since; /* since when a complete request is awaited (FRESH, KEPT) */
};

struct http_server {
	struct MHD_Daemon *daemon;
	struct http_opts opts;
	char *landing;
	size_t landing_len;
	int listen_fd;
	/* the deadline and the slots: connections, and the thread that shuts overdue ones down */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct conn fresh, kept; /* list heads */
	struct keymap per_addr; /* addr_key -> unsigned int: live connections from that address */
	pthread_t reaper;
	int64_t reaper_wakes_at; /* INT64_MAX while it waits for news */
	int64_t logged_evictions_at;
	bool sync_ready, reaper_running, stopping;
	unsigned int nr_live; /* tracked and not shut down */
	unsigned int nr_tracked; /* shut down ones too */
	unsigned int peak_tracked; /* nr_tracked's peak since the last trim */
	struct http_stats stats;
	char peek[16385]; /* what a connection has queued, peeked under the lock (victim_rank) */
};

/* Splits "HOST:PORT", "[V6]:PORT" or ":PORT" into host (maybe "") and port; -1 with err if bad. */
static int split_listen(const char *addr, char *host, size_t hostlen, const char **port, char *err,
			size_t errlen)
{
	const char *colon;

	if (addr[0] == '[') {
		const char *close = strchr(addr, ']');

		if (!close || close[1] != ':' || (size_t)(close - addr - 1) >= hostlen) {
			snprintf(err, errlen, "listen address '%s': expected [IPV6]:PORT", addr);
			return -1;
		}
		memcpy(host, addr + 1, (size_t)(close - addr - 1));
		host[close - addr - 1] = '\0';
		*port = close + 2;
	} else {
		colon = strrchr(addr, ':');
		if (!colon || (size_t)(colon - addr) >= hostlen || strchr(addr, ':') != colon) {
			snprintf(err, errlen,
				 "listen address '%s': expected HOST:PORT, [IPV6]:PORT or :PORT",
				 addr);
			return -1;
		}
		memcpy(host, addr, (size_t)(colon - addr));
		host[colon - addr] = '\0';
		*port = colon + 1;
	}
	errno = 0;
	if (!**port || strspn(*port, "0123456789") != strlen(*port) ||
	    strtoul(*port, NULL, 10) > 65535 || errno) {
		snprintf(err, errlen, "listen address '%s': port must be a number 0-65535", addr);
		return -1;
	}
	return 0;
}

int http_check_listen(const char *addr, char *err, size_t errlen)
{
	char host[256];
	const char *port;

	return split_listen(addr, host, sizeof(host), &port, err, errlen);
}

void http_describe_listen(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (getsockname(fd, (struct sockaddr *)&ss, &sl) < 0) {
		snprintf(buf, len, "?");
		return;
	}
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
		snprintf(buf, len, "[%s]:%u", host, port);
	}
}

int http_listen(const char *addr, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_ADDRCONFIG };
	struct addrinfo *res = NULL, *ai;
	char host[256];
	const char *port;
	int fd = -1, ret, one = 1, saved = 0;

	if (split_listen(addr, host, sizeof(host), &port, err, errlen))
		return -1;
	if (!*host)
		hints.ai_family = AF_INET6; /* ":PORT": every address, v4 mapped into v6 */
	ret = getaddrinfo(*host ? host : NULL, port, &hints, &res);
	if (ret && !*host) {
		hints.ai_family = AF_INET;
		ret = getaddrinfo(NULL, port, &hints, &res);
	}
	if (ret) {
		snprintf(err, errlen, "listen address '%s': %s", addr, gai_strerror(ret));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (ai->ai_family == AF_INET6 && !*host) {
			int zero = 0;

			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
		}
		/*
		 * HTTP clients speak first, so a connection is handed over only once its first
		 * bytes are in (or after a second without any): one that never sends takes no slot
		 * meanwhile, and a scraper's arrives with its request, never silent, so never the
		 * one dropped for a newer connection (see pick_victim).
		 */
		setsockopt(fd, IPPROTO_TCP, TCP_DEFER_ACCEPT, &one, sizeof(one));
		/*
		 * The kernel's queue as long as it allows (net.core.somaxconn), so that a burst of
		 * connections waits there rather than having its SYNs dropped (a retry 1 s later).
		 */
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0)
			break;
		saved = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		snprintf(
			err, errlen, "cannot listen on %s: %s%s", addr, strerror(saved),
			saved == EADDRINUSE
				? " (another program, perhaps node_exporter, uses that port; choose another with --web.listen-address)"
			: saved == EACCES ? " (ports below 1024 need root or CAP_NET_BIND_SERVICE)"
					  : "");
	return fd;
}

static void add_common_headers(struct http_server *srv, struct MHD_Response *r)
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
	add_common_headers(srv, r);
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
	add_common_headers(srv, r);
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

static int64_t deadline_ns(const struct http_server *srv)
{
	return (int64_t)srv->opts.timeout_s * 1000000000LL;
}

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static void list_del(struct conn *t)
{
	t->prev->next = t->next;
	t->next->prev = t->prev;
	t->prev = t->next = t;
}

static void list_add_tail(struct conn *head, struct conn *t)
{
	t->prev = head->prev;
	t->next = head;
	head->prev->next = t;
	head->prev = t;
}

/*
 * The per-address key: an IPv4 address (IPv4-mapped IPv6 ones included) as it is, an IPv6
 * address by its /64 prefix, which one host or one customer of a provider usually holds whole.
 */
static uint64_t addr_key(const struct sockaddr *sa)
{
	if (sa && sa->sa_family == AF_INET)
		return ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr);
	if (sa && sa->sa_family == AF_INET6) {
		const uint8_t *b =
			((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr.s6_addr;
		uint64_t hi = 0;

		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)b))
			return (uint64_t)b[12] << 24 | (uint64_t)b[13] << 16 |
			       (uint64_t)b[14] << 8 | b[15];
		for (int i = 0; i < 8; i++)
			hi = hi << 8 | b[i];
		return hi;
	}
	return 0;
}

/* One connection fewer from key (under the lock). */
static void addr_put(struct http_server *srv, uint64_t key)
{
	unsigned int *n = keymap__find(&srv->per_addr, key);

	if (n && !--*n)
		keymap__remove(&srv->per_addr, key);
}

/*
 * Shuts t down (under the lock): libmicrohttpd then sees the end of the stream and closes it,
 * which frees the slot. libmicrohttpd reports CLOSED before it closes the socket, and the fd is
 * used only under the lock, so a socket number that has been reused is never shut down.
 */
static void conn_shut(struct http_server *srv, struct conn *t)
{
	shutdown(t->fd, SHUT_RDWR);
	if (t->state == CONN_FRESH || t->state == CONN_KEPT)
		list_del(t);
	t->state = CONN_SHUT;
	srv->nr_live--;
	addr_put(srv, t->addr);
}

/*
 * The connection to drop for a new one (under the lock), among those waiting for their first
 * complete request, oldest first: one that has not sent a byte; else one whose bytes
 * libmicrohttpd has all read (a partial or trickled request: a complete one would have been
 * parsed); else one whose unread bytes do not end the request headers; else the oldest. Only
 * when none waits for its first request: the one idle the longest since its last answer (its
 * client has its answers and may connect again). from_addr: only those of that address. Never
 * skip (the new one).
 *
 * Unread bytes may be a complete request, a scraper's among them: libmicrohttpd accepts up to ten
 * connections per thread before it reads any, so in a flood from the scraper's own address the
 * scraper's was the oldest one after a few accepts and was dropped (2 of 20 scrapes lost with 8
 * connections per address). At most VICTIM_SCAN connections are asked.
 */
#define VICTIM_SCAN 64

enum { VICTIM_SILENT, VICTIM_READ, VICTIM_PARTIAL, VICTIM_REQUEST };

static int victim_rank(struct http_server *srv, const struct conn *t)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	int pending = 0;
	ssize_t n;

	/* TCP_INFO's bytes received, read by libmicrohttpd or not (Linux 4.1) */
	if (!getsockopt(t->fd, IPPROTO_TCP, TCP_INFO, &ti, &len) &&
	    len >= offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(uint64_t) &&
	    !ti.tcpi_bytes_received)
		return VICTIM_SILENT;
	if (ioctl(t->fd, FIONREAD, &pending) || !pending)
		return VICTIM_READ;
	/* the end of the headers (CRLF CRLF, or bare LFs) in what is queued */
	n = recv(t->fd, srv->peek, sizeof(srv->peek) - 1, MSG_PEEK | MSG_DONTWAIT);
	if (n <= 0)
		return VICTIM_PARTIAL;
	srv->peek[n] = '\0';
	return memmem(srv->peek, (size_t)n, "\r\n\r\n", 4) ||
			       memmem(srv->peek, (size_t)n, "\n\n", 2)
		       ? VICTIM_REQUEST
		       : VICTIM_PARTIAL;
}

static struct conn *pick_victim(struct http_server *srv, const struct conn *skip, bool from_addr,
				uint64_t addr)
{
	struct conn *best = NULL;
	int best_rank = VICTIM_REQUEST + 1, scanned = 0;

	for (struct conn *t = srv->fresh.next; t != &srv->fresh && scanned < VICTIM_SCAN;
	     t = t->next) {
		int rank;

		if (t == skip || (from_addr && t->addr != addr))
			continue;
		scanned++;
		rank = victim_rank(srv, t);
		if (rank < best_rank) {
			best = t;
			best_rank = rank;
		}
		if (rank == VICTIM_SILENT)
			break;
	}
	if (best)
		return best;
	for (struct conn *t = srv->kept.next; t != &srv->kept; t = t->next)
		if (t != skip && (!from_addr || t->addr == addr))
			return t;
	return NULL;
}

/* The headers are in: the request is being served, the deadline no longer applies. */
static void request_started(struct http_server *srv, struct MHD_Connection *c)
{
	struct conn *t = conn_of(c);

	if (!t)
		return;
	pthread_mutex_lock(&srv->lock);
	if (t->state == CONN_FRESH || t->state == CONN_KEPT) {
		list_del(t);
		t->state = CONN_BUSY;
	}
	pthread_mutex_unlock(&srv->lock);
}

/* Wakes the reaper when t's deadline comes before its planned wake-up (under the lock). */
static void deadline_moved(struct http_server *srv, const struct conn *t)
{
	if (t->waiting_since + deadline_ns(srv) < srv->reaper_wakes_at)
		pthread_cond_signal(&srv->cond);
}

/* Answered (or refused): the next request on this connection has a deadline again. */
static void on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct http_server *srv = cls;
	struct conn *t = conn_of(c);

	if (!t)
		return;
	pthread_mutex_lock(&srv->lock);
	if (t->state != CONN_SHUT) {
		if (t->state != CONN_BUSY)
			list_del(t);
		t->state = CONN_KEPT;
		t->waiting_since = mono_ns();
		list_add_tail(&srv->kept, t);
		deadline_moved(srv, t);
	}
	pthread_mutex_unlock(&srv->lock);
}

/* Drops are logged at info level at most once a minute, with the counts so far (under the lock). */
static void log_evictions(struct http_server *srv, int64_t now)
{
	if (srv->logged_evictions_at && now - srv->logged_evictions_at < 60 * 1000000000LL)
		return;
	srv->logged_evictions_at = now;
	xlog(XLOG_INFO,
	     "dropped idle connections that had sent no complete request to make room for new "
	     "ones: %llu with all %u slots taken, %llu over the limit of %u per address, so far",
	     (unsigned long long)srv->stats.dropped_full, srv->opts.max_connections,
	     (unsigned long long)srv->stats.dropped_per_address, srv->opts.max_per_address);
}

/*
 * A new connection is tracked and, when its address now holds more than max_per_address
 * connections or all max_connections slots are taken, makes room by dropping the connection of
 * that address (else of any) waiting the longest for a complete request: new clients, a scraper
 * among them, are never left waiting behind connections that send nothing, and an address that
 * opens many connections mostly drops its own.
 */
static void conn_started(struct http_server *srv, struct conn *t)
{
	unsigned int *n;
	struct conn *v;

	pthread_mutex_lock(&srv->lock);
	t->state = CONN_FRESH;
	t->waiting_since = mono_ns();
	list_add_tail(&srv->fresh, t);
	srv->nr_live++;
	if (++srv->nr_tracked > srv->peak_tracked)
		srv->peak_tracked = srv->nr_tracked;
	n = keymap__insert(&srv->per_addr, t->addr, NULL);
	if (n)
		++*n;
	else /* out of memory for the table: this one is not counted per address */
		t->addr = UINT64_MAX;
	if (n && *n > srv->opts.max_per_address &&
	    srv->opts.max_per_address < srv->opts.max_connections &&
	    (v = pick_victim(srv, t, true, t->addr))) {
		conn_shut(srv, v);
		srv->stats.dropped_per_address++;
		log_evictions(srv, t->waiting_since);
	} else if (srv->nr_live > srv->opts.max_connections &&
		   (v = pick_victim(srv, t, false, 0))) {
		conn_shut(srv, v);
		srv->stats.dropped_full++;
		log_evictions(srv, t->waiting_since);
	}
	deadline_moved(srv, t);
	pthread_mutex_unlock(&srv->lock);
}

/* Connections held at a peak from which a fall to an eighth returns free memory (malloc_trim). */
#define TRIM_PEAK 256

/* Connections in and out of the lists. */
static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct http_server *srv = cls;
	struct conn *t = *socket_context;
	bool trim;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		const union MHD_ConnectionInfo *ai =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

		t = calloc(1, sizeof(*t));
		if (!t || !ci) {
			/* Untracked: it still has libmicrohttpd's idle timeout. */
			free(t);
			return;
		}
		t->fd = ci->connect_fd;
		t->addr = addr_key(ai ? ai->client_addr : NULL);
		conn_started(srv, t);
		*socket_context = t;
		return;
	}
	if (!t)
		return;
	pthread_mutex_lock(&srv->lock);
	if (t->state != CONN_SHUT) {
		if (t->state != CONN_BUSY)
			list_del(t);
		srv->nr_live--;
		if (t->addr != UINT64_MAX)
			addr_put(srv, t->addr);
	}
	srv->nr_tracked--;
	trim = srv->peak_tracked >= TRIM_PEAK && srv->nr_tracked <= srv->peak_tracked / 8;
	if (trim)
		srv->peak_tracked = srv->nr_tracked;
	pthread_mutex_unlock(&srv->lock);
	free(t);
	*socket_context = NULL;
	/*
	 * A flood leaves libmicrohttpd's per-connection buffers (16 KiB each, malloc'ed by two
	 * threads in two arenas) free but interleaved with live blocks, which glibc keeps: after
	 * four floods of 1,100 connections the exporter held 13 MiB more than before them. Once the
	 * connections have fallen to an eighth of their peak, the free pages go back to the kernel.
	 */
	if (trim)
		malloc_trim(0);
}

/*
 * Shuts down connections that have not delivered a complete request within the timeout since
 * they opened or since their last answer, however busy they keep it. Each list is in deadline
 * order, so only the overdue heads are visited. Sleeps until the earliest deadline, or until a
 * connection comes or a request ends, so an idle exporter does not wake up.
 */
static void *reaper_main(void *arg)
{
	struct http_server *srv = arg;

	pthread_mutex_lock(&srv->lock);
	while (!srv->stopping) {
		int64_t now = mono_ns(), next = INT64_MAX;
		struct conn *heads[] = { &srv->fresh, &srv->kept };
		int shut = 0;

		for (int i = 0; i < 2; i++) {
			struct conn *t;

			while ((t = heads[i]->next) != heads[i] &&
			       t->waiting_since + deadline_ns(srv) <= now) {
				conn_shut(srv, t);
				shut++;
			}
			if (t != heads[i] && t->waiting_since + deadline_ns(srv) < next)
				next = t->waiting_since + deadline_ns(srv);
		}
		if (shut) {
			srv->stats.dropped_timeout += (uint64_t)shut;
			xlog(XLOG_DEBUG,
			     "closed %d connection(s) with no complete request within %u s (%llu so far)",
			     shut, srv->opts.timeout_s,
			     (unsigned long long)srv->stats.dropped_timeout);
		}
		/*
		 * Deadlines only ever move later, so a busy connection wakes this thread once per
		 * timeout at most, not once per request.
		 */
		srv->reaper_wakes_at = next;
		if (next == INT64_MAX) {
			pthread_cond_wait(&srv->cond, &srv->lock);
		} else {
			struct timespec ts = { .tv_sec = next / 1000000000LL,
					       .tv_nsec = next % 1000000000LL };

			pthread_cond_timedwait(&srv->cond, &srv->lock, &ts);
		}
	}
	pthread_mutex_unlock(&srv->lock);
	return NULL;
}

/* The lock, the condition (on CLOCK_MONOTONIC, as now_ns), the tables and the reaper thread. */
static int deadline_start(struct http_server *srv)
{
	pthread_condattr_t attr;
	int ret;

	srv->fresh.next = srv->fresh.prev = &srv->fresh;
	srv->kept.next = srv->kept.prev = &srv->kept;
	srv->reaper_wakes_at = INT64_MAX;
	ret = keymap__init(&srv->per_addr, sizeof(unsigned int), 0);
	if (ret)
		return ret;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	ret = pthread_cond_init(&srv->cond, &attr);
	pthread_condattr_destroy(&attr);
	if (ret)
		return -ret;
	pthread_mutex_init(&srv->lock, NULL);
	srv->sync_ready = true;
	ret = pthread_create(&srv->reaper, NULL, reaper_main, srv);
	if (ret)
		return -ret;
	srv->reaper_running = true;
	return 0;
}

static void deadline_stop(struct http_server *srv)
{
	if (srv->reaper_running) {
		pthread_mutex_lock(&srv->lock);
		srv->stopping = true;
		pthread_cond_signal(&srv->cond);
		pthread_mutex_unlock(&srv->lock);
		pthread_join(srv->reaper, NULL);
		srv->reaper_running = false;
	}
	if (srv->sync_ready) {
		pthread_cond_destroy(&srv->cond);
		pthread_mutex_destroy(&srv->lock);
		srv->sync_ready = false;
	}
	keymap__exit(&srv->per_addr);
}

void http_get_stats(struct http_server *srv, struct http_stats *st)
{
	pthread_mutex_lock(&srv->lock);
	*st = srv->stats;
	st->open = srv->nr_live;
	pthread_mutex_unlock(&srv->lock);
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
	const char *why;

	request_started(srv, conn);
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
			add_common_headers(srv, r);
			ret = MHD_queue_basic_auth_fail_response(conn, "perfscope exporter", r);
			MHD_destroy_response(r);
			return ret;
		}
	}
	if (!metrics && strcmp(url, "/"))
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
		add_common_headers(srv, r);
		ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
		MHD_destroy_response(r);
		return ret;
	}
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
	if (deadline_start(srv)) {
		snprintf(err, errlen, "cannot start the request deadline thread");
		deadline_stop(srv);
		close(listen_fd);
		free(srv->landing);
		free(srv);
		return NULL;
	}
	/* First, so that libmicrohttpd sends its messages for the options after it there too. */
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)mhd_log, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, listen_fd, NULL };
	o[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection,
					  srv };
	o[n++] =
		(struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, srv };
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
		deadline_stop(srv);
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
	deadline_stop(srv);
	free(srv->landing);
	free(srv);
}
