/* rlimit: raising RLIMIT_NOFILE; see rlimit.h. */
#include "rlimit.h"

#include <errno.h>

int rlimit__raise_nofile(uint64_t need, struct rlimit *was)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 0;
	if (was)
		*was = rl;
	if (need == RLIMIT_NOFILE_HARD)
		need = rl.rlim_max;
	/* RLIM_INFINITY is the largest rlim_t: above any need */
	if (rl.rlim_cur >= need)
		return 0;
	if (rl.rlim_max < need)
		return -ERANGE;
	rl.rlim_cur = (rlim_t)need;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	return 1;
}
