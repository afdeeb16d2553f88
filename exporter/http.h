/* The exporter's HTTP(S) server on libmicrohttpd: telemetry path, landing page, auth, negotiation,
 * gzip, limits. */
#ifndef PERFSCOPE_EXPORTER_HTTP_H
#define PERFSCOPE_EXPORTER_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expo.h"

struct webconfig;

/*
 * Produces one exposition in fmt: *buf (malloc'ed, freed by the server) and *len. Called from
 * server threads, possibly concurrently: the callee serialises what must be. Returns 0 or -errno.
 */
typedef int (*http_scrape_fn)(void *ctx, enum expo_format fmt, char **buf, size_t *len);

struct http_opts {
	const char *telemetry_path; /* "/metrics" */
	struct webconfig *webconfig; /* NULL: plain HTTP, no auth */
	/*
	 * Connections held at once: a new one beyond makes room by dropping the one waiting the
	 * longest for a complete request. So does one from an address that then holds more than
	 * max_per_address (IPv6: per /64), dropping one of that address.
	 */
	unsigned int max_connections;
	unsigned int max_per_address;
	unsigned int timeout_s; /* idle connections are closed after this */
	size_t max_request_bytes; /* request line + headers; larger requests get 431/413 */
	unsigned int threads; /* polling threads */
	http_scrape_fn scrape;
	void *ctx;
	/*
	 * /debug/pprof/profile (profile_begin NULL: not served). begin registers a request for
	 * `seconds` (1..profile_max_seconds) and calls wake(arg) from another thread when it can be
	 * built (NULL with why filled: refused); build makes it (gzipped pprof, malloc'ed; -ECANCELED
	 * when the exporter is stopping); end forgets it; refused counts one refused for its length.
	 */
	void *profile_ctx;
	unsigned int profile_max_seconds;
	void *(*profile_begin)(void *ctx, long seconds, void (*wake)(void *), void *arg, char *why,
			       size_t whylen);
	int (*profile_build)(void *ctx, void *req, char **buf, size_t *len);
	void (*profile_end)(void *ctx, void *req);
	void (*profile_refused)(void *ctx);
};

/*
 * Opens the listening socket for "HOST:PORT", "[V6]:PORT" or ":PORT" (every address), so that
 * it can be bound before privileges are dropped. Returns the fd, or -1 with err filled.
 */
int http_listen(const char *addr, char *err, size_t errlen);
/* Only the syntax of a listen address (a usage error when bad): 0, or -1 with err filled. */
int http_check_listen(const char *addr, char *err, size_t errlen);
/* "ADDR:PORT" or "[V6]:PORT" that a listening socket is bound to (the port that :0 chose). */
void http_describe_listen(int fd, char *buf, size_t len);

/* What the server did with connections since it started. */
struct http_stats {
	unsigned int open; /* connections held now */
	uint64_t dropped_timeout; /* no complete request within timeout_s */
	uint64_t dropped_full; /* made room for a new connection, all slots taken */
	uint64_t dropped_per_address; /* made room for a new one from an address over its limit */
};

struct http_server;
/* Starts serving on listen_fd (which it then owns). NULL with err filled on failure. */
struct http_server *http_start(int listen_fd, const struct http_opts *opts, char *err,
			       size_t errlen);
/* The counts so far; safe from any thread while the server runs. */
void http_get_stats(struct http_server *srv, struct http_stats *st);
/* Stops accepting, waits for requests in progress, closes everything. NULL is a no-op. */
void http_stop(struct http_server *srv);

#endif
