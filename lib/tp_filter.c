/* ftrace filters on tracepoints: a user-space check of the kernel's grammar, and
 * PERF_EVENT_IOC_SET_FILTER. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"
#include "parse_internal.h"
#include "tp_internal.h"

/*
 * The grammar of kernel/trace/trace_events_filter.c:
 *   expr  := and ('||' and)*
 *   and   := unary ('&&' unary)*
 *   unary := '!' unary | '(' expr ')' | pred
 *   pred  := FIELD OP VALUE         OP: == != < <= > >= & ~
 * VALUE is a number, a quoted string, or a bare word (strings, globs, CPUS{..}, symbols).
 */
enum tok_kind { T_END, T_LPAREN, T_RPAREN, T_AND, T_OR, T_NOT, T_OP, T_STRING, T_WORD, T_BAD };

struct tok {
	enum tok_kind kind;
	int pos;
	int len;
};

/* Where each predicate is in the filter text, so a part the kernel refuses can be pointed at. */
#define MAX_PREDS 64

struct pred_span {
	int pos, len;
};

struct fparse {
	const struct psc_tp_format *fmt;
	const char *s;
	int pos;
	struct tok cur;
	struct psc_parse_error *err;
	int depth;
	struct pred_span preds[MAX_PREDS];
	int nr_preds; /* may exceed MAX_PREDS: then only the first ones are known */
};

static const char *const generic_fields[] = { "CPU", "cpu", "common_cpu", "COMM", "comm" };

static bool is_word_char(char c)
{
	return c && !isspace((unsigned char)c) && !strchr("()!=<>&|~\"'", c);
}

static void next_tok(struct fparse *p)
{
	const char *s = p->s;
	int i = p->pos;

	while (isspace((unsigned char)s[i]))
		i++;
	p->cur.pos = i;
	p->cur.len = 1;
	switch (s[i]) {
	case '\0':
		p->cur.kind = T_END;
		p->cur.len = 0;
		break;
	case '(':
		p->cur.kind = T_LPAREN;
		break;
	case ')':
		p->cur.kind = T_RPAREN;
		break;
	case '&':
		if (s[i + 1] == '&') {
			p->cur.kind = T_AND;
			p->cur.len = 2;
		} else {
			p->cur.kind = T_OP;
		}
		break;
	case '|':
		p->cur.kind = s[i + 1] == '|' ? T_OR : T_BAD;
		p->cur.len = s[i + 1] == '|' ? 2 : 1;
		break;
	case '!':
		p->cur.kind = s[i + 1] == '=' ? T_OP : T_NOT;
		p->cur.len = s[i + 1] == '=' ? 2 : 1;
		break;
	case '=':
		p->cur.kind = s[i + 1] == '=' ? T_OP : T_BAD;
		p->cur.len = s[i + 1] == '=' ? 2 : 1;
		break;
	case '<':
	case '>':
		p->cur.kind = T_OP;
		p->cur.len = s[i + 1] == '=' ? 2 : 1;
		break;
	case '~':
		p->cur.kind = T_OP;
		break;
	case '"':
	case '\'': {
		const char *end = strchr(s + i + 1, s[i]);

		p->cur.kind = end ? T_STRING : T_BAD;
		p->cur.len = end ? (int)(end - (s + i)) + 1 : (int)strlen(s + i);
		break;
	}
	default: {
		int j = i;

		while (is_word_char(s[j]))
			j++;
		p->cur.kind = T_WORD;
		p->cur.len = j - i;
		break;
	}
	}
	p->pos = p->cur.pos + p->cur.len;
}

/* Appends "; sys:name has fields: a, b, c" (as many as fit). */
static void append_fields(const struct psc_tp_format *fmt, char *msg, size_t len)
{
	size_t off = strlen(msg);
	int n;

	if (!fmt || off >= len)
		return;
	n = snprintf(msg + off, len - off, "; %s:%s has fields:", fmt->sys, fmt->name);
	if (n < 0 || (size_t)n >= len - off)
		return;
	off += (size_t)n;
	for (int i = 0; i < fmt->nr_fields; i++) {
		const char *name = fmt->fields[i].name;
		size_t need = strlen(name) + 2;

		/* keep room for ", ..." */
		if (off + need + 6 >= len) {
			snprintf(msg + off, len - off, " ...");
			return;
		}
		off += (size_t)snprintf(msg + off, len - off, "%s %s", i ? "," : "", name);
	}
}

static int fail(struct fparse *p, int pos, bool list_fields, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int fail(struct fparse *p, int pos, bool list_fields, const char *fmt, ...)
{
	va_list ap;

	if (!p->err)
		return -EINVAL;
	p->err->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err->msg, sizeof(p->err->msg), fmt, ap);
	va_end(ap);
	if (list_fields)
		append_fields(p->fmt, p->err->msg, sizeof(p->err->msg));
	return -EINVAL;
}

static const char *tok_kind_name(const struct tok *t)
{
	switch (t->kind) {
	case T_END:
		return "the end of the filter";
	case T_LPAREN:
		return "'('";
	case T_RPAREN:
		return "')'";
	case T_AND:
		return "'&&'";
	case T_OR:
		return "'||'";
	case T_NOT:
		return "'!'";
	case T_OP:
		return "an operator";
	case T_STRING:
		return "a string";
	default:
		return "a word";
	}
}

static bool is_generic(const char *name, size_t len, bool *is_string)
{
	for (size_t i = 0; i < sizeof(generic_fields) / sizeof(generic_fields[0]); i++) {
		if (strlen(generic_fields[i]) == len && !strncmp(generic_fields[i], name, len)) {
			*is_string = generic_fields[i][1] == 'O' || generic_fields[i][1] == 'o';
			return true;
		}
	}
	return false;
}

static const struct psc_tp_field *find_field(const struct psc_tp_format *fmt, const char *name,
					     size_t len)
{
	for (int i = 0; i < fmt->nr_fields; i++)
		if (strlen(fmt->fields[i].name) == len && !strncmp(fmt->fields[i].name, name, len))
			return &fmt->fields[i];
	return NULL;
}

/* An integer as the kernel's kstrtoll/kstrtoull(base 0) reads it. */
static bool is_integer(const char *s, int len)
{
	int i = 0, base = 10;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	if (i + 1 < len && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	} else if (i < len && s[i] == '0') {
		base = 8;
	}
	if (i >= len)
		return false;
	for (; i < len; i++) {
		char c = s[i];

		if (base == 16 ? !isxdigit((unsigned char)c)
			       : (c < '0' || c > (base == 8 ? '7' : '9')))
			return false;
	}
	return true;
}

static int parse_pred(struct fparse *p)
{
	const struct tok field = p->cur;
	const char *name = p->s + field.pos, *dot;
	size_t name_len = (size_t)field.len;
	const struct psc_tp_field *f = NULL;
	bool str = false, generic = false, function = false;
	struct tok op, val;
	char opstr[3] = "";

	if (field.kind != T_WORD)
		return fail(p, field.pos, false, "expected a field name, found %s",
			    tok_kind_name(&field));
	for (size_t i = 0; i < name_len; i++) {
		char c = name[i];

		if (!(isalnum((unsigned char)c) || c == '_' || c == '.') || (!i && isdigit(c))) {
			char hint[160];

			psc_attr_name__hint(name, name_len, hint, sizeof(hint));
			return fail(p, field.pos, true, "'%.*s' is not a field name%s",
				    (int)name_len, name, hint);
		}
	}
	/* kernel suffixes: call_site.function == kmalloc, filename.ustring ~ "tmp*" */
	dot = memchr(name, '.', name_len);
	if (dot) {
		const char *suf = dot + 1;
		size_t sl = name_len - (size_t)(suf - name);

		if (sl == 8 && !strncmp(suf, "function", 8))
			function = true;
		else if (sl == 7 && !strncmp(suf, "ustring", 7))
			str = true;
		else
			return fail(p, (int)(field.pos + (dot - name)), false,
				    "unknown field suffix '.%.*s' (the kernel knows .function and "
				    ".ustring)",
				    (int)sl, suf);
		name_len = (size_t)(dot - name);
	}
	f = find_field(p->fmt, name, name_len);
	if (!f)
		generic = is_generic(name, name_len, &str);
	if (!f && !generic) {
		struct psc_suggest sg;
		char hint[256];

		psc_suggest__init(&sg, name, name_len);
		for (int i = 0; i < p->fmt->nr_fields; i++)
			psc_suggest__add(&sg, p->fmt->fields[i].name, NULL);
		psc_suggest__format(&sg, hint, sizeof(hint));
		if (!hint[0]) /* no field is close: perhaps an ATTR one slash too early */
			psc_attr_name__hint(name, name_len, hint, sizeof(hint));
		return fail(p, field.pos, true, "unknown field '%.*s'%s", (int)name_len, name,
			    hint);
	}
	if (f && f->is_string)
		str = true;

	next_tok(p);
	op = p->cur;
	if (op.kind != T_OP)
		return fail(p, op.pos, false,
			    "expected an operator (== != < <= > >= & ~) after '%.*s', found %s",
			    field.len, p->s + field.pos, tok_kind_name(&op));
	memcpy(opstr, p->s + op.pos, (size_t)op.len);
	if (str && strcmp(opstr, "==") && strcmp(opstr, "!=") && strcmp(opstr, "~"))
		return fail(p, op.pos, false,
			    "'%s' does not apply to string field '%.*s': use ==, != or ~ (glob)",
			    opstr, (int)name_len, name);
	if (!str && !strcmp(opstr, "~"))
		return fail(p, op.pos, false,
			    "'~' (glob match) applies to strings only; '%.*s' is a number",
			    (int)name_len, name);

	next_tok(p);
	val = p->cur;
	if (val.kind != T_WORD && val.kind != T_STRING)
		return fail(p, val.pos, false, "expected a value after '%s', found %s", opstr,
			    tok_kind_name(&val));
	if (!str && !function && val.kind == T_STRING)
		return fail(p, val.pos, false, "'%.*s' is a number; %.*s is a string",
			    (int)name_len, name, val.len, p->s + val.pos);
	if (!str && !function && val.kind == T_WORD && !is_integer(p->s + val.pos, val.len) &&
	    strncmp(p->s + val.pos, "CPUS{", 5))
		return fail(p, val.pos, false, "'%.*s' is a number; '%.*s' is not an integer",
			    (int)name_len, name, val.len, p->s + val.pos);
	if (p->nr_preds < MAX_PREDS)
		p->preds[p->nr_preds] =
			(struct pred_span){ field.pos, val.pos + val.len - field.pos };
	p->nr_preds++;
	next_tok(p);
	return 0;
}

static int parse_or(struct fparse *p);

static int parse_unary(struct fparse *p)
{
	if (++p->depth > 64)
		return fail(p, p->cur.pos, false, "filter nested too deeply");
	if (p->cur.kind == T_NOT) {
		next_tok(p);
		int err = parse_unary(p);

		p->depth--;
		return err;
	}
	if (p->cur.kind == T_LPAREN) {
		int open = p->cur.pos, err;

		next_tok(p);
		err = parse_or(p);
		if (err)
			return err;
		if (p->cur.kind != T_RPAREN)
			return fail(p, p->cur.pos, false,
				    "expected ')' to close the '(' at position %d, found %s", open,
				    tok_kind_name(&p->cur));
		next_tok(p);
		p->depth--;
		return 0;
	}
	p->depth--;
	return parse_pred(p);
}

static int parse_and(struct fparse *p)
{
	int err = parse_unary(p);

	while (!err && p->cur.kind == T_AND) {
		next_tok(p);
		err = parse_unary(p);
	}
	return err;
}

static int parse_or(struct fparse *p)
{
	int err = parse_and(p);

	while (!err && p->cur.kind == T_OR) {
		next_tok(p);
		err = parse_and(p);
	}
	return err;
}

/* The user-space check; on success p holds the predicates' spans. */
static int check_filter(struct fparse *p)
{
	int ret;

	if (p->err) {
		p->err->pos = -1;
		p->err->msg[0] = '\0';
	}
	if (!p->fmt || !p->s)
		return -EINVAL;
	next_tok(p);
	if (p->cur.kind == T_END)
		return fail(p, 0, false, "empty filter");
	ret = parse_or(p);
	if (ret)
		return ret;
	if (p->cur.kind != T_END)
		return fail(p, p->cur.pos, false, "expected '&&', '||' or the end, found %s",
			    tok_kind_name(&p->cur));
	return 0;
}

int psc_tp__check_filter(const struct psc_tp_format *fmt, const char *filter,
			 struct psc_parse_error *err)
{
	struct fparse p = { .fmt = fmt, .s = filter, .err = err };

	return check_filter(&p);
}

/* A disabled event of this tracepoint on the calling thread, to try filters on; -errno. */
static int scratch_event(const struct psc_tp_format *fmt)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(a),
		.config = (uint64_t)psc_tp_format__id(fmt),
		.disabled = 1,
	};
	int fd;

	if (psc_tp_format__id(fmt) <= 0)
		return -EINVAL;
	fd = psc_sys_perf_event_open(&a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * The kernel said EINVAL and gives no position: try each predicate alone on a fresh scratch event
 * (a filter, once set, stays) and point at the first one it refuses. False when none can be
 * blamed alone (or no scratch event could be opened).
 */
static bool blame_predicate(struct fparse *p)
{
	int n = p->nr_preds < MAX_PREDS ? p->nr_preds : MAX_PREDS;

	for (int i = 0; i < n; i++) {
		const struct pred_span *ps = &p->preds[i];
		char *one = strndup(p->s + ps->pos, (size_t)ps->len);
		int fd = scratch_event(p->fmt), e = 0;

		if (!one || fd < 0) {
			free(one);
			if (fd >= 0)
				close(fd);
			return false;
		}
		if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, one) < 0)
			e = errno;
		close(fd);
		if (e == EINVAL) {
			fail(p, ps->pos, true,
			     "the kernel rejected '%s' (a value out of range for the field, an "
			     "unknown symbol after .function, a bad CPUS{} list ...)",
			     one);
			free(one);
			return true;
		}
		free(one);
	}
	return false;
}

int psc_tp__apply_filter(const struct psc_tp_format *fmt, int fd, const char *filter,
			 struct psc_parse_error *err)
{
	struct fparse p = { .fmt = fmt, .s = filter, .err = err };
	int e;

	if (err) {
		err->pos = -1;
		err->msg[0] = '\0';
	}
	if (fd < 0 || !filter)
		return -EINVAL;
	if (!ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter))
		return 0;
	e = errno;
	if (e == EINVAL && fmt && check_filter(&p))
		return -EINVAL;
	if (err) {
		if (e == EINVAL && fmt && blame_predicate(&p))
			return -EINVAL;
		if (e == EINVAL && fmt)
			fail(&p, -1, true, "the kernel rejected filter '%s' on %s:%s", filter,
			     fmt->sys, fmt->name);
		else if (e == EINVAL)
			fail(&p, -1, false,
			     "the kernel rejected filter '%s' (filters apply to tracepoints only)",
			     filter);
		else if (e == EEXIST)
			fail(&p, -1, false,
			     "cannot set filter '%s': this event already has a filter (the kernel "
			     "keeps the first one set on a perf event; combine them with &&)",
			     filter);
		else
			fail(&p, -1, false, "setting filter '%s': %s", filter, strerror(e));
	}
	return -e;
}

int psc_tp__verify_filter(const struct psc_tp_format *fmt, const char *filter,
			  struct psc_parse_error *err)
{
	int fd, ret;

	ret = psc_tp__check_filter(fmt, filter, err);
	if (ret)
		return ret;
	fd = scratch_event(fmt);
	if (fd < 0)
		return fd;
	ret = psc_tp__apply_filter(fmt, fd, filter, err);
	close(fd);
	return ret;
}
