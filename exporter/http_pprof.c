/* /debug/pprof/profile as Go's net/http/pprof serves it, suspended while its seconds pass. */
#include "http_internal.h"
#include "http_pprof.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exporter_log.h"

/* One profile request being served: kept in libmicrohttpd's request context until completed. */
struct pprof_call {
	uint32_t magic;
	struct http_server *srv;
	struct MHD_Connection *conn;
	void *req; /* the collector's: NULL until it was accepted */
};
#define CALL_MAGIC 0x70726f66u

/* The sampler's thread: the window is complete, libmicrohttpd calls on_request again. */
static void wake(void *arg)
{
	struct pprof_call *c = arg;

	MHD_resume_connection(c->conn);
}

/* As Go's serveError: the status, a text, and X-Go-Pprof so that pprof shows the text. */
static enum MHD_Result serve_error(struct http_server *srv, struct MHD_Connection *conn,
				   unsigned int status, const char *text)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	MHD_add_response_header(r, "X-Go-Pprof", "1");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	http_add_common_headers(srv, r);
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* seconds as Go reads it: a whole number above 0, else the default (30). */
static long parse_seconds(const char *v)
{
	char *end;
	long n;

	if (!v || !*v)
		return HTTP_PPROF_DEFAULT_SECONDS;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno == ERANGE)
		return n; /* too long either way: refused with the reason */
	if (errno || *end || n <= 0)
		return HTTP_PPROF_DEFAULT_SECONDS;
	return n;
}

static enum MHD_Result answer(struct pprof_call *c)
{
	const struct http_opts *o = &c->srv->opts;
	struct MHD_Response *r;
	enum MHD_Result ret;
	char *buf;
	size_t len;
	int err = o->profile_build(o->profile_ctx, c->req, &buf, &len);

	if (err == -ECANCELED)
		return serve_error(c->srv, c->conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "the exporter is stopping\n");
	if (err) {
		xlog(XLOG_ERROR, "profile failed: %s", strerror(-err));
		return serve_error(c->srv, c->conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
				   "Could not build the profile; see the exporter's log.\n");
	}
	r = MHD_create_response_from_buffer_with_free_callback(len, buf, free);
	if (!r) {
		free(buf);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/octet-stream");
	MHD_add_response_header(r, "Content-Disposition", "attachment; filename=\"profile\"");
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	http_add_common_headers(c->srv, r);
	ret = MHD_queue_response(c->conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result http_pprof_serve(struct http_server *srv, struct MHD_Connection *conn,
				 void **req_cls)
{
	struct pprof_call *c = *req_cls;
	const struct http_opts *o = &srv->opts;
	char why[256];
	long secs;

	if (c != (void *)srv && c && c->magic == CALL_MAGIC)
		return answer(c); /* resumed */
	secs = parse_seconds(MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "seconds"));
	if (secs > (long)o->profile_max_seconds) {
		snprintf(why, sizeof(why),
			 "profile duration %ld s exceeds the exporter's maximum of %u s "
			 "(--collector.profile.max-seconds)\n",
			 secs, o->profile_max_seconds);
		o->profile_refused(o->profile_ctx);
		return serve_error(srv, conn, MHD_HTTP_BAD_REQUEST, why);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return serve_error(srv, conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	c->magic = CALL_MAGIC;
	c->srv = srv;
	c->conn = conn;
	/* suspended first: the wake may come as soon as the request is known */
	MHD_suspend_connection(conn);
	c->req = o->profile_begin(o->profile_ctx, secs, wake, c, why, sizeof(why));
	if (!c->req) {
		MHD_resume_connection(conn);
		free(c);
		return serve_error(srv, conn, MHD_HTTP_BAD_REQUEST, why);
	}
	*req_cls = c;
	return MHD_YES;
}

void http_pprof_completed(struct http_server *srv, void **req_cls)
{
	struct pprof_call *c = *req_cls;

	if (!c || c == (void *)srv || c->magic != CALL_MAGIC)
		return;
	srv->opts.profile_end(srv->opts.profile_ctx, c->req);
	c->magic = 0;
	free(c);
	*req_cls = NULL;
}
