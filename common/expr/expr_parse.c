/* The expression language's front end: tokens, a precedence-climbing parser, types checked and
 * constants folded as each node is built. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/suggest.h>

#include "expr_internal.h"

#define MAX_RECURSION 200

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

#define fail(ps, pos, ...) expr_error_set((ps)->err, (pos), __VA_ARGS__)

/* ---- types ---- */

static struct expr_type int_type(int size, bool is_signed)
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

	if (t.kind == EXPR_STR)
		return "string";
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

static struct node *new_node(struct parser *ps, enum node_kind kind, int pos)
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

/* ---- tokens ---- */

static bool is_ident(int c)
{
	return isalnum(c) || c == '_';
}

static int lex_escape(struct parser *ps, int *i, char *out)
{
	const char *s = ps->text;
	int c = (unsigned char)s[*i];

	(*i)++;
	switch (c) {
	case 'n':
		*out = '\n';
		return 0;
	case 't':
		*out = '\t';
		return 0;
	case 'r':
		*out = '\r';
		return 0;
	case 'a':
		*out = '\a';
		return 0;
	case 'b':
		*out = '\b';
		return 0;
	case 'f':
		*out = '\f';
		return 0;
	case 'v':
		*out = '\v';
		return 0;
	case '\\':
	case '"':
	case '\'':
	case '?':
		*out = (char)c;
		return 0;
	case 'x': {
		int v = 0, n = 0;

		while (n < 2 && isxdigit((unsigned char)s[*i])) {
			c = s[(*i)++];
			v = v * 16 + (isdigit(c) ? c - '0' : (tolower(c) - 'a' + 10));
			n++;
		}
		if (!n)
			return fail(ps, *i - 2, "'\\x' needs hex digits: \\x41");
		*out = (char)v;
		return 0;
	}
	default:
		if (c >= '0' && c <= '7') {
			int v = c - '0', n = 1;

			while (n < 3 && s[*i] >= '0' && s[*i] <= '7') {
				v = v * 8 + (s[(*i)++] - '0');
				n++;
			}
			*out = (char)v;
			return 0;
		}
		return fail(ps, *i - 2, "unknown escape '\\%c' in a string", c ? c : ' ');
	}
}

/* "..." into the pool, at most as long as its source. */
static int lex_string(struct parser *ps, int start)
{
	struct parse_result *r = ps->res;
	const char *s = ps->text;
	int i = start + 1, err;
	char c;

	ps->tok.str = r->pool + r->pool_len;
	ps->tok.slen = 0;
	for (;;) {
		if (!s[i])
			return fail(ps, start, "this string has no closing '\"'");
		if (s[i] == '"')
			break;
		if (s[i] == '\\') {
			i++;
			if (!s[i])
				return fail(ps, start, "this string has no closing '\"'");
			if ((err = lex_escape(ps, &i, &c)))
				return err;
		} else {
			c = s[i++];
		}
		r->pool[r->pool_len++] = c;
		ps->tok.slen++;
	}
	r->pool[r->pool_len++] = '\0';
	ps->p = i + 1;
	ps->tok.kind = T_STR;
	return 0;
}

static int lex_char(struct parser *ps, int start)
{
	const char *s = ps->text;
	int i = start + 1, err;
	char c;

	if (s[i] == '\\') {
		i++;
		if (!s[i])
			return fail(ps, start, "this character has no closing \"'\"");
		if ((err = lex_escape(ps, &i, &c)))
			return err;
	} else if (s[i] && s[i] != '\'') {
		c = s[i++];
	} else {
		return fail(ps, start, "an empty character constant; write 'a'");
	}
	if (s[i] != '\'')
		return fail(ps, start,
			    "a character constant holds one character; strings take \"...\"");
	ps->p = i + 1;
	ps->tok.kind = T_NUM;
	ps->tok.num = (uint64_t)(int64_t)c;
	ps->tok.ty = T_INT;
	return 0;
}

static int digit_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/* The type C gives an unsuffixed (or u/l-suffixed) literal of value v, with a 64-bit long. */
static struct expr_type literal_type(uint64_t v, bool decimal, bool u, bool l)
{
	if (!l && !u && v <= INT32_MAX)
		return T_INT;
	if (!l && u && v <= UINT32_MAX)
		return int_type(4, false);
	if (!l && !u && !decimal && v <= UINT32_MAX)
		return int_type(4, false);
	if (!u && v <= INT64_MAX)
		return T_LONG;
	return T_ULONG;
}

static int lex_number(struct parser *ps, int start)
{
	static const struct {
		const char *name;
		uint64_t ns;
	} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };
	const char *s = ps->text;
	int i = start, base = 10, frac_digits = 0, sfx;
	uint64_t v = 0, frac = 0;
	bool any = false, u = false, l = false;

	if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	} else if (s[i] == '0' && (s[i + 1] == 'b' || s[i + 1] == 'B')) {
		base = 2;
		i += 2;
	} else if (s[i] == '0' && isdigit((unsigned char)s[i + 1])) {
		base = 8;
		i++;
	}
	for (; digit_val(s[i]) < base; i++) {
		any = true;
		if (__builtin_mul_overflow(v, (uint64_t)base, &v) ||
		    __builtin_add_overflow(v, (uint64_t)digit_val(s[i]), &v))
			return fail(ps, start, "this number does not fit in 64 bits");
	}
	if (!any && base != 8)
		return fail(ps, start, "a number needs digits after '%.2s'", s + start);
	if (base == 10 && s[i] == '.' && isdigit((unsigned char)s[i + 1])) {
		for (i++; isdigit((unsigned char)s[i]); i++) {
			if (frac_digits == 9)
				return fail(ps, i, "more than 9 digits after the point");
			frac = frac * 10 + (uint64_t)(s[i] - '0');
			frac_digits++;
		}
	}
	for (sfx = i; is_ident((unsigned char)s[i]); i++)
		;
	ps->tok.kind = T_NUM;
	ps->p = i;
	if (i > sfx) {
		for (size_t k = 0; k < sizeof(units) / sizeof(units[0]); k++) {
			uint64_t ns = units[k].ns, f;

			if (strlen(units[k].name) != (size_t)(i - sfx) ||
			    memcmp(units[k].name, s + sfx, (size_t)(i - sfx)))
				continue;
			if (base != 10)
				return fail(ps, sfx, "a time takes a decimal number: 10ms");
			if (__builtin_mul_overflow(v, ns, &v))
				return fail(ps, start,
					    "this time does not fit in 64 bits of nanoseconds");
			for (f = 1; frac_digits > 0; frac_digits--)
				f *= 10;
			if (frac && (frac * ns) % f)
				return fail(ps, start,
					    "this time is not a whole number of nanoseconds");
			if (__builtin_add_overflow(v, frac * ns / f, &v) || v > INT64_MAX)
				return fail(ps, start,
					    "this time does not fit in 64 bits of nanoseconds");
			ps->tok.num = v;
			ps->tok.ty = T_LONG;
			return 0;
		}
		for (int k = sfx; k < i; k++) {
			int c = tolower((unsigned char)s[k]);

			if (c == 'u' && !u) {
				u = true;
			} else if (c == 'l' && !l) {
				l = true;
				if (k + 1 < i && tolower((unsigned char)s[k + 1]) == 'l')
					k++; /* ll: the same 64 bits */
			} else
				return fail(
					ps, sfx,
					"bad suffix '%.*s' on a number; a number may end in u, l, "
					"ul, ll, ull or a time unit (ns, us, ms, s)",
					i - sfx, s + sfx);
		}
	}
	if (frac_digits)
		return fail(ps, start,
			    "a fraction needs a time unit (1.5ms); otherwise numbers are whole");
	ps->tok.num = v;
	ps->tok.ty = literal_type(v, base == 10, u, l);
	return 0;
}

static int punct(struct parser *ps, int len, enum punct p, enum expr_op op)
{
	ps->tok.kind = T_PUNCT;
	ps->tok.punct = p;
	ps->tok.op = op;
	ps->p += len;
	return 0;
}

static int next(struct parser *ps)
{
	const char *s = ps->text;
	int c, c1, err;

	while (isspace((unsigned char)s[ps->p]))
		ps->p++;
	memset(&ps->tok, 0, sizeof(ps->tok));
	ps->tok.pos = ps->p;
	c = (unsigned char)s[ps->p];
	c1 = c ? (unsigned char)s[ps->p + 1] : 0;
	if (!c) {
		ps->tok.kind = T_END;
		err = 0;
	} else if (isdigit(c)) {
		err = lex_number(ps, ps->p);
	} else if (isalpha(c) || c == '_') {
		int i = ps->p;

		while (is_ident((unsigned char)s[i]))
			i++;
		ps->tok.kind = T_NAME;
		ps->tok.name = s + ps->p;
		ps->tok.len = i - ps->p;
		ps->p = i;
		err = 0;
	} else if (c == '"') {
		err = lex_string(ps, ps->p);
	} else if (c == '\'') {
		err = lex_char(ps, ps->p);
	} else {
		switch (c) {
		case '+':
			return punct(ps, 1, P_OP, OP_ADD);
		case '-':
			return punct(ps, 1, P_OP, OP_SUB);
		case '*':
			return punct(ps, 1, P_OP, OP_MUL);
		case '/':
			return punct(ps, 1, P_OP, OP_DIV);
		case '%':
			return punct(ps, 1, P_OP, OP_MOD);
		case '^':
			return punct(ps, 1, P_OP, OP_XOR);
		case '&':
			return c1 == '&' ? punct(ps, 2, P_OP, OP_LAND) : punct(ps, 1, P_OP, OP_AND);
		case '|':
			return c1 == '|' ? punct(ps, 2, P_OP, OP_LOR) : punct(ps, 1, P_OP, OP_OR);
		case '<':
			if (c1 == '<')
				return punct(ps, 2, P_OP, OP_SHL);
			return c1 == '=' ? punct(ps, 2, P_OP, OP_LE) : punct(ps, 1, P_OP, OP_LT);
		case '>':
			if (c1 == '>')
				return punct(ps, 2, P_OP, OP_SHR);
			return c1 == '=' ? punct(ps, 2, P_OP, OP_GE) : punct(ps, 1, P_OP, OP_GT);
		case '=':
			if (c1 == '=')
				return punct(ps, 2, P_OP, OP_EQ);
			if (c1 == '~') /* the kernel filter's spelling of a glob match */
				return punct(ps, 2, P_OP, OP_GLOB);
			return fail(ps, ps->p,
				    "'=' alone: compare with '=='; expressions assign nothing");
		case '!':
			if (c1 == '=')
				return punct(ps, 2, P_OP, OP_NE);
			return punct(ps, 1, P_BANG, OP_LNOT);
		case '~':
			return punct(ps, 1, P_TILDE, OP_NOT);
		case '(':
			return punct(ps, 1, P_LPAREN, OP_NONE);
		case ')':
			return punct(ps, 1, P_RPAREN, OP_NONE);
		case '[':
			return punct(ps, 1, P_LBRACK, OP_NONE);
		case ']':
			return punct(ps, 1, P_RBRACK, OP_NONE);
		case ',':
			return punct(ps, 1, P_COMMA, OP_NONE);
		case '?':
			return punct(ps, 1, P_QUEST, OP_NONE);
		case ':':
			return punct(ps, 1, P_COLON, OP_NONE);
		default:
			if (isprint(c))
				return fail(ps, ps->p, "unexpected character '%c'", c);
			return fail(ps, ps->p, "unexpected byte 0x%02x", c);
		}
	}
	return err;
}

static bool is_punct(const struct parser *ps, enum punct p)
{
	return ps->tok.kind == T_PUNCT && ps->tok.punct == p;
}

static const char *tok_desc(const struct parser *ps, char *buf, size_t len)
{
	switch (ps->tok.kind) {
	case T_END:
		return "the end";
	case T_NUM:
		return "a number";
	case T_STR:
		return "a string";
	case T_NAME:
		snprintf(buf, len, "'%.*s'", ps->tok.len > 40 ? 40 : ps->tok.len, ps->tok.name);
		return buf;
	default:
		snprintf(buf, len, "'%.*s'", ps->p - ps->tok.pos, ps->text + ps->tok.pos);
		return buf;
	}
}

static int expect(struct parser *ps, enum punct p, const char *what)
{
	char buf[64];

	if (!is_punct(ps, p))
		return fail(ps, ps->tok.pos, "expected %s, found %s", what,
			    tok_desc(ps, buf, sizeof(buf)));
	return next(ps);
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
			*ty = int_type(typedefs[i].size, typedefs[i].is_signed);
			*err = next(ps);
			return true;
		}
	}
	if (name_is(name, len, "void")) {
		if ((*err = next(ps)))
			return true;
		if (!(ps->tok.kind == T_PUNCT && ps->tok.op == OP_MUL)) {
			*err = fail(ps, ps->tok.pos, "a cast to void is no value; (void *) is");
			return true;
		}
		*ty = T_ULONG;
		ty->is_ptr = true;
		*err = next(ps);
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
		if ((*err = next(ps)))
			return true;
	}
	if (!any)
		return false;
	if (longs)
		size = 8;
	*ty = int_type(size ? size : 4, is_signed);
	return true;
}

/* ---- nodes, each checked as it is built ---- */

static bool is_const(const struct node *n)
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

static struct node *num_node(struct parser *ps, int pos, uint64_t v, struct expr_type ty)
{
	struct node *n = new_node(ps, N_NUM, pos);

	if (n) {
		n->num = v;
		n->ty = ty;
	}
	return n;
}

static struct node *make_unary(struct parser *ps, enum expr_op op, int pos, struct node *a)
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
		if (is_const(a)) {
			a->ty = promote(a->ty);
			a->pos = pos;
			return a;
		}
	}
	if (is_const(a)) {
		uint64_t v = a->num;

		switch (op) {
		case OP_NEG:
			return num_node(ps, pos, 0 - v, promote(a->ty));
		case OP_NOT:
			return num_node(ps, pos, ~v, promote(a->ty));
		case OP_LNOT: {
			struct node *c = num_node(ps, pos, !v, T_INT);

			if (c)
				c->is_bool = true;
			return c;
		}
		default:
			break;
		}
	}
	if (!(n = new_node(ps, N_UNARY, pos)))
		return NULL;
	n->op = op;
	n->a = a;
	n->ty = op == OP_LNOT ? T_INT : promote(a->ty);
	n->is_bool = op == OP_LNOT;
	return n;
}

static struct node *make_binary(struct parser *ps, enum expr_op op, int op_pos, struct node *a,
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
	if (ty.kind == EXPR_INT && a->ty.kind == EXPR_INT && is_const(b) && !b->num &&
	    (op == OP_DIV || op == OP_MOD)) {
		fail(ps, b->pos, "division by zero");
		return NULL;
	}
	if (op == OP_LAND || op == OP_LOR) {
		/* constants decide at once; the other side still had to be well typed */
		if (is_const(a)) {
			bool av = a->num != 0;

			if (op == OP_LAND ? !av : av) {
				n = num_node(ps, a->pos, av, T_INT);
			} else if (is_const(b)) {
				n = num_node(ps, a->pos, b->num != 0, T_INT);
			} else {
				n = make_unary(ps, OP_LNOT, a->pos, b);
				n = n ? make_unary(ps, OP_LNOT, a->pos, n) : NULL;
			}
			if (n)
				n->is_bool = true;
			return n;
		}
		if (!(n = new_node(ps, op == OP_LAND ? N_LAND : N_LOR, a->pos)))
			return NULL;
		n->op = op;
		n->op_pos = op_pos;
		n->a = a;
		n->b = b;
		n->ty = T_INT;
		n->is_bool = true;
		return n;
	}
	if (a->ty.kind == EXPR_INT && is_const(a) && is_const(b)) {
		/* comparisons compare in the operands' common type, not the int result */
		struct expr_type cty = arith_type(a->ty, b->ty);

		err = expr_binop(op, op >= OP_EQ && op <= OP_GE ? cty : ty, a->num, b->num, &v);
		if (err) {
			fail(ps, b->pos, "division by zero");
			return NULL;
		}
		n = num_node(ps, a->pos, v, ty);
		if (n)
			n->is_bool = op >= OP_EQ && op <= OP_GE;
		return n;
	}
	if (!(n = new_node(ps, N_BINARY, a->pos)))
		return NULL;
	n->op = op;
	n->op_pos = op_pos;
	n->a = a;
	n->b = b;
	n->ty = ty;
	n->is_bool = op >= OP_EQ && op <= OP_GLOB;
	return n;
}

static struct node *make_cond(struct parser *ps, int pos, struct node *c, struct node *a,
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
	if (is_const(c)) {
		struct node *pick = c->num ? a : b;
		struct expr_type ty = pick->ty;

		if (ty.kind == EXPR_STR)
			return pick;
		ty = arith_type(a->ty, b->ty);
		ty.is_ptr = a->ty.is_ptr && b->ty.is_ptr;
		if (is_const(pick)) {
			pick->ty = ty;
			return pick;
		}
		/* values are kept extended to 64 bits: only the type changes */
		if (!(n = new_node(ps, N_CAST, pick->pos)))
			return NULL;
		n->a = pick;
		n->ty = ty;
		n->is_bool = pick->is_bool;
		return n;
	}
	if (!(n = new_node(ps, N_COND, c->pos)))
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

static struct node *make_cast(struct parser *ps, int pos, struct expr_type ty, struct node *a)
{
	struct node *n;

	if (a->ty.kind != EXPR_INT) {
		fail(ps, a->pos, "cannot cast a string to %s", expr_type__name(ty));
		return NULL;
	}
	if (is_const(a))
		return num_node(ps, pos, expr_convert(ty, a->num), ty);
	if (!(n = new_node(ps, N_CAST, pos)))
		return NULL;
	n->a = a;
	n->ty = ty;
	n->is_bool = a->is_bool;
	return n;
}

/* ---- printf's format, checked against its arguments now ---- */

static int parse_printf(struct parser *ps, struct node *call)
{
	struct parse_result *r = ps->res;
	const struct node *fnode = call->args[0];
	const char *f = fnode->str;
	uint32_t n = fnode->len, i = 0, lit = 0;
	struct pf_format *pf;
	struct pf_conv *convs;
	int nconv = 0, arg = 1;

	if (fnode->kind != N_STR)
		return fail(ps, fnode->pos, "printf's format must be a string in quotes");
	/* at most one conversion per two bytes, plus the text after the last */
	convs = calloc(n / 2 + 2, sizeof(*convs));
	if (!convs)
		return -ENOMEM;
	pf = realloc(r->fmts, (size_t)(r->nr_fmts + 1) * sizeof(*pf));
	if (!pf) {
		free(convs);
		return -ENOMEM;
	}
	r->fmts = pf;
	pf = &r->fmts[r->nr_fmts++];
	pf->convs = convs;
	pf->nr = 0;
	pf->buf = r->nr_bufs++;
	call->num = (uint64_t)(pf - r->fmts);
	while (i < n) {
		struct pf_conv *c = &convs[nconv];
		char flags[8] = "", *sp;
		int nflags = 0, width = -1, prec = -1, lenmod = 4;

		if (f[i] != '%') {
			i++;
			continue;
		}
		if (i + 1 < n && f[i + 1] == '%') {
			/* "%%": the text up to and including one '%' */
			c->lit = f + lit;
			c->lit_len = i + 1 - lit;
			c->conv = 0;
			c->spec[0] = 0;
			nconv++;
			i += 2;
			lit = i;
			continue;
		}
		c->lit = f + lit;
		c->lit_len = i - lit;
		i++;
		while (i < n && f[i] && strchr("-+ #0", f[i])) {
			if (nflags < 5)
				flags[nflags++] = f[i];
			i++;
		}
		flags[nflags] = 0;
		if (i < n && f[i] == '*')
			return fail(ps, fnode->pos,
				    "printf: '*' widths are not supported; write the number");
		/* digits past three are refused below, whatever they say */
		for (; i < n && isdigit((unsigned char)f[i]); i++)
			width = width >= 999 ? 999 : (width < 0 ? 0 : width) * 10 + (f[i] - '0');
		if (i < n && f[i] == '.') {
			prec = 0;
			for (i++; i < n && isdigit((unsigned char)f[i]); i++)
				prec = prec >= 999 ? 999 : prec * 10 + (f[i] - '0');
		}
		if (width >= EXPR_STRBUF || prec >= EXPR_STRBUF)
			return fail(
				ps, fnode->pos,
				"printf: a width or precision of %d or more (the text is at most %d "
				"bytes)",
				EXPR_STRBUF, EXPR_STRBUF - 1);
		for (; i < n && f[i] && strchr("hlzjt", f[i]); i++)
			lenmod = f[i] != 'h' ? 8 : lenmod == 2 ? 1 : 2;
		if (i >= n || !f[i] || !strchr("diouxXcsp", f[i]))
			return fail(
				ps, fnode->pos,
				"printf: bad conversion at byte %u of the format; it takes %%d %%i "
				"%%u %%x %%X %%o %%c %%s %%p, with flags, width, precision and "
				"h, hh, l, ll",
				i);
		c->conv = f[i++];
		lit = i;
		if (arg > call->nargs - 1)
			return fail(
				ps, call->pos,
				"printf: the format has more conversions than the %d argument(s) "
				"after it",
				call->nargs - 1);
		if ((c->conv == 's') != (call->args[arg]->ty.kind == EXPR_STR))
			return fail(ps, call->args[arg]->pos,
				    "printf: argument %d is %s, and %%%c takes %s", arg,
				    call->args[arg]->ty.kind == EXPR_STR ? "a string" : "a number",
				    c->conv, c->conv == 's' ? "a string" : "a number");
		arg++;
		/* the spec snprintf gets: the value comes as 64 bits, cut first to lenmod */
		sp = c->spec;
		if (c->conv == 'p') {
			/* an address: 0x and its hex digits, as glibc's %p (but 0x0 for 0) */
			strcpy(sp, "0x%llx");
			c->lenmod = 8;
			c->prec = -1;
			nconv++;
			continue;
		}
		sp += sprintf(sp, "%%%s", flags);
		if (width >= 0)
			sp += sprintf(sp, "%d", width);
		if (c->conv == 's')
			sp += sprintf(sp, ".*");
		else if (prec >= 0 && c->conv != 'c')
			sp += sprintf(sp, ".%d", prec);
		if (c->conv == 'c' || c->conv == 's')
			sprintf(sp, "%c", c->conv);
		else
			sprintf(sp, "ll%c", c->conv == 'i' ? 'd' : c->conv);
		c->lenmod = (uint8_t)lenmod;
		c->prec = prec;
		nconv++;
	}
	if (arg < call->nargs)
		return fail(ps, call->args[arg]->pos,
			    "printf: argument %d has no conversion in the format", arg);
	convs[nconv].lit = f + lit;
	convs[nconv].lit_len = n - lit;
	convs[nconv].conv = 0;
	nconv++;
	pf->nr = nconv;
	return 0;
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
	struct node *n = new_node(ps, N_CALL, pos);
	char buf[64];

	if (!n || next(ps)) /* '(' */
		return NULL;
	n->idx = fn;
	if (!is_punct(ps, P_RPAREN)) {
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
			if (is_punct(ps, P_RPAREN))
				break;
			if (!is_punct(ps, P_COMMA)) {
				fail(ps, ps->tok.pos,
				     "expected ',' or ')' in the call of %s(), found %s",
				     funcs[fn].name, tok_desc(ps, buf, sizeof(buf)));
				return NULL;
			}
			if (next(ps))
				return NULL;
		}
	}
	if (next(ps)) /* ')' */
		return NULL;
	if (fn == F_PRINTF) {
		if (!n->nargs) {
			fail(ps, pos, "printf() needs a format: printf(\"%%d\", x)");
			return NULL;
		}
		if (parse_printf(ps, n))
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
		n->ty = int_type(4, false);
		break;
	case F_NTOHS:
		n->ty = int_type(2, false);
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

	if (next(ps))
		return NULL;
	if (is_punct(ps, P_LPAREN)) {
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
			if (!(n = new_node(ps, N_VAR, pos)))
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
		if (!(n = new_node(ps, N_FIELD, pos)))
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
			n->ty = int_type((int)f->elem_size, f->is_signed);
			n->ty.is_ptr = f->kind == PSC_TP_KIND_POINTER;
		}
		if (is_punct(ps, P_LBRACK)) {
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
			if (next(ps) || !(idx = parse_expr(ps, 0)))
				return NULL;
			if (idx->ty.kind != EXPR_INT) {
				fail(ps, idx->pos,
				     "an index must be a number, and this is a string");
				return NULL;
			}
			if (is_const(idx) && f->array_len && idx->num >= f->array_len) {
				fail(ps, idx->pos, "%s has %u elements: index 0 to %u", f->name,
				     f->array_len, f->array_len - 1);
				return NULL;
			}
			if (expect(ps, P_RBRACK, "']'"))
				return NULL;
			if (!(ix = new_node(ps, N_INDEX, pos)))
				return NULL;
			ix->field = f;
			ix->a = idx;
			ix->ty = int_type((int)f->elem_size, f->is_signed);
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
			if (!(n = new_node(ps, N_BUILTIN, pos)))
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
		n = num_node(ps, pos, ps->tok.num, ps->tok.ty);
		if (n && next(ps))
			n = NULL;
		break;
	case T_STR: {
		/* "a" "b": C's concatenation; the pool holds the pieces one after another */
		char *s = ps->tok.str;
		uint32_t len = ps->tok.slen;

		if (next(ps))
			break;
		while (ps->tok.kind == T_STR) {
			memmove(s + len, ps->tok.str, ps->tok.slen + 1);
			len += ps->tok.slen;
			ps->res->pool_len = (size_t)(s - ps->res->pool) + len + 1;
			if (next(ps))
				return NULL;
		}
		if ((n = new_node(ps, N_STR, pos))) {
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

			if (next(ps))
				break;
			if (parse_type_name(ps, &ty, &err)) {
				if (err || expect(ps, P_RPAREN, "')' after the type"))
					break;
				if ((a = parse_unary(ps)))
					n = make_cast(ps, pos, ty, a);
				break;
			}
			if (err || !(a = parse_expr(ps, 0)))
				break;
			if (!expect(ps, P_RPAREN, "')'"))
				n = a;
			break;
		}
		case P_OP:
			if (ps->tok.op != OP_SUB && ps->tok.op != OP_ADD)
				goto bad;
			/* fall through */
		case P_BANG:
		case P_TILDE: {
			enum expr_op op = ps->tok.punct == P_BANG    ? OP_LNOT
					  : ps->tok.punct == P_TILDE ? OP_NOT
					  : ps->tok.op == OP_SUB     ? OP_NEG
								     : OP_PLUS;

			if (next(ps) || !(a = parse_unary(ps)))
				break;
			n = make_unary(ps, op, pos, a);
			break;
		}
		default:
			goto bad;
		}
		break;
	default:
	bad:
		fail(ps, pos, "expected a number, a name, a string or '(', found %s",
		     tok_desc(ps, buf, sizeof(buf)));
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

		if (next(ps))
			return NULL;
		if (prec == 1) {
			/* c ? a : b, right to left; the middle is a whole expression */
			if (!(mid = parse_expr(ps, 1)) || expect(ps, P_COLON, "':' of '?:'") ||
			    !(rhs = parse_expr(ps, 1)) ||
			    !(lhs = make_cond(ps, op_pos, lhs, mid, rhs)))
				return NULL;
			continue;
		}
		if (!(rhs = parse_expr(ps, prec + 1)) ||
		    !(lhs = make_binary(ps, op, op_pos, lhs, rhs)))
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
	if (next(&ps))
		goto fail;
	if (ps.tok.kind == T_END) {
		fail(&ps, 0, "the expression is empty");
		goto fail;
	}
	if (!(res->root = parse_expr(&ps, 0)))
		goto fail;
	if (ps.tok.kind != T_END) {
		fail(&ps, ps.tok.pos, "expected an operator or the end, found %s",
		     tok_desc(&ps, buf, sizeof(buf)));
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
