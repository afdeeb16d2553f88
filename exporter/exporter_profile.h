/* --collector.profile: the sampler opened and its requests wired to the HTTP server. */
#ifndef PERFSCOPE_EXPORTER_PROFILE_H
#define PERFSCOPE_EXPORTER_PROFILE_H

#include "collectors/cpuprof.h"
#include "http.h"

/* Opens the sampler (as root, before privileges are dropped); says why not, NULL + errno. */
struct cpuprof *exporter_profile_open(const struct cpuprof_config *c);
/* Sets the server's profile_* hooks to serve cp's profiles. */
void exporter_profile_hooks(struct http_opts *o, struct cpuprof *cp);

#endif
