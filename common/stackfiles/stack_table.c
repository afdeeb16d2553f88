/* stack_table: the distinct stacks sampled, by their addresses, counted until they are written. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "stack_table.h"

int stack_table__init(struct stack_table *t, bool per_thread)
{
	t->nr = 0;
	t->per_thread = per_thread;
	return keymap__init(&t->map, sizeof(void *), 1024) ? -ENOMEM : 0;
}

void stack_table__clear(struct stack_table *t)
{
	struct keymap_iter it;
	struct stack_ent **head;
	uint64_t key;

	if (!t->map.slots)
		return; /* never set up */
	keymap__for_each(&t->map, &it, key, head)
	{
		struct stack_ent *e = *head, *n;

		for (; e; e = n) {
			n = e->next;
			free(e);
		}
	}
	keymap__clear(&t->map);
	t->nr = 0;
}

void stack_table__exit(struct stack_table *t)
{
	stack_table__clear(t);
	keymap__exit(&t->map);
}

static uint64_t stack_key(const struct stack_table *t, uint32_t pid, uint32_t tid, const char *comm,
			  const uint64_t *ips, uint32_t nr)
{
	uint64_t h = hash__mix(hash__str(comm, 16), pid);

	if (t->per_thread)
		h = hash__mix(h, tid);
	for (uint32_t i = 0; i < nr; i++)
		h = hash__mix(h, ips[i]);
	return h;
}

static bool same_stack(const struct stack_ent *e, const struct stack_table *t, uint32_t pid,
		       uint32_t tid, const char *comm, const uint64_t *ips, uint32_t nr)
{
	return e->nr == nr && e->pid == pid && (!t->per_thread || e->tid == tid) &&
	       !strncmp(e->comm, comm, sizeof(e->comm)) && !memcmp(e->ips, ips, nr * sizeof(*ips));
}

struct stack_ent *stack_table__count(struct stack_table *t, uint32_t pid, uint32_t tid,
				     const char *comm, const uint64_t *ips, uint32_t nr, uint64_t n,
				     uint64_t period)
{
	uint64_t key = stack_key(t, pid, tid, comm, ips, nr);
	struct stack_ent **head, *e;

	head = keymap__find(&t->map, key);
	for (e = head ? *head : NULL; e; e = e->next)
		if (same_stack(e, t, pid, tid, comm, ips, nr))
			break;
	if (!e) {
		e = malloc(sizeof(*e) + nr * sizeof(*ips));
		if (!e)
			return NULL;
		head = keymap__insert(&t->map, key, NULL);
		if (!head) {
			free(e);
			return NULL;
		}
		*e = (struct stack_ent){ .next = *head, .pid = pid, .tid = tid, .nr = nr };
		strncpy(e->comm, comm, sizeof(e->comm) - 1);
		memcpy(e->ips, ips, nr * sizeof(*ips));
		*head = e;
		t->nr++;
	}
	e->count += n;
	e->period += period;
	return e;
}

static int by_count(const void *a, const void *b)
{
	const struct stack_ent *x = *(const struct stack_ent *const *)a;
	const struct stack_ent *y = *(const struct stack_ent *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

struct stack_ent **stack_table__sorted(const struct stack_table *t, size_t *nr)
{
	struct stack_ent **arr = malloc((t->nr ? t->nr : 1) * sizeof(*arr));
	struct keymap_iter it;
	struct stack_ent **head;
	uint64_t key;
	size_t n = 0;

	*nr = 0;
	if (!arr)
		return NULL;
	keymap__for_each(&t->map, &it, key, head)
	{
		for (struct stack_ent *e = *head; e && n < t->nr; e = e->next)
			arr[n++] = e;
	}
	qsort(arr, n, sizeof(*arr), by_count);
	*nr = n;
	return arr;
}
