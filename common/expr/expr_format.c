/* printf()'s format in an expression, parsed and checked against its arguments when the
 * expression is (expr_printf in expr_vm.c formats with it at run time). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr_front.h"

/* ---- printf's format, checked against its arguments now ---- */

int expr_format__parse_printf(struct parser *ps, struct node *call)
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
