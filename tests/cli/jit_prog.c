/* A "JIT": two spin loops copied into anonymous executable memory and named in /tmp/perf-PID.map
 * (or, with "dump", in a jitdump /tmp/jit-PID.dump mapped executable, as perf's jitdump asks) as
 * a runtime names its compiled code. It spins in jit_alpha alone until SIGUSR1, then appends
 * jit_beta and spins 3:1 in jit_alpha and jit_beta, for SECONDS in all (x86-64). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <elf.h>
#include <fcntl.h>
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

/* perf's jitdump: a header, then JIT_CODE_LOAD records (tools/perf/util/jitdump.h) */
struct jd_header {
	uint32_t magic, version, total_size, elf_mach, pad1, pid;
	uint64_t timestamp, flags;
};

struct jd_load {
	uint32_t id, total_size;
	uint64_t timestamp;
	uint32_t pid, tid;
	uint64_t vma, code_addr, code_size, code_index;
};

static void dump_load(const char *path, void *addr, const char *name, uint64_t index)
{
	struct jd_load r = { .id = 0,
			     .pid = (uint32_t)getpid(),
			     .tid = (uint32_t)getpid(),
			     .vma = (uint64_t)(unsigned long)addr,
			     .code_addr = (uint64_t)(unsigned long)addr,
			     .code_size = sizeof(loop_code),
			     .code_index = index };
	FILE *f = fopen(path, "a");

	if (!f) {
		perror(path);
		exit(1);
	}
	r.total_size = (uint32_t)(sizeof(r) + strlen(name) + 1 + sizeof(loop_code));
	fwrite(&r, sizeof(r), 1, f);
	fwrite(name, strlen(name) + 1, 1, f);
	fwrite(loop_code, sizeof(loop_code), 1, f);
	fclose(f);
}

/* The header written and the file mapped executable: how perf (and perfscope) find it. */
static void dump_open(const char *path)
{
	struct jd_header h = { .magic = 0x4A695444,
			       .version = 1,
			       .total_size = sizeof(h),
			       .elf_mach = EM_X86_64,
			       .pid = (uint32_t)getpid() };
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);

	if (fd < 0 || write(fd, &h, sizeof(h)) != sizeof(h) ||
	    mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 30);
	unsigned char *code =
		mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	loop_fn alpha, beta;
	char path[64];
	int dump = argc > 2 && !strcmp(argv[2], "dump");

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
	snprintf(path, sizeof(path), dump ? "/tmp/jit-%d.dump" : "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	if (dump) {
		dump_open(path);
		dump_load(path, code, "jit_alpha", 0);
	} else {
		map_line(path, code, "jit_alpha");
	}
	printf("phase1 %d\n", (int)getpid());
	fflush(stdout);
	while (!phase2 && now() < end)
		alpha(3000000);
	if (phase2) {
		if (dump)
			dump_load(path, code + 0x100, "jit_beta", 1);
		else
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
