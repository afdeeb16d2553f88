/* libFuzzer target for folded-stack files (flame__parse) and the SVG written from them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "flame_svg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The SVG must stay XML whatever the names: valid UTF-8, no control character but '\n'. */
static void check_xml_text(const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned int c = s[i], need = c < 0x80 ? 0 : c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : 1;

		if (c < 0x20 && c != '\n')
			abort();
		if (c >= 0x80 && (c < 0xc2 || c > 0xf4))
			abort();
		for (unsigned int k = 1; k <= need; k++)
			if (i + k >= len || (s[i + k] & 0xc0) != 0x80)
				abort();
		i += need + 1;
	}
}

static void render(const struct flame *before, const struct flame *after, bool reverse)
{
	struct flame_svg_opts o = { .reverse = reverse, .max_frames = 64, .title = "t<&>" };
	struct flame_svg_stats st = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	int err;

	if (!out)
		return;
	err = before ? flame_svg__write_diff(before, after, &o, out, &st)
		     : flame_svg__write(after, &o, out, &st);
	fclose(out);
	if (!err) {
		check_xml_text((const unsigned char *)buf, len);
		if (st.drawn > 64 || st.drawn + st.elided > st.frames)
			abort();
		if (len < 5 || memcmp(buf + len - 7, "</svg>\n", 7))
			abort();
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct flame_parse_stats st = { 0 };
	struct flame *a = flame__new(), *b = flame__new();
	size_t half = size / 2;

	if (!a || !b)
		goto out;
	if (flame__parse(a, (const char *)data, size, &st))
		goto out;
	/* every line is one of: counted, blank, bad, zero */
	if (st.blank + st.bad + st.zero > st.lines || (st.bad && !st.first_bad_why))
		abort();
	if (flame__nr_stacks(a) > st.lines)
		abort();
	render(NULL, a, false);
	render(NULL, a, true);
	/* the two halves as before and after */
	flame__delete(a);
	a = flame__new();
	if (!a || flame__parse(b, (const char *)data, half, NULL) ||
	    flame__parse(a, (const char *)data + half, size - half, NULL))
		goto out;
	render(b, a, false);
out:
	flame__delete(a);
	flame__delete(b);
	return 0;
}
