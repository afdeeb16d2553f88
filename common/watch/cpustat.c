/* cpustat: time shares of CPUs from /proc/stat and of processes from /proc/PID/stat. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cpustat.h"

int cpustat__init(struct cpustat *cs, int nr_cpus)
{
	memset(cs, 0, sizeof(*cs));
	cs->fd = -1;
	cs->nr_cpus = nr_cpus > 0 ? nr_cpus : 1;
	cs->cpus = calloc((size_t)cs->nr_cpus, sizeof(*cs->cpus));
	cs->prev = calloc((size_t)cs->nr_cpus, sizeof(*cs->prev));
	/* a line is under 128 bytes per CPU; the intr line that follows is not read */
	cs->buf_len = 4096 + (size_t)cs->nr_cpus * 160;
	cs->buf = malloc(cs->buf_len);
	cs->fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
	if (!cs->cpus || !cs->prev || !cs->buf || cs->fd < 0) {
		int err = cs->fd < 0 && cs->buf ? -errno : -ENOMEM;

		cpustat__exit(cs);
		return err;
	}
	return 0;
}

void cpustat__exit(struct cpustat *cs)
{
	if (cs->fd >= 0)
		close(cs->fd);
	cs->fd = -1;
	free(cs->cpus);
	free(cs->prev);
	free(cs->buf);
	cs->cpus = cs->prev = NULL;
	cs->buf = NULL;
}

static const char *parse_line(const char *s, struct cpustat_ticks *t)
{
	unsigned long long v[8] = { 0 };
	char *end;

	for (int i = 0; i < 8; i++) {
		v[i] = strtoull(s, &end, 10);
		if (end == s)
			break;
		s = end;
	}
	*t = (struct cpustat_ticks){ v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], true };
	return s;
}

void cpustat__parse(struct cpustat *cs, const char *text)
{
	const char *s = text;

	for (int i = 0; i < cs->nr_cpus; i++)
		cs->cpus[i].seen = false;
	cs->total.seen = false;
	while (s && !strncmp(s, "cpu", 3)) {
		if (s[3] == ' ') {
			s = parse_line(s + 4, &cs->total);
		} else {
			char *end;
			long cpu = strtol(s + 3, &end, 10);
			struct cpustat_ticks t;

			s = parse_line(end, &t);
			if (cpu >= 0 && cpu < cs->nr_cpus)
				cs->cpus[cpu] = t;
		}
		s = strchr(s, '\n');
		if (s)
			s++;
	}
}

int cpustat__read(struct cpustat *cs)
{
	struct cpustat_ticks *t = cs->prev;
	ssize_t n;

	cs->prev = cs->cpus;
	cs->cpus = t;
	cs->prev_total = cs->total;
	/* only the cpu lines are wanted: they come first, the rest of the file is left unread */
	n = pread(cs->fd, cs->buf, cs->buf_len - 1, 0);
	if (n < 0)
		return -errno;
	cs->buf[n] = '\0';
	cpustat__parse(cs, cs->buf);
	return 0;
}

static uint64_t sum(const struct cpustat_ticks *t)
{
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->softirq + t->steal;
}

double cpustat__share(const struct cpustat *cs, int cpu, enum cpustat_kind kind)
{
	const struct cpustat_ticks *a, *b;
	uint64_t total, part;

	if (cpu >= cs->nr_cpus)
		return -1;
	a = cpu < 0 ? &cs->prev_total : &cs->prev[cpu];
	b = cpu < 0 ? &cs->total : &cs->cpus[cpu];
	if (!a->seen || !b->seen || sum(b) <= sum(a))
		return -1;
	total = sum(b) - sum(a);
	switch (kind) {
	case CPUSTAT_USER:
		part = b->user + b->nice - a->user - a->nice;
		break;
	case CPUSTAT_SYS:
		part = b->system - a->system;
		break;
	case CPUSTAT_IOWAIT:
		/* iowait may go backwards on NO_HZ kernels (it is an estimate): none then */
		part = b->iowait >= a->iowait ? b->iowait - a->iowait : 0;
		break;
	case CPUSTAT_BUSY:
	default: {
		uint64_t idle = b->idle + b->iowait - a->idle - a->iowait;

		part = total > idle ? total - idle : 0;
		break;
	}
	}
	return part > total ? 100.0 : 100.0 * (double)part / (double)total;
}

const char *cpustat__kind_name(enum cpustat_kind kind)
{
	static const char *const names[] = { "user", "sys", "cpu", "iowait" };

	return kind < CPUSTAT_NR ? names[kind] : "?";
}

int cpustat__task(pid_t pid, uint64_t *user, uint64_t *sys)
{
	char path[64], buf[1024], *s;
	unsigned long long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* the comm may hold spaces and ')': fields start after the last ')' */
	s = strrchr(buf, ')');
	/* state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!s ||
	    sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -EINVAL;
	*user = ut;
	*sys = st;
	return 0;
}

void cpustat__task_init(struct cpustat_task *ct, pid_t pid)
{
	ct->pid = pid;
	ct->clk_tck = sysconf(_SC_CLK_TCK);
	if (ct->clk_tck <= 0)
		ct->clk_tck = 100;
	ct->user = ct->sys = 0;
}

void cpustat__task_shares(struct cpustat_task *ct, bool first, double dt_s, double *share)
{
	uint64_t user, sys;
	double tick = (double)ct->clk_tck;

	for (int k = 0; k < CPUSTAT_NR; k++)
		share[k] = -1;
	if (cpustat__task(ct->pid, &user, &sys))
		return;
	if (!first && dt_s > 0) {
		share[CPUSTAT_USER] = 100.0 * (double)(user - ct->user) / tick / dt_s;
		share[CPUSTAT_SYS] = 100.0 * (double)(sys - ct->sys) / tick / dt_s;
		share[CPUSTAT_BUSY] = share[CPUSTAT_USER] + share[CPUSTAT_SYS];
	}
	ct->user = user;
	ct->sys = sys;
}
