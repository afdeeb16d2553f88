/* A "JIT": two spin loops copied into anonymous executable memory and named in /tmp/perf-PID.map
 * as a runtime names its compiled code. It spins in jit_alpha alone until SIGUSR1, then appends
 * jit_beta to the map and spins 3:1 in jit_alpha and jit_beta, for SECONDS in all (x86-64). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>

typedef unsigned long (*loop_fn)(unsigned long);

/* mov %rdi,%rax; 1: dec %rax; jnz 1b; ret */
static const unsigned char loop_code[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };

static volatile sig_atomic_t phase2;

static void on_usr1(int sig)
{
	phase2 = 1;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void map_line(const char *path, void *addr, const char *name)
{
	FILE *f = fopen(path, "a");

	if (!f) {
		perror(path);
		exit(1);
	}
	fprintf(f, "%lx %zx %s\n", (unsigned long)addr, sizeof(loop_code), name);
	fclose(f);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 30);
	unsigned char *code =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	loop_fn alpha, beta;
	char path[64];

	if (code == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memcpy(code, loop_code, sizeof(loop_code));
	memcpy(code + 0x100, loop_code, sizeof(loop_code));
	if (mprotect(code, 4096, PROT_READ | PROT_EXEC)) {
		perror("mprotect");
		return 1;
	}
	alpha = (loop_fn)(void *)code;
	beta = (loop_fn)(void *)(code + 0x100);
	signal(SIGUSR1, on_usr1);
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	map_line(path, code, "jit_alpha");
	printf("phase1 %d\n", (int)getpid());
	fflush(stdout);
	while (!phase2 && now() < end)
		alpha(3000000);
	if (phase2) {
		map_line(path, code + 0x100, "jit_beta");
		printf("phase2\n");
		fflush(stdout);
	}
	while (now() < end) {
		alpha(3000000);
		beta(1000000);
	}
	unlink(path);
	return 0;
}
