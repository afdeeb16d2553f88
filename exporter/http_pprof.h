/* /debug/pprof/profile on the exporter's server: Go's net/http/pprof parameters and answers. */
#ifndef PERFSCOPE_EXPORTER_HTTP_PPROF_H
#define PERFSCOPE_EXPORTER_HTTP_PPROF_H

#include <microhttpd.h>

struct http_server;

#define HTTP_PPROF_PATH "/debug/pprof/profile"
#define HTTP_PPROF_DEFAULT_SECONDS 30 /* Go's, for a missing or bad ?seconds= */

/*
 * Serves one request (the second and later calls of on_request for it): registers it with the
 * collector and suspends the connection until its seconds are complete, then answers; a refused
 * one gets 400 with the reason in text, as Go's serveError does.
 */
enum MHD_Result http_pprof_serve(struct http_server *srv, struct MHD_Connection *conn,
				 void **req_cls);
/* The request ended (answered, or the connection closed): forgets it. */
void http_pprof_completed(struct http_server *srv, void **req_cls);

#endif
