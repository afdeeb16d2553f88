/* The expression language's VM: runs the bytecode over one event (threaded dispatch), with the
 * string functions, printf and glob matching it calls. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "expr_internal.h"
#include "ksyms.h"
#include "syscall_names.h"

#define VM_STACK 256

/* The bytes of each load, I_LD_U8 to I_LD_U64. */
static const uint8_t ld_size[] = { 1, 1, 2, 2, 4, 4, 8 };

const char *expr_opcode_name(int op)
{
	static const char *const names[NR_OPCODES] = {
		[I_IMM] = "imm",	 [I_STR] = "str",	   [I_PUSH] = "push",
		[I_PUSHS] = "pushs",	 [I_LD_U8] = "ld.u8",	   [I_LD_S8] = "ld.s8",
		[I_LD_U16] = "ld.u16",	 [I_LD_S16] = "ld.s16",	   [I_LD_U32] = "ld.u32",
		[I_LD_S32] = "ld.s32",	 [I_LD_U64] = "ld.u64",	   [I_LD_STR] = "ld.str",
		[I_LD_ELEM] = "ld.elem", [I_LD_CPU] = "ld._cpu",   [I_LD_PID] = "ld._pid",
		[I_LD_TID] = "ld._tid",	 [I_LD_TIME] = "ld._time", [I_LD_PERIOD] = "ld._period",
		[I_LD_VAR] = "ld.var", [I_LD_AT] = "ld.at",	 [I_ADD] = "add",	   [I_SUB] = "sub",
		[I_MUL] = "mul",	 [I_DIVS] = "div",	   [I_DIVU] = "divu",
		[I_MODS] = "mod",	 [I_MODU] = "modu",	   [I_AND] = "and",
		[I_OR] = "or",		 [I_XOR] = "xor",	   [I_SHL] = "shl",
		[I_SHRS] = "sar",	 [I_SHRU] = "shr",	   [I_EQ] = "eq",
		[I_NE] = "ne",		 [I_LTS] = "lt",	   [I_LTU] = "ltu",
		[I_LES] = "le",		 [I_LEU] = "leu",	   [I_GTS] = "gt",
		[I_GTU] = "gtu",	 [I_GES] = "ge",	   [I_GEU] = "geu",
		[I_ADDI] = "add.i",	 [I_SUBI] = "sub.i",	   [I_MULI] = "mul.i",
		[I_DIVSI] = "div.i",	 [I_DIVUI] = "divu.i",	   [I_MODSI] = "mod.i",
		[I_MODUI] = "modu.i",	 [I_ANDI] = "and.i",	   [I_ORI] = "or.i",
		[I_XORI] = "xor.i",	 [I_SHLI] = "shl.i",	   [I_SHRSI] = "sar.i",
		[I_SHRUI] = "shr.i",	 [I_EQI] = "eq.i",	   [I_NEI] = "ne.i",
		[I_LTSI] = "lt.i",	 [I_LTUI] = "ltu.i",	   [I_LESI] = "le.i",
		[I_LEUI] = "leu.i",	 [I_GTSI] = "gt.i",	   [I_GTUI] = "gtu.i",
		[I_GESI] = "ge.i",	 [I_GEUI] = "geu.i",	   [I_F_EQ] = "f.eq.i",
		[I_F_NE] = "f.ne.i",	 [I_F_LTS] = "f.lt.i",	   [I_F_LTU] = "f.ltu.i",
		[I_F_LES] = "f.le.i",	 [I_F_LEU] = "f.leu.i",	   [I_F_GTS] = "f.gt.i",
		[I_F_GTU] = "f.gtu.i",	 [I_F_GES] = "f.ge.i",	   [I_F_GEU] = "f.geu.i",
		[I_NEG] = "neg",	 [I_NOT] = "not",	   [I_LNOT] = "lnot",
		[I_BOOL] = "bool",	 [I_SEXT8] = "sext8",	   [I_SEXT16] = "sext16",
		[I_SEXT32] = "sext32",	 [I_ZEXT8] = "zext8",	   [I_ZEXT16] = "zext16",
		[I_ZEXT32] = "zext32",	 [I_SEQ] = "streq",	   [I_SNE] = "strne",
		[I_GLOB] = "glob",	 [I_SEQI] = "streq.i",	   [I_SNEI] = "strne.i",
		[I_GLOBI] = "glob.i",	 [I_JMP] = "jmp",	   [I_JZ] = "jz",
		[I_JNZ1] = "jnz1",	 [I_KSYM] = "ksymbol",	   [I_SYSCALL] = "syscall_name",
		[I_COMM] = "comm_get",	 [I_PRINTF] = "printf",	   [I_NTOHL] = "ntohl",
		[I_NTOHS] = "ntohs",	 [I_RET] = "ret",
	};

	return op >= 0 && op < NR_OPCODES && names[op] ? names[op] : "?";
}

/* [abc], [a-z], [!a] or [^a] at p[*i] == '['; -1 when it is no class (no closing ']'). */
static int glob_class(const char *p, uint32_t pn, uint32_t *i, unsigned char c)
{
	uint32_t j = *i + 1;
	bool neg = false, match = false;

	if (j < pn && (p[j] == '!' || p[j] == '^')) {
		neg = true;
		j++;
	}
	for (uint32_t first = j; j < pn && (p[j] != ']' || j == first); j++) {
		unsigned char lo = (unsigned char)p[j], hi = lo;

		if (j + 2 < pn && p[j + 1] == '-' && p[j + 2] != ']') {
			hi = (unsigned char)p[j + 2];
			j += 2;
		}
		if (c >= lo && c <= hi)
			match = true;
	}
	if (j >= pn)
		return -1;
	*i = j + 1;
	return match != neg;
}

/* A shell glob over bytes: * ? [..] and \x; the whole string must match. No recursion. */
bool expr_glob(const char *p, uint32_t pn, const char *s, uint32_t sn)
{
	uint32_t pi = 0, si = 0, star = UINT32_MAX, star_s = 0;

	while (si < sn) {
		if (pi < pn) {
			uint32_t end = pi;
			int m;

			switch (p[pi]) {
			case '*':
				star = ++pi;
				star_s = si;
				continue;
			case '?':
				pi++;
				si++;
				continue;
			case '[':
				m = glob_class(p, pn, &end, (unsigned char)s[si]);
				if (m > 0) {
					pi = end;
					si++;
					continue;
				}
				if (m == 0)
					break;
				goto literal;
			case '\\':
				if (pi + 1 < pn) {
					if (p[pi + 1] == s[si]) {
						pi += 2;
						si++;
						continue;
					}
					break;
				}
				/* a trailing backslash is itself */
				goto literal;
			default:
			literal:
				if (p[pi] == s[si]) {
					pi++;
					si++;
					continue;
				}
				break;
			}
		}
		if (star == UINT32_MAX)
			return false;
		/* the last star takes one more byte */
		pi = star;
		si = ++star_s;
	}
	while (pi < pn && p[pi] == '*')
		pi++;
	return pi == pn;
}

/* Bytes of buf used so far, kept under EXPR_STRBUF (the text is cut, never overrun). */
static uint32_t put(char *buf, uint32_t at, const char *s, uint32_t len)
{
	if (at + len > EXPR_STRBUF - 1)
		len = EXPR_STRBUF - 1 - at;
	memcpy(buf + at, s, len);
	return at + len;
}

/*
 * The spec was built and checked by the parser (flags, width, precision, one conversion), so a
 * format that is not a literal is safe here.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
uint32_t expr_printf(const struct pf_format *f, const uint64_t *args, const uint32_t *lens,
		     char *buf)
{
	uint32_t at = 0;
	int k = 0;

	for (int i = 0; i < f->nr; i++) {
		const struct pf_conv *c = &f->convs[i];
		size_t room;
		int n;

		at = put(buf, at, c->lit, c->lit_len);
		if (!c->conv)
			continue;
		room = EXPR_STRBUF - at;
		if (c->conv == 's') {
			uint32_t len = lens[k];
			int prec = c->prec >= 0 && (uint32_t)c->prec < len ? c->prec : (int)len;

			n = snprintf(buf + at, room, c->spec, prec,
				     (const char *)(uintptr_t)args[k]);
		} else if (c->conv == 'c') {
			n = snprintf(buf + at, room, c->spec, (int)(unsigned char)args[k]);
		} else {
			struct expr_type t = { EXPR_INT, c->lenmod,
					       c->conv == 'd' || c->conv == 'i', false };

			n = snprintf(buf + at, room, c->spec, (long long)expr_convert(t, args[k]));
		}
		k++;
		if (n > 0)
			at += (uint32_t)n < room ? (uint32_t)n : (uint32_t)room - 1;
	}
	buf[at] = 0;
	return at;
}
#pragma GCC diagnostic pop

int expr_val__snprint(struct expr_type t, const struct expr_val *v, char *buf, size_t len)
{
	if (t.kind == EXPR_STR)
		return snprintf(buf, len, "%.*s", (int)v->len, v->s ? v->s : "");
	if (t.is_ptr)
		return snprintf(buf, len, "0x%llx", (unsigned long long)v->i);
	if (t.is_signed)
		return snprintf(buf, len, "%lld", (long long)v->i);
	return snprintf(buf, len, "%llu", (unsigned long long)v->i);
}

/* Element idx of an array field (a string's chars too), signed as the format says. */
static int load_elem(const struct psc_tp_field *f, const void *raw, uint32_t size, uint64_t idx,
		     uint64_t *v)
{
	const void *data;
	uint32_t len, es = f->elem_size;

	if (psc_tp_field__data(f, raw, size, &data, &len))
		return -ERANGE;
	if (idx >= len / es)
		return -ERANGE;
	*v = psc_tp__load_int((const uint8_t *)data + idx * es, es, f->is_signed);
	return 0;
}

static const char *str_field(const struct psc_tp_field *f, const void *raw, uint32_t size,
			     uint32_t *len)
{
	return psc_tp_field__str(f, raw, size, len);
}

#define PTR(x) ((uint64_t)(uintptr_t)(x))
#define CSTR(x) ((const char *)(uintptr_t)(x))

static int run_vm(struct expr *e, const void *raw, uint32_t size, const struct psc_sample *s,
		  struct expr_val *out);

int expr__eval(struct expr *e, const void *raw, uint32_t size, const struct psc_sample *s,
	       struct expr_val *out)
{
	/* one field's load needs neither the VM's frame nor its dispatch */
	if (e->load_size) {
		uint32_t off = e->code[0].arg;

		if ((uint64_t)off + e->load_size > size)
			return run_vm(e, raw, size, s, out); /* which counts the error */
		out->i = psc_tp__load_int((const uint8_t *)raw + off, e->load_size, e->load_signed);
		out->s = NULL;
		out->len = 0;
		return 0;
	}
	return run_vm(e, raw, size, s, out);
}

__attribute__((noinline)) static int run_vm(struct expr *e, const void *raw, uint32_t size,
					    const struct psc_sample *s, struct expr_val *out)
{
	static const struct psc_sample none;
	static const void *const labels[NR_OPCODES] = {
		[I_IMM] = &&l_imm,	   [I_STR] = &&l_str,	      [I_PUSH] = &&l_push,
		[I_PUSHS] = &&l_pushs,	   [I_LD_U8] = &&l_ld_u8,     [I_LD_S8] = &&l_ld_s8,
		[I_LD_U16] = &&l_ld_u16,   [I_LD_S16] = &&l_ld_s16,   [I_LD_U32] = &&l_ld_u32,
		[I_LD_S32] = &&l_ld_s32,   [I_LD_U64] = &&l_ld_u64,   [I_LD_STR] = &&l_ld_str,
		[I_LD_ELEM] = &&l_ld_elem, [I_LD_CPU] = &&l_ld_cpu,   [I_LD_PID] = &&l_ld_pid,
		[I_LD_TID] = &&l_ld_tid,   [I_LD_TIME] = &&l_ld_time, [I_LD_PERIOD] = &&l_ld_period,
		[I_LD_VAR] = &&l_ld_var, [I_LD_AT] = &&l_ld_at,   [I_ADD] = &&l_add,	      [I_SUB] = &&l_sub,
		[I_MUL] = &&l_mul,	   [I_DIVS] = &&l_divs,	      [I_DIVU] = &&l_divu,
		[I_MODS] = &&l_mods,	   [I_MODU] = &&l_modu,	      [I_AND] = &&l_and,
		[I_OR] = &&l_or,	   [I_XOR] = &&l_xor,	      [I_SHL] = &&l_shl,
		[I_SHRS] = &&l_shrs,	   [I_SHRU] = &&l_shru,	      [I_EQ] = &&l_eq,
		[I_NE] = &&l_ne,	   [I_LTS] = &&l_lts,	      [I_LTU] = &&l_ltu,
		[I_LES] = &&l_les,	   [I_LEU] = &&l_leu,	      [I_GTS] = &&l_gts,
		[I_GTU] = &&l_gtu,	   [I_GES] = &&l_ges,	      [I_GEU] = &&l_geu,
		[I_ADDI] = &&l_addi,	   [I_SUBI] = &&l_subi,	      [I_MULI] = &&l_muli,
		[I_DIVSI] = &&l_divsi,	   [I_DIVUI] = &&l_divui,     [I_MODSI] = &&l_modsi,
		[I_MODUI] = &&l_modui,	   [I_ANDI] = &&l_andi,	      [I_ORI] = &&l_ori,
		[I_XORI] = &&l_xori,	   [I_SHLI] = &&l_shli,	      [I_SHRSI] = &&l_shrsi,
		[I_SHRUI] = &&l_shrui,	   [I_EQI] = &&l_eqi,	      [I_NEI] = &&l_nei,
		[I_LTSI] = &&l_ltsi,	   [I_LTUI] = &&l_ltui,	      [I_LESI] = &&l_lesi,
		[I_LEUI] = &&l_leui,	   [I_GTSI] = &&l_gtsi,	      [I_GTUI] = &&l_gtui,
		[I_GESI] = &&l_gesi,	   [I_GEUI] = &&l_geui,	      [I_F_EQ] = &&l_f_eq,
		[I_F_NE] = &&l_f_ne,	   [I_F_LTS] = &&l_f_lts,     [I_F_LTU] = &&l_f_ltu,
		[I_F_LES] = &&l_f_les,	   [I_F_LEU] = &&l_f_leu,     [I_F_GTS] = &&l_f_gts,
		[I_F_GTU] = &&l_f_gtu,	   [I_F_GES] = &&l_f_ges,     [I_F_GEU] = &&l_f_geu,
		[I_NEG] = &&l_neg,	   [I_NOT] = &&l_not,	      [I_LNOT] = &&l_lnot,
		[I_BOOL] = &&l_bool,	   [I_SEXT8] = &&l_sext8,     [I_SEXT16] = &&l_sext16,
		[I_SEXT32] = &&l_sext32,   [I_ZEXT8] = &&l_zext8,     [I_ZEXT16] = &&l_zext16,
		[I_ZEXT32] = &&l_zext32,   [I_SEQ] = &&l_seq,	      [I_SNE] = &&l_sne,
		[I_GLOB] = &&l_glob,	   [I_SEQI] = &&l_seqi,	      [I_SNEI] = &&l_snei,
		[I_GLOBI] = &&l_globi,	   [I_JMP] = &&l_jmp,	      [I_JZ] = &&l_jz,
		[I_JNZ1] = &&l_jnz1,	   [I_KSYM] = &&l_ksym,	      [I_SYSCALL] = &&l_syscall,
		[I_COMM] = &&l_comm,	   [I_PRINTF] = &&l_printf,   [I_NTOHL] = &&l_ntohl,
		[I_NTOHS] = &&l_ntohs,	   [I_RET] = &&l_ret,
	};
	const struct insn *pc = e->code;
	const uint8_t *r = raw;
	uint64_t st[VM_STACK], a = 0, b;
	uint32_t sl[VM_STACK], alen = 0;
	int sp = 0, err;

	if (!s)
		s = &none;

#define DISPATCH() goto *labels[pc->op]
#define NEXT()              \
	do {                \
		pc++;       \
		DISPATCH(); \
	} while (0)
#define LOAD(type, conv)                                     \
	do {                                                 \
		type x_;                                     \
		if ((uint64_t)pc->arg + sizeof(type) > size) \
			goto range;                          \
		memcpy(&x_, r + pc->arg, sizeof(type));      \
		a = (uint64_t)(conv)x_;                      \
		NEXT();                                      \
	} while (0)
#define BIN(expr)             \
	do {                  \
		b = st[--sp]; \
		a = (expr);   \
		NEXT();       \
	} while (0)
#define BINI(expr)           \
	do {                 \
		b = pc->imm; \
		a = (expr);  \
		NEXT();      \
	} while (0)
#define SA ((int64_t)a)
#define SB ((int64_t)b)

	DISPATCH();
l_imm:
	a = pc->imm;
	NEXT();
l_str:
	a = PTR(e->lits[pc->arg].s);
	alen = e->lits[pc->arg].len;
	NEXT();
l_push:
	st[sp++] = a;
	NEXT();
l_pushs:
	sl[sp] = alen;
	st[sp++] = a;
	NEXT();
l_ld_u8:
	LOAD(uint8_t, uint8_t);
l_ld_s8:
	LOAD(int8_t, int64_t);
l_ld_u16:
	LOAD(uint16_t, uint16_t);
l_ld_s16:
	LOAD(int16_t, int64_t);
l_ld_u32:
	LOAD(uint32_t, uint32_t);
l_ld_s32:
	LOAD(int32_t, int64_t);
l_ld_u64:
	LOAD(uint64_t, uint64_t);
l_ld_str : {
	const char *p = str_field(e->fields[pc->arg], raw, size, &alen);

	if (!p)
		goto range;
	a = PTR(p);
	NEXT();
}
l_ld_elem:
	if (load_elem(e->fields[pc->arg], raw, size, a, &a))
		goto range;
	NEXT();
l_ld_at: /* a pointer into the event, read inside it only */
	if (a > size || pc->arg > size - a)
		goto range;
	a = psc_tp__load_int(r + a, pc->arg, pc->ld);
	NEXT();
l_ld_cpu:
	a = (uint64_t)(int64_t)(int32_t)s->cpu;
	NEXT();
l_ld_pid:
	a = (uint64_t)(int64_t)(int32_t)s->pid;
	NEXT();
l_ld_tid:
	a = (uint64_t)(int64_t)(int32_t)s->tid;
	NEXT();
l_ld_time:
	a = s->time;
	NEXT();
l_ld_period:
	a = s->period;
	NEXT();
l_ld_var:
	a = e->vars[pc->arg];
	NEXT();
	/* a = pop OP a: b is the left operand here */
l_add:
	BIN(b + a);
l_sub:
	BIN(b - a);
l_mul:
	BIN(b * a);
l_divs:
	b = st[--sp];
	if (!a)
		goto div0;
	a = SA == -1 ? 0 - b : (uint64_t)(SB / SA);
	NEXT();
l_divu:
	b = st[--sp];
	if (!a)
		goto div0;
	a = b / a;
	NEXT();
l_mods:
	b = st[--sp];
	if (!a)
		goto div0;
	a = SA == -1 ? 0 : (uint64_t)(SB % SA);
	NEXT();
l_modu:
	b = st[--sp];
	if (!a)
		goto div0;
	a = b % a;
	NEXT();
l_and:
	BIN(b & a);
l_or:
	BIN(b | a);
l_xor:
	BIN(b ^ a);
l_shl:
	BIN(a >= 64 ? 0 : b << a);
l_shrs:
	BIN(a >= 64 ? (SB < 0 ? UINT64_MAX : 0) : (uint64_t)(SB >> a));
l_shru:
	BIN(a >= 64 ? 0 : b >> a);
l_eq:
	BIN(b == a);
l_ne:
	BIN(b != a);
l_lts:
	BIN(SB < SA);
l_ltu:
	BIN(b < a);
l_les:
	BIN(SB <= SA);
l_leu:
	BIN(b <= a);
l_gts:
	BIN(SB > SA);
l_gtu:
	BIN(b > a);
l_ges:
	BIN(SB >= SA);
l_geu:
	BIN(b >= a);
	/* a = a OP imm (b) */
l_addi:
	BINI(a + b);
l_subi:
	BINI(a - b);
l_muli:
	BINI(a * b);
l_divsi: /* imm is never 0: the parser refuses x / 0 */
	BINI(SB == -1 ? 0 - a : (uint64_t)(SA / SB));
l_divui:
	BINI(a / b);
l_modsi:
	BINI(SB == -1 ? 0 : (uint64_t)(SA % SB));
l_modui:
	BINI(a % b);
l_andi:
	BINI(a & b);
l_ori:
	BINI(a | b);
l_xori:
	BINI(a ^ b);
l_shli:
	BINI(b >= 64 ? 0 : a << b);
l_shrsi:
	BINI(b >= 64 ? (SA < 0 ? UINT64_MAX : 0) : (uint64_t)(SA >> b));
l_shrui:
	BINI(b >= 64 ? 0 : a >> b);
l_eqi:
	BINI(a == b);
l_nei:
	BINI(a != b);
l_ltsi:
	BINI(SA < SB);
l_ltui:
	BINI(a < b);
l_lesi:
	BINI(SA <= SB);
l_leui:
	BINI(a <= b);
l_gtsi:
	BINI(SA > SB);
l_gtui:
	BINI(a > b);
l_gesi:
	BINI(SA >= SB);
l_geui:
	BINI(a >= b);
	/* a = field OP imm: the load as the format says, then the comparison */
#define FCMP(expr)                                                           \
	do {                                                                 \
		if ((uint64_t)pc->arg + ld_size[pc->ld - I_LD_U8] > size)    \
			goto range;                                          \
		a = psc_tp__load_int(r + pc->arg, ld_size[pc->ld - I_LD_U8], \
				     (pc->ld - I_LD_U8) & 1);                \
		b = pc->imm;                                                 \
		a = (expr);                                                  \
		NEXT();                                                      \
	} while (0)
l_f_eq:
	FCMP(a == b);
l_f_ne:
	FCMP(a != b);
l_f_lts:
	FCMP(SA < SB);
l_f_ltu:
	FCMP(a < b);
l_f_les:
	FCMP(SA <= SB);
l_f_leu:
	FCMP(a <= b);
l_f_gts:
	FCMP(SA > SB);
l_f_gtu:
	FCMP(a > b);
l_f_ges:
	FCMP(SA >= SB);
l_f_geu:
	FCMP(a >= b);
l_neg:
	a = 0 - a;
	NEXT();
l_not:
	a = ~a;
	NEXT();
l_lnot:
	a = !a;
	NEXT();
l_bool:
	a = !!a;
	NEXT();
l_sext8:
	a = (uint64_t)(int64_t)(int8_t)a;
	NEXT();
l_sext16:
	a = (uint64_t)(int64_t)(int16_t)a;
	NEXT();
l_sext32:
	a = (uint64_t)(int64_t)(int32_t)a;
	NEXT();
l_zext8:
	a = (uint8_t)a;
	NEXT();
l_zext16:
	a = (uint16_t)a;
	NEXT();
l_zext32:
	a = (uint32_t)a;
	NEXT();
l_seq:
	sp--;
	a = sl[sp] == alen && !memcmp(CSTR(st[sp]), CSTR(a), alen);
	NEXT();
l_sne:
	sp--;
	a = !(sl[sp] == alen && !memcmp(CSTR(st[sp]), CSTR(a), alen));
	NEXT();
l_glob:
	sp--;
	a = expr_glob(CSTR(a), alen, CSTR(st[sp]), sl[sp]);
	NEXT();
l_seqi:
	a = e->lits[pc->arg].len == alen && !memcmp(e->lits[pc->arg].s, CSTR(a), alen);
	NEXT();
l_snei:
	a = !(e->lits[pc->arg].len == alen && !memcmp(e->lits[pc->arg].s, CSTR(a), alen));
	NEXT();
l_globi:
	a = expr_glob(e->lits[pc->arg].s, e->lits[pc->arg].len, CSTR(a), alen);
	NEXT();
l_jmp:
	pc = e->code + pc->arg;
	DISPATCH();
l_jz:
	if (!a) {
		pc = e->code + pc->arg;
		DISPATCH();
	}
	NEXT();
l_jnz1:
	if (a) {
		a = 1;
		pc = e->code + pc->arg;
		DISPATCH();
	}
	NEXT();
l_ksym : {
	const struct ksym *k = e->ksyms ? ksyms__find(e->ksyms, a, &b) : NULL;
	const char *name = k ? k->name : "Unknown";

	a = PTR(name);
	alen = (uint32_t)strlen(name);
	NEXT();
}
l_syscall : {
	const char *name = syscall__name(a);
	char *buf = e->bufs[pc->arg];

	if (name) {
		a = PTR(name);
		alen = (uint32_t)strlen(name);
	} else {
		int n = snprintf(buf, EXPR_STRBUF, "syscall_%lld", (long long)a);

		alen = n > 0 ? (uint32_t)n : 0;
		a = PTR(buf);
	}
	NEXT();
}
l_comm : {
	const char *name = e->comm(e->ctx, (uint32_t)a);

	if (!name)
		name = "";
	a = PTR(name);
	alen = (uint32_t)strlen(name);
	NEXT();
}
l_printf : {
	const struct pf_format *f = &e->fmts[pc->arg];
	int nv = (int)pc->imm;
	char *buf = e->bufs[f->buf];

	if (nv) {
		sl[sp] = alen;
		st[sp++] = a;
		sp -= nv;
	}
	alen = expr_printf(f, st + sp, sl + sp, buf);
	a = PTR(buf);
	NEXT();
}
l_ntohl:
	a = ntohl((uint32_t)a);
	NEXT();
l_ntohs:
	a = ntohs((uint16_t)a);
	NEXT();
l_ret:
	out->i = a;
	out->s = e->type.kind == EXPR_STR ? CSTR(a) : NULL;
	out->len = e->type.kind == EXPR_STR ? alen : 0;
	return 0;

range:
	err = -ERANGE;
	goto fail;
div0:
	err = -EDOM;
fail:
	e->nr_errors++;
	e->last_err = err;
	out->i = 0;
	out->s = e->type.kind == EXPR_STR ? "" : NULL;
	out->len = 0;
	return err;
#undef DISPATCH
#undef NEXT
#undef LOAD
#undef BIN
#undef BINI
#undef FCMP
#undef SA
#undef SB
}
