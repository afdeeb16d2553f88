/* perfmap: JIT symbols from a process's /tmp/perf-PID.map, found through /proc/PID/root. */
#ifndef PERFSCOPE_COMMON_PERFMAP_H
#define PERFSCOPE_COMMON_PERFMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Runtimes with a JIT (node --perf-basic-prof, the JVM's perf-map-agent, LuaJIT, .NET) write
 * "START SIZE name" lines, hex addresses, to /tmp/perf-PID.map, appending as they compile. The
 * file is read in the process's own root (/proc/PID/root/tmp/...) under its own pid there (the
 * last NSpid of /proc/PID/status), so that a container's map is found; lines appended since the
 * last read are read when an address is not found (the map grew). A later line for an address
 * wins over an earlier one (code moved or recompiled).
 *
 * Names stay valid until perfmaps__delete (a symcache hands them out). Not thread-safe.
 */
struct perfmaps;

struct perfmaps *perfmaps__new(const char *root); /* root: NULL = /proc */
void perfmaps__delete(struct perfmaps *pm);

/*
 * The symbol of ip in pid's perf map: 0 with *name, *start (the symbol's first byte) and *dso
 * ("perf-PID.map") set; -ENOENT when pid has no map, -ENODATA when no line of it holds ip
 * (even after reading what was appended: it may be later, so do not remember the miss).
 */
int perfmaps__find(struct perfmaps *pm, pid_t pid, uint64_t ip, const char **name, uint64_t *start,
		   const char **dso);

/* pid exec'ed or exited: what was read of its map no longer applies. */
void perfmaps__forget(struct perfmaps *pm, pid_t pid);

/* Maps held and symbols read (for statistics). */
void perfmaps__stats(const struct perfmaps *pm, uint64_t *maps, uint64_t *syms);

#endif
