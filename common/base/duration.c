/* duration: one parser of time arguments for every option that takes a time (--than, -i ...). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"

int duration__parse_unit(const char *arg, uint64_t unit_ns, uint64_t *ns)
{
	char *end;
	double v, mult = (double)unit_ns;

	errno = 0;
	v = strtod(arg, &end);
	/* !isfinite: "inf" and "nan" parse as numbers, but no u64 holds them */
	if (errno || end == arg || !isfinite(v) || v < 0)
		return -EINVAL;
	if (!strcmp(end, "s"))
		mult = 1e9;
	else if (!strcmp(end, "ms"))
		mult = 1e6;
	else if (!strcmp(end, "us"))
		mult = 1e3;
	else if (*end && strcmp(end, "ns"))
		return -EINVAL;
	v = v * mult + 0.5;
	/* 2^64 as a double: converting anything at or above it to a u64 is undefined */
	if (v >= 18446744073709551616.0)
		return -EINVAL;
	*ns = (uint64_t)v;
	return 0;
}

int duration__parse(const char *arg, uint64_t *ns)
{
	return duration__parse_unit(arg, 1, ns);
}
