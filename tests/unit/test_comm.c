/* Unit tests of common/comm: names from COMM and FORK records, /proc lookups and preloads of the
 * test's own threads, threads gone before they are asked for. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <cmocka.h>

#include "comm.h"

static struct psc_record comm_rec(uint32_t pid, uint32_t tid, const char *comm, bool exec)
{
	struct psc_record r = { .type = PERF_RECORD_COMM };

	r.comm.pid = pid;
	r.comm.tid = tid;
	r.comm.comm = comm;
	r.comm.exec = exec;
	return r;
}

static struct psc_record fork_rec(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct psc_record r = { .type = PERF_RECORD_FORK };

	r.fork.pid = pid;
	r.fork.ppid = ppid;
	r.fork.tid = tid;
	r.fork.ptid = ptid;
	return r;
}

/* tids far above pid_max: never a thread of this machine */
#define T1 0x7ffff001u
#define T2 0x7ffff002u
#define T3 0x7ffff003u

static void t_records(void **state)
{
	struct comm_cache c;
	struct psc_record r;

	(void)state;
	assert_int_equal(comm_cache__init(&c), 0);
	assert_string_equal(comm_cache__get(&c, 0, 0), "swapper");
	assert_null(comm_cache__find(&c, T1));
	r = comm_rec(T1, T1, "bash", true);
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__find(&c, T1), "bash");
	/* a child is its parent's namesake until it execs */
	r = fork_rec(T2, T1, T2, T1);
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__get(&c, T2, T2), "bash");
	r = comm_rec(T2, T2, "a-very-long-command-name", true);
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__get(&c, T2, T2), "a-very-long-com"); /* 15 bytes */
	assert_string_equal(comm_cache__find(&c, T1), "bash");
	/* unordered rings: the child's exec COMM (t=20) read before its FORK (t=10) stays */
	r = comm_rec(T3 + 1, T3 + 1, "dd", true);
	r.sid.time = 20;
	comm_cache__record(&c, &r);
	r = fork_rec(T3 + 1, T1, T3 + 1, T1);
	r.fork.time = 10;
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__find(&c, T3 + 1), "dd");
	/* a reused tid: the dead thread's name (t=20) gives way to its new parent's (t=30) */
	r = fork_rec(T3 + 1, T1, T3 + 1, T1);
	r.fork.time = 30;
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__find(&c, T3 + 1), "bash");
	/* two execs read in the wrong order (the task moved between CPUs): the later name stays */
	r = comm_rec(T3 + 1, T3 + 1, "dd", true);
	r.sid.time = 50;
	comm_cache__record(&c, &r);
	r = comm_rec(T3 + 1, T3 + 1, "sh", true);
	r.sid.time = 45;
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__find(&c, T3 + 1), "dd");
	/* a reused tid whose new parent was never named: the dead thread's name is forgotten */
	r = fork_rec(T3 + 1, 0x7ffff0feu, T3 + 1, 0x7ffff0feu);
	r.fork.time = 60;
	comm_cache__record(&c, &r);
	assert_null(comm_cache__find(&c, T3 + 1));
	/* and so does a name read from /proc, which has no time */
	assert_int_equal(comm_cache__set(&c, T3 + 2, "old", 3), 0);
	r = fork_rec(T3 + 2, T1, T3 + 2, T1);
	r.fork.time = 40;
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__find(&c, T3 + 2), "bash");
	/* the child of a parent never named stays unnamed (looked up in /proc when asked for) */
	r = fork_rec(T3, 0x7ffff0ffu, T3, 0x7ffff0ffu);
	comm_cache__record(&c, &r);
	assert_null(comm_cache__find(&c, T3));
	/* other records change nothing */
	r = (struct psc_record){ .type = PERF_RECORD_EXIT };
	r.fork.tid = T1;
	comm_cache__record(&c, &r);
	assert_string_equal(comm_cache__find(&c, T1), "bash");
	/* tid 0 is never overwritten */
	assert_int_equal(comm_cache__set(&c, 0, "x", 1), 0);
	assert_string_equal(comm_cache__find(&c, 0), "swapper");
	comm_cache__exit(&c);
}

/* Many forks: the table grows while a parent's name is copied to its children. */
static void t_many_forks(void **state)
{
	struct comm_cache c;
	struct psc_record r;
	uint32_t tid;

	(void)state;
	assert_int_equal(comm_cache__init(&c), 0);
	r = comm_rec(1000, 1000, "parent", true);
	comm_cache__record(&c, &r);
	for (tid = 1001; tid < 21000; tid++) {
		r = fork_rec(tid, 1000, tid, 1000);
		comm_cache__record(&c, &r);
	}
	for (tid = 1000; tid < 21000; tid++)
		assert_string_equal(comm_cache__find(&c, tid), "parent");
	comm_cache__exit(&c);
}

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool may_exit;

struct worker {
	pthread_t th;
	pid_t tid;
	bool ready;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	prctl(PR_SET_NAME, "comm-worker");
	pthread_mutex_lock(&lock);
	w->tid = gettid();
	w->ready = true;
	pthread_cond_broadcast(&cond);
	while (!may_exit)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	return NULL;
}

static void worker_start(struct worker *w)
{
	may_exit = false;
	w->ready = false;
	assert_int_equal(pthread_create(&w->th, NULL, worker_main, w), 0);
	pthread_mutex_lock(&lock);
	while (!w->ready)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
}

static void worker_stop(struct worker *w)
{
	pthread_mutex_lock(&lock);
	may_exit = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	pthread_join(w->th, NULL);
}

static void t_proc(void **state)
{
	struct comm_cache c;
	struct worker w;
	char self[16];

	(void)state;
	assert_int_equal(comm_cache__init(&c), 0);
	prctl(PR_GET_NAME, self);
	assert_string_equal(comm_cache__get(&c, getpid(), gettid()), self);
	worker_start(&w);
	assert_null(comm_cache__find(&c, w.tid));
	assert_string_equal(comm_cache__get(&c, getpid(), w.tid), "comm-worker");
	worker_stop(&w);
	/* known: still named after it is gone */
	assert_string_equal(comm_cache__get(&c, getpid(), w.tid), "comm-worker");
	comm_cache__exit(&c);

	/* gone before it was asked for: "<...>", remembered */
	assert_int_equal(comm_cache__init(&c), 0);
	worker_start(&w);
	worker_stop(&w);
	assert_string_equal(comm_cache__get(&c, getpid(), w.tid), "<...>");
	assert_string_equal(comm_cache__find(&c, w.tid), "<...>");
	comm_cache__exit(&c);
}

/* Preloaded threads keep their names once gone, whichever way they were preloaded. */
static void t_preload(void **state)
{
	struct comm_cache c;
	struct worker w;
	size_t nr;

	(void)state;
	for (int how = 0; how < 3; how++) {
		assert_int_equal(comm_cache__init(&c), 0);
		worker_start(&w);
		if (how == 0)
			comm_cache__preload(&c, 0, w.tid);
		else if (how == 1)
			comm_cache__preload(&c, getpid(), 0);
		else
			comm_cache__preload(&c, 0, 0);
		nr = keymap__nr(&c.map);
		worker_stop(&w);
		assert_string_equal(comm_cache__get(&c, getpid(), w.tid), "comm-worker");
		if (how == 0) {
			assert_int_equal(nr, 1);
		} else {
			/* the main thread too; every process: more than this one */
			assert_non_null(comm_cache__find(&c, gettid()));
			if (how == 2)
				assert_true(nr > 2 && comm_cache__find(&c, 1));
			else
				assert_null(comm_cache__find(&c, 1));
		}
		comm_cache__exit(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_records),
		cmocka_unit_test(t_many_forks),
		cmocka_unit_test(t_proc),
		cmocka_unit_test(t_preload),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
