/* oncpu's events: sched_switch per CPU (CPU mode), sched_stat_runtime per thread (thread mode). */
#include <string.h>

#include "oncpu.h"

static void read_comm(const struct psc_tp_field *f, const struct psc_sample *s, char *comm)
{
	uint32_t len = 0;
	const char *c = psc_tp_field__str(f, s->raw.data, s->raw.size, &len);

	len = c ? (len < 15 ? len : 15) : 0;
	if (len)
		memcpy(comm, c, len);
	comm[len] = 0;
}

static uint64_t task_key(const struct oncpu *oc, uint32_t tid, const char *comm)
{
	uint64_t h = 1469598103934665603ull;

	if (!oc->only_comm)
		return (uint64_t)tid + 1;
	for (; *comm; comm++)
		h = (h ^ (unsigned char)*comm) * 1099511628211ull;
	return h | 1;
}

static struct oncpu_task *task_get(const struct oncpu *oc, struct keymap *m, uint32_t tid,
				   const char *comm)
{
	bool created;
	struct oncpu_task *t = keymap__insert(m, task_key(oc, tid, comm), &created);

	if (t && created) {
		memcpy(t->comm, comm, sizeof(t->comm));
		t->tid = tid;
	}
	return t;
}

/* What ran on cpu since its last switch (or interval) to t: the task switched in's time. */
struct oncpu_task *oncpu_cpu_credit(struct oncpu *oc, struct oncpu_cpu *c, uint64_t t)
{
	struct oncpu_task *task;
	uint64_t d;

	if (!c->last_ns || !c->cur)
		return NULL;
	d = t > c->last_ns ? t - c->last_ns : 0;
	task = task_get(oc, &c->tasks, c->cur, c->cur_comm);
	if (!task)
		return NULL;
	task->ns += d;
	c->run_ns += d;
	c->last_ns = t;
	return task;
}

static void on_switch(struct oncpu *oc, int cpu, const struct psc_sample *s)
{
	struct oncpu_cpu *c = &oc->cpus[cpu];
	uint64_t prev = 0, next = 0;
	struct oncpu_task *task;

	psc_tp_field__u64(oc->f_prev_pid, s->raw.data, s->raw.size, &prev);
	psc_tp_field__u64(oc->f_next_pid, s->raw.data, s->raw.size, &next);
	/* only a switch out of the task seen switching in: a filter may have hidden the rest */
	if (c->cur && c->cur == prev && (task = oncpu_cpu_credit(oc, c, s->time))) {
		task->sws++;
		if (c->run_ns > task->max_ns)
			task->max_ns = c->run_ns;
	}
	c->cur = (uint32_t)next; /* the idle task (0) is not counted */
	read_comm(oc->f_next_comm, s, c->cur_comm);
	c->last_ns = s->time;
	c->run_ns = 0;
}

static void on_runtime(struct oncpu *oc, int cpu, const struct psc_sample *s)
{
	uint64_t pid = 0, rt = 0;
	char comm[16];
	struct oncpu_task *t;

	psc_tp_field__u64(oc->f_pid, s->raw.data, s->raw.size, &pid);
	psc_tp_field__u64(oc->f_runtime, s->raw.data, s->raw.size, &rt);
	/* a wakeup updates the waker's CPU's current task: not the thread's own run */
	if (pid != s->tid || cpu < 0 || cpu >= oc->nr_cpus)
		return;
	read_comm(oc->f_comm, s, comm);
	t = task_get(oc, &oc->threads, (uint32_t)pid, comm);
	if (!t)
		return;
	t->ns += rt;
	t->per_cpu[cpu] += rt;
	t->per_cpu[oc->nr_cpus + cpu]++;
}

int oncpu_sample(struct prof *p, void *priv, struct prof_event *ev, int cpu,
		 const struct psc_sample *s)
{
	struct oncpu *oc = priv;

	if (cpu < 0 || cpu >= oc->nr_cpus)
		return 0;
	if (oc->by_thread)
		on_runtime(oc, cpu, s);
	else
		on_switch(oc, cpu, s);
	return 0;
}

/* After a loss on cpu the task running there is not known until its next switch. */
void oncpu_lost(struct prof *p, void *priv, struct prof_event *ev, int cpu, uint64_t n)
{
	struct oncpu *oc = priv;

	if (cpu >= 0 && cpu < oc->nr_cpus)
		oc->cpus[cpu].last_ns = 0;
}
