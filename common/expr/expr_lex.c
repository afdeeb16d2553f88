/* The expression language's tokens: numbers (with time units), strings, names, punctuators. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "expr_front.h"

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
		return expr_types__int_type(4, false);
	if (!l && !u && !decimal && v <= UINT32_MAX)
		return expr_types__int_type(4, false);
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

int expr_lex__next(struct parser *ps)
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

bool expr_lex__is_punct(const struct parser *ps, enum punct p)
{
	return ps->tok.kind == T_PUNCT && ps->tok.punct == p;
}

const char *expr_lex__tok_desc(const struct parser *ps, char *buf, size_t len)
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

int expr_lex__expect(struct parser *ps, enum punct p, const char *what)
{
	char buf[64];

	if (!expr_lex__is_punct(ps, p))
		return fail(ps, ps->tok.pos, "expected %s, found %s", what,
			    expr_lex__tok_desc(ps, buf, sizeof(buf)));
	return expr_lex__next(ps);
}
