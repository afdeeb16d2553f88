/* HTTP server internals shared by http.c and http_conn.c: the server and its connection slots. */
#ifndef PERFSCOPE_EXPORTER_HTTP_INTERNAL_H
#define PERFSCOPE_EXPORTER_HTTP_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <microhttpd.h>

#include "http.h"
#include "keymap.h"

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

/* http.c: the headers every answer gets (web config's, Connection: close at the limit). */
void http_add_common_headers(struct http_server *srv, struct MHD_Response *r);

/* http_conn.c: sets up the lock, the condition and the per-address table and starts the reaper
 * thread; 0 or -errno. */
int http_conn__start(struct http_server *srv);
/* Stops the reaper and frees what http_conn__start set up, also after it failed half-way. */
void http_conn__stop(struct http_server *srv);
/* The headers are in: the request is being served, the deadline no longer applies. */
void http_conn__request_started(struct http_server *srv, struct MHD_Connection *c);
/* libmicrohttpd's MHD_OPTION_NOTIFY_CONNECTION callback (cls: the server). */
void http_conn__on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			      enum MHD_ConnectionNotificationCode toe);
/* libmicrohttpd's MHD_OPTION_NOTIFY_COMPLETED callback (cls: the server). */
void http_conn__on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
			     enum MHD_RequestTerminationCode toe);

#endif
