/* perfscope offcpu's parts: its state, shared by its set-up, samples, profile writers and report.
 */
#ifndef PERFSCOPE_CLI_OFFCPU_H
#define PERFSCOPE_CLI_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "callchain.h"
#include "keymap.h"
#include "pair.h"
#include "prof.h"
#include "stack_table.h"
#include "tstate.h"

/*
 * A task's off-CPU time, from sched:sched_switch alone: its switch-out (the prev side: its user
 * and kernel stack, taken by the kernel in its context, and its state) starts a pending entry of
 * the pair engine keyed by its tid; its switch-in (the next side) ends it, and the time between
 * goes to the stack and the state. With --waker, sched:sched_wakeup splits it: switch-out to
 * wakeup is the sleep (S, D ...), with the waker's stack; wakeup to switch-in is R (waiting for a
 * CPU). A switch-out while runnable (preempted, yield) is R+. --wall adds cpu-clock samples of
 * the same tasks, each weighing its period in ns: running and not running in one profile.
 *
 * Each stack is kept once in a stack table (stack_table.h) whose addresses begin with a tag word
 * (OC_TAG: the row, and whether a waker's part follows), then the callchain; a waker's part is
 * OC_SEP, its pid, tid and comm (two words), then its callchain. Weights are ns (period), counts
 * are switches or samples.
 */

/* Rows: tstate classes 1..32 are the sleeps (S, D, I ...); these go around them. */
enum {
	OC_ROW_PREEMPT = 0, /* switched out runnable: "R+" */
	OC_ROW_UNKNOWN = 40, /* a state this kernel's format does not name */
	OC_ROW_RUNQ = 41, /* woken, waiting for a CPU (--waker): "R" */
	OC_ROW_ONCPU = 42, /* --wall's cpu-clock samples */
	OC_NR_ROWS = 43,
};

#define OC_TAG(row, waker) ((uint64_t)(row) | ((waker) ? 0x100ull : 0))
#define OC_TAG_ROW(tag) ((int)((tag)&0xff))
#define OC_TAG_WAKER(tag) (((tag)&0x100) != 0)
#define OC_SEP 0x6f6666637075ull /* "offcpu": ends the target's part (never an address) */
#define OC_MAX_IPS 1024 /* addresses kept of one stack (target and waker together) */

enum oc_kind { OC_SWITCH, OC_WAKEUP, OC_CLOCK };

struct oc_ev {
	enum oc_kind kind;
	const struct psc_tp_field *prev_pid, *state, *pid; /* through the format */
};

/* A pending switch-out (the pair engine's entry data). */
struct oc_pending {
	struct stack_ent *stack; /* the switch-out's stack, its row's tag */
	struct stack_ent *woken_by; /* --waker: the same with the waker's part, NULL: none yet */
	uint64_t woken; /* --waker: when it was woken, 0: not yet */
	uint64_t charged; /* time up to which a profile was charged (-i, the end), 0: none */
	int row;
};

/* A function in the text/JSON report: time with it anywhere in the stack, and at the leaf. */
struct oc_func {
	char *name;
	uint64_t total, self, last;
};

struct oc_row {
	uint64_t count, ns;
};

/* What was lost or cut short, for the whole run: said in text and JSON. */
struct oc_losses {
	uint64_t ring_lost; /* records the rings had no room for */
	uint64_t lost_windows; /* ring losses noticed: starts before them not measured */
	uint64_t truncated, truncated_ns; /* user stacks stopping before main */
	uint64_t dropped; /* stacks not kept: no memory */
	uint64_t field_errors; /* fields that could not be read */
	uint64_t exits; /* switch-outs of exiting tasks (X, Z): no end to wait for */
	uint64_t no_wakeup; /* --waker: sleeps whose wakeup was not seen (no waker stack) */
};

struct offcpu {
	/* options */
	const char *format_arg, *output, *flame_graph, *state_arg;
	bool waker, wall, per_thread;
	long freq, top;
	uint64_t than; /* ns: shorter stays not counted */
	char events[1024]; /* the event list, built from the options */
	/* what runs */
	int fmt; /* enum oc_format */
	struct tstate_map map;
	bool map_ok;
	uint64_t shown; /* rows counted: bit per row */
	uint64_t dead; /* tstate classes of exiting tasks (X, Z) */
	uint64_t period_ns; /* --wall: the cpu-clock period */
	pid_t pids[CLI_MAX_TASKS + 2], tids[CLI_MAX_TASKS];
	int nr_pids, nr_tids;
	pid_t self;
	struct keymap member; /* -p: tids seen switching out as targets */
	struct keymap on_since; /* --wall: tid -> when it came on a CPU (0: off) */
	uint64_t oncpu_ns; /* --wall: this profile's on-CPU time, measured switch-in to out */
	struct pair *pr;
	struct stack_table stacks; /* kept for the run: pending entries point into it */
	uint64_t last_time; /* the latest sample time seen */
	uint64_t slice_start_mono;
	int64_t slice_wall_ns;
	uint64_t seq;
	struct out *file; /* -o for text and JSON */
	/* this profile's sums, by row */
	struct oc_row rows[OC_NR_ROWS];
	uint64_t user_ns, total_ns;
	struct oc_losses loss; /* the run's */
	/* report-time scratch: the stack resolved (oc_resolve), its target and waker parts */
	struct frame frames[2 * CALLCHAIN_MAX_FRAMES + 4]; /* as folded: waker part first */
	struct frame tframes[CALLCHAIN_MAX_FRAMES], wframes[CALLCHAIN_MAX_FRAMES];
	int nt, nw, nframes; /* nframes: in frames */
	uint32_t wpid;
	char wcomm[24];
	char sname[32]; /* a state frame's name */
	char fold[STACK_FOLD_MAX];
	struct oc_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct keymap func_idx;
	uint64_t ips[OC_MAX_IPS];
};

enum oc_format { OC_TEXT, OC_FOLDED, OC_JSON, OC_SVG, OC_PPROF };

/* oc_sample.c: the samples, the pair engine's impl, the charging of pending time */
extern const struct pair_impl oc_impl;
int oc_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s);
int oc_record(struct prof *p, void *priv, const struct psc_record *rec);
void oc_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);
void oc_charge_pending(struct offcpu *oc, uint64_t now);
void oc_charge_running(struct offcpu *oc, uint64_t now);
const char *oc_row_name(const struct offcpu *oc, int row);

/* oc_write.c: a profile in its format, then the next begun */
int oc_write(struct prof *p, struct offcpu *oc);
int oc_resolve(struct prof *p, struct offcpu *oc, const struct stack_ent *e);
bool oc_user_rooted(const struct frame *frames, int n, bool *user);

/* oc_report.c: the text and JSON formats, the functions, the losses */
void oc_funcs_clear(struct offcpu *oc);
void oc_funcs_count(struct offcpu *oc, int n, uint64_t ns, uint64_t seq);
void oc_write_text(struct prof *p, struct offcpu *oc, struct out *o, double secs);
void oc_write_json(struct prof *p, struct offcpu *oc, struct out *o, double secs,
		   struct stack_ent **arr, size_t nr);
void oc_losses(struct prof *p, struct offcpu *oc, struct oc_losses *l, uint64_t *counts);
void oc_say_losses(struct prof *p, struct offcpu *oc);

#endif
