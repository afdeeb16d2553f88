/* The expression language per event (key=, filters) beside libtraceevent's tep_filter_match on the
 * same records, and a hand-written C read as the floor. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>
#include <perfscope/tp.h>

#include "expr.h"

/* sched:sched_wakeup as this 6.18 kernel writes it (/sys/kernel/tracing/events/sched/...). */
static const char fmt_text[] =
	"name: sched_wakeup\n"
	"ID: 374\n"
	"format:\n"
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
	"\n"
	"\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
	"\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n"
	"\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n"
	"\tfield:int target_cpu;\toffset:32;\tsize:4;\tsigned:1;\n"
	"\n"
	"print fmt: \"comm=%s pid=%d prio=%d target_cpu=%03d\", REC->comm, REC->pid, REC->prio, "
	"REC->target_cpu\n";

#define REC_SIZE 40
#define NR_RECS 65536

static uint8_t recs[NR_RECS][REC_SIZE];
/* what the session decodes per record into one psc_sample it reuses: its cpu and pid */
static uint32_t rec_cpu[NR_RECS], rec_pid[NR_RECS];
static struct tep_record teprecs[NR_RECS];

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void make_records(void)
{
	static const char *const comms[] = {
		"bash",		"kworker/0:1", "systemd", "sshd",
		"kworker/u4:2", "perfscope",   "cc1",	  "ksoftirqd/1"
	};
	uint32_t x = 12345;

	for (int i = 0; i < NR_RECS; i++) {
		uint16_t type = 374;
		int32_t pid, prio, cpu;

		x = x * 1103515245 + 12345;
		pid = (int32_t)(x >> 8) % 400;
		prio = 100 + (int32_t)((x >> 4) % 40);
		cpu = (int32_t)(x % 2);
		memset(recs[i], 0, REC_SIZE);
		memcpy(recs[i], &type, 2);
		memcpy(recs[i] + 4, &pid, 4);
		strncpy((char *)recs[i] + 8, comms[(x >> 20) % 8], 16);
		memcpy(recs[i] + 24, &pid, 4);
		memcpy(recs[i] + 28, &prio, 4);
		memcpy(recs[i] + 32, &cpu, 4);
		rec_cpu[i] = (uint32_t)cpu;
		rec_pid[i] = (uint32_t)pid;
		teprecs[i].data = recs[i];
		teprecs[i].size = REC_SIZE;
		teprecs[i].cpu = cpu;
	}
}

struct bench_case {
	const char *name;
	const char *expr; /* NULL: the C floor */
	const char *tep; /* the same test as a tep filter, NULL: none can say it */
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static volatile uint64_t sink;
static double best_expr; /* the fastest round of the last time_expr */

/* ns per record, median of rounds, each passes x NR_RECS records. */
static double time_expr(struct expr *e, int rounds, int passes, uint64_t *matched)
{
	double ns[64];
	struct expr_val v;
	struct psc_sample s = { .raw.size = REC_SIZE };

	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns(), acc = 0;

		for (int p = 0; p < passes; p++)
			for (int i = 0; i < NR_RECS; i++) {
				/* as the engine hands a sample to a profiler */
				s.raw.data = recs[i];
				s.cpu = rec_cpu[i];
				s.pid = s.tid = rec_pid[i];
				expr__eval(e, s.raw.data, s.raw.size, &s, &v);
				acc += v.i;
			}
		ns[r] = (double)(now_ns() - t0) / ((double)passes * NR_RECS);
		sink += acc;
		*matched = acc / (uint64_t)passes;
	}
	qsort(ns, (size_t)rounds, sizeof(double), cmp_double);
	best_expr = ns[0];
	return ns[rounds / 2];
}

static double time_tep(struct tep_event_filter *f, int rounds, int passes, uint64_t *matched)
{
	double ns[64];

	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns(), acc = 0;

		for (int p = 0; p < passes; p++)
			for (int i = 0; i < NR_RECS; i++)
				acc += tep_filter_match(f, &teprecs[i]) == TEP_ERRNO__FILTER_MATCH;
		ns[r] = (double)(now_ns() - t0) / ((double)passes * NR_RECS);
		sink += acc;
		*matched = acc / (uint64_t)passes;
	}
	qsort(ns, (size_t)rounds, sizeof(double), cmp_double);
	return ns[rounds / 2];
}

/* The floor: key=pid and the two-term filter written in C over the format's accessors. */
static double time_c(const struct psc_tp_format *fmt, bool filter, int rounds, int passes)
{
	const struct psc_tp_field *pid = psc_tp_format__field(fmt, "pid");
	const struct psc_tp_field *prio = psc_tp_format__field(fmt, "prio");
	double ns[64];

	for (int r = 0; r < rounds; r++) {
		uint64_t t0 = now_ns(), acc = 0;

		for (int p = 0; p < passes; p++)
			for (int i = 0; i < NR_RECS; i++) {
				int64_t a = 0, b = 0;

				psc_tp_field__s64(pid, recs[i], REC_SIZE, &a);
				if (filter) {
					psc_tp_field__s64(prio, recs[i], REC_SIZE, &b);
					acc += a > 100 && b < 120;
				} else {
					acc += (uint64_t)a;
				}
			}
		ns[r] = (double)(now_ns() - t0) / ((double)passes * NR_RECS);
		sink += acc;
	}
	qsort(ns, (size_t)rounds, sizeof(double), cmp_double);
	return ns[rounds / 2];
}

int main(int argc, char **argv)
{
	static const struct bench_case cases[] = {
		{ "key=pid", "pid", NULL },
		{ "two-term filter", "pid > 100 && prio < 120", "pid > 100 && prio < 120" },
		{ "string glob", "comm ~ \"kworker*\"", "comm ~ \"kworker*\"" },
		{ "string ==", "comm == \"systemd\"", "comm == \"systemd\"" },
		{ "four terms", "pid > 100 && prio < 120 && target_cpu == 0 && comm != \"bash\"",
		  "pid > 100 && prio < 120 && target_cpu == 0 && comm != \"bash\"" },
		{ "field to field", "pid < prio", NULL },
		{ "key=(_cpu<<16)|pid", "(_cpu << 16) | pid", NULL },
		{ "arithmetic", "(pid * 3 + prio) % 7", NULL },
	};
	int rounds = 21, passes = 20, opt;
	struct psc_tp_format *fmt;
	struct tep_handle *tep;
	struct tep_event *tev = NULL;

	while ((opt = getopt(argc, argv, "r:p:")) != -1) {
		if (opt == 'r')
			rounds = atoi(optarg);
		else if (opt == 'p')
			passes = atoi(optarg);
		else {
			fprintf(stderr, "usage: %s [-r ROUNDS (<= 64)] [-p PASSES]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > 64 || passes < 1) {
		fprintf(stderr, "rounds in 1..64, passes >= 1\n");
		return 2;
	}
	make_records();
	fmt = psc_tp_format__parse(fmt_text, "sched");
	tep = tep_alloc();
	if (!fmt || !tep ||
	    tep_parse_format(tep, &tev, fmt_text, sizeof(fmt_text) - 1, "sched") != 0) {
		fprintf(stderr, "cannot parse the format\n");
		return 1;
	}
	printf("%d records of sched_wakeup, median of %d rounds of %d passes, ns per record\n",
	       NR_RECS, rounds, passes);
	printf("%-22s %10s %10s %10s %10s  %s\n", "case", "expr", "(fastest)", "tep_filter", "C",
	       "matched");
	fflush(stdout);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bench_case *c = &cases[i];
		struct expr_opts opts = { .fmt = fmt };
		struct expr_error err;
		struct expr *e = expr__compile(c->expr, &opts, &err);
		uint64_t m_expr = 0, m_tep = 0;
		double t_expr, t_tep = -1, t_c = -1;

		if (!e) {
			fprintf(stderr, "%s: %s\n", c->expr, err.msg);
			return 1;
		}
		t_expr = time_expr(e, rounds, passes, &m_expr);
		if (c->tep) {
			struct tep_event_filter *f = tep_filter_alloc(tep);
			char str[256];

			snprintf(str, sizeof(str), "sched_wakeup: %s", c->tep);
			if (!f || tep_filter_add_filter_str(f, str) != 0) {
				fprintf(stderr, "tep refuses '%s'\n", str);
				return 1;
			}
			t_tep = time_tep(f, rounds, passes, &m_tep);
			tep_filter_free(f);
		}
		if (i < 2)
			t_c = time_c(fmt, i == 1, rounds, passes);
		printf("%-22s %10.2f %10.2f ", c->name, t_expr, best_expr);
		if (t_tep >= 0)
			printf("%10.2f ", t_tep);
		else
			printf("%10s ", "-");
		if (t_c >= 0)
			printf("%10.2f ", t_c);
		else
			printf("%10s ", "-");
		/* libtraceevent 1.7.1's ~ matches nothing at all: said, not hidden */
		if (c->tep && m_tep != m_expr)
			printf(" %llu of %d (tep_filter: %llu)\n", (unsigned long long)m_expr,
			       NR_RECS, (unsigned long long)m_tep);
		else if (c->tep)
			printf(" %llu of %d\n", (unsigned long long)m_expr, NR_RECS);
		else
			printf(" -\n");
		expr__delete(e);
	}
	tep_free(tep);
	psc_tp_format__delete(fmt);
	return 0;
}
