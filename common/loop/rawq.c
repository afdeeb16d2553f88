/* rawq: a bounded FIFO of raw perf records, kept in 1 MiB chunks, oldest first. */
#include "rawq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* a record is at most 64 KiB (its size is 16 bits): many fit in a chunk */
#define RAWQ_CHUNK (1u << 20)

struct rawq_ent {
	int32_t cpu;
	uint16_t tag;
	uint16_t size; /* of the record that follows, padded to 8 bytes in the chunk */
};

struct rawq_chunk {
	struct rawq_chunk *next;
	size_t rd, wr;
	char data[RAWQ_CHUNK];
};

struct rawq {
	struct rawq_chunk *head, *tail, *spare; /* one spare: a queue at its edge does not churn */
	uint64_t count, bytes, peak, peak_count, max;
};

struct rawq *rawq__new(uint64_t max)
{
	struct rawq *q = calloc(1, sizeof(*q));

	if (q)
		q->max = max;
	return q;
}

void rawq__delete(struct rawq *q)
{
	struct rawq_chunk *c;

	if (!q)
		return;
	while ((c = q->head)) {
		q->head = c->next;
		free(c);
	}
	free(q->spare);
	free(q);
}

static size_t ent_len(size_t size)
{
	return sizeof(struct rawq_ent) + ((size + 7) & ~(size_t)7);
}

bool rawq__push(struct rawq *q, uint16_t tag, int cpu, const struct perf_event_header *hdr)
{
	size_t len = ent_len(hdr->size);
	struct rawq_chunk *c = q->tail;
	struct rawq_ent *e;

	if (q->bytes + len > q->max)
		return false;
	if (!c || RAWQ_CHUNK - c->wr < len) {
		c = q->spare;
		if (c)
			q->spare = NULL;
		else if (!(c = malloc(sizeof(*c))))
			return false;
		c->next = NULL;
		c->rd = c->wr = 0;
		if (q->tail)
			q->tail->next = c;
		else
			q->head = c;
		q->tail = c;
	}
	e = (struct rawq_ent *)(c->data + c->wr);
	e->tag = tag;
	e->cpu = cpu;
	e->size = hdr->size;
	memcpy(e + 1, hdr, hdr->size);
	c->wr += len;
	q->count++;
	q->bytes += len;
	if (q->bytes > q->peak) {
		q->peak = q->bytes;
		q->peak_count = q->count;
	}
	return true;
}

const struct perf_event_header *rawq__peek(struct rawq *q, uint16_t *tag, int *cpu)
{
	struct rawq_chunk *c = q->head;
	struct rawq_ent *e;

	if (!c || c->rd == c->wr)
		return NULL;
	e = (struct rawq_ent *)(c->data + c->rd);
	*tag = e->tag;
	*cpu = e->cpu;
	return (const struct perf_event_header *)(e + 1);
}

void rawq__pop(struct rawq *q)
{
	struct rawq_chunk *c = q->head;
	struct rawq_ent *e;
	size_t len;

	if (!c || c->rd == c->wr)
		return;
	e = (struct rawq_ent *)(c->data + c->rd);
	len = ent_len(e->size);
	c->rd += len;
	q->count--;
	q->bytes -= len;
	if (c->rd < c->wr)
		return;
	/* the chunk is done: the next one, or an empty queue reusing it */
	if (c->next) {
		q->head = c->next;
		if (q->spare)
			free(c);
		else
			q->spare = c;
	} else {
		c->rd = c->wr = 0;
	}
}

uint64_t rawq__count(const struct rawq *q)
{
	return q->count;
}

uint64_t rawq__bytes(const struct rawq *q)
{
	return q->bytes;
}

uint64_t rawq__peak(const struct rawq *q)
{
	return q->peak;
}

uint64_t rawq__peak_count(const struct rawq *q)
{
	return q->peak_count;
}

uint64_t rawq__max(const struct rawq *q)
{
	return q->max;
}
