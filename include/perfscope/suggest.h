/* "Did you mean ...?": the few known names closest to a mistyped one, by edit distance. */
#ifndef PERFSCOPE_SUGGEST_H
#define PERFSCOPE_SUGGEST_H

#include <stddef.h>

#include <perfscope/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Feed the candidates with psc_suggest__add(), then psc_suggest__format() writes
 * "; did you mean 'a' or 'b'?" (or "" when none is close: one edit for words of up to 3
 * characters, 2 up to 6, 3 beyond; a candidate the word begins also counts). Matching ignores
 * case; a transposition is one edit. word is not copied: it must outlive the struct.
 */
#define PSC_SUGGEST_MAX 3
/* What a formatted suggestion begins with: a message that holds it offers a way on already. */
#define PSC_SUGGEST_PREFIX "; did you mean "
struct psc_suggest {
	const char *word;
	size_t len;
	int nr;
	struct {
		int dist;
		char text[128];
	} best[PSC_SUGGEST_MAX];
};
PSC_API void psc_suggest__init(struct psc_suggest *s, const char *word, size_t len);
/* key is compared with the word; display (NULL: key) is what is shown. */
PSC_API void psc_suggest__add(struct psc_suggest *s, const char *key, const char *display);
/* Writes "" when nothing is close enough. */
PSC_API void psc_suggest__format(const struct psc_suggest *s, char *buf, size_t len);
/* The closest candidate, NULL when none is close enough. */
PSC_API const char *psc_suggest__best(const struct psc_suggest *s);
/* Case-insensitive optimal-string-alignment distance, capped at 64 characters per side. */
PSC_API int psc_edit_distance(const char *a, size_t alen, const char *b, size_t blen);

#ifdef __cplusplus
}
#endif

#endif
