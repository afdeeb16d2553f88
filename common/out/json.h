/* json: a JSON writer over struct out (output.h), one object per line. */
#ifndef PERFSCOPE_COMMON_JSON_H
#define PERFSCOPE_COMMON_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output.h"

/*
 * JSON writer: one object per line. Commas and nesting are tracked, so a profiler writes
 *
 *   json__begin(&j, out);           {
 *   json__key(&j, "cpu");           "cpu":
 *   json__u64(&j, 1);               1
 *   json__key(&j, "stack");         ,"stack":
 *   json__arr(&j);                  [
 *   json__str(&j, "main");          "main"
 *   json__end(&j);                  ]
 *   json__end_line(&j);             }\n
 *
 * Strings are escaped per RFC 8259; bytes that are not valid UTF-8 become U+FFFD so that the
 * line stays valid JSON whatever a kernel string holds. NaN and infinities are written as null.
 */
#define JSON_MAX_DEPTH 32
struct json {
	struct out *out;
	int depth;
	bool after_key;
	uint32_t has_items; /* bit d: container at depth d has an item */
	uint32_t is_array; /* bit d: container at depth d is an array */
};

void json__begin(struct json *j, struct out *out);
void json__key(struct json *j, const char *key);
void json__obj(struct json *j);
void json__arr(struct json *j);
void json__end(struct json *j);
/* Closes every open container and ends the line. */
void json__end_line(struct json *j);
void json__str(struct json *j, const char *s);
void json__strn(struct json *j, const char *s, size_t n);
void json__u64(struct json *j, uint64_t v);
void json__i64(struct json *j, int64_t v);
void json__dbl(struct json *j, double v);
void json__bool(struct json *j, bool v);
void json__null(struct json *j);
/* "0x..." as a JSON string: addresses exceed the 2^53 integers JSON readers keep exact. */
void json__hex(struct json *j, uint64_t v);

/*
 * Per-event writers render what repeats once: a key or value already in JSON form is written as
 * is. JSON_KEY takes a string literal that needs no escaping (plain ASCII names).
 */
void json__raw_key(struct json *j, const char *quoted_colon, size_t n);
void json__raw(struct json *j, const char *json, size_t n);
#define JSON_KEY(j, lit) json__raw_key((j), "\"" lit "\":", sizeof(lit) + 2)
/* s as a JSON string ("...", escaped), followed by ':' when key; malloc'd, NUL-terminated, its
 * length in *len. NULL when out of memory. */
char *json_render(const char *s, bool key, size_t *len);

/*
 * Length of the valid multi-byte UTF-8 sequence at s (n bytes left), 0 when invalid (RFC 3629's
 * table: no overlong forms, no surrogates, nothing past U+10FFFF); for writers of any format that
 * must replace what is not UTF-8.
 */
size_t utf8_len(const unsigned char *s, size_t n);

/* Escaped string contents (no quotes) into out; shared with writers of other formats. */
void json_escape(struct out *out, const char *s, size_t n);

#endif
