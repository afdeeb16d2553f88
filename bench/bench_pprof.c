/* pprof writer cost: a folded file's stacks as pprof samples (ns per sample added, write time,
 * size). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flame.h"
#include "pprof.h"

#define MAX_FRAMES 512

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the machine is shared */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct ctx {
	struct pprof *p;
	uint64_t samples;
	int err;
};

/* Each frame a function of /bench/app at an address made from its name; the root a comm label. */
static int add(void *arg, const char *text, size_t len, uint64_t count)
{
	struct ctx *c = arg;
	struct pprof_frame fr[MAX_FRAMES];
	char *copy = strndup(text, len), *names[MAX_FRAMES], *save = NULL, *tok;
	struct pprof_label label = { "comm", NULL };
	int64_t v[2] = { (int64_t)count, (int64_t)count * 10101010 };
	size_t n = 0;

	if (!copy)
		return -1;
	for (tok = strtok_r(copy, ";", &save); tok && n < MAX_FRAMES;
	     tok = strtok_r(NULL, ";", &save))
		names[n++] = tok;
	if (n < 2) {
		free(copy);
		return 0;
	}
	label.value = names[0];
	/* innermost first; the root (comm) is a label, not a frame */
	for (size_t i = 1; i < n; i++) {
		const char *name = names[n - i];
		uint64_t h = 0xcbf29ce484222325ull;

		for (const char *s = name; *s; s++)
			h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
		fr[i - 1] =
			(struct pprof_frame){ .addr = 0x400000 + (h & 0xfffff),
					      .function = name,
					      .module = "/bench/app",
					      .map_start = 0x400000,
					      .map_limit = 0x500000,
					      .build_id =
						      "0123456789abcdef0123456789abcdef01234567" };
	}
	c->err = pprof__add_sample(c->p, fr, n - 1, v, &label, 1);
	c->samples++;
	free(copy);
	return c->err;
}

int main(int argc, char **argv)
{
	static const struct pprof_value_type types[] = { { "samples", "count" },
							 { "cpu", "nanoseconds" } };
	struct flame *f = flame__new();
	struct ctx c = { 0 };
	FILE *in, *out;
	double t0, t1, t2;
	long size;

	if (argc != 3) {
		fprintf(stderr, "usage: bench_pprof FILE.folded OUT.pb.gz\n");
		return 2;
	}
	in = fopen(argv[1], "r");
	if (!in || !f || flame__read_file(f, in, NULL)) {
		perror(argv[1]);
		return 1;
	}
	fclose(in);
	c.p = pprof__new(types, 2, &types[1], 10101010);
	t0 = now();
	if (flame__for_each(f, add, &c) || !c.p) {
		fprintf(stderr, "adding failed\n");
		return 1;
	}
	t1 = now();
	out = fopen(argv[2], "w");
	if (!out || pprof__write(c.p, out) || fclose(out)) {
		perror(argv[2]);
		return 1;
	}
	t2 = now();
	in = fopen(argv[2], "r");
	fseek(in, 0, SEEK_END);
	size = ftell(in);
	fclose(in);
	printf("%llu stacks: add %.0f ns/stack of CPU (%zu locations, %zu functions), write+gzip %.3f s CPU, "
	       "%ld bytes\n",
	       (unsigned long long)c.samples, (t1 - t0) * 1e9 / (double)c.samples,
	       pprof__nr_locations(c.p), pprof__nr_functions(c.p), t2 - t1, size);
	pprof__delete(c.p);
	flame__delete(f);
	return 0;
}
