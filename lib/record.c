/* Record decoding: PERF_RECORD_SAMPLE by sample_type and the side-band records, bounds-checked. */
#include "internal.h"

/* Not in older uapi headers: branch counters follow the entries (Linux 6.8). */
#ifndef PERF_SAMPLE_BRANCH_COUNTERS
#define PERF_SAMPLE_BRANCH_COUNTERS (1ULL << 19)
#endif

/* Every sample_type bit this decoder knows the layout of. */
#define SAMPLE_KNOWN (PERF_SAMPLE_MAX - 1)

/* Bits of the sample_id_all trailer, in the order the kernel writes them. */
#define SAMPLE_ID_BITS                                                                 \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* A read position inside one record: every take checks what is left first. */
struct cursor {
	const unsigned char *p;
	const unsigned char *end;
};

static inline bool left(const struct cursor *c, uint64_t n)
{
	return (uint64_t)(c->end - c->p) >= n;
}

static inline bool take_u64(struct cursor *c, uint64_t *v)
{
	if (!left(c, 8))
		return false;
	memcpy(v, c->p, 8);
	c->p += 8;
	return true;
}

/* Two u32 in one u64 slot (pid/tid, cpu/res), first one at the lower address. */
static inline bool take_u32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	if (!left(c, 8))
		return false;
	memcpy(a, c->p, 4);
	if (b)
		memcpy(b, c->p + 4, 4);
	c->p += 8;
	return true;
}

/* n u64s in place; n is checked against what is left before multiplying, so it cannot overflow. */
static inline bool take_array(struct cursor *c, uint64_t n, const uint64_t **out)
{
	if (n > (uint64_t)(c->end - c->p) / 8)
		return false;
	*out = (const uint64_t *)(const void *)c->p;
	c->p += n * 8;
	return true;
}

static bool take_bytes(struct cursor *c, uint64_t n, const void **out)
{
	/* Every variable-length part the kernel writes keeps the next field u64-aligned. */
	if ((n & 7) || !left(c, n))
		return false;
	*out = c->p;
	c->p += n;
	return true;
}

static bool parse_read(struct cursor *c, uint64_t fmt, struct psc_sample_read *r)
{
	r->read_format = fmt;
	if (!(fmt & PERF_FORMAT_GROUP)) {
		r->nr = 1;
		return take_u64(c, &r->one.value) &&
		       (!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) || take_u64(c, &r->time_enabled)) &&
		       (!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING) || take_u64(c, &r->time_running)) &&
		       (!(fmt & PERF_FORMAT_ID) || take_u64(c, &r->one.id)) &&
		       (!(fmt & PERF_FORMAT_LOST) || take_u64(c, &r->one.lost));
	}
	r->stride = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
	if (!take_u64(c, &r->nr) ||
	    ((fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) && !take_u64(c, &r->time_enabled)) ||
	    ((fmt & PERF_FORMAT_TOTAL_TIME_RUNNING) && !take_u64(c, &r->time_running)))
		return false;
	if (r->nr > (uint64_t)(c->end - c->p) / 8 / r->stride)
		return false;
	return take_array(c, r->nr * r->stride, &r->group);
}

static bool parse_regs(struct cursor *c, uint64_t mask, struct psc_sample_regs *r)
{
	if (!take_u64(c, &r->abi))
		return false;
	r->mask = mask;
	if (r->abi == PERF_SAMPLE_REGS_ABI_NONE)
		return true;
	r->nr = (uint32_t)__builtin_popcountll(mask);
	return take_array(c, r->nr, &r->regs);
}

static bool parse_branch_stack(struct cursor *c, uint64_t branch_type, struct psc_sample *s)
{
	const uint64_t *entries;

	if (!take_u64(c, &s->branch_stack.nr))
		return false;
	/* As perf does: hw_idx is there whenever the attr asked for it. */
	if ((branch_type & PERF_SAMPLE_BRANCH_HW_INDEX) && !take_u64(c, &s->branch_stack.hw_idx))
		return false;
	if (s->branch_stack.nr > (uint64_t)(c->end - c->p) / sizeof(struct perf_branch_entry))
		return false;
	if (!take_array(c, s->branch_stack.nr * 3, &entries))
		return false;
	s->branch_stack.entries = (const struct perf_branch_entry *)(const void *)entries;
	if (branch_type & PERF_SAMPLE_BRANCH_COUNTERS)
		return take_array(c, s->branch_stack.nr, &s->branch_stack.counters);
	return true;
}

/*
 * The sample types of tracepoints and software events (perfscope's own tracing, stacks and
 * periods included): nothing after the raw data, so the members that follow it are zeroed
 * without one test per absent bit.
 */
#define SAMPLE_PLAIN                                                                    \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |  \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* The raw data: u32 size + data, padded by the kernel to a multiple of 8. */
static inline bool take_raw(struct cursor *c, struct psc_sample *s)
{
	if (!left(c, 4))
		return false;
	memcpy(&s->raw.size, c->p, 4);
	if (((s->raw.size + 4ULL) & 7) || !left(c, s->raw.size + 4ULL))
		return false;
	s->raw.data = c->p + 4;
	c->p += s->raw.size + 4ULL;
	return true;
}

/* PERF_SAMPLE_CALLCHAIN then PERF_SAMPLE_RAW, each zeroed when its bit is absent. */
static inline bool parse_chain_raw(struct cursor *c, uint64_t t, struct psc_sample *s)
{
	s->callchain.nr = 0;
	s->callchain.ips = NULL;
	if ((t & PERF_SAMPLE_CALLCHAIN) &&
	    !(take_u64(c, &s->callchain.nr) && take_array(c, s->callchain.nr, &s->callchain.ips)))
		return false;
	s->raw.size = 0;
	s->raw.data = NULL;
	return !(t & PERF_SAMPLE_RAW) || take_raw(c, s);
}

static inline bool parse_plain_tail(struct cursor *c, uint64_t t, struct psc_sample *s)
{
	s->read = (struct psc_sample_read){ 0 };
	if (!parse_chain_raw(c, t, s))
		return false;
	/* member by member: a memset of this size compiles to `rep stos` (see below) */
	s->branch_stack.nr = 0;
	s->branch_stack.hw_idx = 0;
	s->branch_stack.entries = NULL;
	s->branch_stack.counters = NULL;
	s->regs_user = (struct psc_sample_regs){ 0 };
	s->stack_user.size = 0;
	s->stack_user.data = NULL;
	s->stack_user.dyn_size = 0;
	s->weight = 0;
	s->weight_var1 = 0;
	s->weight_var2 = s->weight_var3 = 0;
	s->data_src = s->transaction = s->phys_addr = s->cgroup = 0;
	s->data_page_size = s->code_page_size = 0;
	s->regs_intr = (struct psc_sample_regs){ 0 };
	s->aux.size = 0;
	s->aux.data = NULL;
	return true;
}

/*
 * The variable and rare fields after PERF_SAMPLE_PERIOD, kept out of the common path. Members
 * whose bit is absent are zeroed one by one: a memset of the whole 384-byte sample compiles to
 * `rep stos`, whose start-up cost was more than half of the decoding time of a tracepoint sample.
 */
static bool parse_sample_tail(struct cursor *c, const struct perf_event_attr *attr,
			      struct psc_sample *s)
{
	uint64_t t = attr->sample_type, v;

	if (__builtin_expect(!(t & ~SAMPLE_PLAIN), 1))
		return parse_plain_tail(c, t, s);
	s->read = (struct psc_sample_read){ 0 };
	if ((t & PERF_SAMPLE_READ) && !parse_read(c, attr->read_format, &s->read))
		return false;
	if (!parse_chain_raw(c, t, s))
		return false;
	s->branch_stack.nr = 0;
	s->branch_stack.hw_idx = 0;
	s->branch_stack.entries = NULL;
	s->branch_stack.counters = NULL;
	if ((t & PERF_SAMPLE_BRANCH_STACK) && !parse_branch_stack(c, attr->branch_sample_type, s))
		return false;
	s->regs_user = (struct psc_sample_regs){ 0 };
	if ((t & PERF_SAMPLE_REGS_USER) && !parse_regs(c, attr->sample_regs_user, &s->regs_user))
		return false;
	s->stack_user.size = 0;
	s->stack_user.data = NULL;
	s->stack_user.dyn_size = 0;
	if (t & PERF_SAMPLE_STACK_USER) {
		if (!take_u64(c, &s->stack_user.size))
			return false;
		if (s->stack_user.size) {
			if (!take_bytes(c, s->stack_user.size, &s->stack_user.data) ||
			    !take_u64(c, &s->stack_user.dyn_size) ||
			    s->stack_user.dyn_size > s->stack_user.size)
				return false;
		}
	}
	s->weight = 0;
	s->weight_var1 = 0;
	s->weight_var2 = s->weight_var3 = 0;
	if (t & PERF_SAMPLE_WEIGHT_TYPE) {
		if (!take_u64(c, &s->weight))
			return false;
		if (t & PERF_SAMPLE_WEIGHT_STRUCT) {
			union perf_sample_weight w = { .full = s->weight };

			s->weight_var1 = w.var1_dw;
			s->weight_var2 = w.var2_w;
			s->weight_var3 = w.var3_w;
		}
	}
	s->data_src = s->transaction = s->phys_addr = s->cgroup = 0;
	s->data_page_size = s->code_page_size = 0;
	if ((t & PERF_SAMPLE_DATA_SRC) && !take_u64(c, &s->data_src))
		return false;
	if ((t & PERF_SAMPLE_TRANSACTION) && !take_u64(c, &s->transaction))
		return false;
	s->regs_intr = (struct psc_sample_regs){ 0 };
	if ((t & PERF_SAMPLE_REGS_INTR) && !parse_regs(c, attr->sample_regs_intr, &s->regs_intr))
		return false;
	if ((t & PERF_SAMPLE_PHYS_ADDR) && !take_u64(c, &s->phys_addr))
		return false;
	if ((t & PERF_SAMPLE_CGROUP) && !take_u64(c, &s->cgroup))
		return false;
	if ((t & PERF_SAMPLE_DATA_PAGE_SIZE) && !take_u64(c, &s->data_page_size))
		return false;
	if ((t & PERF_SAMPLE_CODE_PAGE_SIZE) && !take_u64(c, &s->code_page_size))
		return false;
	s->aux.size = 0;
	s->aux.data = NULL;
	if (t & PERF_SAMPLE_AUX) {
		if (!take_u64(c, &v) || !take_bytes(c, v, &s->aux.data))
			return false;
		s->aux.size = v;
	}
	return true;
}

int psc_record__parse_sample(const struct perf_event_header *hdr,
			     const struct perf_event_attr *attr, struct psc_sample *s)
{
	uint64_t t = attr->sample_type;
	struct cursor c;

	/* Rings hand out 8-byte aligned records; arrays are returned as typed pointers into them.
	 */
	if (hdr->type != PERF_RECORD_SAMPLE || hdr->size < sizeof(*hdr) || ((uintptr_t)hdr & 7))
		return -EINVAL;
	if (t & ~SAMPLE_KNOWN)
		return -EOPNOTSUPP;
	/* Field by field, not a memset of the whole sample (see parse_sample_tail). */
	s->sample_type = t;
	s->misc = hdr->misc;
	s->id = s->ip = s->time = s->addr = s->stream_id = s->period = 0;
	s->pid = s->tid = s->cpu = 0;
	c.p = (const unsigned char *)(hdr + 1);
	c.end = (const unsigned char *)hdr + hdr->size;

	if ((t & PERF_SAMPLE_IDENTIFIER) && !take_u64(&c, &s->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_IP) && !take_u64(&c, &s->ip))
		return -EINVAL;
	if ((t & PERF_SAMPLE_TID) && !take_u32x2(&c, &s->pid, &s->tid))
		return -EINVAL;
	if ((t & PERF_SAMPLE_TIME) && !take_u64(&c, &s->time))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ADDR) && !take_u64(&c, &s->addr))
		return -EINVAL;
	if ((t & PERF_SAMPLE_ID) && !take_u64(&c, &s->id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_STREAM_ID) && !take_u64(&c, &s->stream_id))
		return -EINVAL;
	if ((t & PERF_SAMPLE_CPU) && !take_u32x2(&c, &s->cpu, NULL))
		return -EINVAL;
	if ((t & PERF_SAMPLE_PERIOD) && !take_u64(&c, &s->period))
		return -EINVAL;
	/* With no tail bit this only zeroes the tail members. */
	if (!parse_sample_tail(&c, attr, s))
		return -EINVAL;
	/* Bytes left over mean the attr does not describe this record. */
	return c.p == c.end ? 0 : -EINVAL;
}

static unsigned int sample_id_size(const struct perf_event_attr *attr)
{
	if (!attr->sample_id_all)
		return 0;
	return 8 * (unsigned int)__builtin_popcountll(attr->sample_type & SAMPLE_ID_BITS);
}

static int parse_trailer(const unsigned char *p, const struct perf_event_attr *attr,
			 struct psc_sample_id *sid)
{
	uint64_t t = attr->sample_type;
	struct cursor c = { p, p + sample_id_size(attr) };

	memset(sid, 0, sizeof(*sid));
	if (!attr->sample_id_all)
		return 0;
	sid->present = t & SAMPLE_ID_BITS;
	if (t & PERF_SAMPLE_TID)
		take_u32x2(&c, &sid->pid, &sid->tid);
	if (t & PERF_SAMPLE_TIME)
		take_u64(&c, &sid->time);
	if (t & PERF_SAMPLE_ID)
		take_u64(&c, &sid->id);
	if (t & PERF_SAMPLE_STREAM_ID)
		take_u64(&c, &sid->stream_id);
	if (t & PERF_SAMPLE_CPU)
		take_u32x2(&c, &sid->cpu, NULL);
	if (t & PERF_SAMPLE_IDENTIFIER)
		take_u64(&c, &sid->id);
	return 0;
}

int psc_record__parse_sample_id(const struct perf_event_header *hdr,
				const struct perf_event_attr *attr, struct psc_sample_id *out)
{
	unsigned int tsz = sample_id_size(attr);

	if (hdr->type == PERF_RECORD_SAMPLE || hdr->size < sizeof(*hdr) + tsz) {
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	return parse_trailer((const unsigned char *)hdr + hdr->size - tsz, attr, out);
}

/* A NUL-terminated string filling [p, end): the kernel pads it with zeros to a multiple of 8. */
static const char *body_string(const unsigned char *p, const unsigned char *end)
{
	if (p >= end || !memchr(p, '\0', (size_t)(end - p)))
		return NULL;
	return (const char *)p;
}

/*
 * Side-band records: a fixed body, maybe a string, then the trailer. `body` is where the body
 * starts, `blen` its length up to the trailer.
 */
static int parse_sideband(const struct perf_event_attr *attr, const unsigned char *body,
			  size_t blen, struct psc_record *r)
{
	const unsigned char *end = body + blen;
	struct cursor c = { body, end };
	uint32_t u32;

	switch (r->type) {
	case PERF_RECORD_LOST:
		if (blen != 16)
			return -EINVAL;
		take_u64(&c, &r->lost.id);
		take_u64(&c, &r->lost.lost);
		return 0;
	case PERF_RECORD_LOST_SAMPLES:
		if (blen != 8)
			return -EINVAL;
		take_u64(&c, &r->lost_samples.lost);
		return 0;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		if (blen != 24)
			return -EINVAL;
		take_u64(&c, &r->throttle.time);
		take_u64(&c, &r->throttle.id);
		take_u64(&c, &r->throttle.stream_id);
		return 0;
	case PERF_RECORD_COMM:
		if (!take_u32x2(&c, &r->comm.pid, &r->comm.tid))
			return -EINVAL;
		r->comm.comm = body_string(c.p, end);
		r->comm.exec = r->misc & PERF_RECORD_MISC_COMM_EXEC;
		return r->comm.comm ? 0 : -EINVAL;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (blen != 24)
			return -EINVAL;
		take_u32x2(&c, &r->fork.pid, &r->fork.ppid);
		take_u32x2(&c, &r->fork.tid, &r->fork.ptid);
		take_u64(&c, &r->fork.time);
		return 0;
	case PERF_RECORD_MMAP:
		if (!take_u32x2(&c, &r->mmap.pid, &r->mmap.tid) || !take_u64(&c, &r->mmap.start) ||
		    !take_u64(&c, &r->mmap.len) || !take_u64(&c, &r->mmap.pgoff))
			return -EINVAL;
		r->mmap.filename = body_string(c.p, end);
		return r->mmap.filename ? 0 : -EINVAL;
	case PERF_RECORD_MMAP2:
		if (!take_u32x2(&c, &r->mmap2.pid, &r->mmap2.tid) ||
		    !take_u64(&c, &r->mmap2.start) || !take_u64(&c, &r->mmap2.len) ||
		    !take_u64(&c, &r->mmap2.pgoff) || !left(&c, 32))
			return -EINVAL;
		r->mmap2.has_build_id = r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID;
		if (r->mmap2.has_build_id) {
			/* u8 size, 3 reserved bytes, 20 bytes of build id */
			r->mmap2.build_id_size = c.p[0] <= 20 ? c.p[0] : 20;
			r->mmap2.build_id = c.p + 4;
			c.p += 24;
		} else {
			take_u32x2(&c, &r->mmap2.maj, &r->mmap2.min);
			take_u64(&c, &r->mmap2.ino);
			take_u64(&c, &r->mmap2.ino_generation);
		}
		take_u32x2(&c, &r->mmap2.prot, &r->mmap2.flags);
		r->mmap2.filename = body_string(c.p, end);
		return r->mmap2.filename ? 0 : -EINVAL;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		r->sw.out = r->misc & PERF_RECORD_MISC_SWITCH_OUT;
		r->sw.preempt = r->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
		if (r->type == PERF_RECORD_SWITCH)
			return blen == 0 ? 0 : -EINVAL;
		if (blen != 8)
			return -EINVAL;
		take_u32x2(&c, &u32, &r->sw.next_prev_tid);
		r->sw.next_prev_pid = u32;
		return 0;
	default:
		return 0;
	}
}

int psc_record__parse(const struct perf_event_header *hdr, const struct perf_event_attr *attr,
		      struct psc_record *r)
{
	unsigned int tsz;
	int err;

	memset(r, 0, offsetof(struct psc_record, sample));
	r->type = hdr->type;
	r->misc = hdr->misc;
	r->size = hdr->size;
	r->hdr = hdr;
	if (hdr->size < sizeof(*hdr))
		return -EINVAL;
	if (hdr->type == PERF_RECORD_SAMPLE)
		return psc_record__parse_sample(hdr, attr, &r->sample);
	memset(&r->sample, 0, sizeof(*r) - offsetof(struct psc_record, sample));
	/* Types past the kernel's (perf.data's own, or newer kernels') may have no trailer. */
	if (hdr->type >= PERF_RECORD_MAX)
		return 0;
	tsz = sample_id_size(attr);
	if (hdr->size < sizeof(*hdr) + tsz)
		return -EINVAL;
	err = parse_sideband(attr, (const unsigned char *)(hdr + 1), hdr->size - sizeof(*hdr) - tsz,
			     r);
	if (err)
		return err;
	return parse_trailer((const unsigned char *)hdr + hdr->size - tsz, attr, &r->sid);
}

bool psc_record__identifier(const struct perf_event_header *hdr, uint64_t *id)
{
	const unsigned char *p = (const unsigned char *)hdr;

	if (hdr->size < sizeof(*hdr) + 8)
		return false;
	memcpy(id, hdr->type == PERF_RECORD_SAMPLE ? p + sizeof(*hdr) : p + hdr->size - 8, 8);
	return true;
}

int psc_sample_read__at(const struct psc_sample_read *read, uint64_t idx,
			struct psc_sample_read_value *out)
{
	const uint64_t *e;

	memset(out, 0, sizeof(*out));
	if (idx >= read->nr)
		return -EINVAL;
	if (!(read->read_format & PERF_FORMAT_GROUP)) {
		*out = read->one;
		return 0;
	}
	e = read->group + idx * read->stride;
	out->value = e[0];
	if (read->read_format & PERF_FORMAT_ID)
		out->id = e[1];
	if (read->read_format & PERF_FORMAT_LOST)
		out->lost = e[1 + !!(read->read_format & PERF_FORMAT_ID)];
	return 0;
}

const char *psc_record__type_name(uint32_t type)
{
	static const char *const names[] = {
		[PERF_RECORD_MMAP] = "MMAP",
		[PERF_RECORD_LOST] = "LOST",
		[PERF_RECORD_COMM] = "COMM",
		[PERF_RECORD_EXIT] = "EXIT",
		[PERF_RECORD_THROTTLE] = "THROTTLE",
		[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
		[PERF_RECORD_FORK] = "FORK",
		[PERF_RECORD_READ] = "READ",
		[PERF_RECORD_SAMPLE] = "SAMPLE",
		[PERF_RECORD_MMAP2] = "MMAP2",
		[PERF_RECORD_AUX] = "AUX",
		[PERF_RECORD_ITRACE_START] = "ITRACE_START",
		[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
		[PERF_RECORD_SWITCH] = "SWITCH",
		[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
		[PERF_RECORD_NAMESPACES] = "NAMESPACES",
		[PERF_RECORD_KSYMBOL] = "KSYMBOL",
		[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
		[PERF_RECORD_CGROUP] = "CGROUP",
		[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
		[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "UNKNOWN";
}
