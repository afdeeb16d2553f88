/* Example: measure a function with psc_measure(), then a psc_meter started and stopped around each
 * call. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

/* The code under measurement: touches `pages` fresh pages, one page fault each. */
struct work {
	int pages;
};

static void touch_pages(void *arg)
{
	const struct work *w = arg;
	long page = sysconf(_SC_PAGESIZE);
	volatile char *p = mmap(NULL, (size_t)(w->pages * page), PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (int i = 0; i < w->pages; i++)
		p[i * page] = 1;
	munmap((void *)p, (size_t)(w->pages * page));
}

static void print_values(const char *title, const struct psc_meter_value *v, int n)
{
	printf("%s\n", title);
	for (int i = 0; i < n; i++) {
		char why[512];

		if (!v[i].supported) {
			/* Kept in the list so positions stay stable; open_errno says why. */
			psc_strerror_open(v[i].open_errno, v[i].name, why, sizeof(why));
			printf("  %12s  %-18s %s\n", "-", v[i].name, why);
			continue;
		}
		printf("  %12.0f  %s\n", v[i].scaled, v[i].name);
	}
}

int main(void)
{
	/* instructions is counted where a hardware PMU exists and reported unsupported elsewhere.
	 */
	const char *events = "page-faults,task-clock,instructions";
	struct psc_parse_error err = { .pos = -1 };
	struct psc_meter_value v[3];
	struct work w = { .pages = 256 };
	struct psc_meter *meter;
	int n;

	/* 1. One call: open the events on this thread, run fn(arg) between enable and disable,
	 * close. */
	n = psc_measure(touch_pages, &w, events, v, 3, &err);
	if (n < 0) {
		fprintf(stderr, "measure_function: psc_measure: %s\n",
			err.msg[0] ? err.msg : strerror(-n));
		return 1;
	}
	print_values("psc_measure(touch_pages, 256 pages):", v, n);

	/*
	 * 2. A meter: opened once, then started, stopped and read around each call. Cheaper than
	 * psc_measure when measuring many calls: the counters are opened only once.
	 */
	meter = psc_meter__new(events, NULL, &err);
	if (!meter) {
		fprintf(stderr, "measure_function: psc_meter__new: %s\n",
			err.msg[0] ? err.msg : strerror(errno));
		return 1;
	}
	printf("meter reads with %s\n", psc_meter__uses_rdpmc(meter) ? "rdpmc" : "read(2)");
	for (int pages = 64; pages <= 512; pages *= 2) {
		char title[64];

		w.pages = pages;
		/* start resets the counts, so each reading covers exactly one call */
		int ret = psc_meter__start(meter);

		if (!ret) {
			touch_pages(&w);
			ret = psc_meter__stop(meter);
		}
		if (!ret)
			ret = n = psc_meter__read(meter, v, 3);
		if (ret < 0) {
			fprintf(stderr, "measure_function: meter failed: %s\n", strerror(-ret));
			psc_meter__delete(meter);
			return 1;
		}
		snprintf(title, sizeof(title), "meter, touch_pages(%d pages):", pages);
		print_values(title, v, n);
	}
	psc_meter__delete(meter);
	return 0;
}
