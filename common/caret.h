/* A caret under the character of a text that an error message is about. */
#ifndef PERFSCOPE_COMMON_CARET_H
#define PERFSCOPE_COMMON_CARET_H

#include <stdio.h>

/* "<indent>text\n<indent>   ^\n"; nothing when pos is outside text (or text is NULL). */
void caret__print(FILE *f, const char *indent, const char *text, int pos);

#endif
