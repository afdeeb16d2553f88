/* jitdump: perf's jit-PID.dump format (runtimes' JIT code loads), read as it is appended. */
#include "jitdump.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tools/perf/util/jitdump.h's layout */
struct jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jd_prefix {
	uint32_t id, total_size;
	uint64_t timestamp;
};

enum { JIT_CODE_LOAD = 0, JIT_CODE_MOVE = 1, JIT_CODE_CLOSE = 3 };

struct jd_load {
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
	/* the name, NUL-terminated, then the code bytes */
};

struct jd_move {
	uint32_t pid, tid;
	uint64_t vma, old_code_addr, new_code_addr, code_size, code_index;
};

#define JD_MAX_RECORD (64u << 20) /* a bogus size: the file is not read further */

int jitdump__read(const char *path, off_t *off, jitdump_fn fn, void *ctx)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0;
	int err = 0;

	if (!f)
		return -errno;
	if (!*off) {
		struct jd_header h;

		if (fread(&h, sizeof(h), 1, f) != 1) {
			fclose(f);
			return 0; /* being written: read again later */
		}
		if (h.magic != JITDUMP_MAGIC || h.total_size < sizeof(h)) {
			fclose(f);
			return -EINVAL;
		}
		*off = h.total_size;
	}
	while (!err && !fseeko(f, *off, SEEK_SET)) {
		struct jd_prefix p;
		size_t body;

		if (fread(&p, sizeof(p), 1, f) != 1 || p.total_size < sizeof(p))
			break;
		if (p.total_size > JD_MAX_RECORD) {
			err = -EINVAL;
			break;
		}
		body = p.total_size - sizeof(p);
		if (body + 1 > cap) {
			char *n = realloc(buf, body + 1);

			if (!n) {
				err = -ENOMEM;
				break;
			}
			buf = n;
			cap = body + 1;
		}
		if (fread(buf, 1, body, f) != body)
			break; /* not whole yet */
		buf[body] = '\0';
		if (p.id == JIT_CODE_LOAD && body > sizeof(struct jd_load)) {
			struct jd_load l;
			const char *name = buf + sizeof(l);

			memcpy(&l, buf, sizeof(l));
			err = fn(ctx, l.code_addr, l.code_size, name,
				 strnlen(name, body - sizeof(l)));
		} else if (p.id == JIT_CODE_MOVE && body >= sizeof(struct jd_move)) {
			struct jd_move m;
			char name[32];

			/* the name is the load's; a moved function is named by its index */
			memcpy(&m, buf, sizeof(m));
			snprintf(name, sizeof(name), "jit_code_%llu",
				 (unsigned long long)m.code_index);
			err = fn(ctx, m.new_code_addr, m.code_size, name, strlen(name));
		}
		*off += p.total_size;
		if (p.id == JIT_CODE_CLOSE)
			break;
	}
	free(buf);
	fclose(f);
	return err;
}
