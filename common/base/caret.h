/* caret: a piece of user input shown with a caret under the byte where something is wrong. */
#ifndef PERFSCOPE_COMMON_CARET_H
#define PERFSCOPE_COMMON_CARET_H

#include <stddef.h>
#include <stdio.h>

/*
 * Two lines, after the message that says what is wrong:
 *
 *   INDENT LABEL TEXT
 *   INDENT       ^        (under byte pos of text)
 *
 * label (NULL: none) is what the user typed before text, e.g. "-C " or "--flag=". The caret
 * line repeats the tabs of the line above and counts a UTF-8 character once, so the caret stays
 * under its byte on a terminal. Nothing is printed when text is NULL or pos is not within
 * [0, strlen(text)] (pos == strlen: just past the end, where something is missing).
 */
void caret__print(FILE *f, const char *indent, const char *label, const char *text, int pos);
/*
 * The same two lines into buf, without the last newline (for a message that its caller prints
 * with one), always NUL-terminated when len > 0. snprintf's return: the full length; 0 when
 * there is nothing to show.
 */
int caret__snprint(char *buf, size_t len, const char *indent, const char *label, const char *text,
		   int pos);

#endif
