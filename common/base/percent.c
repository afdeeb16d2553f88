/* percent: a percentage argument, for the option table's PROF_OPT_PERCENT and trigger's shares. */
#include <errno.h>
#include <stdlib.h>

#include "percent.h"

int percent__parse(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (*end == '%')
		end++;
	if (errno || end == arg || *end || !(v > 0) || v > 100)
		return -EINVAL;
	*out = v;
	return 0;
}
