/* libperfscope: typed, zero-copy decoding of perf ring records (samples, lost, comm, mmap2 ...). */
#ifndef PERFSCOPE_RECORD_H
#define PERFSCOPE_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>
#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every decoder takes a record as psc_ring__next returns it (8-byte aligned, header.size bytes)
 * and the attr of the evsel it belongs to (sample_type, read_format, sample_regs_user/intr,
 * branch_sample_type, sample_id_all). Decoded values are copied out; variable-length parts are
 * pointers into the record, valid as long as the record is. Nothing is allocated. A record that is
 * truncated or inconsistent with the attr gives -EINVAL; nothing beyond header.size is ever read.
 * Thread-safe (no state).
 */

struct psc_sample_read_value {
	uint64_t value;
	uint64_t id; /* PERF_FORMAT_ID, else 0 */
	uint64_t lost; /* PERF_FORMAT_LOST, else 0 */
};

/* PERF_SAMPLE_READ: read_format values, group or not. Entries are read with psc_sample_read__at. */
struct psc_sample_read {
	uint64_t read_format;
	uint64_t nr; /* entries: 1 without PERF_FORMAT_GROUP */
	uint64_t time_enabled; /* PERF_FORMAT_TOTAL_TIME_ENABLED, else 0 */
	uint64_t time_running; /* PERF_FORMAT_TOTAL_TIME_RUNNING, else 0 */
	struct psc_sample_read_value one; /* without PERF_FORMAT_GROUP: the only entry */
	const uint64_t *group; /* with PERF_FORMAT_GROUP: nr entries of `stride` u64 */
	uint32_t stride; /* 1 + PERF_FORMAT_ID + PERF_FORMAT_LOST */
};

/* Registers (PERF_SAMPLE_REGS_USER/INTR): abi 0 (PERF_SAMPLE_REGS_ABI_NONE) means none. */
struct psc_sample_regs {
	uint64_t abi;
	uint64_t mask; /* attr.sample_regs_user / sample_regs_intr: which regs, in bit order */
	uint32_t nr; /* popcount(mask) when abi != 0, else 0 */
	const uint64_t *regs;
};

/* A decoded PERF_RECORD_SAMPLE. Fields whose bit is absent from sample_type are 0 / NULL. */
struct psc_sample {
	uint64_t sample_type; /* the attr's, saying which fields below are meaningful */
	uint16_t misc; /* header.misc: PERF_RECORD_MISC_KERNEL/USER, EXACT_IP ... */
	uint64_t id; /* PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID */
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	struct psc_sample_read read;
	struct {
		uint64_t nr; /* includes PERF_CONTEXT_* markers */
		const uint64_t *ips;
	} callchain;
	struct {
		uint32_t size; /* includes the kernel's padding */
		const void *data; /* tracepoint: the raw event (common_* fields first) */
	} raw;
	struct {
		uint64_t nr;
		uint64_t hw_idx; /* PERF_SAMPLE_BRANCH_HW_INDEX, else 0 */
		const struct perf_branch_entry *entries;
		const uint64_t
			*counters; /* PERF_SAMPLE_BRANCH_COUNTERS (branch_sample_type bit 19) */
	} branch_stack;
	struct psc_sample_regs regs_user;
	struct {
		uint64_t size; /* bytes copied; 0 when the kernel had no user stack */
		const void *data;
		uint64_t dyn_size; /* bytes of data actually valid */
	} stack_user;
	uint64_t weight; /* PERF_SAMPLE_WEIGHT, or the full u64 of WEIGHT_STRUCT */
	uint32_t weight_var1; /* WEIGHT_STRUCT: var1_dw (e.g. latency) */
	uint16_t weight_var2, weight_var3;
	uint64_t data_src;
	uint64_t transaction;
	struct psc_sample_regs regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size;
	uint64_t code_page_size;
	struct {
		uint64_t size;
		const void *data;
	} aux;
};

/* The sample_id_all trailer of non-sample records. `present` holds the sample_type bits found. */
struct psc_sample_id {
	uint64_t present;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id; /* PERF_SAMPLE_IDENTIFIER or PERF_SAMPLE_ID */
	uint64_t stream_id;
	uint32_t cpu;
};

/* A decoded record of any kind: the union member named after header.type is filled. */
struct psc_record {
	uint32_t type; /* header.type, PERF_RECORD_* */
	uint16_t misc;
	uint16_t size;
	const struct perf_event_header *hdr;
	struct psc_sample_id sid; /* non-samples with attr.sample_id_all; zeroed otherwise */
	union {
		struct psc_sample sample; /* PERF_RECORD_SAMPLE */
		struct {
			uint64_t id; /* the event that lost them */
			uint64_t lost;
		} lost; /* PERF_RECORD_LOST */
		struct {
			uint64_t lost;
		} lost_samples; /* PERF_RECORD_LOST_SAMPLES (its event: sid.id) */
		struct {
			uint64_t time, id, stream_id;
		} throttle; /* PERF_RECORD_THROTTLE / UNTHROTTLE */
		struct {
			uint32_t pid, tid;
			const char *comm; /* NUL-terminated within the record */
			bool exec; /* PERF_RECORD_MISC_COMM_EXEC */
		} comm; /* PERF_RECORD_COMM */
		struct {
			uint32_t pid, ppid, tid, ptid;
			uint64_t time;
		} fork; /* PERF_RECORD_FORK and PERF_RECORD_EXIT */
		struct {
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			const char *filename;
		} mmap; /* PERF_RECORD_MMAP */
		struct {
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			bool has_build_id; /* PERF_RECORD_MISC_MMAP_BUILD_ID: build_id, else
					      maj..gen */
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint8_t build_id_size;
			const uint8_t *build_id; /* build_id_size bytes (<= 20) */
			uint32_t prot, flags;
			const char *filename;
		} mmap2; /* PERF_RECORD_MMAP2 */
		struct {
			bool out; /* PERF_RECORD_MISC_SWITCH_OUT */
			bool preempt; /* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT */
			uint32_t next_prev_pid, next_prev_tid; /* SWITCH_CPU_WIDE only */
		} sw; /* PERF_RECORD_SWITCH and PERF_RECORD_SWITCH_CPU_WIDE */
	};
};

/*
 * Decodes a PERF_RECORD_SAMPLE. -EINVAL when hdr is not a sample, is truncated, has trailing
 * garbage, or a variable-length part is inconsistent (e.g. a callchain longer than the record).
 */
PSC_API int psc_record__parse_sample(const struct perf_event_header *hdr,
				     const struct perf_event_attr *attr, struct psc_sample *out);
/*
 * Decodes any record into out (samples via psc_record__parse_sample). Record types this library
 * does not know are returned with only type/misc/size/hdr set (and 0). -EINVAL on bad records.
 */
PSC_API int psc_record__parse(const struct perf_event_header *hdr,
			      const struct perf_event_attr *attr, struct psc_record *out);
/*
 * The sample types psc_record__parse_again decodes: tracepoints and software events (perfscope's
 * own tracing, stacks and periods included).
 */
#define PSC_SAMPLE_AGAIN_TYPES                                                          \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |  \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW)

/* One u64 of a record being decoded by psc_record__parse_again; false past its end. */
static inline bool psc_record__take_u64(const unsigned char **p, const unsigned char *end,
					uint64_t *v)
{
	if (end - *p < 8)
		return false;
	memcpy(v, *p, 8);
	*p += 8;
	return true;
}

/*
 * psc_record__parse for a stream of samples, inline: out holds the last record decoded (by
 * psc_record__parse, without error, or by this) with an attr of the same sample_type, so every
 * member whose bit is absent is 0 already and only the others are written, not the ~400 bytes
 * of the whole record. For the sample types of PSC_SAMPLE_AGAIN_TYPES only. false when it cannot
 * say (another record type or sample_type, a bit it does not know, a record that does not fit
 * the attr): then psc_record__parse must decode it, and says what is wrong. When true, out is
 * what psc_record__parse would have made of hdr.
 */
PSC_HOT_INLINE bool psc_record__parse_again(const struct perf_event_header *hdr,
					   const struct perf_event_attr *attr,
					   struct psc_record *out)
{
	struct psc_sample *s = &out->sample;
	uint64_t t = attr->sample_type, v;
	const unsigned char *p = (const unsigned char *)(hdr + 1);
	const unsigned char *end = (const unsigned char *)hdr + hdr->size;
	uint32_t raw;

	if (hdr->type != PERF_RECORD_SAMPLE || out->type != PERF_RECORD_SAMPLE ||
	    s->sample_type != t || (t & ~(uint64_t)PSC_SAMPLE_AGAIN_TYPES) ||
	    hdr->size < sizeof(*hdr) || ((uintptr_t)hdr & 7))
		return false;
	if ((t & PERF_SAMPLE_IDENTIFIER) && !psc_record__take_u64(&p, end, &s->id))
		return false;
	if ((t & PERF_SAMPLE_IP) && !psc_record__take_u64(&p, end, &s->ip))
		return false;
	if (t & PERF_SAMPLE_TID) {
		if (end - p < 8)
			return false;
		memcpy(&s->pid, p, 4);
		memcpy(&s->tid, p + 4, 4);
		p += 8;
	}
	if ((t & PERF_SAMPLE_TIME) && !psc_record__take_u64(&p, end, &s->time))
		return false;
	if ((t & PERF_SAMPLE_ADDR) && !psc_record__take_u64(&p, end, &s->addr))
		return false;
	if ((t & PERF_SAMPLE_ID) && !psc_record__take_u64(&p, end, &s->id))
		return false;
	if ((t & PERF_SAMPLE_STREAM_ID) && !psc_record__take_u64(&p, end, &s->stream_id))
		return false;
	if (t & PERF_SAMPLE_CPU) {
		if (end - p < 8)
			return false;
		memcpy(&s->cpu, p, 4);
		p += 8;
	}
	if ((t & PERF_SAMPLE_PERIOD) && !psc_record__take_u64(&p, end, &s->period))
		return false;
	if (t & PERF_SAMPLE_CALLCHAIN) {
		if (!psc_record__take_u64(&p, end, &v) || v > (uint64_t)(end - p) / 8)
			return false;
		s->callchain.nr = v;
		s->callchain.ips = (const uint64_t *)(const void *)p;
		p += v * 8;
	}
	if (t & PERF_SAMPLE_RAW) {
		if (end - p < 4)
			return false;
		memcpy(&raw, p, 4);
		if (((raw + 4ULL) & 7) || (uint64_t)(end - p) < raw + 4ULL)
			return false;
		s->raw.size = raw;
		s->raw.data = p + 4;
		p += raw + 4ULL;
	}
	if (p != end)
		return false;
	out->misc = s->misc = hdr->misc;
	out->size = hdr->size;
	out->hdr = hdr;
	return true;
}

/* The sample_id_all trailer of a non-sample record (out->present = 0 without sample_id_all). */
PSC_API int psc_record__parse_sample_id(const struct perf_event_header *hdr,
					const struct perf_event_attr *attr,
					struct psc_sample_id *out);

/*
 * The PERF_SAMPLE_IDENTIFIER of a record, assuming its evsel has that bit (and sample_id_all for
 * non-samples): the first u64 after the header of a sample, the last u64 of other records.
 * false when the record is too short to carry one.
 */
PSC_API bool psc_record__identifier(const struct perf_event_header *hdr, uint64_t *id);

/* Entry idx of a PERF_SAMPLE_READ (idx < read->nr). -EINVAL when out of range. */
PSC_API int psc_sample_read__at(const struct psc_sample_read *read, uint64_t idx,
				struct psc_sample_read_value *out);

/* "SAMPLE", "LOST", "MMAP2" ... for a PERF_RECORD_* type; "UNKNOWN" for others. */
PSC_API const char *psc_record__type_name(uint32_t type);

#ifdef __cplusplus
}
#endif
#endif
