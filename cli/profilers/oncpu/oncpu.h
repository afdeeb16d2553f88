/* oncpu's state, shared by its files: setup, events (oncpu_sample.c), tables (oncpu_print.c). */
#ifndef PERFSCOPE_CLI_ONCPU_H
#define PERFSCOPE_CLI_ONCPU_H

#include "keymap.h"
#include "profiler.h"

/* A task's time on a CPU (CPU mode), or on every CPU (thread mode: ns[] per CPU, then evs[]). */
struct oncpu_task {
	char comm[16];
	uint32_t tid;
	uint64_t ns, sws, max_ns;
	uint64_t per_cpu[]; /* thread mode: ns per CPU, then events per CPU */
};

struct oncpu_cpu {
	struct keymap tasks; /* tid + 1, or the comm's hash (--only-comm) -> struct oncpu_task */
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
	struct oncpu_cpu *cpus; /* CPU mode */
	struct keymap threads; /* thread mode */
	const struct psc_tp_field *f_prev_pid, *f_prev_comm, *f_next_pid, *f_next_comm;
	const struct psc_tp_field *f_pid, *f_comm, *f_runtime;
	char events[512];
};

/* oncpu_sample.c */
int oncpu_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		 const struct psc_sample *s);
void oncpu_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n);
struct oncpu_task *oncpu_cpu_credit(struct oncpu *oc, struct oncpu_cpu *c, uint64_t t);
/* oncpu_print.c: the table, the runs going on counted up to now_ns (0: not counted) */
int oncpu_table(struct prof *p, void *priv, uint64_t now_ns);
int oncpu_interval(struct prof *p, void *priv, uint64_t now_ns);

#endif
