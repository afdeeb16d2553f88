/* comm: thread names from COMM/FORK records and /proc; see comm.h. */
#include "comm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COMM_LEN 16
#define GONE "<...>"

/* A thread's name, and when it took it: a FORK names a reused tid unless a later COMM did. */
struct comm_entry {
	char name[COMM_LEN]; /* first: comm_cache__find returns the entry as its name */
	uint64_t since; /* the naming record's time; 0 for /proc, or records without time */
};

int comm_cache__init(struct comm_cache *c)
{
	memset(c, 0, sizeof(*c));
	/* a system-wide trace names every thread there is at its start: hundreds, often */
	return keymap__init(&c->map, sizeof(struct comm_entry), 700);
}

void comm_cache__exit(struct comm_cache *c)
{
	keymap__exit(&c->map);
}

static void copy_name(char *dst, const char *comm, size_t len)
{
	if (len > COMM_LEN - 1)
		len = COMM_LEN - 1;
	memcpy(dst, comm, len);
	dst[len] = '\0';
}

static int set_since(struct comm_cache *c, uint32_t tid, const char *comm, size_t len,
		     uint64_t since)
{
	struct comm_entry *e;

	if (!tid)
		return 0;
	e = keymap__insert(&c->map, tid, NULL);
	if (!e)
		return -ENOMEM;
	copy_name(e->name, comm, len);
	e->since = since;
	return 0;
}

int comm_cache__set(struct comm_cache *c, uint32_t tid, const char *comm, size_t len)
{
	return set_since(c, tid, comm, len, 0);
}

const char *comm_cache__find(const struct comm_cache *c, uint32_t tid)
{
	return tid ? keymap__find(&c->map, tid) : "swapper";
}

const char *comm_cache__get(struct comm_cache *c, uint32_t pid, uint32_t tid)
{
	const char *known = comm_cache__find(c, tid);
	char path[64], buf[32];
	ssize_t n;
	int fd;

	if (known)
		return known;
	snprintf(path, sizeof(path), "/proc/%u/task/%u/comm", pid, tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		/* exited before we looked: remembered as unknown rather than retried per event */
		memcpy(buf, GONE, sizeof(GONE) - 1);
		n = sizeof(GONE) - 1;
	} else if (buf[n - 1] == '\n') {
		n--;
	}
	if (comm_cache__set(c, tid, buf, (size_t)n)) {
		copy_name(c->scratch, buf, (size_t)n);
		return c->scratch;
	}
	return comm_cache__find(c, tid);
}

void comm_cache__record(struct comm_cache *c, const struct psc_record *rec)
{
	const struct comm_entry *child;
	const char *parent;

	if (rec->type == PERF_RECORD_COMM) {
		/* unordered rings: a task that migrated between two execs may have its older COMM
		 * read last; a name only moves forward in time */
		child = keymap__find(&c->map, rec->comm.tid);
		if (!child || !rec->sid.time || child->since <= rec->sid.time)
			set_since(c, rec->comm.tid, rec->comm.comm, strlen(rec->comm.comm),
				  rec->sid.time);
	} else if (rec->type == PERF_RECORD_FORK && rec->fork.tid && rec->fork.ptid) {
		/*
		 * A child is named as its parent until it execs; it may be gone before we look.
		 * A name already there is a dead thread's whose tid was reused, replaced; except
		 * that unordered (--no-order) the child's COMM at its exec, written to the ring of
		 * the CPU it ran on, may come before its FORK: a name taken after the fork stays.
		 */
		parent = comm_cache__find(c, rec->fork.ptid);
		child = keymap__find(&c->map, rec->fork.tid);
		if (child && child->since > rec->fork.time)
			return;
		if (parent) {
			char name[COMM_LEN];

			/* the parent's name may move when the child's insert grows the table */
			copy_name(name, parent, strlen(parent));
			set_since(c, rec->fork.tid, name, strlen(name), rec->fork.time);
		} else if (child) {
			/* a parent never named: the dead thread's name goes, /proc is asked instead */
			keymap__remove(&c->map, rec->fork.tid);
		}
	}
}

static bool is_number(const char *s)
{
	return s[0] >= '1' && s[0] <= '9';
}

/* The threads of one process (pid as its /proc directory name). */
static void preload_pid(struct comm_cache *c, const char *pid)
{
	char path[64];
	struct dirent *d;
	DIR *task;

	snprintf(path, sizeof(path), "/proc/%s/task", pid);
	task = opendir(path);
	if (!task)
		return;
	while ((d = readdir(task)))
		if (is_number(d->d_name))
			comm_cache__get(c, (uint32_t)atoi(pid), (uint32_t)atoi(d->d_name));
	closedir(task);
}

void comm_cache__preload(struct comm_cache *c, pid_t pid, pid_t tid)
{
	char name[16];
	struct dirent *d;
	DIR *proc;

	if (tid > 0) {
		comm_cache__get(c, (uint32_t)tid, (uint32_t)tid);
		return;
	}
	if (pid > 0) {
		snprintf(name, sizeof(name), "%d", (int)pid);
		preload_pid(c, name);
		return;
	}
	proc = opendir("/proc");
	if (!proc)
		return;
	while ((d = readdir(proc)))
		if (is_number(d->d_name))
			preload_pid(c, d->d_name);
	closedir(proc);
}
