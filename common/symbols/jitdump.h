/* jitdump: perf's jit-PID.dump format (runtimes' JIT code loads), read as it is appended. */
#ifndef PERFSCOPE_COMMON_JITDUMP_H
#define PERFSCOPE_COMMON_JITDUMP_H

#include <stdint.h>
#include <sys/types.h>

/*
 * A runtime started with perf's jitdump on (node --perf-prof, the JVM's agent, .NET's
 * DOTNET_PerfMapEnabled) writes a header and then one record per event to jit-PID.dump, and
 * mmaps the file executable so that perf sees where it is. Each JIT_CODE_LOAD record names a
 * piece of code: its address, size and name; JIT_CODE_MOVE moves one (by its code index).
 */
#define JITDUMP_MAGIC 0x4A695444u /* "JiTD" as written in the file's byte order */

/* Called for each function loaded (or moved to addr): name is valid during the call only. */
typedef int (*jitdump_fn)(void *ctx, uint64_t addr, uint64_t size, const char *name,
			  size_t name_len);

/*
 * Reads the records from *off (0: the header first) that are whole, calling fn for every code
 * load; *off moves past them. 0, -EINVAL (not a jitdump, or the other byte order), -errno.
 */
int jitdump__read(const char *path, off_t *off, jitdump_fn fn, void *ctx);

#endif
