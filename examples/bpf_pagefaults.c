/* Example: our own BPF program on a perf event: page faults sampled at 50 Hz, counted by pid. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <perfscope/perfscope.h>

/* Built by meson from bpf_pagefaults.bpf.c: clang -target bpf, then bpftool gen skeleton. */
#include "bpf_pagefaults.skel.h"

#define TOP 10

/* The map's value, as bpf_pagefaults.bpf.c writes it. */
struct pid_samples {
	unsigned long long samples;
	char comm[16];
};

struct row {
	unsigned int pid;
	struct pid_samples v;
};

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->v.samples < y->v.samples ? 1 : x->v.samples > y->v.samples ? -1 : 0;
}

/* Every pid in the map with its samples, the busiest first. */
static int print_top(struct bpf_pagefaults_bpf *skel)
{
	struct bpf_map *map = skel->maps.samples;
	struct row *rows = NULL;
	unsigned int key, next, *prev = NULL;
	int nr = 0, alloc = 0;

	while (!bpf_map__get_next_key(map, prev, &next, sizeof(next))) {
		struct pid_samples v;

		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(map, &key, sizeof(key), &v, sizeof(v), 0))
			continue; /* removed meanwhile */
		if (nr == alloc) {
			struct row *r;

			alloc = alloc ? 2 * alloc : 64;
			r = realloc(rows, sizeof(*rows) * (size_t)alloc);

			if (!r) {
				free(rows);
				return -ENOMEM;
			}
			rows = r;
		}
		rows[nr++] = (struct row){ key, v };
	}
	qsort(rows, (size_t)nr, sizeof(*rows), by_count);
	printf("%8s %8s  %s\n", "PID", "SAMPLES", "COMM");
	for (int i = 0; i < nr && i < TOP; i++)
		printf("%8u %8llu  %.16s\n", rows[i].pid, rows[i].v.samples, rows[i].v.comm);
	if (nr > TOP)
		printf("(%d more processes)\n", nr - TOP);
	free(rows);
	return 0;
}

int main(int argc, char **argv)
{
	/* page faults of every task on every CPU, sampled 50 times a second (coolbpf's testPerf) */
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_PAGE_FAULTS,
		.freq = 1,
		.sample_freq = 50,
		.disabled = 1,
	};
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 1;
	struct psc_cpumap *cpus = psc_cpumap__new_online();
	struct psc_threadmap *threads = psc_threadmap__new_any();
	struct psc_evsel *evsel = psc_evsel__new(&attr, "page-faults");
	struct bpf_pagefaults_bpf *skel = NULL;
	struct psc_counts total;
	char why[512];
	int err, ret = 1;

	if (argc > 2 || !seconds) {
		fprintf(stderr, "usage: %s [SECONDS]   (default 1)\n", argv[0]);
		return 2;
	}
	if (!cpus || !threads || !evsel) {
		perror("bpf_pagefaults");
		goto out;
	}
	err = psc_evsel__open(evsel, cpus, threads, NULL);
	if (err) {
		fprintf(stderr, "bpf_pagefaults: %s\n",
			psc_strerror_open(err, "page-faults", why, sizeof(why)));
		goto out;
	}
	skel = bpf_pagefaults_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "bpf_pagefaults: cannot load the BPF program: %s\n",
			psc_strerror_bpf(-errno, NULL, why, sizeof(why)));
		goto out;
	}
	/* one program on the event's fd of each CPU; it goes when the event is closed */
	err = psc_evsel__attach_bpf(evsel, bpf_program__fd(skel->progs.count_fault), NULL);
	if (err) {
		fprintf(stderr, "bpf_pagefaults: %s\n",
			psc_strerror_bpf(err, "page-faults", why, sizeof(why)));
		goto out;
	}
	psc_evsel__enable(evsel);
	sleep(seconds);
	psc_evsel__disable(evsel);
	for (int c = 0; c < psc_cpumap__nr(cpus); c++)
		psc_evsel__read(evsel, c, 0, &total);
	psc_evsel__counts(evsel, -1, -1, &total);
	printf("page faults on %d CPUs for %u s: %llu, sampled at 50 Hz per CPU into a BPF map",
	       psc_cpumap__nr(cpus), seconds, (unsigned long long)total.val);
	if (skel->bss->missed)
		printf(" (%llu samples missed: map full)", (unsigned long long)skel->bss->missed);
	printf("\n");
	ret = print_top(skel) ? 1 : 0;
out:
	psc_evsel__delete(evsel); /* detaches the program */
	bpf_pagefaults_bpf__destroy(skel);
	psc_cpumap__put(cpus);
	psc_threadmap__put(threads);
	return ret;
}
