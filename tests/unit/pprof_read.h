/* pprof_read: a written pprof file read back (gunzipped, decoded with protobuf-c) for the tests. */
#ifndef PERFSCOPE_TEST_PPROF_READ_H
#define PERFSCOPE_TEST_PPROF_READ_H

#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "profile.pb-c.h"

/* The gunzipped bytes of path (malloc'd, *len of them); cmocka's assertions on failure. */
static uint8_t *gunzip_file(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb");
	size_t cap = 1 << 20;
	uint8_t *buf = malloc(cap);
	int n;

	assert_non_null(gz);
	assert_non_null(buf);
	*len = 0;
	while ((n = gzread(gz, buf + *len, (unsigned int)(cap - *len))) > 0) {
		*len += (size_t)n;
		if (*len == cap) {
			cap *= 2;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
	}
	assert_true(n == 0);
	gzclose(gz);
	return buf;
}

#endif
