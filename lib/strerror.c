/* Advice for perf_event_open(2) failures: what the errno means for this event and how to fix it. */
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

#include "internal.h"

#include <perfscope/kernel.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif

/*
 * Whether the caller already has what perf_event_paranoid asks for: then a refusal is not about
 * the paranoid level and the advice to become root would be wrong.
 */
static bool perf_privileged(void)
{
	return psc_kernel__has_cap(CAP_PERFMON) || psc_kernel__has_cap(CAP_SYS_ADMIN);
}

int psc_errno_is_unsupported(int err)
{
	err = err < 0 ? -err : err;
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV || err == ENOSYS;
}

const char *psc_strerror_open(int err, const char *event, char *buf, size_t len)
{
	const char *ev = event ? event : "event";

	err = err < 0 ? -err : err;
	switch (err) {
	case EACCES:
	case EPERM:
		if (perf_privileged()) {
			snprintf(
				buf, len,
				"%s: permission denied although this process has CAP_PERFMON or "
				"CAP_SYS_ADMIN (%s): the kernel refuses this event for another reason, "
				"e.g. kernel lockdown, a security module (SELinux, AppArmor), or an "
				"event kept for other uses (ftrace:function)",
				ev, strerror(err));
			break;
		}
		snprintf(
			buf, len,
			"%s: permission denied (perf_event_paranoid is %d). Run as root or grant "
			"CAP_PERFMON (or CAP_SYS_ADMIN); count user space only with the :u modifier; or "
			"lower it with sysctl -w kernel.perf_event_paranoid=N: 2 allows user-space "
			"counting of your own processes, 1 the kernel too, 0 whole CPUs and cgroups, "
			"-1 everything",
			ev, (int)psc_kernel__sysctl("perf_event_paranoid", 2));
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
	case ENOSYS:
		snprintf(
			buf, len,
			"%s: not supported on this machine (%s): the CPU, hypervisor or kernel does not "
			"provide this event",
			ev, strerror(err));
		break;
	case EMFILE:
	case ENFILE:
		snprintf(
			buf, len,
			"%s: too many open files: one fd is needed per event, CPU and thread; raise the "
			"limit (ulimit -n, now %ld) or count fewer events/CPUs/threads",
			ev, sysconf(_SC_OPEN_MAX));
		break;
	case EINVAL:
		snprintf(
			buf, len,
			"%s: invalid event settings for this kernel (EINVAL): a modifier, sample type, "
			"period or frequency above kernel.perf_event_max_sample_rate is not accepted here",
			ev);
		break;
	case ESRCH:
		snprintf(buf, len, "%s: no such process or thread (it may have exited)", ev);
		break;
	case EBUSY:
		snprintf(buf, len, "%s: the PMU is in exclusive use by another program", ev);
		break;
	case E2BIG:
		snprintf(buf, len, "%s: perf_event_attr is larger than this kernel knows (E2BIG)",
			 ev);
		break;
	case EBADF:
		snprintf(buf, len, "%s: bad group or cgroup file descriptor", ev);
		break;
	default:
		snprintf(buf, len, "%s: %s", ev, strerror(err));
		break;
	}
	return buf;
}
