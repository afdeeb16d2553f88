/* The expression language's back end: the checked tree into bytecode, with constant operands
 * folded into the instructions; the public compile, describe and dump calls. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_internal.h"
#include "ksyms.h"

#define VM_STACK 256 /* expr_vm.c's stack; deeper code is refused here */

struct cg {
	struct expr *e;
	struct parse_result *pr;
	struct expr_error *err;
	int max_code;
	int depth, max_depth;
};

static int emit(struct cg *cg, enum expr_opcode op, uint32_t arg, uint64_t imm)
{
	struct expr *e = cg->e;

	if (e->nr_code == cg->max_code) {
		int n = cg->max_code ? cg->max_code * 2 : 16;
		struct insn *c = realloc(e->code, (size_t)n * sizeof(*c));

		if (!c)
			return -ENOMEM;
		e->code = c;
		cg->max_code = n;
	}
	memset(&e->code[e->nr_code], 0, sizeof(e->code[0]));
	e->code[e->nr_code].op = (uint16_t)op;
	e->code[e->nr_code].arg = arg;
	e->code[e->nr_code].imm = imm;
	return e->nr_code++;
}

/* One more value on the VM's stack. */
static int reserve(struct cg *cg)
{
	if (++cg->depth > cg->max_depth)
		cg->max_depth = cg->depth;
	if (cg->depth > VM_STACK)
		return expr_error_set(cg->err, -1, "the expression needs too deep a stack to run");
	return 0;
}

static int push(struct cg *cg, bool str)
{
	int err = reserve(cg);

	if (err)
		return err;
	return emit(cg, str ? I_PUSHS : I_PUSH, 0, 0) < 0 ? -ENOMEM : 0;
}

static int field_idx(struct cg *cg, const struct psc_tp_field *f)
{
	struct expr *e = cg->e;
	const struct psc_tp_field **fs;

	for (int i = 0; i < e->nr_fields; i++)
		if (e->fields[i] == f)
			return i;
	fs = realloc(e->fields, (size_t)(e->nr_fields + 1) * sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	e->fields = fs;
	fs[e->nr_fields] = f;
	return e->nr_fields++;
}

static int lit_idx(struct cg *cg, const struct node *n)
{
	struct expr *e = cg->e;
	struct str_lit *l = realloc(e->lits, (size_t)(e->nr_lits + 1) * sizeof(*l));

	if (!l)
		return -ENOMEM;
	e->lits = l;
	l[e->nr_lits].s = n->str;
	l[e->nr_lits].len = n->len;
	return e->nr_lits++;
}

/* Operators with their operands swapped: 100 < pid is pid > 100. */
static enum expr_op mirror(enum expr_op op)
{
	switch (op) {
	case OP_ADD:
	case OP_MUL:
	case OP_AND:
	case OP_OR:
	case OP_XOR:
	case OP_EQ:
	case OP_NE:
		return op;
	case OP_LT:
		return OP_GT;
	case OP_LE:
		return OP_GE;
	case OP_GT:
		return OP_LT;
	case OP_GE:
		return OP_LE;
	default:
		return OP_NONE;
	}
}

/* The stack form of an integer operator; the immediate form is this + (I_ADDI - I_ADD). */
static enum expr_opcode int_opcode(enum expr_op op, bool is_signed)
{
	switch (op) {
	case OP_ADD:
		return I_ADD;
	case OP_SUB:
		return I_SUB;
	case OP_MUL:
		return I_MUL;
	case OP_DIV:
		return is_signed ? I_DIVS : I_DIVU;
	case OP_MOD:
		return is_signed ? I_MODS : I_MODU;
	case OP_AND:
		return I_AND;
	case OP_OR:
		return I_OR;
	case OP_XOR:
		return I_XOR;
	case OP_SHL:
		return I_SHL;
	case OP_SHR:
		return is_signed ? I_SHRS : I_SHRU;
	case OP_EQ:
		return I_EQ;
	case OP_NE:
		return I_NE;
	case OP_LT:
		return is_signed ? I_LTS : I_LTU;
	case OP_LE:
		return is_signed ? I_LES : I_LEU;
	case OP_GT:
		return is_signed ? I_GTS : I_GTU;
	default: /* OP_GE */
		return is_signed ? I_GES : I_GEU;
	}
}

static int gen(struct cg *cg, const struct node *n);

/* The load of a scalar field, as its type says. */
static enum expr_opcode field_load(const struct node *n)
{
	static const enum expr_opcode loads[2][9] = {
		{ 0, I_LD_U8, I_LD_U16, 0, I_LD_U32, 0, 0, 0, I_LD_U64 },
		{ 0, I_LD_S8, I_LD_S16, 0, I_LD_S32, 0, 0, 0, I_LD_U64 },
	};

	return loads[n->ty.is_signed][n->ty.size];
}

static int gen_bool(struct cg *cg, const struct node *n)
{
	int err = gen(cg, n);

	if (!err && !n->is_bool && emit(cg, I_BOOL, 0, 0) < 0)
		err = -ENOMEM;
	return err;
}

static int gen_string_op(struct cg *cg, const struct node *n)
{
	const struct node *a = n->a, *b = n->b;
	enum expr_opcode op = n->op == OP_EQ ? I_SEQ : n->op == OP_NE ? I_SNE : I_GLOB;
	int err, lit;

	if (b->kind == N_STR || (a->kind == N_STR && op != I_GLOB)) {
		const struct node *l = b->kind == N_STR ? b : a;

		if ((err = gen(cg, l == b ? a : b)) || (lit = lit_idx(cg, l)) < 0)
			return err ? err : lit;
		return emit(cg, op + (I_SEQI - I_SEQ), (uint32_t)lit, 0) < 0 ? -ENOMEM : 0;
	}
	if ((err = gen(cg, a)) || (err = push(cg, true)) || (err = gen(cg, b)))
		return err;
	cg->depth--;
	return emit(cg, op, 0, 0) < 0 ? -ENOMEM : 0;
}

static int gen_binary(struct cg *cg, const struct node *n)
{
	const struct node *a = n->a, *b = n->b;
	bool is_signed;
	enum expr_op op = n->op;
	int err;

	if (a->ty.kind == EXPR_STR)
		return gen_string_op(cg, n);
	/* comparisons are made in the operands' common type; the rest in the result's */
	if (op >= OP_EQ && op <= OP_GE)
		is_signed = !((a->ty.size == 8 && !a->ty.is_signed) ||
			      (b->ty.size == 8 && !b->ty.is_signed));
	else
		is_signed = n->ty.is_signed;
	if (b->kind == N_NUM || (a->kind == N_NUM && mirror(op) != OP_NONE)) {
		const struct node *k = b->kind == N_NUM ? b : a, *v = k == b ? a : b;
		int at;

		if (k == a)
			op = mirror(op);
		/* a field compared with a constant: one instruction */
		if (v->kind == N_FIELD && op >= OP_EQ && op <= OP_GE) {
			if ((at = emit(cg, int_opcode(op, is_signed) + (I_F_EQ - I_EQ),
				       v->field->offset, k->num)) < 0)
				return -ENOMEM;
			cg->e->code[at].ld = (uint8_t)field_load(v);
			return 0;
		}
		if ((err = gen(cg, v)))
			return err;
		return emit(cg, int_opcode(op, is_signed) + (I_ADDI - I_ADD), 0, k->num) < 0
			       ? -ENOMEM
			       : 0;
	}
	if ((err = gen(cg, a)) || (err = push(cg, false)) || (err = gen(cg, b)))
		return err;
	cg->depth--;
	return emit(cg, int_opcode(op, is_signed), 0, 0) < 0 ? -ENOMEM : 0;
}

static void patch(struct cg *cg, int at)
{
	cg->e->code[at].arg = (uint32_t)cg->e->nr_code;
}

static int gen_call(struct cg *cg, const struct node *n)
{
	static const enum expr_opcode ops[] = {
		[F_KSYMBOL] = I_KSYM, [F_SYSCALL_NAME] = I_SYSCALL, [F_COMM_GET] = I_COMM,
		[F_NTOHL] = I_NTOHL,  [F_NTOHS] = I_NTOHS,
	};
	int err, nv = n->nargs - 1;

	if (n->idx != F_PRINTF) {
		if ((err = gen(cg, n->args[0])))
			return err;
		return emit(cg, ops[n->idx], n->idx == F_SYSCALL_NAME ? (uint32_t)n->num : 0, 0) < 0
			       ? -ENOMEM
			       : 0;
	}
	/* printf: the values after the format pushed in order, the last left in a */
	for (int i = 1; i <= nv; i++) {
		if ((err = gen(cg, n->args[i])))
			return err;
		if (i < nv && (err = push(cg, n->args[i]->ty.kind == EXPR_STR)))
			return err;
	}
	/* the VM pushes the last one itself, then takes them all */
	if (nv && (err = reserve(cg)))
		return err;
	cg->depth -= nv;
	return emit(cg, I_PRINTF, (uint32_t)n->num, (uint64_t)nv) < 0 ? -ENOMEM : 0;
}

static int gen(struct cg *cg, const struct node *n)
{
	int err, j1, j2, idx, at;

	switch (n->kind) {
	case N_NUM:
		return emit(cg, I_IMM, 0, n->num) < 0 ? -ENOMEM : 0;
	case N_STR:
		if ((idx = lit_idx(cg, n)) < 0)
			return idx;
		return emit(cg, I_STR, (uint32_t)idx, 0) < 0 ? -ENOMEM : 0;
	case N_FIELD:
		if (n->ty.kind == EXPR_STR) {
			if ((idx = field_idx(cg, n->field)) < 0)
				return idx;
			return emit(cg, I_LD_STR, (uint32_t)idx, 0) < 0 ? -ENOMEM : 0;
		}
		return emit(cg, field_load(n), n->field->offset, 0) < 0 ? -ENOMEM : 0;
	case N_INDEX:
		if ((err = gen(cg, n->a)) || (idx = field_idx(cg, n->field)) < 0)
			return err ? err : idx;
		return emit(cg, I_LD_ELEM, (uint32_t)idx, 0) < 0 ? -ENOMEM : 0;
	case N_BUILTIN:
		return emit(cg, I_LD_CPU + n->idx, 0, 0) < 0 ? -ENOMEM : 0;
	case N_VAR:
		return emit(cg, I_LD_VAR, (uint32_t)n->idx, 0) < 0 ? -ENOMEM : 0;
	case N_UNARY:
		if ((err = gen(cg, n->a)))
			return err;
		if (n->op == OP_PLUS)
			return 0;
		return emit(cg,
			    n->op == OP_NEG   ? I_NEG
			    : n->op == OP_NOT ? I_NOT
					      : I_LNOT,
			    0, 0) < 0
			       ? -ENOMEM
			       : 0;
	case N_DEREF:
		/* at a fixed place (*(int *)&pid): the load of a field there */
		if (n->a->kind == N_NUM && n->a->num <= UINT32_MAX)
			return emit(cg, field_load(n), (uint32_t)n->a->num, 0) < 0 ? -ENOMEM : 0;
		if ((err = gen(cg, n->a)) || (at = emit(cg, I_LD_AT, n->ty.size, 0)) < 0)
			return err ? err : -ENOMEM;
		cg->e->code[at].ld = n->ty.is_signed;
		return 0;
	case N_CAST:
		if ((err = gen(cg, n->a)))
			return err;
		/* values are kept extended to 64 bits: only a narrower type cuts */
		if (n->ty.size == 8)
			return 0;
		return emit(cg,
			    n->ty.size == 1   ? (n->ty.is_signed ? I_SEXT8 : I_ZEXT8)
			    : n->ty.size == 2 ? (n->ty.is_signed ? I_SEXT16 : I_ZEXT16)
					      : (n->ty.is_signed ? I_SEXT32 : I_ZEXT32),
			    0, 0) < 0
			       ? -ENOMEM
			       : 0;
	case N_BINARY:
		return gen_binary(cg, n);
	case N_LAND:
	case N_LOR:
		/* a && b: a zero jumps to the end with 0; a || b: a non-zero with 1 */
		if ((err = gen(cg, n->a)) ||
		    (j1 = emit(cg, n->kind == N_LAND ? I_JZ : I_JNZ1, 0, 0)) < 0)
			return err ? err : -ENOMEM;
		if ((err = gen_bool(cg, n->b)))
			return err;
		patch(cg, j1);
		return 0;
	case N_COND:
		if ((err = gen(cg, n->a)) || (j1 = emit(cg, I_JZ, 0, 0)) < 0)
			return err ? err : -ENOMEM;
		if ((err = gen(cg, n->b)) || (j2 = emit(cg, I_JMP, 0, 0)) < 0)
			return err ? err : -ENOMEM;
		patch(cg, j1);
		if ((err = gen(cg, n->c)))
			return err;
		patch(cg, j2);
		return 0;
	case N_CALL:
		return gen_call(cg, n);
	}
	return -EINVAL;
}

/* Nothing but constants: no field, no sample value, no function. */
static bool const_code(const struct expr *e)
{
	for (int i = 0; i < e->nr_code; i++) {
		uint32_t op = e->code[i].op;

		if (op != I_IMM && op != I_STR && op != I_RET)
			return false;
	}
	return true;
}

struct expr *expr__compile(const char *text, const struct expr_opts *opts, struct expr_error *err)
{
	static const struct expr_opts none;
	struct parse_result pr;
	struct expr *e;
	struct cg cg = { .err = err };
	int ret, nvars = 0;

	if (!opts)
		opts = &none;
	if (!text) {
		expr_error_set(err, -1, "no expression");
		return NULL;
	}
	if (expr_parse(text, opts, &pr, err))
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e) {
		expr_parse_free(&pr);
		errno = ENOMEM;
		return NULL;
	}
	while (opts->vars && opts->vars[nvars])
		nvars++;
	e->fmt = opts->fmt;
	e->type = pr.root->ty;
	e->comm = opts->comm;
	e->ctx = opts->ctx;
	e->nr_vars = nvars;
	e->vars = calloc((size_t)nvars + 1, sizeof(*e->vars));
	e->nr_bufs = pr.nr_bufs;
	e->bufs = pr.nr_bufs ? calloc((size_t)pr.nr_bufs, sizeof(*e->bufs)) : NULL;
	cg.e = e;
	cg.pr = &pr;
	ret = !e->vars || (pr.nr_bufs && !e->bufs) ? -ENOMEM : gen(&cg, pr.root);
	if (!ret && emit(&cg, I_RET, 0, 0) < 0)
		ret = -ENOMEM;
	if (ret) {
		expr_parse_free(&pr);
		expr__delete(e);
		errno = -ret;
		return NULL;
	}
	/* what the code refers to moves over from the parse: literal text and printf formats */
	e->pool = pr.pool;
	e->fmts = pr.fmts;
	e->nr_fmts = pr.nr_fmts;
	pr.pool = NULL;
	pr.fmts = NULL;
	pr.nr_fmts = 0;
	if (pr.uses_ksyms && opts->ksyms)
		e->ksyms = opts->ksyms(opts->ctx);
	expr_parse_free(&pr);
	e->is_const = const_code(e);
	if (e->nr_code == 2 && e->code[0].op >= I_LD_U8 && e->code[0].op <= I_LD_U64) {
		static const uint8_t sizes[] = { 1, 1, 2, 2, 4, 4, 8 };

		e->load_size = sizes[e->code[0].op - I_LD_U8];
		e->load_signed = (e->code[0].op - I_LD_U8) % 2 && e->load_size < 8;
	}
	return e;
}

void expr__delete(struct expr *e)
{
	if (!e)
		return;
	for (int i = 0; i < e->nr_fmts; i++)
		free(e->fmts[i].convs);
	free(e->fmts);
	free(e->code);
	free(e->fields);
	free(e->lits);
	free(e->bufs);
	free(e->vars);
	free(e->pool);
	free(e);
}

struct expr_type expr__type(const struct expr *e)
{
	return e->type;
}

bool expr__is_const(const struct expr *e)
{
	return e->is_const;
}

void expr__set_var(struct expr *e, int idx, uint64_t value)
{
	if (idx >= 0 && idx < e->nr_vars)
		e->vars[idx] = value;
}

uint64_t expr__nr_errors(const struct expr *e, int *last_err)
{
	if (last_err)
		*last_err = e->last_err;
	return e->nr_errors;
}

/* The field a load at offset reads, for the dump. */
static const char *field_at(const struct expr *e, uint32_t off)
{
	int n = e->fmt ? psc_tp_format__nr_fields(e->fmt) : 0;

	for (int i = 0; i < n; i++) {
		const struct psc_tp_field *f = psc_tp_format__field_at(e->fmt, i);

		if (f->offset == off && !f->is_array && !f->is_dynamic)
			return f->name;
	}
	return "?";
}

void expr__dump(const struct expr *e, FILE *f)
{
	for (int i = 0; i < e->nr_code; i++) {
		const struct insn *in = &e->code[i];

		fprintf(f, "%4d  %-8s", i, expr_opcode_name((int)in->op));
		switch (in->op) {
		case I_IMM:
			fprintf(f, " %lld (0x%llx)", (long long)in->imm,
				(unsigned long long)in->imm);
			break;
		case I_STR:
		case I_SEQI:
		case I_SNEI:
		case I_GLOBI:
			fprintf(f, " \"%.*s\"", (int)e->lits[in->arg].len, e->lits[in->arg].s);
			break;
		case I_LD_U8:
		case I_LD_S8:
		case I_LD_U16:
		case I_LD_S16:
		case I_LD_U32:
		case I_LD_S32:
		case I_LD_U64:
			fprintf(f, " %s (offset %u)", field_at(e, in->arg), in->arg);
			break;
		case I_LD_STR:
		case I_LD_ELEM:
			fprintf(f, " %s", e->fields[in->arg]->name);
			break;
		case I_LD_VAR:
			fprintf(f, " %u", in->arg);
			break;
		case I_JMP:
		case I_JZ:
		case I_JNZ1:
			fprintf(f, " -> %u", in->arg);
			break;
		case I_PRINTF:
			fprintf(f, " format %u, %llu values", in->arg, (unsigned long long)in->imm);
			break;
		default:
			if (in->op >= I_ADDI && in->op <= I_GEUI)
				fprintf(f, " %lld", (long long)in->imm);
			if (in->op >= I_F_EQ && in->op <= I_F_GEU)
				fprintf(f, " %s (offset %u, %s), %lld", field_at(e, in->arg),
					in->arg, expr_opcode_name(in->ld), (long long)in->imm);
			break;
		}
		fputc('\n', f);
	}
}

void expr_print_names(FILE *f, const char *indent, const char *event, const struct expr_opts *opts)
{
	const struct psc_tp_format *fmt = opts->fmt;
	int n = fmt ? psc_tp_format__nr_fields(fmt) : 0;

	if (!event)
		event = fmt ? psc_tp_format__name(fmt) : "the event";
	if (fmt) {
		fprintf(f, "%s%s has fields:", indent, event);
		for (int i = 0; i < n; i++)
			fprintf(f, "%s %s", i ? "," : "", psc_tp_format__field_at(fmt, i)->name);
		fprintf(f, "\n%sand names:", indent);
	} else {
		fprintf(f, "%s%s is not a tracepoint (no fields); names:", indent, event);
	}
	for (int i = 0; i < NR_BUILTINS; i++)
		fprintf(f, "%s %s", i ? "," : "", expr_builtin_name(i));
	for (int i = 0; opts->vars && opts->vars[i]; i++)
		fprintf(f, ", %s", opts->vars[i]);
	fputc('\n', f);
}
