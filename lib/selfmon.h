/* Self-monitoring reads of a counter from its perf_event_mmap_page (rdpmc + the time fields). */
#ifndef PERFSCOPE_SELFMON_H
#define PERFSCOPE_SELFMON_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include <perfscope/evsel.h>

/*
 * The hardware accessors are parameters so that unit tests can drive this reader over a
 * synthetic page on a machine without a PMU; the meter passes the real rdpmc and rdtsc, and
 * being static inline with constant arguments, they are inlined there.
 */
typedef uint64_t (*psc_read_pmc_fn)(uint32_t counter);
typedef uint64_t (*psc_read_tsc_fn)(void);

/*
 * The protocol documented in <linux/perf_event.h>: read the fields under the page's sequence
 * lock, retrying while the kernel updates them; the hardware counter holds pmc_width bits and is
 * sign-extended before it is added to the kernel's offset. time_enabled and time_running are as
 * of the last time the kernel updated the page (the counter's last schedule-in), so the time
 * since then is computed from the TSC with time_offset/time_mult/time_shift (and time_cycles/
 * time_mask when cap_user_time_short) and added to both: a counter on the PMU is running now,
 * and adding the same delta to each keeps the multiplexing ratio they describe.
 *
 * Returns 0 with *c filled, or -EAGAIN when this page cannot be read from user space now: the
 * kernel does not allow rdpmc, the counter is not on the PMU (disabled, or multiplexed out), or
 * the times cannot be brought up to date (no cap_user_time). The caller then uses read(2).
 */
static inline int psc_selfmon_read(const struct perf_event_mmap_page *pc, struct psc_counts *c,
				   psc_read_pmc_fn read_pmc, psc_read_tsc_fn read_tsc)
{
	uint64_t count, ena, run, cyc, pmc, time_offset, time_cycles, time_mask;
	uint32_t seq, idx, time_mult, time_shift, width;
	bool time_short;

	do {
		seq = __atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE);
		if (!pc->cap_user_rdpmc || !pc->cap_user_time)
			return -EAGAIN;
		idx = pc->index;
		width = pc->pmc_width;
		if (!idx || width == 0 || width > 64)
			return -EAGAIN;
		ena = pc->time_enabled;
		run = pc->time_running;
		count = pc->offset;
		time_offset = pc->time_offset;
		time_mult = pc->time_mult;
		time_shift = pc->time_shift;
		time_short = pc->cap_user_time_short;
		time_cycles = time_short ? pc->time_cycles : 0;
		time_mask = time_short ? pc->time_mask : ~(uint64_t)0;
		cyc = read_tsc();
		pmc = read_pmc(idx - 1);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pc->lock, __ATOMIC_ACQUIRE) != seq);
	if (time_shift >= 64)
		return -EAGAIN;

	/* Only the low `width` bits are the counter's: sign-extend them. */
	count += (uint64_t)((int64_t)(pmc << (64 - width)) >> (64 - width));

	/* cap_user_time_short: the TSC value the kernel converts holds only time_mask's bits. */
	cyc = time_cycles + ((cyc - time_cycles) & time_mask);
	/* cyc * time_mult >> time_shift without overflowing 64 bits, as the uapi header does it. */
	uint64_t quot = cyc >> time_shift, rem = cyc & (((uint64_t)1 << time_shift) - 1);
	uint64_t delta = time_offset + quot * time_mult + ((rem * time_mult) >> time_shift);

	c->val = count;
	c->ena = ena + delta;
	c->run = run + delta;
	return 0;
}

#endif
