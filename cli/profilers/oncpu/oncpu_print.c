/* oncpu's tables: a line per CPU (its tasks, most time first) or per thread (its CPUs). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "json.h"
#include "oncpu.h"

static int cmp_tid(const void *a, const void *b)
{
	const struct oncpu_task *x = *(struct oncpu_task *const *)a,
				*y = *(struct oncpu_task *const *)b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_ns(const void *a, const void *b)
{
	const struct oncpu_task *x = *(struct oncpu_task *const *)a,
				*y = *(struct oncpu_task *const *)b;

	return x->ns < y->ns ? 1 : x->ns > y->ns ? -1 : (x->tid > y->tid) - (x->tid < y->tid);
}

/* The entries of m, most time first (thread mode: by tid); NULL when out of memory. */
static struct oncpu_task **sorted(const struct keymap *m, bool by_ns, size_t *nr)
{
	struct oncpu_task **v = malloc((m->nr ? m->nr : 1) * sizeof(*v)), *t;
	struct keymap_iter it = { 0 };
	uint64_t key;

	*nr = 0;
	if (!v)
		return NULL;
	while ((t = keymap__next(m, &it, &key)))
		v[(*nr)++] = t;
	qsort(v, *nr, sizeof(*v), by_ns ? cmp_ns : cmp_tid);
	return v;
}

static void task_name(const struct oncpu *oc, const struct oncpu_task *t, char *buf, size_t len)
{
	if (oc->only_comm)
		snprintf(buf, len, "%s", t->comm);
	else
		snprintf(buf, len, "%s:%u", t->comm, t->tid);
}

static void print_cpu(struct prof *p, struct oncpu *oc, int cpu, struct oncpu_task **v, size_t nr)
{
	uint64_t sum = 0, sws = 0;
	char name[48];

	for (size_t i = 0; i < nr; i++)
		sum += v[i]->ns, sws += v[i]->sws;
	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		JSON_KEY(&p->json, "cpu");
		json__u64(&p->json, (uint64_t)cpu);
		JSON_KEY(&p->json, "sum_ns");
		json__u64(&p->json, sum);
		JSON_KEY(&p->json, "switches");
		json__u64(&p->json, sws);
		JSON_KEY(&p->json, "tasks");
		json__arr(&p->json);
		for (size_t i = 0; i < nr; i++) {
			json__obj(&p->json);
			JSON_KEY(&p->json, "comm");
			json__str(&p->json, v[i]->comm);
			if (!oc->only_comm) {
				JSON_KEY(&p->json, "tid");
				json__u64(&p->json, v[i]->tid);
			}
			JSON_KEY(&p->json, "ns");
			json__u64(&p->json, v[i]->ns);
			JSON_KEY(&p->json, "switches");
			json__u64(&p->json, v[i]->sws);
			JSON_KEY(&p->json, "max_ns");
			json__u64(&p->json, v[i]->max_ns);
			json__end(&p->json);
		}
		json__end_line(&p->json);
		return;
	}
	if (oc->detail)
		out__printf(p->out, "%03d %7.1fms/%-6llu", cpu, sum / 1e6, (unsigned long long)sws);
	else
		out__printf(p->out, "%03d %7.1f", cpu, sum / 1e6);
	for (size_t i = 0; i < nr; i++) {
		task_name(oc, v[i], name, sizeof(name));
		if (oc->detail)
			out__printf(p->out, " %s(%.1fms/%llu/%.1fms)", name, v[i]->ns / 1e6,
				    (unsigned long long)v[i]->sws, v[i]->max_ns / 1e6);
		else
			out__printf(p->out, " %s(%.1f)", name, v[i]->ns / 1e6);
	}
	out__putc(p->out, '\n');
}

static void print_thread(struct prof *p, struct oncpu *oc, const struct oncpu_task *t)
{
	const uint64_t *ns = t->per_cpu, *evs = t->per_cpu + oc->nr_cpus;

	if (p->json_fmt) {
		json__begin(&p->json, p->out);
		if (!oc->only_comm) {
			JSON_KEY(&p->json, "tid");
			json__u64(&p->json, t->tid);
		}
		JSON_KEY(&p->json, "comm");
		json__str(&p->json, t->comm);
		JSON_KEY(&p->json, "sum_ns");
		json__u64(&p->json, t->ns);
		JSON_KEY(&p->json, "cpus");
		json__arr(&p->json);
		for (int c = 0; c < oc->nr_cpus; c++) {
			if (!evs[c])
				continue;
			json__obj(&p->json);
			JSON_KEY(&p->json, "cpu");
			json__u64(&p->json, (uint64_t)c);
			JSON_KEY(&p->json, "ns");
			json__u64(&p->json, ns[c]);
			JSON_KEY(&p->json, "events");
			json__u64(&p->json, evs[c]);
			json__end(&p->json);
		}
		json__end_line(&p->json);
		return;
	}
	if (oc->only_comm)
		out__printf(p->out, "%-16s %8.1f ", t->comm, t->ns / 1e6);
	else
		out__printf(p->out, "%-7u %-16s %8.1f ", t->tid, t->comm, t->ns / 1e6);
	for (int c = 0; c < oc->nr_cpus; c++) {
		if (!evs[c])
			continue;
		if (oc->detail)
			out__printf(p->out, " %d(%.1fms/%llu)", c, ns[c] / 1e6,
				    (unsigned long long)evs[c]);
		else
			out__printf(p->out, " %d(%.1fms)", c, ns[c] / 1e6);
	}
	out__putc(p->out, '\n');
}

static void print_header(struct prof *p, struct oncpu *oc)
{
	time_t now = time(NULL);
	struct tm tm;
	char buf[32];

	if (p->json_fmt)
		return;
	localtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	out__printf(p->out, "%s\n", buf);
	if (oc->by_thread)
		out__printf(p->out, "%s SUM(ms)   CPUS(ms%s)\n",
			    oc->only_comm ? "COMM            " : "THREAD  COMM            ",
			    oc->detail ? "/events" : "");
	else if (oc->detail)
		out__puts(p->out, "CPU SUM(ms/sws)       COMM:TID(ms/sws/max_ms)\n");
	else
		out__puts(p->out, "CPU SUM(ms) COMM:TID(ms)\n");
}

/*
 * The interval's table, then a fresh one. A run is counted when it ends: events wait in the
 * rings up to the loop's poll timeout, so the task a CPU ran last as read may not be the one
 * running now. At the end (now_ns given) every ring has been read: the runs still going on are
 * counted up to then.
 */
int oncpu_table(struct prof *p, void *priv, uint64_t now_ns)
{
	struct oncpu *oc = priv;
	struct oncpu_task **v;
	size_t nr;

	print_header(p, oc);
	if (oc->by_thread) {
		v = sorted(&oc->threads, false, &nr);
		if (!v)
			return -ENOMEM;
		for (size_t i = 0; i < nr; i++)
			print_thread(p, oc, v[i]);
		free(v);
		keymap__clear(&oc->threads);
		return 0;
	}
	for (int c = 0; c < oc->nr_cpus; c++) {
		struct oncpu_cpu *cpu = &oc->cpus[c];

		if (now_ns)
			oncpu_cpu_credit(oc, cpu, now_ns);
		if (!cpu->tasks.nr)
			continue;
		v = sorted(&cpu->tasks, true, &nr);
		if (!v)
			return -ENOMEM;
		print_cpu(p, oc, c, v, nr);
		free(v);
		keymap__clear(&cpu->tasks);
	}
	return 0;
}

int oncpu_interval(struct prof *p, void *priv, uint64_t now_ns)
{
	return oncpu_table(p, priv, 0);
}
