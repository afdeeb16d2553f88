/* Folded stack files ("frame;frame;... COUNT" lines, any tool's) read into a struct flame. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"

static void bad(struct flame_parse_stats *st, const char *why)
{
	st->bad++;
	if (!st->first_bad_line) {
		st->first_bad_line = st->lines;
		st->first_bad_why = why;
	}
}

static int parse_line(struct flame *f, const char *s, size_t len, struct flame_parse_stats *st)
{
	size_t i, end, stack_end;
	uint64_t count = 0;

	st->lines++;
	while (len && (s[len - 1] == '\r' || s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	for (i = 0; i < len && (s[i] == ' ' || s[i] == '\t'); i++)
		;
	if (i == len) {
		st->blank++;
		return 0;
	}
	end = len;
	while (end > i && s[end - 1] != ' ' && s[end - 1] != '\t')
		end--;
	if (end == i) {
		bad(st, "no count after the last space");
		return 0;
	}
	for (size_t j = end; j < len; j++) {
		unsigned int d = (unsigned char)s[j] - '0';

		if (d > 9) {
			bad(st, "the count after the last space is not a whole number");
			return 0;
		}
		if (count > (UINT64_MAX - d) / 10) {
			bad(st, "the count is too large");
			return 0;
		}
		count = count * 10 + d;
	}
	stack_end = end;
	while (stack_end > i && (s[stack_end - 1] == ' ' || s[stack_end - 1] == '\t'))
		stack_end--;
	if (stack_end == i) {
		bad(st, "the stack before the count is empty");
		return 0;
	}
	if (!count) {
		st->zero++;
		return 0;
	}
	if (flame__nr_samples(f) > UINT64_MAX - count) {
		bad(st, "the counts add up past 2^64");
		return 0;
	}
	return flame__add(f, s + i, stack_end - i, count);
}

int flame__parse(struct flame *f, const char *buf, size_t len, struct flame_parse_stats *stats)
{
	struct flame_parse_stats dummy = { 0 };
	const char *p = buf, *end = buf + len, *nl;
	int err;

	if (!stats)
		stats = &dummy;
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		err = parse_line(f, p, (size_t)(nl - p), stats);
		if (err)
			return err;
		p = nl + 1;
	}
	return 0;
}

int flame__read_file(struct flame *f, FILE *in, struct flame_parse_stats *stats)
{
	struct flame_parse_stats dummy = { 0 };
	size_t cap = 1 << 16, have = 0, n;
	char *buf = malloc(cap), *nl, *grown;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (!stats)
		stats = &dummy;
	for (;;) {
		if (have == cap) { /* a line longer than the buffer: grow it */
			grown = realloc(buf, cap * 2);
			if (!grown) {
				err = -ENOMEM;
				break;
			}
			buf = grown;
			cap *= 2;
		}
		n = fread(buf + have, 1, cap - have, in);
		if (!n) {
			if (ferror(in))
				err = -EIO;
			else if (have) /* the last line, without '\n' */
				err = flame__parse(f, buf, have, stats);
			break;
		}
		have += n;
		nl = memrchr(buf, '\n', have);
		if (!nl)
			continue;
		err = flame__parse(f, buf, (size_t)(nl + 1 - buf), stats);
		if (err)
			break;
		have -= (size_t)(nl + 1 - buf);
		memmove(buf, nl + 1, have);
	}
	free(buf);
	return err;
}
