/* The exporter's connection slots: the request deadline, per-address limits, eviction. */
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "http_internal.h"
#include "clock.h"
#include "exporter_log.h"

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
void http_conn__request_started(struct http_server *srv, struct MHD_Connection *c)
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
void http_conn__on_completed(void *cls, struct MHD_Connection *c, void **req_cls,
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
void http_conn__on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
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
int http_conn__start(struct http_server *srv)
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

void http_conn__stop(struct http_server *srv)
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
