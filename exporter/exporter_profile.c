/* --collector.profile: the sampler opened and its requests wired to the HTTP server. */
#include <errno.h>
#include <stdio.h>

#include <perfscope/cpumap.h>

#include "exporter_log.h"
#include "exporter_profile.h"

static void *profile_begin(void *ctx, long seconds, void (*wake)(void *), void *arg, char *why,
			   size_t whylen)
{
	return cpuprof_req_new(ctx, seconds, wake, arg, why, whylen);
}

static int profile_build(void *ctx, void *req, char **buf, size_t *len)
{
	return cpuprof_req_build(ctx, req, buf, len);
}

static void profile_end(void *ctx, void *req)
{
	cpuprof_req_free(ctx, req);
}

static void profile_refused(void *ctx)
{
	cpuprof_refused(ctx);
}

struct cpuprof *exporter_profile_open(const struct cpuprof_config *c)
{
	char err[1024];
	struct cpuprof *cp = cpuprof_new(c, err, sizeof(err));

	if (!cp) {
		int e = errno;

		fprintf(stderr, "perfscope exporter: %s\n", err);
		errno = e;
		return NULL;
	}
	xlog(XLOG_INFO, "profiling %d CPU(s) at %u Hz (%s path): profiles of up to %u s at %s",
	     psc_cpumap__nr(c->cpus), c->hz, cp->mode, c->max_seconds, "/debug/pprof/profile");
	return cp;
}

void exporter_profile_hooks(struct http_opts *o, struct cpuprof *cp)
{
	o->profile_ctx = cp;
	o->profile_max_seconds = cp->cfg.max_seconds;
	o->profile_begin = profile_begin;
	o->profile_build = profile_build;
	o->profile_end = profile_end;
	o->profile_refused = profile_refused;
}
