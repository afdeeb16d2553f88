/* The expression language's grammar: a precedence-climbing parser over the tokens of expr_lex.c,
 * building nodes through the type rules of expr_types.c; names resolved to fields, variables,
 * built-ins and functions. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/suggest.h>

#include "expr_front.h"

#define MAX_RECURSION 200

static const char *const builtin_names[NR_BUILTINS] = { "_cpu", "_pid", "_tid", "_time",
							"_period" };

const char *expr_builtin_name(int idx)
{
	return idx >= 0 && idx < NR_BUILTINS ? builtin_names[idx] : "?";
}

static struct expr_type builtin_type(int idx)
{
	return idx == B_TIME || idx == B_PERIOD ? T_ULONG : T_INT;
}

static const struct {
	const char *name;
	int nargs; /* -1: printf's */
} funcs[] = {
	[F_KSYMBOL] = { "ksymbol", 1 },	  [F_SYSCALL_NAME] = { "syscall_name", 1 },
	[F_COMM_GET] = { "comm_get", 1 }, [F_PRINTF] = { "printf", -1 },
	[F_NTOHL] = { "ntohl", 1 },	  [F_NTOHS] = { "ntohs", 1 },
};
#define NR_FUNCS ((int)(sizeof(funcs) / sizeof(funcs[0])))

int expr_error_set(struct expr_error *err, int pos, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->pos = pos;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	errno = EINVAL;
	return -EINVAL;
}

/* ---- names ---- */

static bool name_is(const char *name, int len, const char *s)
{
	return (int)strlen(s) == len && !memcmp(name, s, (size_t)len);
}

static int unknown_name(struct parser *ps, const char *name, int len, int pos)
{
	const struct psc_tp_format *fmt = ps->opts->fmt;
	int n = fmt ? psc_tp_format__nr_fields(fmt) : 0;
	struct psc_suggest sg;
	char hint[448];

	psc_suggest__init(&sg, name, (size_t)len);
	for (int i = 0; i < n; i++)
		psc_suggest__add(&sg, psc_tp_format__field_at(fmt, i)->name, NULL);
	for (int i = 0; i < NR_BUILTINS; i++)
		psc_suggest__add(&sg, builtin_names[i], NULL);
	for (int i = 0; ps->opts->vars && ps->opts->vars[i]; i++)
		psc_suggest__add(&sg, ps->opts->vars[i], NULL);
	psc_suggest__format(&sg, hint, sizeof(hint));
	if (ps->err)
		ps->err->unknown_name = true;
	if (!fmt)
		return fail(ps, pos,
			    "unknown name '%.*s' (the event is not a tracepoint: no fields)%s",
			    len > 64 ? 64 : len, name, hint);
	return fail(ps, pos, "%s has no field '%.*s'%s", psc_tp_format__name(fmt),
		    len > 64 ? 64 : len, name, hint);
}

/* A cast's type: C's integer type names, the kernel's (u32, s64, __u8) and stdint's. */
static bool parse_type_name(struct parser *ps, struct expr_type *ty, int *err)
{
	static const struct {
		const char *name;
		int size;
		bool is_signed;
	} typedefs[] = {
		{ "u8", 1, false },	  { "u16", 2, false },	    { "u32", 4, false },
		{ "u64", 8, false },	  { "s8", 1, true },	    { "s16", 2, true },
		{ "s32", 4, true },	  { "s64", 8, true },	    { "__u8", 1, false },
		{ "__u16", 2, false },	  { "__u32", 4, false },    { "__u64", 8, false },
		{ "__s8", 1, true },	  { "__s16", 2, true },	    { "__s32", 4, true },
		{ "__s64", 8, true },	  { "uint8_t", 1, false },  { "uint16_t", 2, false },
		{ "uint32_t", 4, false }, { "uint64_t", 8, false }, { "int8_t", 1, true },
		{ "int16_t", 2, true },	  { "int32_t", 4, true },   { "int64_t", 8, true },
		{ "size_t", 8, false },	  { "ssize_t", 8, true },   { "pid_t", 4, true },
	};
	const char *name = ps->tok.name;
	int len = ps->tok.len, size = 0, longs = 0, ints = 0;
	bool sign_given = false, is_signed = true, any = false;

	*err = 0;
	if (ps->tok.kind != T_NAME)
		return false;
	/* a field of that name is a field: (u8) in an event with a field u8 */
	if (ps->opts->fmt) {
		char tmp[64];

		if (len < (int)sizeof(tmp)) {
			memcpy(tmp, name, (size_t)len);
			tmp[len] = 0;
			if (psc_tp_format__field(ps->opts->fmt, tmp))
				return false;
		}
	}
	for (size_t i = 0; i < sizeof(typedefs) / sizeof(typedefs[0]); i++) {
		if (name_is(name, len, typedefs[i].name)) {
			*ty = expr_types__int_type(typedefs[i].size, typedefs[i].is_signed);
			*err = expr_lex__next(ps);
			return true;
		}
	}
	if (name_is(name, len, "void")) {
		if ((*err = expr_lex__next(ps)))
			return true;
		if (!(ps->tok.kind == T_PUNCT && ps->tok.op == OP_MUL)) {
			*err = fail(ps, ps->tok.pos, "a cast to void is no value; (void *) is");
			return true;
		}
		*ty = T_ULONG;
		ty->is_ptr = true;
		*err = expr_lex__next(ps);
		return true;
	}
	/* [signed|unsigned] [char|short|long|long long] [int], in any order, as C takes them */
	while (ps->tok.kind == T_NAME) {
		bool bad = false;

		name = ps->tok.name;
		len = ps->tok.len;
		if (name_is(name, len, "signed") || name_is(name, len, "unsigned")) {
			bad = sign_given;
			sign_given = true;
			is_signed = name[0] == 's';
		} else if (name_is(name, len, "char") || name_is(name, len, "short")) {
			bad = size || longs;
			size = name[0] == 'c' ? 1 : 2;
		} else if (name_is(name, len, "int")) {
			bad = ints || size == 1;
			ints++;
		} else if (name_is(name, len, "long")) {
			bad = size || longs == 2;
			longs++;
		} else {
			break;
		}
		if (bad) {
			*err = fail(ps, ps->tok.pos, "not a C integer type");
			return true;
		}
		any = true;
		if ((*err = expr_lex__next(ps)))
			return true;
	}
	if (!any)
		return false;
	if (longs)
		size = 8;
	*ty = expr_types__int_type(size ? size : 4, is_signed);
	return true;
}
/* ---- the grammar ---- */

static struct node *parse_expr(struct parser *ps, int min_prec);

static int binary_prec(const struct parser *ps)
{
	if (ps->tok.kind != T_PUNCT)
		return -1;
	if (ps->tok.punct == P_QUEST)
		return 1;
	if (ps->tok.punct == P_TILDE)
		return 8; /* binary ~: a glob match, beside < and > (perf-prof's place for it) */
	if (ps->tok.punct != P_OP)
		return -1;
	switch (ps->tok.op) {
	case OP_LOR:
		return 2;
	case OP_LAND:
		return 3;
	case OP_OR:
		return 4;
	case OP_XOR:
		return 5;
	case OP_AND:
		return 6;
	case OP_EQ:
	case OP_NE:
		return 7;
	case OP_LT:
	case OP_LE:
	case OP_GT:
	case OP_GE:
	case OP_GLOB:
		return 8;
	case OP_SHL:
	case OP_SHR:
		return 9;
	case OP_ADD:
	case OP_SUB:
		return 10;
	case OP_MUL:
	case OP_DIV:
	case OP_MOD:
		return 11;
	default:
		return -1;
	}
}

static struct node *parse_call(struct parser *ps, int fn, int pos)
{
	struct node *n = expr_types__new_node(ps, N_CALL, pos);
	char buf[64];

	if (!n || expr_lex__next(ps)) /* '(' */
		return NULL;
	n->idx = fn;
	if (!expr_lex__is_punct(ps, P_RPAREN)) {
		for (;;) {
			struct node *a;

			if (n->nargs == EXPR_MAX_ARGS + 1) {
				fail(ps, ps->tok.pos, "%s() takes at most %d arguments",
				     funcs[fn].name,
				     fn == F_PRINTF ? EXPR_MAX_ARGS + 1 : funcs[fn].nargs);
				return NULL;
			}
			if (!(a = parse_expr(ps, 1)))
				return NULL;
			n->args[n->nargs++] = a;
			if (expr_lex__is_punct(ps, P_RPAREN))
				break;
			if (!expr_lex__is_punct(ps, P_COMMA)) {
				fail(ps, ps->tok.pos,
				     "expected ',' or ')' in the call of %s(), found %s",
				     funcs[fn].name, expr_lex__tok_desc(ps, buf, sizeof(buf)));
				return NULL;
			}
			if (expr_lex__next(ps))
				return NULL;
		}
	}
	if (expr_lex__next(ps)) /* ')' */
		return NULL;
	if (fn == F_PRINTF) {
		if (!n->nargs) {
			fail(ps, pos, "printf() needs a format: printf(\"%%d\", x)");
			return NULL;
		}
		if (expr_format__parse_printf(ps, n))
			return NULL;
		n->ty = T_STRING;
		return n;
	}
	if (n->nargs != funcs[fn].nargs) {
		fail(ps, pos, "%s() takes %d argument%s, and %d %s given", funcs[fn].name,
		     funcs[fn].nargs, funcs[fn].nargs == 1 ? "" : "s", n->nargs,
		     n->nargs == 1 ? "is" : "are");
		return NULL;
	}
	if (n->args[0]->ty.kind != EXPR_INT) {
		fail(ps, n->args[0]->pos, "%s() takes a number, and this is a string",
		     funcs[fn].name);
		return NULL;
	}
	switch (fn) {
	case F_KSYMBOL:
		if (!ps->opts->ksyms) {
			fail(ps, pos,
			     "ksymbol() needs the kernel's symbols, which are not loaded here");
			return NULL;
		}
		ps->res->uses_ksyms = true;
		n->ty = T_STRING;
		break;
	case F_SYSCALL_NAME:
		n->idx = fn;
		n->num = (uint64_t)ps->res->nr_bufs++;
		n->ty = T_STRING;
		break;
	case F_COMM_GET:
		if (!ps->opts->comm) {
			fail(ps, pos, "comm_get() needs thread names, which are not kept here");
			return NULL;
		}
		n->ty = T_STRING;
		break;
	case F_NTOHL:
		n->ty = expr_types__int_type(4, false);
		break;
	case F_NTOHS:
		n->ty = expr_types__int_type(2, false);
		break;
	}
	return n;
}

static struct node *parse_name(struct parser *ps)
{
	const char *name = ps->tok.name;
	int len = ps->tok.len, pos = ps->tok.pos;
	const struct psc_tp_field *f = NULL;
	struct node *n;
	char tmp[128];

	if (expr_lex__next(ps))
		return NULL;
	if (expr_lex__is_punct(ps, P_LPAREN)) {
		for (int i = 0; i < NR_FUNCS; i++)
			if (name_is(name, len, funcs[i].name))
				return parse_call(ps, i, pos);
		fail(ps, pos,
		     "unknown function '%.*s'; there are ksymbol(addr), syscall_name(id), "
		     "comm_get(pid), printf(fmt, ...), ntohl(x), ntohs(x)",
		     len > 64 ? 64 : len, name);
		return NULL;
	}
	for (int i = 0; ps->opts->vars && ps->opts->vars[i]; i++) {
		if (name_is(name, len, ps->opts->vars[i])) {
			if (!(n = expr_types__new_node(ps, N_VAR, pos)))
				return NULL;
			n->idx = i;
			n->ty = T_LONG;
			return n;
		}
	}
	if (ps->opts->fmt && len < (int)sizeof(tmp)) {
		memcpy(tmp, name, (size_t)len);
		tmp[len] = 0;
		f = psc_tp_format__field(ps->opts->fmt, tmp);
	}
	if (f) {
		if (!(n = expr_types__new_node(ps, N_FIELD, pos)))
			return NULL;
		n->field = f;
		if (f->kind == PSC_TP_KIND_STRING)
			n->ty = T_STRING;
		else if (f->kind == PSC_TP_KIND_ARRAY)
			n->ty.kind = EXPR_INT; /* not a value: must be indexed (below) */
		else if (f->elem_size != 1 && f->elem_size != 2 && f->elem_size != 4 &&
			 f->elem_size != 8) {
			fail(ps, pos, "%s is a field of %u bytes, not a number", f->name, f->size);
			return NULL;
		} else {
			n->ty = expr_types__int_type((int)f->elem_size, f->is_signed);
			n->ty.is_ptr = f->kind == PSC_TP_KIND_POINTER;
		}
		if (expr_lex__is_punct(ps, P_LBRACK)) {
			struct node *idx, *ix;
			int bpos = ps->tok.pos;

			if (!f->is_array && !f->is_dynamic) {
				fail(ps, bpos, "%s is not an array (it is %s)", f->name, f->type);
				return NULL;
			}
			if (f->elem_size != 1 && f->elem_size != 2 && f->elem_size != 4 &&
			    f->elem_size != 8) {
				fail(ps, pos, "%s has elements of %u bytes, not numbers", f->name,
				     f->elem_size);
				return NULL;
			}
			if (expr_lex__next(ps) || !(idx = parse_expr(ps, 0)))
				return NULL;
			if (idx->ty.kind != EXPR_INT) {
				fail(ps, idx->pos,
				     "an index must be a number, and this is a string");
				return NULL;
			}
			if (expr_types__is_const(idx) && f->array_len && idx->num >= f->array_len) {
				fail(ps, idx->pos, "%s has %u elements: index 0 to %u", f->name,
				     f->array_len, f->array_len - 1);
				return NULL;
			}
			if (expr_lex__expect(ps, P_RBRACK, "']'"))
				return NULL;
			if (!(ix = expr_types__new_node(ps, N_INDEX, pos)))
				return NULL;
			ix->field = f;
			ix->a = idx;
			ix->ty = expr_types__int_type((int)f->elem_size, f->is_signed);
			return ix;
		}
		if (f->kind == PSC_TP_KIND_ARRAY) {
			fail(ps, pos, "%s is an array (%s); take one element: %s[0]", f->name,
			     f->type, f->name);
			return NULL;
		}
		return n;
	}
	for (int i = 0; i < NR_BUILTINS; i++) {
		if (name_is(name, len, builtin_names[i])) {
			if (!(n = expr_types__new_node(ps, N_BUILTIN, pos)))
				return NULL;
			n->idx = i;
			n->ty = builtin_type(i);
			return n;
		}
	}
	unknown_name(ps, name, len, pos);
	return NULL;
}

static struct node *parse_unary(struct parser *ps)
{
	struct node *n = NULL, *a;
	int pos = ps->tok.pos;
	char buf[64];

	if (++ps->depth > MAX_RECURSION) {
		fail(ps, pos, "the expression nests too deeply");
		return NULL;
	}
	switch (ps->tok.kind) {
	case T_NUM:
		n = expr_types__num_node(ps, pos, ps->tok.num, ps->tok.ty);
		if (n && expr_lex__next(ps))
			n = NULL;
		break;
	case T_STR: {
		/* "a" "b": C's concatenation; the pool holds the pieces one after another */
		char *s = ps->tok.str;
		uint32_t len = ps->tok.slen;

		if (expr_lex__next(ps))
			break;
		while (ps->tok.kind == T_STR) {
			memmove(s + len, ps->tok.str, ps->tok.slen + 1);
			len += ps->tok.slen;
			ps->res->pool_len = (size_t)(s - ps->res->pool) + len + 1;
			if (expr_lex__next(ps))
				return NULL;
		}
		if ((n = expr_types__new_node(ps, N_STR, pos))) {
			n->str = s;
			n->len = len;
			n->ty = T_STRING;
		}
		break;
	}
	case T_NAME:
		n = parse_name(ps);
		break;
	case T_PUNCT:
		switch (ps->tok.punct) {
		case P_LPAREN: {
			struct expr_type ty;
			int err;

			if (expr_lex__next(ps))
				break;
			if (parse_type_name(ps, &ty, &err)) {
				bool ptr = !err && !ty.is_ptr && ps->tok.kind == T_PUNCT &&
					   ps->tok.punct == P_OP && ps->tok.op == OP_MUL;

				if (ptr && expr_lex__next(ps))
					break;
				if (err || expr_lex__expect(ps, P_RPAREN, "')' after the type"))
					break;
				if ((a = parse_unary(ps)))
					n = ptr ? expr_ptr__cast(ps, pos, ty, a)
						: expr_types__make_cast(ps, pos, ty, a);
				break;
			}
			if (err || !(a = parse_expr(ps, 0)))
				break;
			if (!expr_lex__expect(ps, P_RPAREN, "')'"))
				n = a;
			break;
		}
		case P_OP:
			if (ps->tok.op == OP_MUL || ps->tok.op == OP_AND) { /* *p, &field */
				bool deref = ps->tok.op == OP_MUL;

				if (expr_lex__next(ps) || !(a = parse_unary(ps)))
					break;
				n = deref ? expr_ptr__deref(ps, pos, a) : expr_ptr__addr(ps, pos, a);
				break;
			}
			if (ps->tok.op != OP_SUB && ps->tok.op != OP_ADD)
				goto bad;
			/* fall through */
		case P_BANG:
		case P_TILDE: {
			enum expr_op op = ps->tok.punct == P_BANG    ? OP_LNOT
					  : ps->tok.punct == P_TILDE ? OP_NOT
					  : ps->tok.op == OP_SUB     ? OP_NEG
								     : OP_PLUS;

			if (expr_lex__next(ps) || !(a = parse_unary(ps)))
				break;
			n = expr_types__make_unary(ps, op, pos, a);
			break;
		}
		default:
			goto bad;
		}
		break;
	default:
	bad:
		fail(ps, pos, "expected a number, a name, a string or '(', found %s",
		     expr_lex__tok_desc(ps, buf, sizeof(buf)));
		break;
	}
	ps->depth--;
	return n;
}

static struct node *parse_expr(struct parser *ps, int min_prec)
{
	struct node *lhs, *mid, *rhs;
	int prec;

	if (++ps->depth > MAX_RECURSION) {
		fail(ps, ps->tok.pos, "the expression nests too deeply");
		return NULL;
	}
	if (!(lhs = parse_unary(ps)))
		return NULL;
	while ((prec = binary_prec(ps)) >= min_prec && prec > 0) {
		int op_pos = ps->tok.pos;
		enum expr_op op = ps->tok.punct == P_TILDE ? OP_GLOB : ps->tok.op;

		if (expr_lex__next(ps))
			return NULL;
		if (prec == 1) {
			/* c ? a : b, right to left; the middle is a whole expression */
			if (!(mid = parse_expr(ps, 1)) ||
			    expr_lex__expect(ps, P_COLON, "':' of '?:'") ||
			    !(rhs = parse_expr(ps, 1)) ||
			    !(lhs = expr_types__make_cond(ps, op_pos, lhs, mid, rhs)))
				return NULL;
			continue;
		}
		if (!(rhs = parse_expr(ps, prec + 1)))
			return NULL;
		if (expr_ptr__is_arith(op, lhs, rhs))
			lhs = expr_ptr__arith(ps, op, op_pos, lhs, rhs);
		else
			lhs = expr_types__make_binary(ps, op, op_pos, lhs, rhs);
		if (!lhs)
			return NULL;
	}
	ps->depth--;
	return lhs;
}

int expr_parse(const char *text, const struct expr_opts *opts, struct parse_result *res,
	       struct expr_error *err)
{
	struct parser ps = { .text = text, .opts = opts, .res = res, .err = err };
	size_t len = strlen(text);
	char buf[64];

	memset(res, 0, sizeof(*res));
	if (err) {
		err->pos = -1;
		err->unknown_name = false;
		err->msg[0] = 0;
	}
	res->pool_max = len + 1;
	/* a node per token at most, and a folded constant per operator: twice the bytes is ample */
	res->max_nodes = 2 * (int)len + 4;
	res->pool = calloc(1, res->pool_max);
	res->nodes = calloc((size_t)res->max_nodes, sizeof(*res->nodes));
	if (!res->pool || !res->nodes) {
		expr_parse_free(res);
		errno = ENOMEM;
		return -ENOMEM;
	}
	if (expr_lex__next(&ps))
		goto fail;
	if (ps.tok.kind == T_END) {
		fail(&ps, 0, "the expression is empty");
		goto fail;
	}
	if (!(res->root = parse_expr(&ps, 0)))
		goto fail;
	if (ps.tok.kind != T_END) {
		fail(&ps, ps.tok.pos, "expected an operator or the end, found %s",
		     expr_lex__tok_desc(&ps, buf, sizeof(buf)));
		goto fail;
	}
	if (opts->want_int && res->root->ty.kind != EXPR_INT) {
		fail(&ps, res->root->pos, "this is a string, and a number is needed here");
		goto fail;
	}
	return 0;
fail:
	expr_parse_free(res);
	if (errno != ENOMEM)
		errno = EINVAL;
	return -errno;
}

void expr_parse_free(struct parse_result *res)
{
	for (int i = 0; i < res->nr_fmts; i++)
		free(res->fmts[i].convs);
	free(res->fmts);
	free(res->nodes);
	free(res->pool);
	memset(res, 0, sizeof(*res));
}
