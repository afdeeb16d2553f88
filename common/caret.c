/* A caret under the character of a text that an error message is about. */
#include <string.h>

#include "caret.h"

void caret__print(FILE *f, const char *indent, const char *text, int pos)
{
	if (!text || pos < 0 || pos > (int)strlen(text))
		return;
	fprintf(f, "%s%s\n%s%*s^\n", indent, text, indent, pos, "");
}
