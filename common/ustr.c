/* ustr: strings that system call arguments point to, copied by BPF at the event or read later. */
#include "ustr.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include <bpf/bpf.h>

/* Copies kept at once: the thread/pointer pairs of the newest calls; older ones make room. */
#define USTR_ENTRIES 4096
/* String arguments of one system call (mount has 3; more are not copied, only read late). */
#define USTR_FIELDS_MAX 6
/* A copy is of this event when taken at most this long before it (the same call). */
#define USTR_SAME_CALL_NS 1000000000ull

/* The map's key and value, as the BPF program writes them on its stack. */
struct ustr_key {
	uint32_t tid;
	uint32_t pad;
	uint64_t ptr;
};

struct ustr_val {
	uint64_t time; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, as the events' times */
	int32_t len; /* bpf_probe_read_user_str's: with the NUL, or -errno */
	uint32_t pad;
	char str[USTR_MAX];
};

struct ustr {
	int map_fd; /* -1 until a program is loaded */
	int nr_links;
	int *links; /* perf event fds the programs are attached through */
	int *progs;
};

struct ustr *ustr__new(void)
{
	struct ustr *u = calloc(1, sizeof(*u));

	if (u)
		u->map_fd = -1;
	return u;
}

void ustr__delete(struct ustr *u)
{
	if (!u)
		return;
	for (int i = 0; i < u->nr_links; i++) {
		close(u->links[i]);
		close(u->progs[i]);
	}
	free(u->links);
	free(u->progs);
	if (u->map_fd >= 0)
		close(u->map_fd);
	free(u);
}

int ustr__fields(const struct psc_tp_format *fmt, const struct psc_tp_field **out, int max)
{
	const char *sys = psc_tp_format__system(fmt), *name = psc_tp_format__name(fmt);
	int nr = 0, n = psc_tp_format__nr_fields(fmt);

	if (!sys || !name || strcmp(sys, "syscalls") || strncmp(name, "sys_enter_", 10))
		return 0;
	for (int i = 0; i < n; i++) {
		const struct psc_tp_field *f = psc_tp_format__field_at(fmt, i);

		if (!f || strcmp(f->type, "const char *") || f->size != 8 ||
		    !strcmp(f->name, "buf") || !strcmp(f->name, "u_msg_ptr"))
			continue;
		if (nr < max)
			out[nr] = f;
		nr++;
	}
	return nr;
}

/* ---- the BPF program, as instructions (no compiler needed to build perfscope) ---- */

#define INSN(c, d, s, o, i) \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_REG(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV32_REG(d, s) INSN(BPF_ALU | BPF_MOV | BPF_X, d, s, 0, 0) /* zero-extends */
#define MOV64_IMM(d, i) INSN(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define ADD64_IMM(d, i) INSN(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, i)
#define LDX_DW(d, s, o) INSN(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_DW(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_DW, d, s, o, 0)
#define STX_W(d, s, o) INSN(BPF_STX | BPF_MEM | BPF_W, d, s, o, 0)
#define ST_W(d, o, i) INSN(BPF_ST | BPF_MEM | BPF_W, d, 0, o, i)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/*
 * For each string argument at ctx offset off: key {tid, ptr} and value {now, len, str} on the
 * stack (r10 - 16 and r10 - 288), the string copied with bpf_probe_read_user_str, the pair put in
 * the map. NULL pointers are skipped. Returns 1: the event goes on to every perf event of the
 * tracepoint (0 would drop it for all of them).
 */
#define KEY_OFF (-16)
#define VAL_OFF (-16 - (int)sizeof(struct ustr_val))
#define PER_FIELD 19 /* instructions below, per field; the skip jumps over PER_FIELD - 2 */

static int build_prog(struct bpf_insn *p, int map_fd, const struct psc_tp_field **f, int nr)
{
	int n = 0;

	p[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[n++] = CALL(BPF_FUNC_get_current_pid_tgid);
	p[n++] = MOV32_REG(BPF_REG_7, BPF_REG_0); /* the thread id, lower half */
	p[n++] = CALL(BPF_FUNC_ktime_get_ns);
	p[n++] = MOV64_REG(BPF_REG_8, BPF_REG_0);
	for (int i = 0; i < nr; i++) {
		int start = n;

		p[n++] = LDX_DW(BPF_REG_3, BPF_REG_6, (int16_t)f[i]->offset);
		p[n++] = JEQ_IMM(BPF_REG_3, 0, PER_FIELD - 2);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_7, KEY_OFF);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_3, KEY_OFF + 8);
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_8, VAL_OFF);
		p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_1, VAL_OFF + 16);
		p[n++] = MOV64_IMM(BPF_REG_2, USTR_MAX);
		p[n++] = CALL(BPF_FUNC_probe_read_user_str);
		p[n++] = STX_W(BPF_REG_10, BPF_REG_0, VAL_OFF + 8);
		p[n++] = ST_W(BPF_REG_10, VAL_OFF + 12, 0);
		p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd);
		p[n++] = INSN(0, 0, 0, 0, 0);
		p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_2, KEY_OFF);
		p[n++] = MOV64_REG(BPF_REG_3, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_3, VAL_OFF);
		p[n++] = MOV64_IMM(BPF_REG_4, BPF_ANY);
		p[n++] = CALL(BPF_FUNC_map_update_elem);
		if (n - start != PER_FIELD)
			return -EINVAL;
	}
	p[n++] = MOV64_IMM(BPF_REG_0, 1);
	p[n++] = EXIT();
	return n;
}

int ustr__watch(struct ustr *u, const struct psc_tp_format *fmt, char *why, size_t whylen)
{
	const struct psc_tp_field *f[USTR_FIELDS_MAX];
	struct bpf_insn insns[5 + USTR_FIELDS_MAX * PER_FIELD + 2];
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT };
	int nr = ustr__fields(fmt, f, USTR_FIELDS_MAX), n, prog, ev, *links, *progs;

	if (nr <= 0)
		return 0;
	if (nr > USTR_FIELDS_MAX)
		nr = USTR_FIELDS_MAX;
	if (u->map_fd < 0) {
		u->map_fd =
			bpf_map_create(BPF_MAP_TYPE_LRU_HASH, "psc_ustr", sizeof(struct ustr_key),
				       sizeof(struct ustr_val), USTR_ENTRIES, NULL);
		if (u->map_fd < 0) {
			snprintf(why, whylen, "cannot create a BPF map: %s", strerror(errno));
			return -errno;
		}
	}
	n = build_prog(insns, u->map_fd, f, nr);
	if (n < 0)
		return n;
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "psc_ustr", "GPL", insns, (size_t)n, NULL);
	if (prog < 0) {
		snprintf(why, whylen, "cannot load the BPF program: %s", strerror(errno));
		return -errno;
	}
	/*
	 * A program is attached to the tracepoint, not to one event of it: opened on this thread
	 * (and never enabled), the event carries it for every task and CPU.
	 */
	attr.config = (uint64_t)psc_tp_format__id(fmt);
	attr.disabled = 1;
	ev = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (ev < 0 || ioctl(ev, PERF_EVENT_IOC_SET_BPF, prog)) {
		int err = errno;

		snprintf(why, whylen, "cannot attach the BPF program to %s:%s: %s",
			 psc_tp_format__system(fmt), psc_tp_format__name(fmt), strerror(err));
		if (ev >= 0)
			close(ev);
		close(prog);
		return -err;
	}
	links = realloc(u->links, sizeof(*links) * (size_t)(u->nr_links + 1));
	if (links)
		u->links = links;
	progs = realloc(u->progs, sizeof(*progs) * (size_t)(u->nr_links + 1));
	if (progs)
		u->progs = progs;
	if (!links || !progs) {
		close(ev);
		close(prog);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	u->links[u->nr_links] = ev;
	u->progs[u->nr_links++] = prog;
	return 0;
}

/* What the process's memory holds at ptr now: up to the end of its page first, then the rest. */
static int read_late(uint32_t pid, uint64_t ptr, char *buf, size_t len, bool *cut)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), want = len - 1, first;
	struct iovec local, remote[2];
	ssize_t n;

	if (want > USTR_MAX - 1)
		want = USTR_MAX - 1;
	first = page - (size_t)(ptr % page);
	if (first > want)
		first = want;
	local = (struct iovec){ buf, want };
	remote[0] = (struct iovec){ (void *)(uintptr_t)ptr, first };
	remote[1] = (struct iovec){ (void *)(uintptr_t)(ptr + first), want - first };
	/* A remote range that faults ends the read there: a string at the end of a mapping. */
	n = process_vm_readv((pid_t)pid, &local, 1, remote, want > first ? 2 : 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (strlen(buf) == (size_t)n) { /* no NUL within what was read */
		*cut = (size_t)n == want;
		if (!*cut)
			return -1; /* ended at a fault before its NUL: not a whole string */
	}
	return (int)strlen(buf);
}

int ustr__read(struct ustr *u, uint32_t pid, uint32_t tid, uint64_t ptr, uint64_t time_ns,
	       char *buf, size_t len, bool *cut)
{
	struct ustr_key key = { .tid = tid, .ptr = ptr };
	struct ustr_val val;

	*cut = false;
	if (!ptr || len < 2)
		return -1;
	/* the copy taken at the call, when it is this call's (a later one overwrites it) */
	if (u && u->map_fd >= 0 && !bpf_map_lookup_elem(u->map_fd, &key, &val) && val.len > 0 &&
	    val.time <= time_ns && time_ns - val.time < USTR_SAME_CALL_NS) {
		size_t n = (size_t)val.len - 1;

		if (n >= len)
			n = len - 1;
		memcpy(buf, val.str, n);
		buf[n] = '\0';
		n = strlen(buf);
		*cut = (size_t)val.len == USTR_MAX || n == len - 1;
		return (int)n;
	}
	return read_late(pid, ptr, buf, len, cut);
}
