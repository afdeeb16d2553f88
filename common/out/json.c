/* json: one JSON object per line into the writer, escaped per RFC 8259; see json.h. */
#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len, i;

	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (n < len)
		return 0;
	if (c == 0xe0)
		lo = 0xa0; /* overlong */
	else if (c == 0xed)
		hi = 0x9f; /* surrogates */
	else if (c == 0xf0)
		lo = 0x90; /* overlong */
	else if (c == 0xf4)
		hi = 0x8f; /* above U+10FFFF */
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

void json_escape(struct out *out, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0, run = 0, len;
	char esc[6];

	while (i < n) {
		unsigned char c = s[i];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80 && (len = utf8_len(s + i, n - i))) {
			i += len;
			continue;
		}
		out__write(out, s + run, i - run);
		switch (c) {
		case '"':
			out__write(out, "\\\"", 2);
			break;
		case '\\':
			out__write(out, "\\\\", 2);
			break;
		case '\n':
			out__write(out, "\\n", 2);
			break;
		case '\t':
			out__write(out, "\\t", 2);
			break;
		case '\r':
			out__write(out, "\\r", 2);
			break;
		default:
			if (c < 0x20) {
				memcpy(esc, "\\u00", 4);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 15];
				out__write(out, esc, 6);
			} else {
				out__write(out, "\xef\xbf\xbd", 3); /* U+FFFD */
			}
		}
		run = ++i;
	}
	out__write(out, s + run, n - run);
}

static void sep(struct json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->has_items & (1u << j->depth))
		out__putc(j->out, ',');
	j->has_items |= 1u << j->depth;
}

void json__begin(struct json *j, struct out *out)
{
	*j = (struct json){ .out = out };
	json__obj(j);
}

void json__key(struct json *j, const char *key)
{
	sep(j);
	out__putc(j->out, '"');
	json_escape(j->out, key, strlen(key));
	out__write(j->out, "\":", 2);
	j->after_key = true;
}

void json__raw_key(struct json *j, const char *quoted_colon, size_t n)
{
	sep(j);
	out__write(j->out, quoted_colon, n);
	j->after_key = true;
}

void json__raw(struct json *j, const char *json, size_t n)
{
	sep(j);
	out__write(j->out, json, n);
}

char *json_render(const char *s, bool key, size_t *len)
{
	size_t n = strlen(s);
	/* an escape is at most 6 bytes per input byte; quotes, ':' and NUL */
	struct out o = { .fd = -1, .stop_fd = -1, .cap = 6 * n + 4 };

	o.buf = malloc(o.cap);
	if (!o.buf)
		return NULL;
	out__putc(&o, '"');
	json_escape(&o, s, n);
	out__putc(&o, '"');
	if (key)
		out__putc(&o, ':');
	o.buf[o.len] = '\0';
	*len = o.len;
	return o.buf;
}

static void open_container(struct json *j, char c, bool array)
{
	sep(j);
	out__putc(j->out, c);
	if (j->depth + 1 >= JSON_MAX_DEPTH)
		return; /* deeper nesting is a programming error; keep the text balanced anyway */
	j->depth++;
	j->has_items &= ~(1u << j->depth);
	if (array)
		j->is_array |= 1u << j->depth;
	else
		j->is_array &= ~(1u << j->depth);
}

void json__obj(struct json *j)
{
	open_container(j, '{', false);
}

void json__arr(struct json *j)
{
	open_container(j, '[', true);
}

void json__end(struct json *j)
{
	if (j->depth <= 0)
		return;
	j->after_key = false;
	out__putc(j->out, j->is_array & (1u << j->depth) ? ']' : '}');
	j->depth--;
}

void json__end_line(struct json *j)
{
	if (j->after_key)
		json__null(j);
	while (j->depth > 0)
		json__end(j);
	out__putc(j->out, '\n');
}

void json__strn(struct json *j, const char *s, size_t n)
{
	sep(j);
	out__putc(j->out, '"');
	json_escape(j->out, s, n);
	out__putc(j->out, '"');
}

void json__str(struct json *j, const char *s)
{
	if (!s) {
		json__null(j);
		return;
	}
	json__strn(j, s, strlen(s));
}

void json__u64(struct json *j, uint64_t v)
{
	sep(j);
	out__u64(j->out, v);
}

void json__i64(struct json *j, int64_t v)
{
	sep(j);
	out__i64(j->out, v);
}

void json__dbl(struct json *j, double v)
{
	if (!isfinite(v)) {
		json__null(j);
		return;
	}
	char tmp[32];

	sep(j);
	/* The shortest of %.15g/%.17g that reads back as v: 0.1, not 0.10000000000000001. */
	snprintf(tmp, sizeof(tmp), "%.15g", v);
	if (strtod(tmp, NULL) != v)
		snprintf(tmp, sizeof(tmp), "%.17g", v);
	out__puts(j->out, tmp);
}

void json__bool(struct json *j, bool v)
{
	sep(j);
	out__puts(j->out, v ? "true" : "false");
}

void json__null(struct json *j)
{
	sep(j);
	out__write(j->out, "null", 4);
}

void json__hex(struct json *j, uint64_t v)
{
	sep(j);
	out__putc(j->out, '"');
	out__hex(j->out, v);
	out__putc(j->out, '"');
}
