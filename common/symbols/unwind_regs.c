/* The sample's user registers and its copy of the user stack, given to libdw as one thread's
 * state and memory (words outside the copy read from the binaries' loaded sections). */
#include <string.h>
#include <gelf.h>

#include "unwind_internal.h"

/* x86-64 DWARF register numbers 0..16 (rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip) as perf's */
static const int dwarf_to_perf[17] = {
	UNWIND_PERF_REG_AX,	UNWIND_PERF_REG_DX,	UNWIND_PERF_REG_CX,
	UNWIND_PERF_REG_BX,	UNWIND_PERF_REG_SI,	UNWIND_PERF_REG_DI,
	UNWIND_PERF_REG_BP,	UNWIND_PERF_REG_SP,	UNWIND_PERF_REG_R8 + 0,
	UNWIND_PERF_REG_R8 + 1, UNWIND_PERF_REG_R8 + 2, UNWIND_PERF_REG_R8 + 3,
	UNWIND_PERF_REG_R8 + 4, UNWIND_PERF_REG_R8 + 5, UNWIND_PERF_REG_R8 + 6,
	UNWIND_PERF_REG_R8 + 7, UNWIND_PERF_REG_IP,
};

/* Register r (perf numbering) of the sample's user registers; false when not sampled. */
bool unwind_regs__perf_reg(const struct psc_sample_regs *regs, int r, uint64_t *val)
{
	uint64_t bit = 1ull << r;
	unsigned int at = (unsigned int)__builtin_popcountll(regs->mask & (bit - 1));

	if (!regs->abi || !(regs->mask & bit) || !regs->regs || at >= regs->nr)
		return false;
	*val = regs->regs[at];
	return true;
}

/* ---- libdw's thread callbacks: one thread, the sample's ---- */

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	return 0; /* threads are asked for by tid (get_thread) */
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	*thread_argp = dwfl_arg;
	return true;
}

/* A word of a binary's loaded sections, for a CFI expression that reads one. */
static bool read_binary(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, addr);
	Elf_Scn *scn = NULL;
	Dwarf_Addr bias;
	Elf *elf;

	if (!mod || !(elf = dwfl_module_getelf(mod, &bias)))
		return false;
	addr -= bias;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || addr < sh.sh_addr ||
		    addr + sizeof(*out) > sh.sh_addr + sh.sh_size)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr + sizeof(*out) > d->d_size)
			return false;
		memcpy(out, (const char *)d->d_buf + (addr - sh.sh_addr), sizeof(*out));
		return true;
	}
	return false;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	struct unwind *uw = ((struct uproc *)dwfl_arg)->uw;
	const struct psc_sample *s = uw->s;
	uint64_t valid = s->stack_user.data ? s->stack_user.dyn_size : 0;

	if (addr >= uw->sp && addr - uw->sp <= valid &&
	    valid - (addr - uw->sp) >= sizeof(*result)) {
		memcpy(result, (const char *)s->stack_user.data + (addr - uw->sp), sizeof(*result));
		return true;
	}
	if (read_binary(dwfl, addr, result))
		return true;
	/*
	 * Above the copy: when the kernel copied all it was asked for (dyn_size == size), the
	 * stack goes on beyond it and a larger SIZE would have had the word; a shorter copy ended
	 * at the top of the stack, and the unwinder went astray.
	 */
	if (addr >= uw->sp + valid && valid + 64 >= s->stack_user.size)
		uw->read_short = true;
	else
		uw->read_bad = true;
	/*
	 * The word reads as 0, a return address that ends the stack: failing the read would
	 * send libdw on to .debug_frame, loading (and inflating) the binary's whole DWARF for a
	 * stack that cannot go on anyway. The flags above say why it ended.
	 */
	*result = 0;
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct unwind *uw = ((struct uproc *)thread_arg)->uw;
	const struct psc_sample_regs *regs = &uw->s->regs_user;
	uint64_t ip;

	for (int r = 0; r < 17; r++) {
		Dwarf_Word v;

		if (unwind_regs__perf_reg(regs, dwarf_to_perf[r], &v) &&
		    !dwfl_thread_state_registers(thread, r, 1, &v))
			return false;
	}
	if (!unwind_regs__perf_reg(regs, UNWIND_PERF_REG_IP, &ip))
		return false;
	dwfl_thread_state_register_pc(thread, ip);
	return true;
}

const Dwfl_Thread_Callbacks unwind_regs__thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};
