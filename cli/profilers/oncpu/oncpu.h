/* oncpu's state, shared by its files: setup, events (oc_sample.c), tables (oc_print.c). */
#ifndef PERFSCOPE_CLI_ONCPU_H
#define PERFSCOPE_CLI_ONCPU_H

#include "keymap.h"
#include "profiler.h"

/* A task's time on a CPU (CPU mode), or on every CPU (thread mode: ns[] per CPU, then evs[]). */
struct oc_task {
	char comm[16];
	uint32_t tid;
	uint64_t ns, sws, max_ns;
	uint64_t per_cpu[]; /* thread mode: ns per CPU, then events per CPU */
};

struct oc_cpu {
	struct keymap tasks; /* tid + 1, or the comm's hash (--only-comm) -> struct oc_task */
	uint64_t last_ns; /* the last switch seen, 0: unknown (start, or after a loss) */
	uint64_t run_ns; /* of the task switched in, so far */
	uint32_t cur; /* the task switched in then */
	char cur_comm[16];
};

struct oncpu {
	const char *filter, *prio;
	bool detail, only_comm;
	bool by_thread; /* -p/-t/COMMAND: sched_stat_runtime per thread */
	int nr_cpus;
	struct oc_cpu *cpus; /* CPU mode */
	struct keymap threads; /* thread mode */
	const struct psc_tp_field *f_prev_pid, *f_prev_comm, *f_next_pid, *f_next_comm;
	const struct psc_tp_field *f_pid, *f_comm, *f_runtime;
	char events[512];
};

/* oc_sample.c */
int oc_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
	      const struct psc_sample *s);
void oc_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);
struct oc_task *oc_cpu_credit(struct oncpu *oc, struct oc_cpu *c, uint64_t t);
/* oc_print.c: the table, the runs going on counted up to now_ns (0: not counted) */
int oc_table(struct prof *p, void *priv, uint64_t now_ns);
int oc_interval(struct prof *p, void *priv, uint64_t now_ns);

#endif
