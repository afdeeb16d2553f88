/* kernel: the perf sysctls, the caller's capabilities and the PERF_FORMAT_LOST probe. */
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#include <perfscope/kernel.h>

long psc_kernel__sysctl(const char *name, long dflt)
{
	char path[128];
	long v;
	FILE *f;

	/* a name, not a path: nothing outside /proc/sys/kernel is read */
	if (!name || !*name || strchr(name, '/') ||
	    snprintf(path, sizeof(path), "/proc/sys/kernel/%s", name) >= (int)sizeof(path))
		return dflt;
	f = fopen(path, "re");
	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

bool psc_kernel__has_cap(int cap)
{
	/* capget(2) directly, to need no libcap */
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = { 0 };

	if (cap < 0 || CAP_TO_INDEX(cap) >= _LINUX_CAPABILITY_U32S_3 ||
	    syscall(SYS_capget, &hdr, data))
		return geteuid() == 0;
	return data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap);
}

bool psc_kernel__has_format_lost(void)
{
	static int known = -1;
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.read_format = PERF_FORMAT_LOST,
		.disabled = 1,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
	long fd;

	/* older kernels refuse the attr with EINVAL */
	if (known < 0) {
		fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		known = fd >= 0;
		if (fd >= 0)
			close((int)fd);
	}
	return known;
}
