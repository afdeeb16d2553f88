/* Pointers into the event, as perf-prof's expressions take them: (T *)str, &field, p + n, *p. */
#include "expr_front.h"

/*
 * A pointer into the event is its offset in the record (type elem != 0: what it points to), so
 * that '*' reads inside the record only, checked against its size at run time; perf-prof shows
 * its own process's address instead, which means nothing from one event to the next.
 */
static struct expr_type ptr_type(int elem, bool elem_signed)
{
	struct expr_type ty = T_ULONG;

	ty.is_ptr = true;
	ty.elem = (uint8_t)elem;
	ty.elem_signed = elem_signed;
	return ty;
}

struct node *expr_ptr__cast(struct parser *ps, int pos, struct expr_type elem, struct node *a)
{
	struct expr_type ty = ptr_type(elem.size, elem.is_signed);
	struct node *n;

	if (a->ty.elem) { /* one pointer into the event as another: only the type changes */
		if (expr_types__is_const(a))
			return expr_types__num_node(ps, pos, a->num, ty);
		if (!(n = expr_types__new_node(ps, N_CAST, pos)))
			return NULL;
		n->a = a;
		n->ty = ty;
		return n;
	}
	if (a->kind == N_FIELD && a->ty.kind == EXPR_STR) { /* an array decays to its address */
		if (a->field->is_dynamic) {
			fail(ps, a->pos, "%s is a __data_loc field, placed anew in each event: read it "
				  "as a string, or its elements as %s[i]",
			     a->field->name, a->field->name);
			return NULL;
		}
		return expr_types__num_node(ps, pos, a->field->offset, ty);
	}
	if (a->ty.kind != EXPR_INT) {
		fail(ps, a->pos, "cannot cast a string to a pointer");
		return NULL;
	}
	/* a number (a kernel address): a pointer to show, not into the event, so never read */
	ty.elem = 0;
	return expr_types__make_cast(ps, pos, ty, a);
}

struct node *expr_ptr__addr(struct parser *ps, int pos, struct node *a)
{
	bool str;

	if (a->kind != N_FIELD) {
		fail(ps, a->pos, "'&' takes the address of a field of the event, e.g. &pid");
		return NULL;
	}
	if (a->field->is_dynamic) {
		fail(ps, a->pos, "%s is a __data_loc field, placed anew in each event: it has no "
			  "fixed address",
		     a->field->name);
		return NULL;
	}
	str = a->ty.kind == EXPR_STR;
	return expr_types__num_node(ps, pos, a->field->offset,
				    ptr_type(str ? 1 : a->ty.size, str || a->ty.is_signed));
}

struct node *expr_ptr__deref(struct parser *ps, int pos, struct node *a)
{
	struct node *n;

	if (!a->ty.elem) {
		fail(ps, a->pos,
		     "'*' reads pointers into the event only, e.g. *(unsigned int *)&pid or "
		     "*((unsigned char *)comm + 1); this is %s",
		     a->ty.is_ptr ? "an address outside it" : "a number");
		return NULL;
	}
	if (!(n = expr_types__new_node(ps, N_DEREF, pos)))
		return NULL;
	n->a = a;
	n->ty = expr_types__int_type(a->ty.elem, a->ty.elem_signed);
	return n;
}

bool expr_ptr__is_arith(enum expr_op op, const struct node *a, const struct node *b)
{
	return (op == OP_ADD || op == OP_SUB) && (a->ty.elem || b->ty.elem);
}

/* p + n, n + p, p - n: n elements of p's type away, as C counts them. */
struct node *expr_ptr__arith(struct parser *ps, enum expr_op op, int op_pos, struct node *a,
			     struct node *b)
{
	struct node *p = a->ty.elem ? a : b, *i = p == a ? b : a, *scale, *n;
	struct expr_type ty = p->ty;

	if (a->ty.elem && b->ty.elem) {
		fail(ps, op_pos, "two pointers cannot be added or subtracted; cast them to a number");
		return NULL;
	}
	if (op == OP_SUB && p == b) {
		fail(ps, op_pos, "a number minus a pointer is no value");
		return NULL;
	}
	if (i->ty.kind != EXPR_INT) {
		fail(ps, i->pos, "a pointer moves by a number, and this is a string");
		return NULL;
	}
	if (!(scale = expr_types__num_node(ps, op_pos, ty.elem, T_LONG)) ||
	    !(i = expr_types__make_binary(ps, OP_MUL, op_pos, i, scale)) ||
	    !(n = expr_types__make_binary(ps, op, op_pos, p, i)))
		return NULL;
	n->ty = ty;
	return n;
}
