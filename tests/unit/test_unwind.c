/* Unit tests of common/unwind through the callchain: this process's own stack captured as the
 * kernel samples it (registers + a copy of the stack), unwound by libdw, no kernel needed. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "callchain.h"
#include "said.h"
#include "sample_keep.h"
#include "symcache.h"
#include "unwind.h"

/* In UNWIND_REGS_MASK's bit order: ax bx cx dx si di bp sp ip r8..r15 */
static uint64_t regs[17];
static uint8_t stack_copy[16384] __attribute__((aligned(8)));
static uint64_t stack_len;
static uint64_t stack_end; /* the top of the main thread's stack */

static uint64_t find_stack_end(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t start, end = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") &&
		    sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2)
			break;
	fclose(f);
	assert_true(end != 0);
	return end;
}

/*
 * The stack above rsp, word by word as the kernel copies it: that memory holds other frames'
 * sanitizer redzones, which memcpy (checked even here) would refuse to read.
 */
__attribute__((no_sanitize("address"))) static void copy_stack(uint64_t sp, uint64_t len)
{
	const volatile uint64_t *from = (const volatile uint64_t *)(uintptr_t)sp;
	uint64_t *to = (uint64_t *)(void *)stack_copy;

	for (uint64_t i = 0; i < len / 8; i++)
		to[i] = from[i];
}

/*
 * The registers at one instruction of this function, as PERF_SAMPLE_REGS_USER gives them, and
 * the stack above rsp as PERF_SAMPLE_STACK_USER copies it.
 */
__attribute__((noinline)) void unwind_unit_capture(void);
__attribute__((noinline)) void unwind_unit_capture(void)
{
	uint64_t *r = regs;

	__asm__ volatile("mov %%rax, 0(%0)\n\t"
			 "mov %%rbx, 8(%0)\n\t"
			 "mov %%rcx, 16(%0)\n\t"
			 "mov %%rdx, 24(%0)\n\t"
			 "mov %%rsi, 32(%0)\n\t"
			 "mov %%rdi, 40(%0)\n\t"
			 "mov %%rbp, 48(%0)\n\t"
			 "mov %%rsp, 56(%0)\n\t"
			 "lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 64(%0)\n\t"
			 "mov %%r8, 72(%0)\n\t"
			 "mov %%r9, 80(%0)\n\t"
			 "mov %%r10, 88(%0)\n\t"
			 "mov %%r11, 96(%0)\n\t"
			 "mov %%r12, 104(%0)\n\t"
			 "mov %%r13, 112(%0)\n\t"
			 "mov %%r14, 120(%0)\n\t"
			 "mov %%r15, 128(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	stack_len = stack_end - regs[7];
	if (stack_len > sizeof(stack_copy))
		stack_len = sizeof(stack_copy);
	copy_stack(regs[7], stack_len);
}

__attribute__((noinline)) int unwind_unit_b(int x);
__attribute__((noinline)) int unwind_unit_b(int x)
{
	unwind_unit_capture();
	__asm__ volatile("" ::: "memory"); /* no tail call: this frame stays */
	return x + 1;
}

__attribute__((noinline)) int unwind_unit_a(int x);
__attribute__((noinline)) int unwind_unit_a(int x)
{
	int r = unwind_unit_b(x * 2);

	__asm__ volatile("" ::: "memory");
	return r + 3;
}

static struct psc_sample sample(uint64_t size)
{
	struct psc_sample s = {
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.pid = (uint32_t)getpid(),
		.tid = (uint32_t)getpid(),
		.regs_user = { .abi = PERF_SAMPLE_REGS_ABI_64,
			       .mask = UNWIND_REGS_MASK,
			       .nr = 17,
			       .regs = regs },
	};

	s.stack_user.size = size < stack_len ? size : stack_len;
	s.stack_user.dyn_size = s.stack_user.size;
	s.stack_user.data = stack_copy;
	return s;
}

static void t_unwind_own_stack(void **state)
{
	struct callchain *cc = callchain__new(&(struct say){ said_line, "unitprof" });
	struct unwind_stats st;
	struct psc_sample s;
	char buf[4096];
	const char *want = "unwind_unit_a;unwind_unit_b;unwind_unit_capture";
	const char *at;

	(void)state;
	assert_non_null(cc);
	stack_end = find_stack_end();
	assert_int_equal(unwind_unit_a(1), 6);
	s = sample(sizeof(stack_copy));
	assert_true(callchain__fold(cc, &s, "unit", buf, sizeof(buf)) > 0);
	/* root first: the process's entry, main, cmocka's runner, then our three, leaf last */
	at = strstr(buf, want);
	assert_non_null(at);
	assert_string_equal(at, want);
	assert_non_null(strstr(buf, ";main;"));
	assert_int_equal(strncmp(buf, "unit;", 5), 0);
	assert_true(callchain__unwind_stats(cc, &st, NULL));
	assert_int_equal(st.stacks, 1);
	assert_int_equal(st.stops[UNWIND_COMPLETE], 1);
	assert_true(st.frames >= 5);
	/* the same sample folded again is not unwound again */
	assert_true(callchain__fold(cc, &s, "unit", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, want));
	callchain__unwind_stats(cc, &st, NULL);
	assert_int_equal(st.stacks, 1);
	callchain__delete(cc);
}

static void t_truncated(void **state)
{
	struct callchain *cc = callchain__new(&(struct say){ said_line, "unitprof" });
	struct unwind_stats st;
	struct psc_sample s;
	char buf[4096], *text = NULL;
	size_t len;
	FILE *f;
	int fd = memfd_create("json", 0);
	struct out *o = out__new(fd, 0);
	struct json j;
	ssize_t n;

	(void)state;
	assert_non_null(cc);
	assert_non_null(o);
	stack_end = find_stack_end();
	unwind_unit_a(1);
	/* 16 bytes of stack: the capture's frame is deeper, the unwind stops within it */
	s = sample(16);
	assert_true(callchain__fold(cc, &s, NULL, buf, sizeof(buf)) > 0);
	assert_null(strstr(buf, "main"));
	assert_non_null(strstr(buf, "unwind_unit_capture"));
	callchain__unwind_stats(cc, &st, NULL);
	assert_int_equal(st.stacks, 1);
	assert_int_equal(st.stops[UNWIND_STACK_SHORT], 1);
	assert_int_equal(st.stops[UNWIND_COMPLETE], 0);

	said_to = f = open_memstream(&text, &len);
	callchain__say_unwind(cc, false);
	fclose(f);
	said_to = NULL;
	assert_non_null(strstr(text,
			       "perfscope unitprof: DWARF unwinding: 1 user stacks, 0 complete, "
			       "1 truncated (1 stack copy too short)"));
	assert_non_null(strstr(text, "--call-graph dwarf,SIZE"));
	free(text);

	json__begin(&j, o);
	json__key(&j, "unwind");
	callchain__unwind_json(cc, &j);
	json__end_line(&j);
	assert_int_equal(out__flush(o), 0);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strstr(buf, "{\"unwind\":{\"stacks\":1,\"truncated\":1,\"complete\":0,"));
	assert_non_null(strstr(buf, "\"stack_short\":1,"));
	out__delete(o);
	close(fd);
	callchain__delete(cc);
}

static void t_no_user(void **state)
{
	struct symcache *sc = symcache__new(NULL);
	struct unwind *uw = unwind__new(symcache__usyms(sc));
	struct psc_sample s;
	enum unwind_stop stop;
	struct unwind_stats st;
	uint64_t ips[8];

	(void)state;
	assert_non_null(uw);
	stack_end = find_stack_end();
	unwind_unit_a(1);
	/* a kernel thread: no user registers */
	s = sample(sizeof(stack_copy));
	s.regs_user.abi = PERF_SAMPLE_REGS_ABI_NONE;
	assert_int_equal(unwind__sample(uw, &s, ips, 8, &stop), 0);
	assert_int_equal(stop, UNWIND_NO_USER);
	/* registers without ip or sp cannot start an unwind */
	s = sample(sizeof(stack_copy));
	s.regs_user.mask &= ~(1ull << UNWIND_PERF_REG_SP);
	s.regs_user.nr = 16;
	assert_int_equal(unwind__sample(uw, &s, ips, 8, &stop), 0);
	assert_int_equal(stop, UNWIND_NO_USER);
	/* a 32-bit process: its ip alone, counted as another reason */
	s = sample(sizeof(stack_copy));
	s.regs_user.abi = PERF_SAMPLE_REGS_ABI_32;
	assert_int_equal(unwind__sample(uw, &s, ips, 8, &stop), 1);
	assert_int_equal(stop, UNWIND_OTHER);
	assert_int_equal(ips[0], regs[8]);
	/* at most max frames: the first ones, innermost first */
	s = sample(sizeof(stack_copy));
	assert_int_equal(unwind__sample(uw, &s, ips, 2, &stop), 2);
	assert_int_equal(stop, UNWIND_MAX_DEPTH);
	assert_int_equal(ips[0], regs[8]);
	unwind__stats(uw, &st);
	assert_int_equal(st.stacks, 4);
	assert_int_equal(st.stops[UNWIND_NO_USER], 2);
	assert_string_equal(st.other, "32-bit process");
	assert_int_equal(st.procs, 1);
	/* an exec or exit drops the process's Dwfl */
	unwind__forget(uw, getpid());
	unwind__stats(uw, &st);
	assert_int_equal(st.procs, 0);
	assert_string_equal(unwind__stop_key(UNWIND_STACK_SHORT), "stack_short");
	assert_string_equal(unwind__stop_text(UNWIND_STACK_SHORT), "stack copy too short");
	unwind__delete(uw);
	symcache__delete(sc);
}

/*
 * A sample kept past its ring round (a pair's start printed at its end, a --detail backlog): the
 * copy owns the stack and registers, so the unwind is the same once the record is overwritten.
 */
static void t_kept_copy(void **state)
{
	struct callchain *cc = callchain__new(&(struct say){ said_line, "unitprof" });
	struct unwind_stats st;
	struct psc_sample s, *kept;
	char buf[4096];
	const char *want = "unwind_unit_a;unwind_unit_b;unwind_unit_capture";
	const char *at;

	(void)state;
	assert_non_null(cc);
	stack_end = find_stack_end();
	unwind_unit_a(1);
	s = sample(sizeof(stack_copy));
	kept = sample_keep__dup(&s);
	assert_non_null(kept);
	/* the ring's bytes are reused by later records */
	memset(stack_copy, 0xa5, sizeof(stack_copy));
	memset(regs, 0, sizeof(regs));
	assert_true(callchain__fold(cc, kept, "unit", buf, sizeof(buf)) > 0);
	at = strstr(buf, want);
	assert_non_null(at);
	assert_string_equal(at, want);
	assert_non_null(strstr(buf, ";main;"));
	callchain__unwind_stats(cc, &st, NULL);
	assert_int_equal(st.stacks, 1);
	assert_int_equal(st.stops[UNWIND_COMPLETE], 1);
	free(kept);
	callchain__delete(cc);
}

/*
 * Registers without a stack copy (the kernel copied none, or a kept sample lost it: the state
 * that crashed multi-trace --than with dwarf stacks, dyn_size set and data NULL): the ip alone,
 * counted as "no stack copy", the stack never read. Registers the sample does not hold (NULL, or
 * fewer than the mask says) are no user stack at all.
 */
static void t_no_stack(void **state)
{
	struct callchain *cc = callchain__new(&(struct say){ said_line, "unitprof" });
	struct symcache *sc = symcache__new(NULL);
	struct unwind *uw = unwind__new(symcache__usyms(sc));
	struct unwind_stats st;
	struct psc_sample s;
	enum unwind_stop stop;
	uint64_t ips[8];
	char buf[4096], *text = NULL;
	size_t len;
	FILE *f;
	int fd = memfd_create("json", 0);
	struct out *o = out__new(fd, 0);
	struct json j;
	ssize_t n;

	(void)state;
	assert_non_null(cc);
	assert_non_null(uw);
	assert_non_null(o);
	stack_end = find_stack_end();
	unwind_unit_a(1);
	/* the kernel had no room for the stack: size 0 */
	s = sample(sizeof(stack_copy));
	s.stack_user.size = s.stack_user.dyn_size = 0;
	s.stack_user.data = NULL;
	assert_int_equal(unwind__sample(uw, &s, ips, 8, &stop), 1);
	assert_int_equal(stop, UNWIND_NO_STACK);
	assert_int_equal(ips[0], regs[8]);
	/* a copy that dropped the stack but kept its size: never read through NULL */
	s = sample(sizeof(stack_copy));
	s.stack_user.data = NULL;
	assert_int_equal(unwind__sample(uw, &s, ips, 8, &stop), 1);
	assert_int_equal(stop, UNWIND_NO_STACK);
	/* registers announced but not there */
	s = sample(sizeof(stack_copy));
	s.regs_user.regs = NULL;
	assert_int_equal(unwind__sample(uw, &s, ips, 8, &stop), 0);
	assert_int_equal(stop, UNWIND_NO_USER);
	s = sample(sizeof(stack_copy));
	s.regs_user.nr = 4; /* ax bx cx dx: sp and ip would be read beyond them */
	assert_int_equal(unwind__sample(uw, &s, ips, 8, &stop), 0);
	assert_int_equal(stop, UNWIND_NO_USER);
	unwind__stats(uw, &st);
	assert_int_equal(st.stacks, 4);
	assert_int_equal(st.stops[UNWIND_NO_STACK], 2);
	assert_int_equal(st.stops[UNWIND_NO_USER], 2);
	assert_int_equal(st.frames, 2);
	assert_string_equal(unwind__stop_key(UNWIND_NO_STACK), "no_stack");
	assert_string_equal(unwind__stop_text(UNWIND_NO_STACK), "no stack copy");

	/* reported among the truncated unwinds, in text and JSON */
	s = sample(sizeof(stack_copy));
	s.stack_user.data = NULL;
	assert_true(callchain__fold(cc, &s, "unit", buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "unwind_unit_capture"));
	assert_null(strstr(buf, "unwind_unit_b"));
	said_to = f = open_memstream(&text, &len);
	callchain__say_unwind(cc, false);
	fclose(f);
	said_to = NULL;
	assert_non_null(strstr(text, "DWARF unwinding: 1 user stacks, 0 complete, 1 truncated "
				     "(1 no stack copy)"));
	free(text);
	json__begin(&j, o);
	json__key(&j, "unwind");
	callchain__unwind_json(cc, &j);
	json__end_line(&j);
	assert_int_equal(out__flush(o), 0);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	assert_true(n > 0);
	buf[n] = 0;
	assert_non_null(strstr(buf, "\"truncated\":1,"));
	assert_non_null(strstr(buf, "\"no_stack\":1,"));
	out__delete(o);
	close(fd);
	unwind__delete(uw);
	symcache__delete(sc);
	callchain__delete(cc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_unwind_own_stack), cmocka_unit_test(t_truncated),
		cmocka_unit_test(t_no_user),	      cmocka_unit_test(t_kept_copy),
		cmocka_unit_test(t_no_stack),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
