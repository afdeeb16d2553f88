/* caret: user input with a caret under a byte; see caret.h. */
#include "caret.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* What to write under byte c of the input line: tabs as tabs, nothing for UTF-8 continuations. */
static void pad(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\t')
			fputc('\t', f);
		else if ((c & 0xc0) != 0x80)
			fputc(' ', f);
	}
}

/* Both lines, the last without its newline; false when there is nothing to show. */
static bool write_caret(FILE *f, const char *indent, const char *label, const char *text, int pos)
{
	if (!text || pos < 0 || (size_t)pos > strlen(text))
		return false;
	if (!label)
		label = "";
	fprintf(f, "%s%s%s\n%s", indent, label, text, indent);
	pad(f, label, strlen(label));
	pad(f, text, (size_t)pos);
	fputc('^', f);
	return true;
}

void caret__print(FILE *f, const char *indent, const char *label, const char *text, int pos)
{
	if (write_caret(f, indent, label, text, pos))
		fputc('\n', f);
}

int caret__snprint(char *buf, size_t len, const char *indent, const char *label, const char *text,
		   int pos)
{
	char *mem = NULL;
	size_t size = 0;
	bool shown;
	int n = 0;
	FILE *f;

	if (len)
		buf[0] = '\0';
	f = open_memstream(&mem, &size);
	if (!f)
		return 0; /* no memory: the message before it still says what is wrong */
	shown = write_caret(f, indent, label, text, pos);
	if (!fclose(f) && shown)
		n = snprintf(buf, len, "%s", mem);
	free(mem);
	return n;
}
