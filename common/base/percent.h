/* percent: the one parser of a percentage argument ("25", "25%", "0.5"). */
#ifndef PERFSCOPE_COMMON_PERCENT_H
#define PERFSCOPE_COMMON_PERCENT_H

/* What percent__parse accepts, for messages. */
#define PERCENT_FORMS "a percentage above 0 and at most 100"

/* "N" or "N%", 0 < N <= 100 (a share of a CPU, of a ring ...): 0, or -EINVAL (*out unchanged). */
int percent__parse(const char *arg, double *out);

#endif
