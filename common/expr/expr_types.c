/* The expression language's type rules: C's integer types and operators, each node checked and
 * constants folded as it is built. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "expr_front.h"

/* ---- types ---- */

struct expr_type expr_types__int_type(int size, bool is_signed)
{
	struct expr_type t = { EXPR_INT, (uint8_t)size, is_signed, false };

	return t;
}

/* C's usual arithmetic conversions with a 64-bit int. */
static struct expr_type arith_type(struct expr_type a, struct expr_type b)
{
	if ((a.size == 8 && !a.is_signed) || (b.size == 8 && !b.is_signed))
		return T_ULONG;
	return T_LONG;
}

static struct expr_type promote(struct expr_type a)
{
	return a.size == 8 && !a.is_signed ? T_ULONG : T_LONG;
}

uint64_t expr_convert(struct expr_type to, uint64_t v)
{
	switch (to.size) {
	case 1:
		return to.is_signed ? (uint64_t)(int64_t)(int8_t)v : (uint8_t)v;
	case 2:
		return to.is_signed ? (uint64_t)(int64_t)(int16_t)v : (uint16_t)v;
	case 4:
		return to.is_signed ? (uint64_t)(int64_t)(int32_t)v : (uint32_t)v;
	default:
		return v;
	}
}

const char *expr_type__name(struct expr_type t)
{
	static const char *const names[2][4] = {
		{ "unsigned char", "unsigned short", "unsigned int", "unsigned long" },
		{ "char", "short", "int", "long" },
	};
	static const char *const ptrs[2][4] = {
		{ "unsigned char *", "unsigned short *", "unsigned int *", "unsigned long *" },
		{ "char *", "short *", "int *", "long *" },
	};

	if (t.kind == EXPR_STR)
		return "string";
	if (t.elem) /* a pointer into the event */
		return ptrs[t.elem_signed][t.elem == 1 ? 0 : t.elem == 2 ? 1 : t.elem == 4 ? 2 : 3];
	if (t.is_ptr)
		return "void *";
	switch (t.size) {
	case 1:
		return names[t.is_signed][0];
	case 2:
		return names[t.is_signed][1];
	case 4:
		return names[t.is_signed][2];
	default:
		return names[t.is_signed][3];
	}
}

/* Shared with the VM: the one definition of each operator on 64-bit values. */
int expr_binop(enum expr_op op, struct expr_type ty, uint64_t l, uint64_t r, uint64_t *out)
{
	bool s = ty.is_signed;
	int64_t sl = (int64_t)l, sr = (int64_t)r;

	switch (op) {
	case OP_ADD:
		*out = l + r;
		return 0;
	case OP_SUB:
		*out = l - r;
		return 0;
	case OP_MUL:
		*out = l * r;
		return 0;
	case OP_DIV:
		if (!r)
			return -EDOM;
		/* INT64_MIN / -1 traps on x86: it wraps to itself, as the multiplication would */
		*out = s ? (sr == -1 ? 0 - l : (uint64_t)(sl / sr)) : l / r;
		return 0;
	case OP_MOD:
		if (!r)
			return -EDOM;
		*out = s ? (sr == -1 ? 0 : (uint64_t)(sl % sr)) : l % r;
		return 0;
	case OP_AND:
		*out = l & r;
		return 0;
	case OP_OR:
		*out = l | r;
		return 0;
	case OP_XOR:
		*out = l ^ r;
		return 0;
	case OP_SHL:
		*out = r >= 64 ? 0 : l << r;
		return 0;
	case OP_SHR:
		if (s)
			*out = r >= 64 ? (sl < 0 ? UINT64_MAX : 0) : (uint64_t)(sl >> r);
		else
			*out = r >= 64 ? 0 : l >> r;
		return 0;
	case OP_EQ:
		*out = l == r;
		return 0;
	case OP_NE:
		*out = l != r;
		return 0;
	case OP_LT:
		*out = s ? sl < sr : l < r;
		return 0;
	case OP_LE:
		*out = s ? sl <= sr : l <= r;
		return 0;
	case OP_GT:
		*out = s ? sl > sr : l > r;
		return 0;
	case OP_GE:
		*out = s ? sl >= sr : l >= r;
		return 0;
	default:
		return -EINVAL;
	}
}

static const char *op_text(enum expr_op op)
{
	static const char *const t[] = {
		[OP_NONE] = "?", [OP_ADD] = "+",  [OP_SUB] = "-",   [OP_MUL] = "*",
		[OP_DIV] = "/",	 [OP_MOD] = "%",  [OP_AND] = "&",   [OP_OR] = "|",
		[OP_XOR] = "^",	 [OP_SHL] = "<<", [OP_SHR] = ">>",  [OP_EQ] = "==",
		[OP_NE] = "!=",	 [OP_LT] = "<",	  [OP_LE] = "<=",   [OP_GT] = ">",
		[OP_GE] = ">=",	 [OP_GLOB] = "~", [OP_LAND] = "&&", [OP_LOR] = "||",
		[OP_NEG] = "-",	 [OP_PLUS] = "+", [OP_NOT] = "~",   [OP_LNOT] = "!",
	};

	return t[op];
}

/* ---- memory ---- */

struct node *expr_types__new_node(struct parser *ps, enum node_kind kind, int pos)
{
	struct parse_result *r = ps->res;
	struct node *n;

	if (r->nr_nodes == r->max_nodes) {
		/* the text bounds the nodes: one per token at most, plus the string pieces */
		fail(ps, pos, "expression too large");
		return NULL;
	}
	n = &r->nodes[r->nr_nodes++];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->pos = pos;
	return n;
}

/* ---- nodes, each checked as it is built ---- */

bool expr_types__is_const(const struct node *n)
{
	return n->kind == N_NUM;
}

static int need_int(struct parser *ps, const struct node *n, const char *which, enum expr_op op)
{
	if (n->ty.kind == EXPR_INT)
		return 0;
	if (op == OP_EQ || op == OP_NE)
		return fail(ps, n->pos,
			    "'%s' compares a string with a number: the %s operand is a string",
			    op_text(op), which);
	if (op == OP_LT || op == OP_LE || op == OP_GT || op == OP_GE)
		return fail(
			ps, n->pos,
			"'%s' compares numbers, and its %s operand is a string (strings take ==, != "
			"and ~)",
			op_text(op), which);
	if (op == OP_LAND || op == OP_LOR)
		return fail(ps, n->pos,
			    "the %s operand of '%s' is a string; compare it: name == \"text\"",
			    which, op_text(op));
	return fail(ps, n->pos, "the %s operand of '%s' is a string; '%s' takes numbers", which,
		    op_text(op), op_text(op));
}

struct node *expr_types__num_node(struct parser *ps, int pos, uint64_t v, struct expr_type ty)
{
	struct node *n = expr_types__new_node(ps, N_NUM, pos);

	if (n) {
		n->num = v;
		n->ty = ty;
	}
	return n;
}

struct node *expr_types__make_unary(struct parser *ps, enum expr_op op, int pos, struct node *a)
{
	struct node *n;

	if (a->ty.kind != EXPR_INT) {
		if (op == OP_LNOT)
			fail(ps, a->pos,
			     "the operand of '!' is a string; compare it: name == \"text\"");
		else
			fail(ps, a->pos, "the operand of '%s' is a string; '%s' takes a number",
			     op_text(op), op_text(op));
		return NULL;
	}
	if (op == OP_PLUS) {
		if (expr_types__is_const(a)) {
			a->ty = promote(a->ty);
			a->pos = pos;
			return a;
		}
	}
	if (expr_types__is_const(a)) {
		uint64_t v = a->num;

		switch (op) {
		case OP_NEG:
			return expr_types__num_node(ps, pos, 0 - v, promote(a->ty));
		case OP_NOT:
			return expr_types__num_node(ps, pos, ~v, promote(a->ty));
		case OP_LNOT: {
			struct node *c = expr_types__num_node(ps, pos, !v, T_INT);

			if (c)
				c->is_bool = true;
			return c;
		}
		default:
			break;
		}
	}
	if (!(n = expr_types__new_node(ps, N_UNARY, pos)))
		return NULL;
	n->op = op;
	n->a = a;
	n->ty = op == OP_LNOT ? T_INT : promote(a->ty);
	n->is_bool = op == OP_LNOT;
	return n;
}

struct node *expr_types__make_binary(struct parser *ps, enum expr_op op, int op_pos, struct node *a,
				     struct node *b)
{
	struct expr_type ty;
	struct node *n;
	uint64_t v;
	int err;

	if (op == OP_GLOB) {
		if (a->ty.kind != EXPR_STR || b->ty.kind != EXPR_STR) {
			struct node *bad = a->ty.kind != EXPR_STR ? a : b;

			fail(ps, bad->pos,
			     "'~' matches a string against a glob pattern (comm ~ \"kworker*\"); its %s "
			     "operand is a number",
			     bad == a ? "left" : "right");
			return NULL;
		}
		ty = T_INT;
	} else if ((op == OP_EQ || op == OP_NE) && a->ty.kind == EXPR_STR &&
		   b->ty.kind == EXPR_STR) {
		ty = T_INT;
	} else {
		if (need_int(ps, a, "left", op) || need_int(ps, b, "right", op))
			return NULL;
		ty = op >= OP_EQ && op <= OP_GE	    ? T_INT
		     : op == OP_SHL || op == OP_SHR ? promote(a->ty)
						    : arith_type(a->ty, b->ty);
	}
	if (ty.kind == EXPR_INT && a->ty.kind == EXPR_INT && expr_types__is_const(b) && !b->num &&
	    (op == OP_DIV || op == OP_MOD)) {
		fail(ps, b->pos, "division by zero");
		return NULL;
	}
	if (op == OP_LAND || op == OP_LOR) {
		/* constants decide at once; the other side still had to be well typed */
		if (expr_types__is_const(a)) {
			bool av = a->num != 0;

			if (op == OP_LAND ? !av : av) {
				n = expr_types__num_node(ps, a->pos, av, T_INT);
			} else if (expr_types__is_const(b)) {
				n = expr_types__num_node(ps, a->pos, b->num != 0, T_INT);
			} else {
				n = expr_types__make_unary(ps, OP_LNOT, a->pos, b);
				n = n ? expr_types__make_unary(ps, OP_LNOT, a->pos, n) : NULL;
			}
			if (n)
				n->is_bool = true;
			return n;
		}
		if (!(n = expr_types__new_node(ps, op == OP_LAND ? N_LAND : N_LOR, a->pos)))
			return NULL;
		n->op = op;
		n->op_pos = op_pos;
		n->a = a;
		n->b = b;
		n->ty = T_INT;
		n->is_bool = true;
		return n;
	}
	if (a->ty.kind == EXPR_INT && expr_types__is_const(a) && expr_types__is_const(b)) {
		/* comparisons compare in the operands' common type, not the int result */
		struct expr_type cty = arith_type(a->ty, b->ty);

		err = expr_binop(op, op >= OP_EQ && op <= OP_GE ? cty : ty, a->num, b->num, &v);
		if (err) {
			fail(ps, b->pos, "division by zero");
			return NULL;
		}
		n = expr_types__num_node(ps, a->pos, v, ty);
		if (n)
			n->is_bool = op >= OP_EQ && op <= OP_GE;
		return n;
	}
	if (!(n = expr_types__new_node(ps, N_BINARY, a->pos)))
		return NULL;
	n->op = op;
	n->op_pos = op_pos;
	n->a = a;
	n->b = b;
	n->ty = ty;
	n->is_bool = op >= OP_EQ && op <= OP_GLOB;
	return n;
}

struct node *expr_types__make_cond(struct parser *ps, int pos, struct node *c, struct node *a,
				   struct node *b)
{
	struct node *n;

	if (c->ty.kind != EXPR_INT) {
		fail(ps, c->pos, "the condition of '?:' is a string; compare it: name == \"text\"");
		return NULL;
	}
	if (a->ty.kind != b->ty.kind) {
		fail(ps, b->pos, "the two values of '?:' differ: the first is %s, the second %s",
		     a->ty.kind == EXPR_STR ? "a string" : "a number",
		     b->ty.kind == EXPR_STR ? "a string" : "a number");
		return NULL;
	}
	if (expr_types__is_const(c)) {
		struct node *pick = c->num ? a : b;
		struct expr_type ty = pick->ty;

		if (ty.kind == EXPR_STR)
			return pick;
		ty = arith_type(a->ty, b->ty);
		ty.is_ptr = a->ty.is_ptr && b->ty.is_ptr;
		if (expr_types__is_const(pick)) {
			pick->ty = ty;
			return pick;
		}
		/* values are kept extended to 64 bits: only the type changes */
		if (!(n = expr_types__new_node(ps, N_CAST, pick->pos)))
			return NULL;
		n->a = pick;
		n->ty = ty;
		n->is_bool = pick->is_bool;
		return n;
	}
	if (!(n = expr_types__new_node(ps, N_COND, c->pos)))
		return NULL;
	n->a = c;
	n->b = a;
	n->c = b;
	n->op_pos = pos;
	n->ty = a->ty.kind == EXPR_STR ? T_STRING : arith_type(a->ty, b->ty);
	if (a->ty.kind == EXPR_INT && a->ty.is_ptr && b->ty.is_ptr)
		n->ty.is_ptr = true;
	n->is_bool = a->is_bool && b->is_bool;
	return n;
}

struct node *expr_types__make_cast(struct parser *ps, int pos, struct expr_type ty, struct node *a)
{
	struct node *n;

	if (a->ty.kind != EXPR_INT) {
		fail(ps, a->pos, "cannot cast a string to %s", expr_type__name(ty));
		return NULL;
	}
	if (expr_types__is_const(a))
		return expr_types__num_node(ps, pos, expr_convert(ty, a->num), ty);
	if (!(n = expr_types__new_node(ps, N_CAST, pos)))
		return NULL;
	n->a = a;
	n->ty = ty;
	n->is_bool = a->is_bool;
	return n;
}
