/* libperfscope: perf mmap ring buffers (read_init/next/consume/read_done) and evlist mmapping. */
#ifndef PERFSCOPE_RING_H
#define PERFSCOPE_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>
#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * One perf ring buffer: a control page (struct perf_event_mmap_page) followed by 2^n data bytes.
 *
 * Reading follows libperf's protocol, in batches:
 *
 *	if (psc_ring__read_init(ring) == 0) {
 *		const struct perf_event_header *h;
 *		while ((h = psc_ring__next(ring))) {
 *			... use h (valid until read_done, or until the next psc_ring__next
 *			    after a consume when it was a wrapped record) ...
 *			psc_ring__consume(ring);
 *		}
 *		psc_ring__read_done(ring);
 *	}
 *
 * read_init acquire-loads data_head once; the batch covers what the kernel had written by then.
 * next returns the record at the local tail without moving it (calling it again returns the same
 * record: a peek, which a cross-CPU merge needs). Records that lie contiguously in the buffer are
 * returned in place (zero copy); one that wraps the end of the buffer is copied into a per-ring
 * side buffer. consume moves the local tail past the record and counts it (and its lost count if
 * it is PERF_RECORD_LOST/LOST_SAMPLES). read_done release-stores data_tail so the kernel may reuse
 * the space. Nothing is lost silently: psc_ring__stats() has the kernel's lost counts.
 *
 * Overwrite rings (attr.write_backward, mapped read-only): the kernel writes backward and never
 * waits for the reader. Pause output first (psc_ring__pause), then read_init walks from data_head
 * towards older records and the batch returns the records written since the previous read_done
 * (at most one buffer's worth), newest first, stopping before the oldest record the kernel has
 * partly overwritten. read_done remembers the head; psc_ring__resume restarts output.
 *
 * A bogus record (size smaller than a header, not a multiple of 8, or larger than what the kernel
 * published) stops the batch: next returns NULL with errno EBADMSG, `corrupt` is counted and the
 * rest of the batch is skipped; nothing is ever read outside the buffer.
 *
 * Not thread-safe: one reader per ring.
 */
struct psc_ring;

struct psc_ring_stats {
	uint64_t records; /* records consumed */
	uint64_t bytes; /* their bytes */
	uint64_t wrapped; /* records that wrapped the end and were copied aside */
	uint64_t lost; /* events the kernel dropped: PERF_RECORD_LOST + LOST_SAMPLES */
	uint64_t lost_samples; /* the part of lost reported by PERF_RECORD_LOST_SAMPLES */
	uint64_t lost_records; /* number of LOST and LOST_SAMPLES records seen */
	uint64_t corrupt; /* bogus records met (each stopped a batch) */
};

/*
 * The first member of every struct psc_ring: where the batch stands, for the inline
 * psc_ring__next_fast and psc_ring__consume_fast below. Readers never touch it.
 */
struct psc_ring_pos {
	const unsigned char *data; /* the data area */
	uint64_t mask; /* data_size - 1 */
	size_t data_size;
	uint64_t start; /* local tail: where the next record starts */
	uint64_t end; /* forward: data_head at read_init; overwrite: end of the range */
	const struct perf_event_header *cur; /* returned by next, not yet consumed */
	struct psc_ring_stats stats;
};

struct psc_ring_opts {
	size_t sz;
	bool overwrite; /* backward ring (attr.write_backward): mapped read-only */
	int cpu; /* reported by psc_ring__cpu (-1: a per-thread ring); default -1 */
	pid_t tid; /* reported by psc_ring__tid (-1: a per-CPU ring); default -1 */
};
/* The last field of psc_ring_opts; a newer caller's bytes after it must be 0 (PSC_OPTS). */
#define psc_ring_opts__last_field tid

/*
 * mmaps fd (an opened perf event) with 1 control page + data_pages pages. data_pages must be a
 * power of two (EINVAL otherwise). The ring does not own fd. NULL + errno on failure.
 */
PSC_API struct psc_ring *psc_ring__new_fd(int fd, size_t data_pages,
					  const struct psc_ring_opts *opts);
/*
 * A ring over memory the caller owns (tests, fuzzing, replaying a copy of a buffer). base points
 * at a struct perf_event_mmap_page; the data area starts at its data_offset and is data_size bytes
 * long (when those are 0: the page size and len - page size). The data area must lie within len
 * bytes of base, its size must be a power of two, and base must be 8-byte aligned. Overwrite mode
 * never writes data_tail. NULL + errno=EINVAL otherwise.
 */
PSC_API struct psc_ring *psc_ring__new_mem(void *base, size_t len, bool overwrite);
/* Unmaps (psc_ring__new_fd) and frees. NULL is a no-op. */
PSC_API void psc_ring__delete(struct psc_ring *ring);

/*
 * Starts a batch: acquire-loads data_head. 0 when there is something to read, -EAGAIN when the
 * ring is empty.
 */
PSC_API int psc_ring__read_init(struct psc_ring *ring);
/*
 * The record at the local tail, or NULL at the end of the batch (errno 0) or on a bogus record
 * (errno EBADMSG, counted in corrupt). The record is 8-byte aligned and header.size bytes long.
 */
PSC_API const struct perf_event_header *psc_ring__next(struct psc_ring *ring);
/* Moves the local tail past the record last returned by next and counts it. */
PSC_API void psc_ring__consume(struct psc_ring *ring);
/*
 * psc_ring__next and psc_ring__consume inline, for a reader's loop that must not call into the
 * library per record: they do the common case (a whole record within the buffer, not a loss
 * record) themselves and leave the rest (the end of a batch, a wrapped, bogus or LOST record) to
 * the library's, so that they behave exactly as those do.
 */
PSC_HOT_INLINE const struct perf_event_header *psc_ring__next_fast(struct psc_ring *ring)
{
	const struct psc_ring_pos *p = (const struct psc_ring_pos *)(const void *)ring;
	const struct perf_event_header *hdr;
	uint64_t avail = p->end - p->start, off = p->start & p->mask;
	uint16_t size;

	if (p->cur)
		return p->cur;
	if (avail >= sizeof(*hdr) && !(p->start & 7)) {
		hdr = (const struct perf_event_header *)(const void *)(p->data + off);
		size = hdr->size;
		if (size >= sizeof(*hdr) && size <= avail && !(size & 7) &&
		    off + size <= p->data_size) {
			((struct psc_ring_pos *)(void *)ring)->cur = hdr;
			return hdr;
		}
	}
	return psc_ring__next(ring);
}

PSC_HOT_INLINE void psc_ring__consume_fast(struct psc_ring *ring)
{
	struct psc_ring_pos *p = (struct psc_ring_pos *)(void *)ring;
	const struct perf_event_header *hdr = p->cur;

	if (!hdr || hdr->type == PERF_RECORD_LOST || hdr->type == PERF_RECORD_LOST_SAMPLES) {
		psc_ring__consume(ring);
		return;
	}
	p->stats.records++;
	p->stats.bytes += hdr->size;
	p->start += hdr->size;
	p->cur = NULL;
}
/* Bytes of the batch (since read_init) not consumed yet: what next can still return. */
static inline uint64_t psc_ring__batch_left(const struct psc_ring *ring)
{
	const struct psc_ring_pos *p = (const struct psc_ring_pos *)(const void *)ring;

	return p->end - p->start;
}

/* Ends the batch: release-stores data_tail (forward rings) so the kernel can reuse the space. */
PSC_API void psc_ring__read_done(struct psc_ring *ring);
/*
 * Mid-batch, hands the records consumed so far back to the kernel once they make up an eighth of
 * the buffer or more (forward rings; a no-op otherwise). A reader that spends time on each record
 * calls it between records, so a long batch does not hold the whole buffer until read_done and
 * the kernel keeps room for new events. Records consumed before the call are invalid after it.
 */
PSC_API void psc_ring__release(struct psc_ring *ring);

/* Stops / restarts the kernel writing into the ring (PERF_EVENT_IOC_PAUSE_OUTPUT). */
PSC_API int psc_ring__pause(struct psc_ring *ring);
PSC_API int psc_ring__resume(struct psc_ring *ring);

PSC_API void psc_ring__stats(const struct psc_ring *ring, struct psc_ring_stats *out);
/* The fd the ring is mapped on (for poll/epoll), -1 for memory rings. */
PSC_API int psc_ring__fd(const struct psc_ring *ring);
PSC_API int psc_ring__cpu(const struct psc_ring *ring);
PSC_API pid_t psc_ring__tid(const struct psc_ring *ring);
PSC_API size_t psc_ring__data_size(const struct psc_ring *ring);
PSC_API bool psc_ring__is_overwrite(const struct psc_ring *ring);
/* Bytes published by the kernel and not yet released with read_done (forward rings). */
PSC_API uint64_t psc_ring__pending(const struct psc_ring *ring);
/*
 * The kernel's data_head (bytes written since the mapping, acquire) and the data_tail last
 * released to it: head - tail never exceeds the data size, and the kernel loses a record only
 * when the record does not fit in what is left.
 */
PSC_API uint64_t psc_ring__data_head(const struct psc_ring *ring);
PSC_API uint64_t psc_ring__data_tail(const struct psc_ring *ring);

/* ---- rings of an evlist ---- */

struct psc_evlist;
struct psc_evsel;

struct psc_mmap_opts {
	size_t sz;
	/* Data pages per ring, a power of two; 0: 128 (512 KiB with 4 KiB pages, perf's default).
	 */
	size_t pages;
	/* Backward rings for flight recording; every evsel must have attr.write_backward set. */
	bool overwrite;
};
/* The last field of psc_mmap_opts; a newer caller's bytes after it must be 0 (PSC_OPTS). */
#define psc_mmap_opts__last_field overwrite

/*
 * One ring per CPU of the evlist's cpu map (or, when that map is the "any CPU" map, one per
 * thread). The first open fd on each CPU (thread) is mmapped; every other fd there is redirected
 * into it with PERF_EVENT_IOC_SET_OUTPUT. Call after psc_evlist__open. When more than one evsel is
 * open, each must carry PERF_SAMPLE_IDENTIFIER (see psc_evlist__config_sampling) so records can be
 * told apart: -EINVAL otherwise. -EINVAL when pages is not a power of two, -EBUSY when already
 * mmapped. Rolls back on failure.
 */
PSC_API int psc_evlist__mmap(struct psc_evlist *evlist, const struct psc_mmap_opts *opts);
/* Unmaps and frees the rings (psc_evlist__delete does it too). */
PSC_API void psc_evlist__munmap(struct psc_evlist *evlist);
PSC_API int psc_evlist__nr_rings(const struct psc_evlist *evlist);
PSC_API struct psc_ring *psc_evlist__ring(const struct psc_evlist *evlist, int idx);

/*
 * Prepares every evsel of the evlist for sampling into shared rings, before psc_evlist__open:
 * adds PERF_SAMPLE_IDENTIFIER and sets sample_id_all (so every record, not only samples, says
 * which evsel it belongs to). -EBUSY when an evsel is already open.
 */
PSC_API int psc_evlist__config_sampling(struct psc_evlist *evlist);

/*
 * The evsel a record from one of this evlist's rings belongs to: the only open evsel, or the one
 * whose id is in the record's PERF_SAMPLE_IDENTIFIER (first u64 of a sample, last u64 of other
 * records when sample_id_all is set). NULL when it cannot be told.
 */
PSC_API struct psc_evsel *psc_evlist__evsel_for_record(const struct psc_evlist *evlist,
						       const struct perf_event_header *hdr);

/*
 * Lost accounting. Per evsel: events lost by that evsel, from PERF_RECORD_LOST records (their id)
 * and LOST_SAMPLES records (their sample id) consumed from the evlist's rings. Per evlist: the sum
 * over its rings (per CPU: psc_ring__stats of each ring). `unattributed` gets what no evsel could
 * be found for; it is part of the total too.
 */
PSC_API uint64_t psc_evsel__lost(const struct psc_evsel *evsel);
PSC_API uint64_t psc_evlist__lost(const struct psc_evlist *evlist, uint64_t *unattributed);

#ifdef __cplusplus
}
#endif
#endif
