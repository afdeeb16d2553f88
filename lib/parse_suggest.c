/* "Did you mean ...?": the few known names closest to an unknown one, by edit distance. */
#include <ctype.h>
#include <stdio.h>
#include <strings.h>

#include <string.h>

#include <perfscope/suggest.h>

#define DIST_MAX_LEN 64

int psc_edit_distance(const char *a, size_t alen, const char *b, size_t blen)
{
	/* Three rows of the optimal-string-alignment table: transpositions count as one edit. */
	int rows[3][DIST_MAX_LEN + 1];
	int *prev2 = rows[0], *prev = rows[1], *cur = rows[2];

	if (alen > DIST_MAX_LEN)
		alen = DIST_MAX_LEN;
	if (blen > DIST_MAX_LEN)
		blen = DIST_MAX_LEN;
	for (size_t j = 0; j <= blen; j++)
		prev[j] = (int)j;
	for (size_t i = 1; i <= alen; i++) {
		cur[0] = (int)i;
		for (size_t j = 1; j <= blen; j++) {
			int ca = tolower((unsigned char)a[i - 1]),
			    cb = tolower((unsigned char)b[j - 1]);
			int cost = ca != cb;
			int d = prev[j] + 1;

			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (prev[j - 1] + cost < d)
				d = prev[j - 1] + cost;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
		}
		int *t = prev2;

		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[blen];
}

void psc_suggest__init(struct psc_suggest *s, const char *word, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->word = word;
	s->len = len;
}

/* How far a candidate may be: one edit for short words, up to three for long ones. */
static int max_dist(size_t len)
{
	if (len <= 3)
		return 1;
	if (len <= 6)
		return 2;
	return 3;
}

void psc_suggest__add(struct psc_suggest *s, const char *key, const char *display)
{
	size_t klen = strlen(key);
	int limit = max_dist(s->len), d;

	if (!display)
		display = key;
	if (s->len == 0 || s->len > DIST_MAX_LEN || klen > DIST_MAX_LEN + 8)
		return;
	d = psc_edit_distance(s->word, s->len, key, klen);
	/* A word that begins a longer name ("L1-dcache" of "L1-dcache-loads") is worth showing too.
	 */
	if (d > limit && s->len >= 3 && klen > s->len && !strncasecmp(key, s->word, s->len))
		d = limit;
	if (d > limit)
		return;
	for (int i = 0; i < s->nr; i++)
		if (!strcmp(s->best[i].text, display))
			return;
	int at = s->nr;

	while (at > 0 && (s->best[at - 1].dist > d ||
			  (s->best[at - 1].dist == d && strcmp(s->best[at - 1].text, display) > 0)))
		at--;
	if (at >= PSC_SUGGEST_MAX)
		return;
	if (s->nr < PSC_SUGGEST_MAX)
		s->nr++;
	memmove(&s->best[at + 1], &s->best[at], (size_t)(s->nr - 1 - at) * sizeof(s->best[0]));
	s->best[at].dist = d;
	snprintf(s->best[at].text, sizeof(s->best[at].text), "%s", display);
}

void psc_suggest__format(const struct psc_suggest *s, char *buf, size_t len)
{
	size_t off;

	if (!len)
		return;
	buf[0] = '\0';
	if (!s->nr)
		return;
	off = (size_t)snprintf(buf, len, "%s", PSC_SUGGEST_PREFIX);
	for (int i = 0; i < s->nr && off < len; i++) {
		const char *sep = i == 0 ? "" : i == s->nr - 1 ? " or " : ", ";

		off += (size_t)snprintf(buf + off, len - off, "%s'%s'", sep, s->best[i].text);
	}
	if (off < len)
		snprintf(buf + off, len - off, "?");
}

const char *psc_suggest__best(const struct psc_suggest *s)
{
	return s->nr ? s->best[0].text : NULL;
}
