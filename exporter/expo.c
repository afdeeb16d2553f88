/* Prometheus exposition writer: text format 0.0.4 and OpenMetrics 1.0, escaping, negotiation. */
#include "expo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void expo_init(struct expo *e, enum expo_format fmt, size_t hint)
{
	memset(e, 0, sizeof(*e));
	e->fmt = fmt;
	e->cap = hint > 256 ? hint : 4096;
	e->buf = malloc(e->cap);
	if (!e->buf) {
		e->cap = 0;
		e->oom = true;
	}
}

void expo_release(struct expo *e)
{
	free(e->buf);
	e->buf = NULL;
	e->len = e->cap = 0;
}

/* Makes room for n more bytes plus a NUL; false (and oom) when it cannot. */
static bool reserve(struct expo *e, size_t n)
{
	size_t cap;
	char *p;

	if (e->oom)
		return false;
	if (e->len + n + 1 <= e->cap)
		return true;
	cap = e->cap ? e->cap : 4096;
	while (cap < e->len + n + 1)
		cap *= 2;
	p = realloc(e->buf, cap);
	if (!p) {
		e->oom = true;
		return false;
	}
	e->buf = p;
	e->cap = cap;
	return true;
}

static void put(struct expo *e, const char *s, size_t n)
{
	if (!reserve(e, n))
		return;
	memcpy(e->buf + e->len, s, n);
	e->len += n;
}

static void puts_(struct expo *e, const char *s)
{
	put(e, s, strlen(s));
}

static void putc_(struct expo *e, char c)
{
	if (!reserve(e, 1))
		return;
	e->buf[e->len++] = c;
}

/*
 * Escapes \ and newline always, and " when quote is set: label values in both formats and HELP
 * text in OpenMetrics; text 0.0.4 leaves " alone in HELP.
 */
static void put_escaped(struct expo *e, const char *s, bool quote)
{
	const char *run = s;

	for (; *s; s++) {
		const char *rep = NULL;

		if (*s == '\\')
			rep = "\\\\";
		else if (*s == '\n')
			rep = "\\n";
		else if (*s == '"' && quote)
			rep = "\\\"";
		if (!rep)
			continue;
		put(e, run, s - run);
		put(e, rep, 2);
		run = s + 1;
	}
	put(e, run, s - run);
}

static const char *type_name(const struct expo *e, enum expo_type t)
{
	switch (t) {
	case EXPO_COUNTER:
		return "counter";
	case EXPO_GAUGE:
		return "gauge";
	default:
		/* OpenMetrics calls it "unknown". */
		return e->fmt == EXPO_OPENMETRICS ? "unknown" : "untyped";
	}
}

void expo_family(struct expo *e, const char *name, enum expo_type type, const char *help)
{
	size_t n = strlen(name);

	if (n + sizeof("_total") > sizeof(e->family))
		n = sizeof(e->family) - sizeof("_total");
	memcpy(e->family, name, n);
	e->family_len = n;
	e->type = type;
	/* Text 0.0.4 names a counter family by its sample name, with the _total suffix. */
	if (type == EXPO_COUNTER && e->fmt == EXPO_TEXT) {
		memcpy(e->family + n, "_total", sizeof("_total"));
		e->family_len += 6;
	} else {
		e->family[n] = '\0';
	}
	puts_(e, "# HELP ");
	put(e, e->family, e->family_len);
	putc_(e, ' ');
	put_escaped(e, help, e->fmt == EXPO_OPENMETRICS);
	puts_(e, "\n# TYPE ");
	put(e, e->family, e->family_len);
	putc_(e, ' ');
	puts_(e, type_name(e, type));
	putc_(e, '\n');
}

static void sample_head(struct expo *e, const struct expo_label *labels, int nr)
{
	int i;

	put(e, e->family, e->family_len);
	if (e->type == EXPO_COUNTER && e->fmt == EXPO_OPENMETRICS)
		put(e, "_total", 6);
	if (nr > 0) {
		putc_(e, '{');
		for (i = 0; i < nr; i++) {
			if (i)
				putc_(e, ',');
			puts_(e, labels[i].name);
			put(e, "=\"", 2);
			put_escaped(e, labels[i].value, true);
			putc_(e, '"');
		}
		putc_(e, '}');
	}
	putc_(e, ' ');
}

/* Decimal digits of v at p (no NUL); returns how many. */
static size_t fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	size_t n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

void expo_u64(struct expo *e, const struct expo_label *labels, int nr_labels, uint64_t v)
{
	char num[24];
	size_t n;

	sample_head(e, labels, nr_labels);
	n = fmt_u64(num, v);
	num[n++] = '\n';
	put(e, num, n);
}

void expo_double(struct expo *e, const struct expo_label *labels, int nr_labels, double v)
{
	char num[40];
	int n;

	sample_head(e, labels, nr_labels);
	if (isnan(v)) {
		puts_(e, "NaN\n");
		return;
	}
	if (isinf(v)) {
		puts_(e, v > 0 ? "+Inf\n" : "-Inf\n");
		return;
	}
	/* The shortest of %.15g / %.17g that reads back as the same double. */
	n = snprintf(num, sizeof(num), "%.15g", v);
	if (strtod(num, NULL) != v)
		n = snprintf(num, sizeof(num), "%.17g", v);
	put(e, num, (size_t)n);
	putc_(e, '\n');
}

void expo_ns_as_seconds(struct expo *e, const struct expo_label *labels, int nr_labels, uint64_t ns)
{
	char num[40];
	uint64_t frac = ns % 1000000000ULL;
	size_t n, i;

	sample_head(e, labels, nr_labels);
	n = fmt_u64(num, ns / 1000000000ULL);
	num[n++] = '.';
	for (i = 0; i < 9; i++)
		num[n + 8 - i] = (char)('0' + (frac % 10)), frac /= 10;
	n += 9;
	num[n++] = '\n';
	put(e, num, n);
}

char *expo_finish(struct expo *e, size_t *len)
{
	char *buf;

	if (e->fmt == EXPO_OPENMETRICS)
		puts_(e, "# EOF\n");
	if (!reserve(e, 0)) {
		expo_release(e);
		return NULL;
	}
	e->buf[e->len] = '\0';
	buf = e->buf;
	*len = e->len;
	e->buf = NULL;
	e->len = e->cap = 0;
	return buf;
}

const char *expo_content_type(enum expo_format fmt, const char *om_version)
{
	if (fmt == EXPO_OPENMETRICS) {
		if (om_version && !strcmp(om_version, "0.0.1"))
			return "application/openmetrics-text; version=0.0.1; charset=utf-8";
		return "application/openmetrics-text; version=1.0.0; charset=utf-8";
	}
	return "text/plain; version=0.0.4; charset=utf-8";
}

static bool is_alpha_(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

bool expo_name_valid(const char *name)
{
	const char *p;

	if (!name || !*name || !(is_alpha_(*name) || *name == ':'))
		return false;
	for (p = name + 1; *p; p++)
		if (!is_alpha_(*p) && !is_digit(*p) && *p != ':')
			return false;
	return true;
}

bool expo_label_name_valid(const char *name)
{
	const char *p;

	if (!name || !is_alpha_(*name) || !strncmp(name, "__", 2))
		return false;
	for (p = name + 1; *p; p++)
		if (!is_alpha_(*p) && !is_digit(*p))
			return false;
	return true;
}

size_t expo_sanitize_name(char *dst, size_t n, const char *src)
{
	size_t len = 0;

	if (is_digit(*src)) {
		if (len + 1 < n)
			dst[len] = '_';
		len++;
	}
	for (; *src; src++, len++) {
		char c = *src;

		if (!is_alpha_(c) && !is_digit(c) && c != ':')
			c = '_';
		if (len + 1 < n)
			dst[len] = c;
	}
	if (n)
		dst[len < n ? len : n - 1] = '\0';
	return len;
}

/* Trims spaces and tabs at both ends of [*s, *end). */
static void trim(const char **s, const char **end)
{
	while (*s < *end && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*end > *s && ((*end)[-1] == ' ' || (*end)[-1] == '\t'))
		(*end)--;
}

static bool token_is(const char *s, const char *end, const char *tok)
{
	size_t n = strlen(tok);

	return (size_t)(end - s) == n && !strncasecmp(s, tok, n);
}

/*
 * One element of a comma-separated header list: "value;k=v;q=0.5". Splits the value from its
 * parameters, returns q (1 when absent, 0 for garbage so a malformed entry never wins) and the
 * value of parameter `want` (e.g. "version") in *pval and *pval_end when present.
 */
static double parse_elem(const char *s, const char *end, const char **vend, const char *want,
			 const char **pval, const char **pval_end)
{
	const char *semi = memchr(s, ';', end - s);
	double q = 1.0;

	*vend = semi ? semi : end;
	if (pval)
		*pval = *pval_end = NULL;
	while (semi) {
		const char *ps = semi + 1, *pe, *eq;

		semi = memchr(ps, ';', end - ps);
		pe = semi ? semi : end;
		eq = memchr(ps, '=', pe - ps);
		if (!eq)
			continue;
		{
			const char *ks = ps, *ke = eq, *vs = eq + 1, *ve = pe;

			trim(&ks, &ke);
			trim(&vs, &ve);
			if (token_is(ks, ke, "q")) {
				char buf[16];
				char *endp;
				size_t n = (size_t)(ve - vs);

				if (n == 0 || n >= sizeof(buf))
					return 0;
				memcpy(buf, vs, n);
				buf[n] = '\0';
				q = strtod(buf, &endp);
				if (*endp || q < 0 || q > 1 || isnan(q))
					return 0;
			} else if (want && pval && token_is(ks, ke, want)) {
				*pval = vs;
				*pval_end = ve;
			}
		}
	}
	return q;
}

enum expo_format expo_negotiate(const char *accept, const char **om_version)
{
	double q_om = 0, q_text = 0;
	const char *best_om = "1.0.0";
	const char *s = accept;

	if (om_version)
		*om_version = "1.0.0";
	if (!accept)
		return EXPO_TEXT;
	while (*s) {
		const char *end = strchr(s, ',');
		const char *vs, *ve, *pv, *pve;
		double q;

		if (!end)
			end = s + strlen(s);
		vs = s;
		q = parse_elem(s, end, &ve, "version", &pv, &pve);
		trim(&vs, &ve);
		if (token_is(vs, ve, "application/openmetrics-text")) {
			const char *ver = NULL;

			if (!pv || token_is(pv, pve, "1.0.0"))
				ver = "1.0.0";
			else if (token_is(pv, pve, "0.0.1"))
				ver = "0.0.1";
			if (ver && q > q_om) {
				q_om = q;
				best_om = ver;
			}
		} else if (token_is(vs, ve, "text/plain") || token_is(vs, ve, "text/*") ||
			   token_is(vs, ve, "*/*")) {
			if (q > q_text)
				q_text = q;
		}
		s = *end ? end + 1 : end;
	}
	if (q_om > 0 && q_om >= q_text) {
		if (om_version)
			*om_version = best_om;
		return EXPO_OPENMETRICS;
	}
	return EXPO_TEXT;
}

bool expo_accepts_gzip(const char *accept_encoding)
{
	double q_gzip = -1, q_star = -1;
	const char *s = accept_encoding;

	if (!s)
		return false;
	while (*s) {
		const char *end = strchr(s, ',');
		const char *vs = s, *ve;
		double q;

		if (!end)
			end = s + strlen(s);
		q = parse_elem(s, end, &ve, NULL, NULL, NULL);
		trim(&vs, &ve);
		if (token_is(vs, ve, "gzip") || token_is(vs, ve, "x-gzip"))
			q_gzip = q > q_gzip ? q : q_gzip;
		else if (token_is(vs, ve, "*"))
			q_star = q;
		s = *end ? end + 1 : end;
	}
	/* An explicit gzip entry decides; "*" only speaks for codings not named. */
	if (q_gzip >= 0)
		return q_gzip > 0;
	return q_star > 0;
}
