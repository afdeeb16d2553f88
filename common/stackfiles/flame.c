/* Folded stacks counted in memory ("comm;outer;...;leaf COUNT"), written for flame graph tools. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "hash.h"
#include "keymap.h"

struct flame_stack {
	char *text;
	size_t len;
	uint64_t count;
};

struct flame {
	struct keymap map; /* hash of the text (probed on collision) -> flame_stack */
	uint64_t samples;
};

struct flame *flame__new(void)
{
	struct flame *f = calloc(1, sizeof(*f));

	if (f && keymap__init(&f->map, sizeof(struct flame_stack), 256)) {
		free(f);
		return NULL;
	}
	return f;
}

void flame__delete(struct flame *f)
{
	struct keymap_iter it;
	struct flame_stack *st;
	uint64_t key;

	if (!f)
		return;
	keymap__for_each(&f->map, &it, key, st)
		free(st->text);
	keymap__exit(&f->map);
	free(f);
}

int flame__add(struct flame *f, const char *folded, size_t len, uint64_t n)
{
	uint64_t key = hash__fnv(HASH_FNV_BASIS, folded, len);
	struct flame_stack *st;
	bool created;

	for (;;) {
		st = keymap__insert(&f->map, key, &created);
		if (!st)
			return -ENOMEM;
		if (created) {
			st->text = malloc(len + 1);
			if (!st->text) {
				keymap__remove(&f->map, key);
				return -ENOMEM;
			}
			memcpy(st->text, folded, len);
			st->text[len] = '\0';
			st->len = len;
			break;
		}
		if (st->len == len && !memcmp(st->text, folded, len))
			break;
		key = key * 0x9e3779b97f4a7c15ull + 1; /* another text with this hash: probe on */
	}
	st->count += n;
	f->samples += n;
	return 0;
}

size_t flame__nr_stacks(const struct flame *f)
{
	return keymap__nr(&f->map);
}

uint64_t flame__nr_samples(const struct flame *f)
{
	return f->samples;
}

static int by_text(const void *a, const void *b)
{
	const struct flame_stack *x = *(const struct flame_stack *const *)a;
	const struct flame_stack *y = *(const struct flame_stack *const *)b;

	return strcmp(x->text, y->text);
}

int flame__write_file(const struct flame *f, FILE *out)
{
	size_t n = keymap__nr(&f->map), i = 0;
	struct flame_stack **all = calloc(n ? n : 1, sizeof(*all)), *st;
	struct keymap_iter it;
	uint64_t key;
	int err = 0;

	if (!all) {
		fclose(out);
		return -ENOMEM;
	}
	keymap__for_each(&f->map, &it, key, st)
		all[i++] = st;
	qsort(all, n, sizeof(*all), by_text);
	for (i = 0; i < n; i++)
		fprintf(out, "%s %llu\n", all[i]->text, (unsigned long long)all[i]->count);
	if (ferror(out))
		err = -EIO;
	if (fclose(out) && !err)
		err = -errno;
	free(all);
	return err;
}

int flame__write(const struct flame *f, const char *path)
{
	FILE *out = fopen(path, "we");

	return out ? flame__write_file(f, out) : -errno;
}

int flame__for_each(const struct flame *f,
		    int (*fn)(void *ctx, const char *text, size_t len, uint64_t count), void *ctx)
{
	struct keymap_iter it;
	struct flame_stack *st;
	uint64_t key;
	int ret;

	keymap__for_each(&f->map, &it, key, st) {
		ret = fn(ctx, st->text, st->len, st->count);
		if (ret)
			return ret;
	}
	return 0;
}
