/* DWARF unwinding of sampled user stacks with libdw: a sample's frames walked, each binary
 * reported and its CFI checked as the walk reaches it, how each unwind ended counted. */
#include "unwind.h"
#include "clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <elfutils/libdwfl.h>

#include "unwind_internal.h"

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind *uw = arg;
	Dwarf_Addr pc, lookup;
	bool activation;

	/*
	 * Without isactivation first: asking for it unwinds the frame below at once, before its
	 * binary is reported and its CFI checked here.
	 */
	if (!dwfl_frame_pc(state, &pc, NULL) || uw->n >= uw->max)
		return DWARF_CB_ABORT;
	/* a caller's pc is a return address: its call is the byte before */
	lookup = !uw->n || !pc ? pc : pc - 1;
	/* libdw looks for this frame's binary next, to unwind it */
	unwind_procs__report_pc(uw, uw->up, lookup);
	if (!unwind_cfi__frame_has_cfi(uw->up, lookup)) {
		uw->ips[uw->n++] = pc;
		uw->last_pc = lookup;
		uw->no_cfi = true;
		return DWARF_CB_ABORT;
	}
	/* a signal frame's pc is where it was interrupted, not a return address */
	if (uw->n && dwfl_frame_pc(state, &pc, &activation) && activation)
		lookup = pc;
	uw->ips[uw->n++] = pc;
	uw->last_pc = lookup;
	return DWARF_CB_OK;
}

/* Why libdw could not go past the last frame. */
static enum unwind_stop why_stopped(struct unwind *uw, Dwfl *dwfl, int ret)
{
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	Dwarf_Frame *frame;
	Dwarf_CFI *cfi;
	bool has_cfi = false;

	if (uw->no_cfi)
		return UNWIND_NO_CFI;
	if (ret > 0 || uw->n >= uw->max)
		return uw->n >= uw->max ? UNWIND_MAX_DEPTH : UNWIND_OTHER;
	if (!uw->n)
		return UNWIND_OTHER;
	mod = dwfl_addrmodule(dwfl, uw->last_pc);
	if (!mod)
		return UNWIND_UNKNOWN_MAP;
	if (uw->read_short)
		return UNWIND_STACK_SHORT;
	if ((cfi = dwfl_module_eh_cfi(mod, &bias)) &&
	    !dwarf_cfi_addrframe(cfi, uw->last_pc - bias, &frame)) {
		has_cfi = true;
		free(frame);
	}
	/* .debug_frame only for a binary without .eh_frame: it loads all its DWARF */
	if (!has_cfi && !dwfl_module_eh_cfi(mod, &bias) &&
	    (cfi = dwfl_module_dwarf_cfi(mod, &bias)) &&
	    !dwarf_cfi_addrframe(cfi, uw->last_pc - bias, &frame)) {
		has_cfi = true;
		free(frame);
	}
	if (!has_cfi)
		return UNWIND_NO_CFI;
	if (uw->read_bad)
		return UNWIND_BAD_READ;
	return UNWIND_OTHER;
}

int unwind__sample(struct unwind *uw, const struct psc_sample *s, uint64_t *ips, int max,
		   enum unwind_stop *stop)
{
	uint64_t t0 = thread_cpu_ns(), sp, ip;
	struct uproc *up;
	int ret;

	uw->st.stacks++;
	uw->n = 0;
	if (!(s->sample_type & PERF_SAMPLE_REGS_USER) ||
	    !(s->sample_type & PERF_SAMPLE_STACK_USER) ||
	    !unwind_regs__perf_reg(&s->regs_user, UNWIND_PERF_REG_SP, &sp) ||
	    !unwind_regs__perf_reg(&s->regs_user, UNWIND_PERF_REG_IP, &ip) || max <= 0) {
		*stop = UNWIND_NO_USER;
		goto out;
	}
	if (!s->stack_user.size || !s->stack_user.data) {
		/*
		 * Registers without a copy of the stack: the kernel copied none (the record had no
		 * room left), or a sample kept past its ring round did not keep it. Nothing is
		 * read: the ip alone.
		 */
		ips[uw->n++] = ip;
		*stop = UNWIND_NO_STACK;
		goto out;
	}
	if (s->regs_user.abi != PERF_SAMPLE_REGS_ABI_64) {
		/* a 32-bit process: its registers and CFI are another architecture's */
		ips[uw->n++] = ip;
		*stop = UNWIND_OTHER;
		if (!uw->st.other) {
			snprintf(uw->other, sizeof(uw->other), "32-bit process");
			uw->st.other = uw->other;
		}
		goto out;
	}
	uw->s = s;
	uw->sp = sp;
	uw->ips = ips;
	uw->max = max;
	uw->read_short = uw->read_bad = uw->no_cfi = false;
	up = s->pid ? unwind_procs__uproc_get(uw, (pid_t)s->pid) : NULL;
	if (!up) {
		/* nothing known of the process: its ip alone */
		ips[uw->n++] = ip;
		*stop = UNWIND_UNKNOWN_MAP;
		goto out;
	}
	uw->up = up;
	ret = dwfl_getthread_frames(up->dwfl, s->tid ? (pid_t)s->tid : (pid_t)s->pid, frame_cb, uw);
	if (!uw->n)
		ips[uw->n++] = ip; /* libdw gave not even the first frame */
	if (!ret) {
		/*
		 * libdw ends quietly when a return address cannot be read (it takes it as
		 * undefined, as at _start): a failed read is the real end.
		 */
		*stop = uw->read_short ? UNWIND_STACK_SHORT
			: uw->read_bad ? UNWIND_BAD_READ
				       : UNWIND_COMPLETE;
	} else {
		*stop = why_stopped(uw, up->dwfl, ret);
		if (*stop == UNWIND_OTHER && !uw->st.other) {
			snprintf(uw->other, sizeof(uw->other), "%s", dwfl_errmsg(-1));
			uw->st.other = uw->other;
		}
	}
out:
	uw->st.stops[*stop]++;
	uw->st.frames += (uint64_t)uw->n;
	uw->st.ns += thread_cpu_ns() - t0;
	uw->s = NULL;
	uw->up = NULL;
	return uw->n;
}

void unwind__stats(const struct unwind *uw, struct unwind_stats *st)
{
	*st = uw->st;
	st->procs = uw->nr_procs;
}

static const char *const stop_text[UNWIND_NR_STOPS] = {
	[UNWIND_COMPLETE] = "complete",
	[UNWIND_NO_USER] = "no user stack",
	[UNWIND_NO_STACK] = "no stack copy",
	[UNWIND_STACK_SHORT] = "stack copy too short",
	[UNWIND_UNKNOWN_MAP] = "pc in no known binary",
	[UNWIND_NO_CFI] = "no CFI for a pc",
	[UNWIND_BAD_READ] = "unreadable memory",
	[UNWIND_MAX_DEPTH] = "frame limit",
	[UNWIND_OTHER] = "other",
};

static const char *const stop_key[UNWIND_NR_STOPS] = {
	[UNWIND_COMPLETE] = "complete",
	[UNWIND_NO_USER] = "no_user",
	[UNWIND_NO_STACK] = "no_stack",
	[UNWIND_STACK_SHORT] = "stack_short",
	[UNWIND_UNKNOWN_MAP] = "unknown_map",
	[UNWIND_NO_CFI] = "no_cfi",
	[UNWIND_BAD_READ] = "bad_read",
	[UNWIND_MAX_DEPTH] = "max_depth",
	[UNWIND_OTHER] = "other",
};

const char *unwind__stop_text(enum unwind_stop stop)
{
	return stop < UNWIND_NR_STOPS ? stop_text[stop] : "?";
}

const char *unwind__stop_key(enum unwind_stop stop)
{
	return stop < UNWIND_NR_STOPS ? stop_key[stop] : "?";
}
