/* lock_load: threads contending one kernel lock (flock on one file, writes to one pipe or to one
 * file), started when a file appears (GOFILE.ready says its threads are there), for a fixed time:
 * a known workload for perfscope lock. */
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static int fd, pipe_fd[2];
static bool use_pipe, use_write;
static char big[1 << 20];
static atomic_int go, stop;
static atomic_long calls;

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	char buf[64] = { 0 };
	long n = 0;

	while (!atomic_load(&go))
		nap_ms(5);
	while (!atomic_load(&stop)) {
		if (use_pipe) {
			if (write(pipe_fd[1], buf, sizeof(buf)) < 0)
				break;
		} else if (use_write) {
			/* the inode's rwsem is held while 1 MiB is copied: the others sleep on it */
			if (pwrite(fd, big, sizeof(big), 0) < 0)
				break;
		} else {
			flock(fd, LOCK_EX);
			flock(fd, LOCK_UN);
		}
		n++;
	}
	atomic_fetch_add(&calls, n);
	return NULL;
}

/* Drains the pipe so that writers never block on a full one. */
static void *reader(void *arg)
{
	char buf[65536];

	while (read(pipe_fd[0], buf, sizeof(buf)) > 0)
		;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[64], rd;
	char ready[4096];
	int n;

	if (argc != 5) {
		fprintf(stderr, "usage: lock_load flock|pipe|write THREADS SECONDS GOFILE\n");
		return 2;
	}
	use_pipe = !strcmp(argv[1], "pipe");
	use_write = !strcmp(argv[1], "write");
	n = atoi(argv[2]);
	if (n < 1 || n > 64)
		return 2;
	if (use_pipe) {
		if (pipe(pipe_fd) || pthread_create(&rd, NULL, reader, NULL))
			return 1;
	} else {
		char path[4096];

		snprintf(path, sizeof(path), "%s.lock", argv[4]);
		fd = open(path, O_RDWR | O_CREAT, 0600);
		if (fd < 0)
			return 1;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 1;
	/* every thread is there: a tracer of -p PID, which finds the threads when it starts, may */
	snprintf(ready, sizeof(ready), "%s.ready", argv[4]);
	close(open(ready, O_WRONLY | O_CREAT, 0600));
	while (access(argv[4], F_OK))
		nap_ms(10);
	atomic_store(&go, 1);
	nap_ms((long)(atof(argv[3]) * 1000));
	atomic_store(&stop, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("%ld\n", atomic_load(&calls));
	return 0;
}
