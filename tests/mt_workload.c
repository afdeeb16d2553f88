/* Workloads with known pairs for multi-trace's tests: sleeps of known lengths, failing calls. */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static void sleep_ns(long ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000L, .tv_nsec = ns % 1000000000L };

	/* the raw call: a libc may route nanosleep through clock_nanosleep */
	while (syscall(SYS_nanosleep, &ts, &ts) && errno == EINTR)
		;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* SIGSTOP to pid, and back once /proc says it stopped (at most a second) */
static int stop_and_wait(pid_t pid)
{
	char path[64], buf[512], *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (kill(pid, SIGSTOP))
		return -1;
	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen(path, "r");
		size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

		if (f)
			fclose(f);
		buf[len] = 0;
		p = strrchr(buf, ')');
		if (p && p[1] == ' ' && p[2] == 'T')
			return 0;
		sleep_ns(1000000L);
	}
	kill(pid, SIGCONT);
	return -1;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;

	if (argc < 2) {
		fprintf(stderr, "usage: mt_workload sleeps | badclose N | closedup N | getppid N | naps N MS [FILE] | udp N | lossrace N CPU_A CPU_B | faults N\n");
		return 2;
	}
	if (!strcmp(argv[1], "faults")) {
		/* N fresh pages touched once: N minor faults at main, in a sanitized build too */
		long page = sysconf(_SC_PAGESIZE);
		volatile char *p = mmap(NULL, (size_t)(n * page), PROT_READ | PROT_WRITE,
					MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		for (long i = 0; i < n; i++)
			p[i * page] = 1;
		return 0;
	}
	if (!strcmp(argv[1], "sleeps")) {
		/* the correctness program: 100 nanosleeps of 2 ms, then one of 30 ms */
		for (int i = 0; i < 100; i++)
			sleep_ns(2000000L);
		sleep_ns(30000000L);
	} else if (!strcmp(argv[1], "badclose")) {
		/* N calls of close(-1): N system calls that fail with EBADF */
		for (long i = 0; i < n; i++)
			syscall(SYS_close, -1);
	} else if (!strcmp(argv[1], "closedup")) {
		/*
		 * N rounds of close(1000000 + i) then dup(1000000 + i), both failing: a start and an
		 * end that carry the same round number, so a pair made across lost events (round i's
		 * close with round j's dup) shows as different numbers.
		 */
		for (long i = 0; i < n; i++) {
			syscall(SYS_close, 1000000 + i);
			syscall(SYS_dup, 1000000 + i);
		}
	} else if (!strcmp(argv[1], "lossrace")) {
		/*
		 * A loss whose LOST record never comes, made certain: with the consumer (perfscope,
		 * the parent) stopped, N closes (2000001..2000000+N, starts) on CPU B, more than its
		 * ring holds, so the last ones are lost and nothing is written there after them
		 * that would carry the LOST record. Then the consumer goes on and, on CPU A after a
		 * pause, dup(2000000+N) ends the call: it must not pair with a close from before the
		 * loss (a different number). Last, close/dup(2000000+N+1) on CPU A: a pair after the
		 * loss, which pairs.
		 */
		int a = argc > 3 ? atoi(argv[3]) : 0, b = argc > 4 ? atoi(argv[4]) : 1;
		pid_t consumer = getppid();

		if (pin(b) || stop_and_wait(consumer))
			return 1;
		for (long i = 1; i <= n; i++)
			syscall(SYS_close, 2000000 + i);
		kill(consumer, SIGCONT);
		if (pin(a))
			return 1;
		sleep_ns(300000000L); /* the consumer reads CPU B's ring: no LOST record there */
		syscall(SYS_dup, 2000000 + n);
		sleep_ns(10000000L);
		syscall(SYS_close, 2000000 + n + 1);
		syscall(SYS_dup, 2000000 + n + 1);
	} else if (!strcmp(argv[1], "getppid")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else if (!strcmp(argv[1], "udp")) {
		/*
		 * N rounds of sendto (whose loopback delivery runs the NET_RX softirq inside the
		 * system call, in this thread), recvfrom, then getppid: calls nested and in sequence
		 */
		struct sockaddr_in a = { .sin_family = AF_INET,
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(a);
		int r = socket(AF_INET, SOCK_DGRAM, 0), s = socket(AF_INET, SOCK_DGRAM, 0);
		char buf[8];

		if (r < 0 || s < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(r, (struct sockaddr *)&a, &len)) {
			perror("mt_workload udp");
			return 1;
		}
		for (long i = 0; i < n; i++) {
			if (sendto(s, "x", 1, 0, (struct sockaddr *)&a, sizeof(a)) != 1 ||
			    recvfrom(r, buf, sizeof(buf), 0, NULL, NULL) != 1) {
				perror("mt_workload udp");
				return 1;
			}
			syscall(SYS_getppid);
		}
		close(r);
		close(s);
	} else if (!strcmp(argv[1], "naps") && argc > 3) {
		/*
		 * N sleeps of MS milliseconds: at least N wakeups of this task. On a loaded machine
		 * it also waits after a preemption, and may block more (a page fault on I/O): FILE
		 * gets the switches the kernel counted, voluntary and not, each ended by a switch-in,
		 * for an exact upper bound.
		 */
		long ms = strtol(argv[3], NULL, 10);
		struct rusage ru;
		FILE *f;

		for (long i = 0; i < n; i++)
			sleep_ns(ms * 1000000L);
		if (argc > 4 && !getrusage(RUSAGE_SELF, &ru)) {
			f = fopen(argv[4], "w");
			if (!f || fprintf(f, "%ld\n", ru.ru_nvcsw + ru.ru_nivcsw) < 0 || fclose(f))
				return 1;
		}
	} else {
		fprintf(stderr, "mt_workload: unknown workload '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
