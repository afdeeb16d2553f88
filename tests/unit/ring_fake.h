/* Test helpers: a fake perf mmap buffer with a kernel-like writer, and a record builder. */
#ifndef PERFSCOPE_TESTS_RING_FAKE_H
#define PERFSCOPE_TESTS_RING_FAKE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>

/*
 * The buffer lives in a memfd mapped twice: read-write for the writer (playing the kernel) and,
 * for backward rings, read-only for the reader, exactly like the kernel maps them, so a reader
 * that wrote data_tail into an overwrite ring would fault.
 */
struct fake_ring {
	int memfd;
	size_t len, page, size;
	unsigned char *w; /* writer's view */
	unsigned char *rd; /* reader's view (what psc_ring__new_mem gets) */
	struct perf_event_mmap_page *pc; /* writer's control page */
	unsigned char *data; /* writer's data area */
	bool backward;
	uint64_t head;
};

static inline int fake_ring_init(struct fake_ring *f, size_t data_size, bool backward,
				 uint64_t start)
{
	memset(f, 0, sizeof(*f));
	f->page = (size_t)sysconf(_SC_PAGESIZE);
	f->size = data_size;
	f->len = f->page + ((data_size + f->page - 1) / f->page) * f->page;
	f->backward = backward;
	f->memfd = memfd_create("fake_ring", 0);
	if (f->memfd < 0 || ftruncate(f->memfd, (off_t)f->len) < 0)
		return -1;
	f->w = mmap(NULL, f->len, PROT_READ | PROT_WRITE, MAP_SHARED, f->memfd, 0);
	f->rd = mmap(NULL, f->len, PROT_READ | (backward ? 0 : PROT_WRITE), MAP_SHARED, f->memfd,
		     0);
	if (f->w == MAP_FAILED || f->rd == MAP_FAILED)
		return -1;
	f->pc = (struct perf_event_mmap_page *)f->w;
	f->pc->data_offset = f->page;
	f->pc->data_size = data_size;
	f->data = f->w + f->page;
	f->head = start;
	f->pc->data_head = start;
	f->pc->data_tail = start;
	return 0;
}

static inline void fake_ring_fini(struct fake_ring *f)
{
	munmap(f->w, f->len);
	munmap(f->rd, f->len);
	close(f->memfd);
}

static inline void fake_copy_in(struct fake_ring *f, uint64_t pos, const void *rec, size_t len)
{
	size_t off = pos & (f->size - 1), first = f->size - off;

	if (first >= len) {
		memcpy(f->data + off, rec, len);
	} else {
		memcpy(f->data + off, rec, first);
		memcpy(f->data, (const unsigned char *)rec + first, len - first);
	}
}

/* Like the kernel: forward writes fail when the reader has not freed the space. */
static inline bool fake_ring_write(struct fake_ring *f, const void *rec, size_t len)
{
	if (f->backward) {
		f->head -= len;
		fake_copy_in(f, f->head, rec, len);
	} else {
		uint64_t tail = __atomic_load_n(&f->pc->data_tail, __ATOMIC_ACQUIRE);

		if (f->head + len - tail > f->size)
			return false;
		fake_copy_in(f, f->head, rec, len);
		f->head += len;
	}
	__atomic_store_n(&f->pc->data_head, f->head, __ATOMIC_RELEASE);
	return true;
}

/* Builds one record in an aligned buffer: header first, then u64 slots. */
struct rec_builder {
	uint64_t buf[8192];
	size_t n; /* u64 slots used, the header included */
};

static inline void rb_start(struct rec_builder *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc, .size = 0 };

	memset(b->buf, 0, sizeof(b->buf));
	memcpy(&b->buf[0], &h, sizeof(h));
	b->n = 1;
}

static inline void rb_u64(struct rec_builder *b, uint64_t v)
{
	b->buf[b->n++] = v;
}

static inline void rb_u32x2(struct rec_builder *b, uint32_t lo, uint32_t hi)
{
	uint32_t two[2] = { lo, hi };

	memcpy(&b->buf[b->n++], two, 8);
}

/* Bytes padded with zeros to a multiple of 8. */
static inline void rb_bytes(struct rec_builder *b, const void *p, size_t len)
{
	memcpy(&b->buf[b->n], p, len);
	b->n += (len + 7) / 8;
}

static inline struct perf_event_header *rb_finish(struct rec_builder *b)
{
	struct perf_event_header *h = (struct perf_event_header *)b->buf;

	h->size = (uint16_t)(b->n * 8);
	return h;
}

#endif
