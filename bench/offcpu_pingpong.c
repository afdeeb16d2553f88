/* offcpu_pingpong: two threads bounce a byte through two pipes for a time; prints round trips/s. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int ping[2], pong[2];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The other side: each byte read is sent back; EOF ends it. */
static void *echo(void *arg)
{
	char c;

	while (read(ping[0], &c, 1) == 1)
		if (write(pong[1], &c, 1) != 1)
			break;
	return NULL;
}

/* offcpu_pingpong SECONDS: the round trips per second, on stdout */
int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2, t0, t;
	uint64_t n = 0;
	pthread_t th;
	char c = 'x';

	if (pipe(ping) || pipe(pong) || pthread_create(&th, NULL, echo, NULL))
		return 1;
	t0 = now_s();
	do {
		/* 1000 round trips between clock reads: the clock costs nothing in the rate */
		for (int i = 0; i < 1000; i++, n++)
			if (write(ping[1], &c, 1) != 1 || read(pong[0], &c, 1) != 1)
				return 1;
		t = now_s();
	} while (t - t0 < secs);
	close(ping[1]);
	pthread_join(th, NULL);
	printf("%.0f\n", (double)n / (t - t0));
	return 0;
}
