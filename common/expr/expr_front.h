/* The expression front end's own declarations: the parser's state and its tokens, shared by the
 * lexer (expr_lex.c), the type rules (expr_types.c), printf's format (expr_format.c) and the
 * grammar (expr_parse.c). */
#ifndef PERFSCOPE_COMMON_EXPR_FRONT_H
#define PERFSCOPE_COMMON_EXPR_FRONT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "expr_internal.h"

enum tok_kind {
	T_END,
	T_NUM,
	T_STR,
	T_NAME,
	T_PUNCT,
};

/* Punctuators that are not operators of the tree. */
enum punct {
	P_OP, /* an enum expr_op in tok.op */
	P_LPAREN,
	P_RPAREN,
	P_LBRACK,
	P_RBRACK,
	P_COMMA,
	P_QUEST,
	P_COLON,
	P_BANG,
	P_TILDE,
};

struct tok {
	enum tok_kind kind;
	enum punct punct;
	enum expr_op op;
	int pos;
	uint64_t num;
	struct expr_type ty;
	const char *name; /* into the text */
	int len;
	char *str; /* T_STR: decoded into the pool */
	uint32_t slen;
};

struct parser {
	const char *text;
	const struct expr_opts *opts;
	struct parse_result *res;
	struct expr_error *err;
	struct tok tok;
	int p; /* next byte to read */
	int depth;
};

static const struct expr_type T_INT = { EXPR_INT, 4, true, false };
static const struct expr_type T_LONG = { EXPR_INT, 8, true, false };
static const struct expr_type T_ULONG = { EXPR_INT, 8, false, false };
static const struct expr_type T_STRING = { EXPR_STR, 0, false, false };

#define fail(ps, pos, ...) expr_error_set((ps)->err, (pos), __VA_ARGS__)

/* expr_lex.c: the next token into ps->tok; 0 or a negative errno with ps->err set */
int expr_lex__next(struct parser *ps);
bool expr_lex__is_punct(const struct parser *ps, enum punct p);
const char *expr_lex__tok_desc(const struct parser *ps, char *buf, size_t len);
int expr_lex__expect(struct parser *ps, enum punct p, const char *what);

/* expr_types.c: nodes, each checked (and folded when constant) as it is built; NULL on error */
struct expr_type expr_types__int_type(int size, bool is_signed);
struct node *expr_types__new_node(struct parser *ps, enum node_kind kind, int pos);
bool expr_types__is_const(const struct node *n);
struct node *expr_types__num_node(struct parser *ps, int pos, uint64_t v, struct expr_type ty);
struct node *expr_types__make_unary(struct parser *ps, enum expr_op op, int pos, struct node *a);
struct node *expr_types__make_binary(struct parser *ps, enum expr_op op, int op_pos, struct node *a,
				     struct node *b);
struct node *expr_types__make_cond(struct parser *ps, int pos, struct node *c, struct node *a,
				   struct node *b);
struct node *expr_types__make_cast(struct parser *ps, int pos, struct expr_type ty, struct node *a);

/* expr_ptr.c: pointers into the event (their offsets in the record) */
struct node *expr_ptr__cast(struct parser *ps, int pos, struct expr_type elem, struct node *a);
struct node *expr_ptr__addr(struct parser *ps, int pos, struct node *a);
struct node *expr_ptr__deref(struct parser *ps, int pos, struct node *a);
bool expr_ptr__is_arith(enum expr_op op, const struct node *a, const struct node *b);
struct node *expr_ptr__arith(struct parser *ps, enum expr_op op, int op_pos, struct node *a,
			     struct node *b);
/* expr_format.c: printf's format of call, parsed and checked against its arguments */
int expr_format__parse_printf(struct parser *ps, struct node *call);

#endif
