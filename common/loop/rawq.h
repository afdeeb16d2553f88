/* rawq: a bounded FIFO of raw perf records copied out of the rings, to be formatted later. */
#ifndef PERFSCOPE_COMMON_RAWQ_H
#define PERFSCOPE_COMMON_RAWQ_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/perf_event.h>

/*
 * A streaming profiler whose reader is behind keeps the events it cannot format yet here, as the
 * kernel wrote them (a getppid tracepoint event takes about 3.5 times less than its JSON line):
 * the rings are still drained, and the text is made when the reader takes it. Each record is
 * kept with a 16-bit tag (its event's index) and its CPU, in 8 bytes beside it. The bound counts
 * the bytes of the copies and of those 8.
 * Not thread-safe.
 */
struct rawq;

/* max: the most bytes held; NULL + errno. */
struct rawq *rawq__new(uint64_t max);
/* Frees what is held. NULL is a no-op. */
void rawq__delete(struct rawq *q);
/* Copies the record hdr (hdr->size bytes) to the end; false at the bound or out of memory. */
bool rawq__push(struct rawq *q, uint16_t tag, int cpu, const struct perf_event_header *hdr);
/* The oldest record (valid until rawq__pop), its tag and CPU; NULL when empty. */
const struct perf_event_header *rawq__peek(struct rawq *q, uint16_t *tag, int *cpu);
void rawq__pop(struct rawq *q);
uint64_t rawq__count(const struct rawq *q);
/* Bytes held now, the most held at once, and the bound. */
uint64_t rawq__bytes(const struct rawq *q);
uint64_t rawq__peak(const struct rawq *q);
/* the records held when it held the most bytes */
uint64_t rawq__peak_count(const struct rawq *q);
uint64_t rawq__max(const struct rawq *q);

#endif
