/* The exporter's listening socket: listen addresses parsed, bound and described. */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <sys/socket.h>

#include "http.h"

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
