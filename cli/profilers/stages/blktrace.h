/* blktrace's parts: its priv, events and stages, shared by its setup, device, samples. */
#ifndef PERFSCOPE_CLI_BLKTRACE_H
#define PERFSCOPE_CLI_BLKTRACE_H

#include <stdint.h>

#include "stages.h"

/*
 * A request of the device goes getrq -> insert -> issue -> complete (insert is skipped when
 * blk-mq issues it directly); one pair engine keyed by the request's first sector follows it:
 * each stage ends the pending earlier stage (the row "from -> to" gets the time between them)
 * and starts its own, and complete also adds the whole life of the request (from its first seen
 * stage) to the row "total". Sector numbers are unique among a device's requests in flight;
 * the device is fixed by a filter on dev (its partitions too for getrq, whose bio still names
 * the partition).
 */

#define BT_NR_STAGES 4
#define BT_ROW_TOTAL (BT_NR_STAGES * BT_NR_STAGES)

struct bt_ev {
	struct stage_ev se; /* first: stages.h */
	int stage; /* -1: not one of blktrace's */
	struct expr *key, *dev;
};

struct bt {
	struct stage_core c; /* first: stages.h; -p/-t only bound the run (PROF_WATCH_TASKS) */
	const char *device;
	/* state */
	char disk[64];
	unsigned int major, minor;
	uint64_t devs[64]; /* the kernel's dev_t encoding (major << 20 | minor): disk, partitions */
	int nr_devs;
	uint64_t other_dev;
};

struct bt_data {
	struct pair_copy *copy; /* first: stage_release_copy */
	int stage;
	uint64_t first; /* time of the first stage seen */
};

struct bt_ctx {
	struct prof *p;
	int stage;
	uint64_t first;
};

/* blktrace.c: a row's name, "from -> to" or "total". */
void bt_row_name(uint64_t id, char *buf, size_t len);

/* bt_device.c: -d (a name, /dev/NAME, a partition: its disk, or MAJ:MIN) to the disk's name,
 * MAJ:MIN and the dev values of it and its partitions, through sysfs; a usage error else. */
int bt_resolve_device(struct prof *p, struct bt *bt);

/* bt_sample.c: a sample to its request's stages, a stage's time to its rows and outliers. */
extern const struct pair_impl bt_impl;
int bt_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s);
void bt_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);

#endif
