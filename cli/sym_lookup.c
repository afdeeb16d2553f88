/* perfscope --symbols FILE: perf-prof's lookup of a binary's symbols, for uprobes by hand. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/perfscope.h>

#include "profiler.h"

struct sym_hit {
	uint64_t addr; /* wanted */
	const char *name; /* the function holding it, best so far */
	uint64_t start;
	char buf[256];
};

static int find_addr(const char *name, uint64_t addr, uint64_t size, void *ctx)
{
	struct sym_hit *h = ctx;

	if (h->addr >= addr && h->addr < addr + (size ? size : 1) &&
	    (!h->name || addr > h->start)) {
		snprintf(h->buf, sizeof(h->buf), "%s", name);
		h->name = h->buf;
		h->start = addr;
	}
	return 0;
}

/*
 * One word: a function's name gives its file offset (what a uprobe takes, as perf-prof prints
 * it), an address (0x...) the function holding it, as NAME+0xOFF; "??" when neither is there.
 */
static int lookup(const char *path, const char *word)
{
	char *end;
	uint64_t addr;

	errno = 0;
	addr = strtoull(word, &end, 0);
	if (isdigit((unsigned char)word[0]) && !*end && !errno) {
		struct sym_hit h = { .addr = addr };
		int err = psc_probe__for_each_func(path, find_addr, &h);

		if (err)
			return err;
		if (h.name)
			printf("%s+%#llx\n", h.name, (unsigned long long)(addr - h.start));
		else
			printf("??\n");
		return 0;
	} else {
		struct psc_event_list *list = NULL;
		struct psc_parse_error perr = { 0 };
		char *spec;
		int err;

		if (asprintf(&spec, "uprobe:%s@\"%s\"", word, path) < 0)
			return -ENOMEM;
		err = psc_parse_events(spec, NULL, &list, &perr);
		free(spec);
		if (err == -ENOENT || err == -EINVAL) {
			printf("??\n");
			fprintf(stderr, "perfscope --symbols: %s\n", perr.msg);
			return 0;
		}
		if (err)
			return err;
		printf("%#llx\n", (unsigned long long)list->specs[0].probe->file_offset);
		psc_event_list__delete(list);
		return 0;
	}
}

int sym_lookup_main(int argc, char **argv)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	int err, ret = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: perfscope --symbols FILE [NAME|ADDR...]   (else one a line "
				"on standard input)\n");
		return 2;
	}
	err = psc_probe__find_binary(argv[2], path, sizeof(path));
	if (err) {
		fprintf(stderr, "perfscope --symbols: no binary '%s': %s\n", argv[2],
			strerror(-err));
		return 2;
	}
	for (int i = 3; i < argc && !ret; i++)
		ret = lookup(path, argv[i]);
	while (argc == 3 && !ret && getline(&line, &cap, stdin) > 0) {
		line[strcspn(line, " \t\r\n")] = 0;
		if (*line)
			ret = lookup(path, line);
	}
	free(line);
	if (ret) {
		fprintf(stderr, "perfscope --symbols: %s: %s\n", path, strerror(-ret));
		return 1;
	}
	return fflush(stdout) ? 1 : 0;
}
