/* libFuzzer target: arbitrary bytes as ring contents (any size, offset, mode) and as records. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The first bytes choose the attr the records are decoded with. */
struct fuzz_cfg {
	uint32_t sample_type;
	uint8_t read_format;
	uint8_t regs_user;
	uint8_t regs_intr;
	uint8_t flags; /* bit0 sample_id_all, bit1 overwrite, bit2 hw_idx, bit3 counters, bit4 one
			  record, bit5 release mid-batch */
	uint8_t size_log2;
	uint8_t pad[3];
	uint16_t start; /* where tail and head start within the buffer, in u64 */
	uint16_t fill; /* how many bytes the writer published, before clamping */
};

static void decode_all(const struct perf_event_header *h, const struct perf_event_attr *attr)
{
	struct psc_record r;
	struct psc_sample_id sid;
	uint64_t id;

	if (psc_record__parse(h, attr, &r) == 0 && r.type == PERF_RECORD_SAMPLE) {
		struct psc_sample_read_value v;
		volatile uint64_t sink = 0;

		/* touch every pointer the decoder handed out, within the lengths it gave */
		for (uint64_t i = 0; i < r.sample.read.nr; i++) {
			psc_sample_read__at(&r.sample.read, i, &v);
			sink += v.value + v.id + v.lost;
		}
		for (uint64_t i = 0; i < r.sample.callchain.nr; i++)
			sink += r.sample.callchain.ips[i];
		if (r.sample.raw.size)
			sink += ((const uint8_t *)r.sample.raw.data)[r.sample.raw.size - 1];
		for (uint64_t i = 0; i < r.sample.branch_stack.nr; i++) {
			sink += r.sample.branch_stack.entries[i].to;
			if (r.sample.branch_stack.counters)
				sink += r.sample.branch_stack.counters[i];
		}
		for (uint32_t i = 0; i < r.sample.regs_user.nr; i++)
			sink += r.sample.regs_user.regs[i];
		for (uint32_t i = 0; i < r.sample.regs_intr.nr; i++)
			sink += r.sample.regs_intr.regs[i];
		if (r.sample.stack_user.size)
			sink += ((const uint8_t *)
					 r.sample.stack_user.data)[r.sample.stack_user.size - 1];
		if (r.sample.aux.size)
			sink += ((const uint8_t *)r.sample.aux.data)[r.sample.aux.size - 1];
		(void)sink;
	} else if (r.type == PERF_RECORD_COMM && r.comm.comm) {
		(void)strlen(r.comm.comm);
	} else if (r.type == PERF_RECORD_MMAP2 && r.mmap2.filename) {
		(void)strlen(r.mmap2.filename);
	}
	psc_record__parse_sample_id(h, attr, &sid);
	psc_record__identifier(h, &id);
	(void)psc_record__type_name(h->type);
}

static void fuzz_ring(const struct fuzz_cfg *cfg, const struct perf_event_attr *attr,
		      const uint8_t *data, size_t size)
{
	size_t dsize = (size_t)8 << (cfg->size_log2 % 10); /* 8 bytes .. 4 KiB */
	size_t ctl = sizeof(struct perf_event_mmap_page);
	bool overwrite = cfg->flags & 2;
	struct perf_event_mmap_page *pc;
	const struct perf_event_header *h;
	struct psc_ring *ring;
	unsigned char *mem;
	uint64_t start;

	mem = aligned_alloc(8, ctl + dsize);
	if (!mem)
		return;
	memset(mem, 0, ctl);
	for (size_t i = 0; i < dsize; i++)
		mem[ctl + i] = size ? data[i % size] : 0;
	pc = (struct perf_event_mmap_page *)mem;
	pc->data_offset = ctl;
	pc->data_size = dsize;
	/* positions near 0 and near 2^64, sometimes misaligned */
	start = (uint64_t)cfg->start * 8 + (cfg->pad[0] & 1 ? 0 - (uint64_t)dsize * 3 : 0) +
		(cfg->pad[1] == 0x5a ? 4 : 0);
	pc->data_tail = start;
	if (overwrite)
		pc->data_head = 0 - (uint64_t)cfg->fill;
	else
		pc->data_head =
			start + (cfg->pad[2] == 0xa5 ? cfg->fill * 8ULL : cfg->fill % (dsize + 1));
	ring = psc_ring__new_mem(mem, ctl + dsize, overwrite);
	if (ring) {
		for (int batch = 0; batch < 2; batch++) {
			if (psc_ring__read_init(ring))
				continue;
			while ((h = psc_ring__next(ring))) {
				decode_all(h, attr);
				psc_ring__consume(ring);
				/* as the session does between records */
				if (cfg->flags & 32)
					psc_ring__release(ring);
			}
			psc_ring__read_done(ring);
		}
		psc_ring__delete(ring);
	}
	free(mem);
}

/* The bytes as one record, in a buffer exactly header.size long so ASan sees any overread. */
static void fuzz_one_record(const struct perf_event_attr *attr, const uint8_t *data, size_t size)
{
	struct perf_event_header *h;
	size_t len = size > 65528 ? 65528 : size & ~(size_t)7;

	if (len < sizeof(*h))
		return;
	h = aligned_alloc(8, len);
	if (!h)
		return;
	memcpy(h, data, len);
	if (h->size > len || h->size < sizeof(*h))
		h->size = (uint16_t)len;
	decode_all(h, attr);
	free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_event_attr attr = { .size = sizeof(attr) };
	struct fuzz_cfg cfg;

	if (size < sizeof(cfg) + 1)
		return 0;
	memcpy(&cfg, data, sizeof(cfg));
	data += sizeof(cfg);
	size -= sizeof(cfg);
	/* keep to known bits most of the time, so the decoder's inner paths are reached */
	attr.sample_type = cfg.sample_type & (cfg.pad[0] & 0x80 ? ~0u : (PERF_SAMPLE_MAX - 1));
	attr.read_format = cfg.read_format & 0x1f;
	attr.sample_regs_user = cfg.regs_user * 0x0101010101010101ULL;
	attr.sample_regs_intr = cfg.regs_intr;
	attr.sample_id_all = cfg.flags & 1;
	if (cfg.flags & 4)
		attr.branch_sample_type |= PERF_SAMPLE_BRANCH_HW_INDEX;
	if (cfg.flags & 8)
		attr.branch_sample_type |= 1ULL << 19; /* PERF_SAMPLE_BRANCH_COUNTERS */
	if (cfg.flags & 16)
		fuzz_one_record(&attr, data, size);
	else
		fuzz_ring(&cfg, &attr, data, size);
	return 0;
}
