/* ustr: strings that system call arguments point to, copied by BPF at the call or read later. */
#include "ustr.h"
#include "clock.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "keymap.h"
#include <perfscope/perfscope.h>

/* String arguments of one system call (mount has 3; more are not copied, only read late). */
#define USTR_FIELDS_MAX 6
/* The BPF ring the copies come through, and the copies kept until their events are printed. */
#define USTR_RING_BYTES (8u << 20)
#define USTR_POOL 8192
/* Copies of one thread and pointer looked through, newest first, for an event. */
#define USTR_WALK_MAX 64
/* Drop windows remembered (see struct ustr); past them the last one grows. */
#define USTR_DROP_WINDOWS 64

/*
 * One copy, as the BPF program writes it into the ring: header, then len bytes of string (with
 * its NUL) when len > 0; len <= 0 (nothing could be copied: the page was not in memory) tells
 * that this call has no copy, so that an older call's is never taken for it.
 */
struct ustr_rec {
	uint32_t tid;
	uint32_t pad;
	uint64_t ptr;
	uint64_t time; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, as the events' times */
	int32_t len; /* bpf_probe_read_user_str's: with the NUL, or -errno */
	uint32_t pad2;
	char str[USTR_MAX];
};
#define REC_HEAD offsetof(struct ustr_rec, str)

/* A copy kept: the pool is a FIFO of the latest USTR_POOL copies. */
struct slot {
	uint64_t seq; /* 1, 2, ...: which copy; 0 for a slot never used */
	uint64_t prev_seq; /* the previous copy of the same thread and pointer, when still kept */
	uint32_t prev;
	struct ustr_rec rec;
};

/* The keymap's value: the newest copy of a thread and pointer. */
struct newest {
	uint32_t idx;
	uint64_t seq;
};

/*
 * The copies of one thread and pointer form a chain, newest first; each event takes the newest
 * one made at or before its time, which is its own call's: a thread's calls are one after the
 * other, and each call's copy is made before its event is recorded. A copy the ring had no room
 * for (counted by the program) would leave an older call's copy to be taken instead; the times
 * between two drains in which copies were dropped are remembered, and a copy is not taken across
 * one of them.
 */
struct ustr {
	int ring_fd, drops_fd, nr_links;
	struct psc_evsel **links; /* the events the programs are attached through */
	struct ring_buffer *rb;
	volatile uint64_t *drops; /* the program's count of copies the ring had no room for */
	uint64_t drops_seen;
	uint64_t target; /* a drain stops after the first copy made later than this */
	uint64_t drained_at; /* CLOCK_MONOTONIC of the last drain */
	struct {
		uint64_t from, to;
	} windows[USTR_DROP_WINDOWS];
	int nr_windows;
	struct slot *pool;
	uint64_t next_seq;
	struct keymap newest; /* key_of(tid, ptr) -> struct newest */
};

static uint64_t key_of(uint32_t tid, uint64_t ptr)
{
	return ptr * 0x9e3779b97f4a7c15ull ^ tid;
}

struct ustr *ustr__new(void)
{
	struct ustr *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->ring_fd = u->drops_fd = -1;
	return u;
}

void ustr__delete(struct ustr *u)
{
	if (!u)
		return;
	for (int i = 0; i < u->nr_links; i++)
		psc_evsel__delete(u->links[i]); /* closes it: the program goes with it */
	free(u->links);
	ring_buffer__free(u->rb);
	if (u->drops)
		munmap((void *)u->drops, (size_t)sysconf(_SC_PAGESIZE));
	if (u->ring_fd >= 0)
		close(u->ring_fd);
	if (u->drops_fd >= 0)
		close(u->drops_fd);
	keymap__exit(&u->newest);
	free(u->pool);
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

/* ---- the copies kept ---- */

/* One copy from the ring into the pool, replacing the oldest (libbpf's ring callback). */
static int keep(void *ctx, void *data, size_t size)
{
	struct ustr *u = ctx;
	const struct ustr_rec *r = data;
	struct slot *s;
	struct newest *nw;
	uint64_t key;
	size_t len;

	if (size < REC_HEAD)
		return 0;
	len = size - REC_HEAD;
	s = &u->pool[u->next_seq % USTR_POOL];
	if (s->seq) { /* the oldest copy goes; so does its key when it was that key's newest */
		key = key_of(s->rec.tid, s->rec.ptr);
		nw = keymap__find(&u->newest, key);
		if (nw && nw->seq == s->seq)
			keymap__remove(&u->newest, key);
	}
	memcpy(&s->rec, r, REC_HEAD);
	if (len > USTR_MAX)
		len = USTR_MAX;
	memcpy(s->rec.str, r->str, len);
	if (s->rec.len > (int32_t)len)
		s->rec.len = (int32_t)len; /* no NUL within: taken as cut */
	s->seq = ++u->next_seq;
	s->prev_seq = 0;
	nw = keymap__insert(&u->newest, key_of(r->tid, r->ptr), NULL);
	if (!nw)
		return 0; /* no memory for the table: this copy will not be found */
	if (nw->seq) {
		s->prev = nw->idx;
		s->prev_seq = nw->seq;
	}
	nw->idx = (uint32_t)(s - u->pool);
	nw->seq = s->seq;
	/* made after the event looked for: the rest of the ring can wait (see drain) */
	return r->time > u->target ? -EAGAIN : 0;
}

/*
 * Takes in what the programs copied since the last drain, up to the first copy made after
 * time_ns, and notes when copies were dropped. That copy was made after the event of time_ns was
 * recorded, so after that event's copy was sent: the event's is in. Stopping there keeps the pool
 * to copies around the events being printed, however far the calls are ahead of the printing.
 */
static void drain(struct ustr *u, uint64_t time_ns)
{
	uint64_t drops, now = mono_ns();

	u->target = time_ns;
	ring_buffer__consume(u->rb);
	drops = *u->drops;
	if (drops != u->drops_seen) {
		/* dropped since the last drain: no copy is taken across that time (once the
		 * windows are all used, the last one grows to cover the new one too) */
		if (u->nr_windows < USTR_DROP_WINDOWS)
			u->windows[u->nr_windows++].from = u->drained_at;
		u->windows[u->nr_windows - 1].to = now;
		u->drops_seen = drops;
	}
	u->drained_at = now;
}

static bool dropped_between(const struct ustr *u, uint64_t from, uint64_t to)
{
	for (int i = 0; i < u->nr_windows; i++)
		if (u->windows[i].from < to && u->windows[i].to > from)
			return true;
	return false;
}

/* The copy of tid's call with ptr that the event at time_ns recorded; NULL when there is none. */
static const struct ustr_rec *find(struct ustr *u, uint32_t tid, uint64_t ptr, uint64_t time_ns)
{
	const struct newest *nw;
	uint64_t seq;
	uint32_t idx;
	int walked = 0;

	drain(u, time_ns);
	nw = keymap__find(&u->newest, key_of(tid, ptr));
	if (!nw)
		return NULL;
	idx = nw->idx;
	seq = nw->seq;
	while (seq && u->pool[idx].seq == seq && walked++ < USTR_WALK_MAX) {
		const struct slot *s = &u->pool[idx];

		if (s->rec.tid != tid || s->rec.ptr != ptr)
			return NULL; /* another thread and pointer under the same key */
		if (s->rec.time <= time_ns)
			return dropped_between(u, s->rec.time, time_ns) ? NULL : &s->rec;
		idx = s->prev;
		seq = s->prev_seq;
	}
	return NULL;
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
#define ATOMIC_ADD_DW(d, s, o) INSN(BPF_STX | BPF_ATOMIC | BPF_DW, d, s, o, BPF_ADD)
#define JEQ_IMM(d, i, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, d, 0, o, i)
#define JSLE_IMM(d, i, o) INSN(BPF_JMP | BPF_JSLE | BPF_K, d, 0, o, i)
#define JSGT_IMM(d, i, o) INSN(BPF_JMP | BPF_JSGT | BPF_K, d, 0, o, i)
#define CALL(f) INSN(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* The record on the program's stack (r10 is its top), and the array key 0 below it. */
#define REC_OFF (-(int)sizeof(struct ustr_rec))
#define R(field) (REC_OFF + (int)offsetof(struct ustr_rec, field))
#define ZERO_OFF (REC_OFF - 8)
#define PER_FIELD 31 /* instructions per string argument (checked as they are written) */
#define PROG_MAX (6 + USTR_FIELDS_MAX * PER_FIELD + 2)

static void map_fd_insn(struct bpf_insn *p, int *n, int reg, int map_fd)
{
	p[(*n)++] = INSN(BPF_LD | BPF_DW | BPF_IMM, reg, BPF_PSEUDO_MAP_FD, 0, map_fd);
	p[(*n)++] = INSN(0, 0, 0, 0, 0);
}

/*
 * For each string argument at ctx offset off (a NULL one skipped): the record {tid, ptr, now,
 * len, string} built on the stack with bpf_probe_read_user_str and sent to the ring, header and
 * string only; when the ring has no room, the drop counted in the array. Returns 1: the event
 * goes on to every perf event of the tracepoint (0 would drop it for all of them).
 */
static int build_prog(struct bpf_insn *p, int ring_fd, int drops_fd, const struct psc_tp_field **f,
		      int nr)
{
	int n = 0;

	p[n++] = MOV64_REG(BPF_REG_6, BPF_REG_1);
	p[n++] = CALL(BPF_FUNC_get_current_pid_tgid);
	p[n++] = MOV32_REG(BPF_REG_7, BPF_REG_0); /* the thread id, lower half */
	p[n++] = CALL(BPF_FUNC_ktime_get_ns);
	p[n++] = MOV64_REG(BPF_REG_8, BPF_REG_0);
	p[n++] = ST_W(BPF_REG_10, ZERO_OFF, 0);
	for (int i = 0; i < nr; i++) {
		int start = n, skip, written, miss;

		p[n++] = LDX_DW(BPF_REG_3, BPF_REG_6, (int16_t)f[i]->offset);
		skip = n;
		p[n++] = JEQ_IMM(BPF_REG_3, 0, 0); /* patched: to the next argument */
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_7, R(tid)); /* and pad: r7 is zero-extended */
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_3, R(ptr));
		p[n++] = STX_DW(BPF_REG_10, BPF_REG_8, R(time));
		p[n++] = MOV64_REG(BPF_REG_1, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_1, R(str));
		p[n++] = MOV64_IMM(BPF_REG_2, USTR_MAX);
		p[n++] = CALL(BPF_FUNC_probe_read_user_str);
		p[n++] = STX_W(BPF_REG_10, BPF_REG_0, R(len));
		p[n++] = ST_W(BPF_REG_10, R(pad2), 0);
		/* its size: the header, and the string when there is one (at most USTR_MAX) */
		p[n++] = MOV64_IMM(BPF_REG_3, (int32_t)REC_HEAD);
		p[n++] = JSLE_IMM(BPF_REG_0, 0, 3);
		p[n++] = JSGT_IMM(BPF_REG_0, USTR_MAX, 2);
		p[n++] = MOV64_REG(BPF_REG_3, BPF_REG_0);
		p[n++] = ADD64_IMM(BPF_REG_3, (int32_t)REC_HEAD);
		map_fd_insn(p, &n, BPF_REG_1, ring_fd);
		p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_2, REC_OFF);
		p[n++] = MOV64_IMM(BPF_REG_4, BPF_RB_NO_WAKEUP); /* drained when printing */
		p[n++] = CALL(BPF_FUNC_ringbuf_output);
		written = n;
		p[n++] = JEQ_IMM(BPF_REG_0, 0, 0); /* patched: to the next argument */
		map_fd_insn(p, &n, BPF_REG_1, drops_fd);
		p[n++] = MOV64_REG(BPF_REG_2, BPF_REG_10);
		p[n++] = ADD64_IMM(BPF_REG_2, ZERO_OFF);
		p[n++] = CALL(BPF_FUNC_map_lookup_elem);
		miss = n;
		p[n++] = JEQ_IMM(BPF_REG_0, 0, 0); /* patched: to the next argument */
		p[n++] = MOV64_IMM(BPF_REG_1, 1);
		p[n++] = ATOMIC_ADD_DW(BPF_REG_0, BPF_REG_1, 0);
		p[skip].off = (int16_t)(n - skip - 1);
		p[written].off = (int16_t)(n - written - 1);
		p[miss].off = (int16_t)(n - miss - 1);
		if (n - start != PER_FIELD)
			return -EINVAL;
	}
	p[n++] = MOV64_IMM(BPF_REG_0, 1);
	p[n++] = EXIT();
	return n;
}

/* Opens attr on this thread, any CPU, and attaches prog to it; *ev is the open event. */
static int attach_on_self(const struct perf_event_attr *attr, int prog, struct psc_evsel **ev)
{
	struct psc_evsel *e = psc_evsel__new(attr, "ustr");
	struct psc_cpumap *any = psc_cpumap__new_any();
	struct psc_threadmap *self = psc_threadmap__new_tid(gettid());
	int ret = -ENOMEM;

	if (e && any && self) {
		ret = psc_evsel__open(e, any, self, NULL);
		if (!ret)
			ret = psc_evsel__attach_bpf(e, prog, NULL);
	}
	psc_cpumap__put(any);
	psc_threadmap__put(self);
	if (ret) {
		psc_evsel__delete(e);
		return ret;
	}
	*ev = e;
	return 0;
}

/* The ring, the drop counter (an array mapped into memory), the pool: once, at the first watch. */
static int setup(struct ustr *u, char *why, size_t whylen)
{
	LIBBPF_OPTS(bpf_map_create_opts, mmapable, .map_flags = BPF_F_MMAPABLE);
	void *m;

	u->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "psc_ustr", 0, 0, USTR_RING_BYTES, NULL);
	if (u->ring_fd < 0)
		goto fail;
	u->drops_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "psc_ustr_drops", sizeof(uint32_t),
				     sizeof(uint64_t), 1, &mmapable);
	if (u->drops_fd < 0)
		goto fail;
	m = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE, MAP_SHARED,
		 u->drops_fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	u->drops = m;
	u->rb = ring_buffer__new(u->ring_fd, keep, u, NULL);
	if (!u->rb)
		goto fail;
	u->pool = calloc(USTR_POOL, sizeof(*u->pool));
	if (!u->pool || keymap__init(&u->newest, sizeof(struct newest), USTR_POOL)) {
		errno = ENOMEM;
		goto fail;
	}
	u->drained_at = mono_ns();
	return 0;
fail:
	snprintf(why, whylen, "cannot create the BPF maps: %s", strerror(errno));
	return -errno;
}

int ustr__watch(struct ustr *u, const struct psc_tp_format *fmt, char *why, size_t whylen)
{
	const struct psc_tp_field *f[USTR_FIELDS_MAX];
	static struct bpf_insn insns[PROG_MAX];
	struct perf_event_attr attr = { .size = sizeof(attr), .type = PERF_TYPE_TRACEPOINT };
	int nr = ustr__fields(fmt, f, USTR_FIELDS_MAX), n, prog, ret;
	struct psc_evsel *ev, **links;

	if (nr <= 0)
		return 0;
	if (nr > USTR_FIELDS_MAX)
		nr = USTR_FIELDS_MAX;
	if (!u->rb && (ret = setup(u, why, whylen)))
		return ret;
	n = build_prog(insns, u->ring_fd, u->drops_fd, f, nr);
	if (n < 0) {
		snprintf(why, whylen, "the BPF program was built wrong (a bug)");
		return n;
	}
	prog = bpf_prog_load(BPF_PROG_TYPE_TRACEPOINT, "psc_ustr", "GPL", insns, (size_t)n, NULL);
	if (prog < 0) {
		int err = errno;

		snprintf(why, whylen, "cannot load the BPF program: %s", strerror(err));
		return -err;
	}
	/*
	 * A program is attached to the tracepoint, not to one event of it: opened on this thread
	 * (and never enabled), the event carries it for every task and CPU.
	 */
	attr.config = (uint64_t)psc_tp_format__id(fmt);
	attr.disabled = 1;
	links = realloc(u->links, sizeof(*links) * (size_t)(u->nr_links + 1));
	if (!links) {
		close(prog);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	u->links = links;
	ret = attach_on_self(&attr, prog, &ev);
	close(prog); /* the attached event holds the program */
	if (ret) {
		snprintf(why, whylen, "cannot attach the BPF program to %s:%s: %s",
			 psc_tp_format__system(fmt), psc_tp_format__name(fmt), strerror(-ret));
		return ret;
	}
	u->links[u->nr_links++] = ev;
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
	const struct ustr_rec *r;

	*cut = false;
	if (!ptr || len < 2)
		return -1;
	r = u && u->rb ? find(u, tid, ptr, time_ns) : NULL;
	if (r && r->len > 0) {
		size_t n = (size_t)r->len - 1;

		if (n >= len)
			n = len - 1;
		memcpy(buf, r->str, n);
		buf[n] = '\0';
		n = strlen(buf);
		*cut = (size_t)r->len >= USTR_MAX || n == len - 1;
		return (int)n;
	}
	/* no copy of this call (or not the rights to make them): what the memory holds now */
	return read_late(pid, ptr, buf, len, cut);
}
