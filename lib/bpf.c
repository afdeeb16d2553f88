/* BPF programs attached to perf events through bpf(2) and ioctl(2), without libbpf. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>

#include <perfscope/bpf.h>

#include "internal.h"

/* evsel->bpf[slot]: a bpf_link fd, or one of these. */
#define BPF_NONE (-1)
#define BPF_IOCTL (-2) /* attached with PERF_EVENT_IOC_SET_BPF: stays until the fd closes */

static int sys_bpf(enum bpf_cmd cmd, union bpf_attr *attr, unsigned int size)
{
	return (int)syscall(SYS_bpf, cmd, attr, size);
}

/* The type of the program behind fd; -EBADF when fd is not one. */
static int prog_type(int prog_fd)
{
	struct bpf_prog_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = (uint32_t)prog_fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr, sizeof(attr)) < 0)
		/* a map or any other fd: EINVAL; not open: EBADF. Neither is a program. */
		return errno == ENOSYS || errno == EPERM ? -errno : -EBADF;
	return (int)info.type;
}

static const char *prog_type_name(int type)
{
	switch (type) {
	case BPF_PROG_TYPE_PERF_EVENT:
		return "BPF_PROG_TYPE_PERF_EVENT";
	case BPF_PROG_TYPE_TRACEPOINT:
		return "BPF_PROG_TYPE_TRACEPOINT";
	case BPF_PROG_TYPE_KPROBE:
		return "BPF_PROG_TYPE_KPROBE";
	case BPF_PROG_TYPE_RAW_TRACEPOINT:
		return "BPF_PROG_TYPE_RAW_TRACEPOINT";
	case BPF_PROG_TYPE_SOCKET_FILTER:
		return "BPF_PROG_TYPE_SOCKET_FILTER";
	default:
		return "another type";
	}
}

/*
 * The kernel's rule (kernel/events/core.c, perf_event_set_bpf_prog), checked here first so that
 * the caller learns which types met instead of a bare EINVAL. PMUs registered at run time
 * (uprobe, kprobe, msr ...) are left to the kernel.
 */
static int check_type(const struct psc_evsel *evsel, int type)
{
	int want;

	switch (evsel->attr.type) {
	case PERF_TYPE_TRACEPOINT:
		want = BPF_PROG_TYPE_TRACEPOINT;
		break;
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_SOFTWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
	case PERF_TYPE_BREAKPOINT:
		want = BPF_PROG_TYPE_PERF_EVENT;
		break;
	default:
		if (type == BPF_PROG_TYPE_PERF_EVENT || type == BPF_PROG_TYPE_KPROBE ||
		    type == BPF_PROG_TYPE_TRACEPOINT)
			return 0;
		pr_warn("cannot attach a %s program (type %d) to a perf event\n",
			prog_type_name(type), type);
		return -EINVAL;
	}
	if (type == want)
		return 0;
	pr_warn("cannot attach a %s program (type %d) to %s: it takes a %s program\n",
		prog_type_name(type), type, evsel->name ? evsel->name : "this event",
		prog_type_name(want));
	return -EINVAL;
}

/* A bpf_link for one perf event fd; -errno. */
static int link_create(int prog_fd, int ev_fd, uint64_t cookie)
{
	union bpf_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = (uint32_t)prog_fd;
	attr.link_create.target_fd = (uint32_t)ev_fd;
	attr.link_create.attach_type = BPF_PERF_EVENT;
	attr.link_create.perf_event.bpf_cookie = cookie;
	fd = sys_bpf(BPF_LINK_CREATE, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	/* bpf(2) fds get O_CLOEXEC from the kernel already (since 4.13 every bpf fd does). */
	return fd;
}

static void detach_slot(struct psc_evsel *evsel, int slot)
{
	if (evsel->bpf[slot] >= 0) {
		close(evsel->bpf[slot]);
		evsel->bpf[slot] = BPF_NONE;
	}
}

void psc_evsel__bpf_close(struct psc_evsel *evsel)
{
	int n;

	if (!evsel->bpf)
		return;
	n = psc_cpumap__nr(evsel->cpus) * psc_threadmap__nr(evsel->threads);
	/* links first: a link holds its perf event open, which would outlive the fd's close */
	for (int i = 0; i < n; i++)
		detach_slot(evsel, i);
	free(evsel->bpf);
	evsel->bpf = NULL;
}

int psc_evsel__attach_bpf(struct psc_evsel *evsel, int prog_fd,
			  const struct psc_bpf_attach_opts *opts)
{
	uint64_t cookie = OPTS_GET(opts, cookie, 0);
	bool no_link = OPTS_GET(opts, no_link, false), tracepoint;
	int n, type, err = 0, attached = 0;
	int *mine;

	if (!evsel || !OPTS_VALID(opts, psc_bpf_attach_opts))
		return -EINVAL;
	if (!evsel->fds)
		return -EBADF;
	if (cookie && no_link)
		return -EINVAL; /* a cookie exists only with a link */
	type = prog_type(prog_fd);
	if (type < 0)
		return type;
	err = check_type(evsel, type);
	if (err)
		return err;
	n = psc_cpumap__nr(evsel->cpus) * psc_threadmap__nr(evsel->threads);
	if (!evsel->bpf) {
		evsel->bpf = malloc(sizeof(int) * (size_t)n);
		if (!evsel->bpf)
			return -ENOMEM;
		for (int i = 0; i < n; i++)
			evsel->bpf[i] = BPF_NONE;
	}
	mine = calloc((size_t)n, sizeof(*mine)); /* what this call attached, to roll back */
	if (!mine)
		return -ENOMEM;
	tracepoint = evsel->attr.type == PERF_TYPE_TRACEPOINT;
	for (int i = 0; i < n; i++) {
		int fd = evsel->fds[i];

		if (fd < 0)
			continue;
		if (evsel->bpf[i] != BPF_NONE) {
			err = -EEXIST;
			break;
		}
		err = no_link ? -EINVAL : link_create(prog_fd, fd, cookie);
		if (err >= 0) {
			evsel->bpf[i] = err;
			err = 0;
		} else if (err == -EINVAL && !cookie) {
			/* no perf links before 5.15 (nor with no_link): the ioctl */
			if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0) {
				err = -errno;
				break;
			}
			evsel->bpf[i] = BPF_IOCTL;
			err = 0;
		} else {
			if (err == -EINVAL)
				err = -EOPNOTSUPP; /* a cookie needs a link this kernel lacks */
			break;
		}
		mine[i] = 1;
		attached++;
		if (tracepoint)
			break; /* the program is the tracepoint's now: once (see bpf.h) */
	}
	if (!err && !attached)
		err = -EBADF; /* every slot closed: nothing to attach to */
	if (err) {
		for (int i = 0; i < n; i++)
			if (mine[i]) /* an ioctl one cannot go: it stays until close */
				detach_slot(evsel, i);
		pr_debug("attaching BPF program fd %d to %s: %s\n", prog_fd,
			 evsel->name ? evsel->name : "event", strerror(-err));
	}
	free(mine);
	return err;
}

int psc_evsel__detach_bpf(struct psc_evsel *evsel)
{
	int n, err = 0;

	if (!evsel)
		return -EINVAL;
	if (!evsel->bpf)
		return 0;
	n = psc_cpumap__nr(evsel->cpus) * psc_threadmap__nr(evsel->threads);
	for (int i = 0; i < n; i++) {
		if (evsel->bpf[i] == BPF_IOCTL)
			err = -EBUSY;
		else
			detach_slot(evsel, i);
	}
	return err;
}

int psc_evsel__nr_bpf(const struct psc_evsel *evsel)
{
	int n, nr = 0;

	if (!evsel || !evsel->bpf)
		return 0;
	n = psc_cpumap__nr(evsel->cpus) * psc_threadmap__nr(evsel->threads);
	for (int i = 0; i < n; i++)
		nr += evsel->bpf[i] != BPF_NONE;
	return nr;
}

int psc_evsel__bpf_link(const struct psc_evsel *evsel, int cpu_idx, int thread_idx)
{
	int fd;

	if (!evsel || !evsel->bpf || cpu_idx < 0 || cpu_idx >= psc_cpumap__nr(evsel->cpus) ||
	    thread_idx < 0 || thread_idx >= psc_threadmap__nr(evsel->threads))
		return -1;
	fd = evsel->bpf[EVSEL_SLOT(evsel, cpu_idx, thread_idx)];
	return fd >= 0 ? fd : -1;
}

int psc_evlist__attach_bpf(struct psc_evlist *evlist, int prog_fd,
			   const struct psc_bpf_attach_opts *opts)
{
	int err = 0, i;

	if (!evlist)
		return -EINVAL;
	for (i = 0; i < evlist->nr; i++) {
		if (!evlist->entries[i]->fds)
			continue; /* did not open (skip_unsupported) */
		err = psc_evsel__attach_bpf(evlist->entries[i], prog_fd, opts);
		if (err)
			break;
	}
	if (err)
		while (--i >= 0)
			psc_evsel__detach_bpf(evlist->entries[i]);
	return err;
}

int psc_evlist__detach_bpf(struct psc_evlist *evlist)
{
	int err = 0;

	if (!evlist)
		return -EINVAL;
	for (int i = 0; i < evlist->nr; i++) {
		int e = psc_evsel__detach_bpf(evlist->entries[i]);

		if (e && !err)
			err = e;
	}
	return err;
}

int psc_bpf__probe(void)
{
	struct bpf_insn insns[2];
	union bpf_attr attr;
	int fd;

	memset(insns, 0, sizeof(insns));
	insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K; /* r0 = 1 */
	insns[0].dst_reg = BPF_REG_0;
	insns[0].imm = 1;
	insns[1].code = BPF_JMP | BPF_EXIT;
	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	attr.insns = (uint64_t)(uintptr_t)insns;
	attr.insn_cnt = 2;
	attr.license = (uint64_t)(uintptr_t) "GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

const char *psc_strerror_bpf(int err, const char *event, char *buf, size_t len)
{
	const char *ev = event ? event : "event";

	err = err < 0 ? -err : err;
	switch (err) {
	case ENOSYS:
		snprintf(buf, len,
			 "%s: this kernel has no BPF (bpf(2) is not there: built without "
			 "CONFIG_BPF_SYSCALL)",
			 ev);
		break;
	case EPERM:
	case EACCES:
		snprintf(
			buf, len,
			"%s: BPF refused (%s): loading and attaching BPF programs to perf events needs "
			"root, or CAP_BPF and CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8); "
			"kernel.unprivileged_bpf_disabled and lockdown can refuse it too",
			ev, strerror(err));
		break;
	case EINVAL:
		snprintf(
			buf, len,
			"%s: the program's type does not fit the event: a tracepoint takes a "
			"BPF_PROG_TYPE_TRACEPOINT program, a software, hardware or raw PMU event a "
			"BPF_PROG_TYPE_PERF_EVENT one, a uprobe or kprobe a BPF_PROG_TYPE_KPROBE one",
			ev);
		break;
	case EBADF:
		snprintf(buf, len,
			 "%s: the event is not open, or the fd given is not a BPF program", ev);
		break;
	case EEXIST:
		snprintf(
			buf, len,
			"%s: a BPF program is attached to it already (the kernel takes one per event)",
			ev);
		break;
	case EOPNOTSUPP:
		snprintf(
			buf, len,
			"%s: this kernel cannot give a BPF program an attach cookie on a perf event "
			"(needs BPF links on perf events, Linux 5.15)",
			ev);
		break;
	case EBUSY:
		snprintf(
			buf, len,
			"%s: a program attached with PERF_EVENT_IOC_SET_BPF stays until the event is "
			"closed",
			ev);
		break;
	default:
		snprintf(buf, len, "%s: BPF: %s", ev, strerror(err));
		break;
	}
	return buf;
}
