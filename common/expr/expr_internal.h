/* The expression language's own parts: syntax tree (expr_parse.c), bytecode (expr_compile.c), VM
 * (expr_vm.c). */
#ifndef PERFSCOPE_COMMON_EXPR_INTERNAL_H
#define PERFSCOPE_COMMON_EXPR_INTERNAL_H

#include <stdarg.h>

#include "expr.h"

#define EXPR_MAX_DEPTH 64 /* nesting of the syntax, and so the VM's stack */
#define EXPR_MAX_ARGS 8 /* printf's arguments after the format */
#define EXPR_STRBUF 256 /* text of one printf() or syscall_name() call */

/* Values the sample gives. */
enum expr_builtin {
	B_CPU,
	B_PID,
	B_TID,
	B_TIME,
	B_PERIOD,
	NR_BUILTINS,
};

enum expr_func {
	F_KSYMBOL,
	F_SYSCALL_NAME,
	F_COMM_GET,
	F_PRINTF,
	F_NTOHL,
	F_NTOHS,
};

enum node_kind {
	N_NUM, /* num */
	N_STR, /* str, len: a literal */
	N_FIELD, /* field: a scalar or a string */
	N_INDEX, /* field[a] */
	N_BUILTIN, /* idx */
	N_VAR, /* idx: a caller's variable */
	N_UNARY, /* op a */
	N_BINARY, /* a op b */
	N_LAND, /* a && b */
	N_LOR, /* a || b */
	N_COND, /* a ? b : c */
	N_CAST, /* (type) a */
	N_CALL, /* func(args) */
	N_DEREF, /* *a: a pointer into the event, read */
};

/* Operators, as tokens and in the tree. */
enum expr_op {
	OP_NONE,
	OP_ADD,
	OP_SUB,
	OP_MUL,
	OP_DIV,
	OP_MOD,
	OP_AND,
	OP_OR,
	OP_XOR,
	OP_SHL,
	OP_SHR,
	OP_EQ,
	OP_NE,
	OP_LT,
	OP_LE,
	OP_GT,
	OP_GE,
	OP_GLOB, /* ~ between strings */
	OP_LAND,
	OP_LOR,
	OP_NEG, /* unary - */
	OP_PLUS, /* unary + */
	OP_NOT, /* unary ~ */
	OP_LNOT, /* ! */
};

struct node {
	enum node_kind kind;
	enum expr_op op;
	struct expr_type ty;
	bool is_bool; /* known to be 0 or 1 */
	int pos; /* where it starts in the text */
	int op_pos; /* binary operators: where the operator is */
	uint64_t num;
	const char *str;
	uint32_t len;
	const struct psc_tp_field *field;
	int idx; /* builtin, variable, function, printf format */
	struct node *a, *b, *c;
	struct node *args[EXPR_MAX_ARGS + 1];
	int nargs;
};

/* One conversion of a printf format: the literal text before it, then the conversion. */
struct pf_conv {
	const char *lit; /* into the expression's text pool */
	uint32_t lit_len;
	char spec[24]; /* "%-8llx", ready for snprintf; "" for the text after the last one */
	char conv; /* d i u x X o c s p, or 0 */
	uint8_t lenmod; /* C's width of the value: 1 hh, 2 h, 4 none, 8 l ll z j t */
	int prec; /* %s: the precision, -1 none */
};

struct pf_format {
	struct pf_conv *convs;
	int nr;
	int buf; /* its output buffer */
};

/* The bytecode: an accumulator machine (a, and alen for strings) over a small stack. */
enum expr_opcode {
	I_IMM, /* a = imm */
	I_STR, /* a, alen = literal arg */
	I_PUSH, /* push a */
	I_PUSHS, /* push a, alen */
	I_LD_U8, /* a = raw[arg] ... as the format says */
	I_LD_S8,
	I_LD_U16,
	I_LD_S16,
	I_LD_U32,
	I_LD_S32,
	I_LD_U64,
	I_LD_STR, /* a, alen = string field arg (in the field table) */
	I_LD_ELEM, /* a = element a of array field arg */
	I_LD_CPU,
	I_LD_PID,
	I_LD_TID,
	I_LD_TIME,
	I_LD_PERIOD,
	I_LD_VAR, /* a = vars[arg] */
	I_LD_AT, /* a = the integer of arg bytes (signed when ld) at raw[a] */
	/* a = pop OP a */
	I_ADD,
	I_SUB,
	I_MUL,
	I_DIVS,
	I_DIVU,
	I_MODS,
	I_MODU,
	I_AND,
	I_OR,
	I_XOR,
	I_SHL,
	I_SHRS,
	I_SHRU,
	I_EQ,
	I_NE,
	I_LTS,
	I_LTU,
	I_LES,
	I_LEU,
	I_GTS,
	I_GTU,
	I_GES,
	I_GEU,
	/* a = a OP imm */
	I_ADDI,
	I_SUBI,
	I_MULI,
	I_DIVSI,
	I_DIVUI,
	I_MODSI,
	I_MODUI,
	I_ANDI,
	I_ORI,
	I_XORI,
	I_SHLI,
	I_SHRSI,
	I_SHRUI,
	I_EQI,
	I_NEI,
	I_LTSI,
	I_LTUI,
	I_LESI,
	I_LEUI,
	I_GTSI,
	I_GTUI,
	I_GESI,
	I_GEUI,
	/* a = field OP imm: the field's load (ld) and a comparison in one (pid > 100) */
	I_F_EQ,
	I_F_NE,
	I_F_LTS,
	I_F_LTU,
	I_F_LES,
	I_F_LEU,
	I_F_GTS,
	I_F_GTU,
	I_F_GES,
	I_F_GEU,
	/* unary */
	I_NEG,
	I_NOT,
	I_LNOT,
	I_BOOL,
	I_SEXT8,
	I_SEXT16,
	I_SEXT32,
	I_ZEXT8,
	I_ZEXT16,
	I_ZEXT32,
	/* strings: a, alen = pop OP (a, alen) */
	I_SEQ,
	I_SNE,
	I_GLOB,
	I_SEQI, /* against literal arg */
	I_SNEI,
	I_GLOBI,
	/* jumps to arg */
	I_JMP,
	I_JZ, /* if !a: jump (a stays 0) */
	I_JNZ1, /* if a: a = 1, jump */
	I_JZ_POP, /* if !a: jump; ?: */
	/* functions */
	I_KSYM,
	I_SYSCALL, /* arg: its buffer */
	I_COMM,
	I_PRINTF, /* arg: the format; its arguments pushed, the last in a */
	I_NTOHL,
	I_NTOHS,
	I_RET,
	NR_OPCODES,
};

struct insn {
	uint16_t op;
	uint8_t ld; /* I_F_*: the load (I_LD_U8 ... I_LD_U64) of the field at arg */
	uint8_t pad;
	uint32_t arg;
	uint64_t imm;
};

struct str_lit {
	const char *s;
	uint32_t len;
};

struct expr {
	const struct psc_tp_format *fmt; /* for the dump's field names */
	struct insn *code;
	int nr_code;
	struct expr_type type;
	bool is_const;
	/* the code is one field's load (key=pid, num=runtime): run without the VM */
	uint8_t load_size;
	bool load_signed;
	/* what the code refers to by index */
	const struct psc_tp_field **fields;
	int nr_fields;
	struct str_lit *lits;
	int nr_lits;
	struct pf_format *fmts;
	int nr_fmts;
	char (*bufs)[EXPR_STRBUF]; /* printf and syscall_name output, one per call */
	int nr_bufs;
	uint64_t *vars;
	int nr_vars;
	char *pool; /* literal text */
	/* functions */
	const struct ksyms *ksyms;
	const char *(*comm)(void *ctx, uint32_t pid);
	void *ctx;
	/* run-time failures */
	uint64_t nr_errors;
	int last_err;
};

/* The parser's product and its memory (nodes and literal text, freed together). */
struct parse_result {
	struct node *root;
	struct node *nodes; /* arena */
	int nr_nodes, max_nodes;
	char *pool;
	size_t pool_len, pool_max;
	struct pf_format *fmts;
	int nr_fmts;
	bool uses_ksyms;
	int nr_bufs;
};

int expr_parse(const char *text, const struct expr_opts *opts, struct parse_result *res,
	       struct expr_error *err);
void expr_parse_free(struct parse_result *res);

/* Shared by the parser (constant folding) and the VM, so both compute the same. */
int expr_binop(enum expr_op op, struct expr_type ty, uint64_t l, uint64_t r, uint64_t *out);
uint64_t expr_convert(struct expr_type to, uint64_t v);
bool expr_glob(const char *pat, uint32_t plen, const char *s, uint32_t slen);
const char *expr_builtin_name(int idx);
const char *expr_opcode_name(int op);

/* printf() at run time: formats args into buf (EXPR_STRBUF), returns the length. */
uint32_t expr_printf(const struct pf_format *f, const uint64_t *args, const uint32_t *lens,
		     char *buf);

int expr_error_set(struct expr_error *err, int pos, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
