/* libFuzzer target for what the exporter takes from the network or the command line and writes
 * back: Accept/Accept-Encoding negotiation, and HELP text and label values escaped in both formats.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "expo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The label value of the sample line, unescaped; NULL when the line does not parse. */
static char *label_value(const char *line)
{
	const char *p = strstr(line, "{label=\"");
	char *out, *o;

	if (!p)
		return NULL;
	p += strlen("{label=\"");
	out = o = malloc(strlen(p) + 1);
	if (!out)
		abort();
	for (; *p && *p != '"'; p++) {
		if (*p == '\n')
			abort(); /* a raw line break would end the sample early */
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		p++;
		if (*p == 'n')
			*o++ = '\n';
		else if (*p == '\\' || *p == '"')
			*o++ = *p;
		else
			abort(); /* an escape the formats do not have */
	}
	if (*p != '"' || strncmp(p, "\"} 42\n", 6))
		abort();
	*o = '\0';
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	const char *om_version = NULL;
	enum expo_format f;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';

	f = expo_negotiate(s, &om_version);
	if ((f != EXPO_TEXT && f != EXPO_OPENMETRICS) || !om_version ||
	    (strcmp(om_version, "1.0.0") && strcmp(om_version, "0.0.1")))
		abort();
	(void)expo_accepts_gzip(s);

	for (int fmt = EXPO_TEXT; fmt <= EXPO_OPENMETRICS; fmt++) {
		struct expo_label l = { "label", s };
		struct expo e;
		size_t len, lines = 0;
		char *out, *sample, *value;

		expo_init(&e, (enum expo_format)fmt, 0);
		expo_family(&e, "fuzz_metric", EXPO_COUNTER, s);
		expo_u64(&e, &l, 1, 42);
		out = expo_finish(&e, &len);
		if (!out)
			break;
		if (strlen(out) != len)
			abort();
		for (size_t i = 0; i < len; i++)
			lines += out[i] == '\n';
		/* HELP, TYPE, the sample (and # EOF): escaping never adds a line */
		if (lines != (fmt == EXPO_OPENMETRICS ? 4u : 3u))
			abort();
		sample = strstr(out, "\nfuzz_metric_total{");
		if (!sample)
			abort();
		value = label_value(sample + 1);
		if (!value || strcmp(value, s))
			abort();
		free(value);
		free(out);
	}
	free(s);
	return 0;
}
