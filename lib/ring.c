/* Ring reader: libperf's read_init/next/consume/read_done protocol over one perf mmap buffer. */
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring_internal.h"

/* header.size is a u16, so no record is larger than this. */
#define SIDE_MAX 65536u

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static int ring_init(struct psc_ring *ring, void *base, size_t data_offset, size_t data_size,
		     bool overwrite)
{
	ring->pc = base;
	ring->pos.data = (unsigned char *)base + data_offset;
	ring->pos.data_size = data_size;
	ring->pos.mask = data_size - 1;
	ring->overwrite = overwrite;
	ring->side_len = data_size < SIDE_MAX ? data_size : SIDE_MAX;
	ring->side = malloc(ring->side_len);
	if (!ring->side)
		return -ENOMEM;
	/* A forward ring resumes where an earlier reader stopped; a backward one starts at 0. */
	ring->pos.start = overwrite ? 0 : __atomic_load_n(&ring->pc->data_tail, __ATOMIC_RELAXED);
	ring->pos.end = ring->pos.start;
	ring->released = ring->pos.start;
	return 0;
}

struct psc_ring *psc_ring__new_mem(void *base, size_t len, bool overwrite)
{
	struct perf_event_mmap_page *pc = base;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uint64_t off, size;
	struct psc_ring *ring;
	int err;

	if (!base || ((uintptr_t)base & 7) || len < sizeof(*pc))
		return psc_errno_null(-EINVAL);
	off = pc->data_offset ? pc->data_offset : page;
	size = pc->data_size ? pc->data_size : (len > off ? len - off : 0);
	if (off < sizeof(*pc) || (off & 7) || off > len || size > len - off || size < 8 ||
	    !is_pow2(size)) {
		pr_warn("ring: data area (offset %llu, size %llu) must be a power of two of at least 8 bytes within the %zu bytes given, after the control page\n",
			(unsigned long long)off, (unsigned long long)size, len);
		return psc_errno_null(-EINVAL);
	}
	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return NULL;
	ring->fd = -1;
	ring->cpu = -1;
	ring->tid = -1;
	err = ring_init(ring, base, off, size, overwrite);
	if (err) {
		psc_ring__delete(ring);
		return psc_errno_null(err);
	}
	return ring;
}

struct psc_ring *psc_ring__new_fd(int fd, size_t data_pages, const struct psc_ring_opts *opts)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	bool overwrite = OPTS_GET(opts, overwrite, false);
	struct psc_ring *ring;
	void *map;
	size_t len;
	int err;

	if (!OPTS_VALID(opts, psc_ring_opts) || fd < 0)
		return psc_errno_null(-EINVAL);
	if (!is_pow2(data_pages) || data_pages > (SIZE_MAX / page) - 1) {
		pr_warn("ring: %zu data pages is not a power of two (use 1, 2, 4, ... 128 ...)\n",
			data_pages);
		return psc_errno_null(-EINVAL);
	}
	ring = calloc(1, sizeof(*ring));
	if (!ring)
		return NULL;
	ring->fd = fd;
	ring->cpu = OPTS_HAS(opts, cpu) ? opts->cpu : -1;
	ring->tid = OPTS_HAS(opts, tid) ? opts->tid : -1;
	len = (data_pages + 1) * page;
	/* A backward ring is mapped read-only: that is what tells the kernel never to wait for us.
	 */
	map = mmap(NULL, len, PROT_READ | (overwrite ? 0 : PROT_WRITE), MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		pr_warn("ring: mmap of %zu bytes on fd %d failed: %s%s\n", len, fd, strerror(-err),
			err == -EPERM ? " (over the perf_event_mlock_kb limit; use fewer pages)"
				      : "");
		free(ring);
		return psc_errno_null(err);
	}
	ring->map = map;
	ring->map_len = len;
	err = ring_init(ring, map, page, data_pages * page, overwrite);
	if (err) {
		psc_ring__delete(ring);
		return psc_errno_null(err);
	}
	return ring;
}

void psc_ring__delete(struct psc_ring *ring)
{
	if (!ring)
		return;
	if (ring->map)
		munmap(ring->map, ring->map_len);
	free(ring->side);
	free(ring);
}

/* Overwrite: the records between data_head and the head of the previous read, one buffer at most.
 */
static int read_init_backward(struct psc_ring *ring)
{
	uint64_t head = __atomic_load_n(&ring->pc->data_head, __ATOMIC_ACQUIRE);
	uint64_t span = ring->prev - head;

	ring->head = head;
	ring->pos.start = head;
	ring->clamped = span > ring->pos.data_size;
	if (ring->clamped)
		span = ring->pos.data_size;
	ring->pos.end = head + span;
	ring->pos.cur = NULL;
	return span ? 0 : -EAGAIN;
}

/* Release: our reads of the records happen before the kernel may overwrite them. */
static void release_tail(struct psc_ring *ring)
{
	__atomic_store_n(&ring->pc->data_tail, ring->pos.start, __ATOMIC_RELEASE);
	ring->released = ring->pos.start;
}

int psc_ring__read_init(struct psc_ring *ring)
{
	uint64_t head;

	if (ring->overwrite)
		return read_init_backward(ring);
	head = __atomic_load_n(&ring->pc->data_head, __ATOMIC_ACQUIRE);
	ring->head = head;
	ring->pos.cur = NULL;
	if (head - ring->pos.start > ring->pos.data_size || (ring->pos.start & 7)) {
		/* The kernel never publishes more than the buffer holds: the control page is bogus.
		 */
		ring->pos.stats.corrupt++;
		ring->pos.start = head;
		ring->pos.end = head;
		/* Release the whole buffer, or the kernel would stay blocked on it forever. */
		release_tail(ring);
		return -EAGAIN;
	}
	ring->pos.end = head;
	return head == ring->pos.start ? -EAGAIN : 0;
}

/* Ends the batch after a bogus record: nothing past it can be trusted to be framed right. */
static const struct perf_event_header *ring_corrupt(struct psc_ring *ring)
{
	ring->pos.stats.corrupt++;
	ring->pos.start = ring->pos.end;
	ring->pos.cur = NULL;
	errno = EBADMSG;
	return NULL;
}

/* A backward range cut to one buffer ends at the oldest record, which the kernel may have torn. */
static const struct perf_event_header *ring_torn_end(struct psc_ring *ring)
{
	ring->pos.start = ring->pos.end;
	errno = 0;
	return NULL;
}

const struct perf_event_header *psc_ring__next(struct psc_ring *ring)
{
	const struct perf_event_header *hdr;
	uint64_t avail = ring->pos.end - ring->pos.start;
	size_t off, size, first;

	if (ring->pos.cur)
		return ring->pos.cur;
	if (!avail) {
		errno = 0;
		return NULL;
	}
	if (avail < sizeof(*hdr) || (ring->pos.start & 7)) {
		if (ring->overwrite && ring->clamped)
			return ring_torn_end(ring);
		return ring_corrupt(ring);
	}
	/* start is 8-byte aligned and the data size a power of two >= 8: the header never wraps. */
	off = ring->pos.start & ring->pos.mask;
	hdr = (const struct perf_event_header *)(ring->pos.data + off);
	size = hdr->size;
	if (size > avail || size == 0) {
		if (ring->overwrite && ring->clamped)
			return ring_torn_end(ring);
		return ring_corrupt(ring);
	}
	if (size < sizeof(*hdr) || (size & 7))
		return ring_corrupt(ring);
	if (off + size <= ring->pos.data_size) {
		ring->pos.cur = hdr;
		return hdr;
	}
	first = ring->pos.data_size - off;
	memcpy(ring->side, ring->pos.data + off, first);
	memcpy(ring->side + first, ring->pos.data, size - first);
	ring->pos.stats.wrapped++;
	ring->pos.cur = (const struct perf_event_header *)ring->side;
	return ring->pos.cur;
}

static uint64_t load_u64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* LOST: {header, id, lost}; LOST_SAMPLES: {header, lost}; each maybe followed by a sample id. */
static void count_lost(struct psc_ring *ring, const struct perf_event_header *hdr)
{
	const unsigned char *body = (const unsigned char *)(hdr + 1);
	uint64_t lost;

	if (hdr->type == PERF_RECORD_LOST && hdr->size >= sizeof(*hdr) + 16) {
		lost = load_u64(body + 8);
	} else if (hdr->type == PERF_RECORD_LOST_SAMPLES && hdr->size >= sizeof(*hdr) + 8) {
		lost = load_u64(body);
		ring->pos.stats.lost_samples += lost;
	} else {
		/* Too short to say how many: still a loss the caller must hear about. */
		ring->pos.stats.corrupt++;
		lost = 0;
	}
	ring->pos.stats.lost += lost;
	ring->pos.stats.lost_records++;
	if (ring->on_lost)
		ring->on_lost(ring->lost_ctx, hdr, lost);
}

void psc_ring__consume(struct psc_ring *ring)
{
	const struct perf_event_header *hdr = ring->pos.cur;

	if (!hdr)
		return;
	ring->pos.stats.records++;
	ring->pos.stats.bytes += hdr->size;
	if (__builtin_expect(hdr->type == PERF_RECORD_LOST || hdr->type == PERF_RECORD_LOST_SAMPLES,
			     0))
		count_lost(ring, hdr);
	ring->pos.start += hdr->size;
	ring->pos.cur = NULL;
}

void psc_ring__read_done(struct psc_ring *ring)
{
	ring->pos.cur = NULL;
	if (ring->overwrite) {
		/* Read-only mapping: remember where this read began so the next one stops there. */
		ring->prev = ring->head;
		return;
	}
	release_tail(ring);
}

void psc_ring__release(struct psc_ring *ring)
{
	/*
	 * Not per record: the kernel reads data_tail on every write, so each store would pull the
	 * control page's cache line back to the writing CPU.
	 */
	if (!ring->overwrite && ring->pos.start - ring->released >= ring->pos.data_size / 8)
		release_tail(ring);
}

static int ring_pause(struct psc_ring *ring, unsigned long on)
{
	if (ring->fd < 0)
		return -EBADF;
	return ioctl(ring->fd, PERF_EVENT_IOC_PAUSE_OUTPUT, on) < 0 ? -errno : 0;
}

int psc_ring__pause(struct psc_ring *ring)
{
	return ring_pause(ring, 1);
}

int psc_ring__resume(struct psc_ring *ring)
{
	return ring_pause(ring, 0);
}

void psc_ring__stats(const struct psc_ring *ring, struct psc_ring_stats *out)
{
	*out = ring->pos.stats;
}

int psc_ring__fd(const struct psc_ring *ring)
{
	return ring->fd;
}

int psc_ring__cpu(const struct psc_ring *ring)
{
	return ring->cpu;
}

pid_t psc_ring__tid(const struct psc_ring *ring)
{
	return ring->tid;
}

size_t psc_ring__data_size(const struct psc_ring *ring)
{
	return ring->pos.data_size;
}

bool psc_ring__is_overwrite(const struct psc_ring *ring)
{
	return ring->overwrite;
}

uint64_t psc_ring__data_head(const struct psc_ring *ring)
{
	return __atomic_load_n(&ring->pc->data_head, __ATOMIC_ACQUIRE);
}

uint64_t psc_ring__data_tail(const struct psc_ring *ring)
{
	return __atomic_load_n(&ring->pc->data_tail, __ATOMIC_RELAXED);
}

uint64_t psc_ring__pending(const struct psc_ring *ring)
{
	uint64_t head = __atomic_load_n(&ring->pc->data_head, __ATOMIC_ACQUIRE);

	if (ring->overwrite)
		return ring->prev - head;
	return head - __atomic_load_n(&ring->pc->data_tail, __ATOMIC_RELAXED);
}
