/* Turning -a/-C/-p/-t/-G/-- COMMAND into cpu and thread maps, opening events on them, starting. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "caret.h"
#include "namelist.h"
#include "rlimit.h"
#include "target.h"

static void command_title(char *title, size_t len, char **argv)
{
	size_t used = 0;

	used += snprintf(title + used, len - used, "'");
	for (int i = 0; argv[i] && used < len; i++)
		used += snprintf(title + used, len - used, "%s%s", i ? " " : "", argv[i]);
	if (used < len)
		snprintf(title + used, len - used, "'");
}

/* perf stat's words: 'system wide', 'CPU(s) 0-3' */
static void cpus_title(char *title, size_t len, const char *cpus)
{
	if (cpus)
		snprintf(title, len, "'CPU(s) %s'", cpus);
	else
		snprintf(title, len, "'system wide'");
}

/* Why -G CGROUP cannot be used, and how to name one instead: 2 for a wrong name, 1 otherwise. */
static int cgroup_error(const struct say *to, const char *cgroup, int err)
{
	static const char how[] = "give a cgroup directory: a path in the cgroup2 mount (see "
				  "'findmnt -t cgroup2'), absolute or relative to it, e.g. "
				  "system.slice/ssh.service";

	if (err == -ENODEV) {
		say(to,
			"cannot use cgroup '%s': no cgroup2 file system (nor a v1 "
			"perf_event hierarchy) is mounted; mount one (mount -t cgroup2 none "
			"/sys/fs/cgroup)",
			cgroup);
		return 1;
	}
	if (err == -ENOENT || err == -ENOTDIR || err == -EINVAL) {
		say(to, "cannot use cgroup '%s': %s; %s", cgroup,
			err == -ENOENT	  ? "no such cgroup"
			: err == -ENOTDIR ? "not a cgroup that perf can count"
					  : "an empty name",
			how);
		return 2;
	}
	say(to, "cannot use cgroup '%s': %s", cgroup, strerror(-err));
	return 1;
}

static bool task_exists(pid_t id, bool procs)
{
	char path[64];

	(void)procs; /* a thread has its /proc/TID too, though readdir does not list it */
	snprintf(path, sizeof(path), "/proc/%d", (int)id);
	return !access(path, F_OK);
}

int target_check_tasks(const struct target_spec *o, const struct say *to)
{
	bool procs = o->nr_pids > 0;
	int nr = procs ? o->nr_pids : o->nr_tids;

	for (int i = 0; i < nr; i++) {
		pid_t id = procs ? o->pids[i] : o->tids[i];

		if (!task_exists(id, procs)) {
			say(to, "no %s with %s %d", procs ? "process" : "thread", procs ? "pid" : "tid", (int)id);
			return 1;
		}
	}
	return 0;
}

bool target_spec__tasks(const struct target_spec *o)
{
	if (o->nr_pids || o->nr_tids)
		return true;
	return !(o->all_cpus || o->cpus || o->cgroup || !o->command);
}

int target_setup(struct target *t, const struct target_spec *o, const struct say *to,
		 char *title, size_t title_len)
{
	struct psc_parse_error perr = { .pos = -1 };
	int err;

	memset(t, 0, sizeof(*t));
	t->cgroup_fd = -1;
	/* -a/-C with a COMMAND: those CPUs, every task, while it runs (perf stat -a -- cmd) */
	bool wide_command = o->command && (o->cpus || o->all_cpus);

	if ((o->nr_pids || o->nr_tids) && o->all_cpus) {
		say(to,
			"-a counts every CPU system-wide; with -p or -t the threads are "
			"followed on every CPU already (-C CPUS: only while they run there). Give one.");
		return 2;
	}
	if ((o->nr_pids || o->nr_tids || (o->command && !wide_command)) && !o->cpus) {
		t->cpus = psc_cpumap__new_any();
	} else if (o->cpus) {
		/* with -p/-t (as perf-prof): the threads, only while they run on these CPUs */
		t->cpus = psc_cpumap__parse(o->cpus, &perr);
		if (!t->cpus) {
			/* the caret's lines after the message's, without a prefix that would shift them */
			int n = caret__snprint(NULL, 0, "  ", "-C ", o->cpus, perr.pos);
			char *caret = n > 0 ? malloc((size_t)n + 1) : NULL;

			if (caret)
				caret__snprint(caret, (size_t)n + 1, "  ", "-C ", o->cpus, perr.pos);
			say(to, "bad CPU list: %s%s%s", perr.msg, caret ? "\n" : "", caret ? caret : "");
			free(caret);
			return 2;
		}
	} else {
		t->cpus = psc_cpumap__new_online();
	}
	if (!t->cpus)
		goto nomem;

	if (o->nr_pids || o->nr_tids) {
		bool procs = o->nr_pids > 0;
		int nr = procs ? o->nr_pids : o->nr_tids;

		for (int i = 0; i < nr; i++) {
			pid_t id = procs ? o->pids[i] : o->tids[i];
			struct psc_threadmap *one = procs ? psc_threadmap__new_pid(id)
							  : psc_threadmap__new_tid(id),
					     *both;

			if (!one && errno == ENOMEM)
				goto nomem;
			if (!one) {
				/* target_check_tasks saw it: it exited while the profiler set up */
				say(to, "%s %d exited before its events were opened",
					procs ? "process" : "thread", (int)id);
				continue;
			}
			both = t->threads ? psc_threadmap__merge(t->threads, one) : one;
			if (both != one)
				psc_threadmap__put(one);
			if (!both)
				goto nomem;
			psc_threadmap__put(t->threads);
			t->threads = both;
		}
		if (!t->threads)
			return TARGET_GONE;
		snprintf(title, title_len, "%s id '%s'", procs ? "process" : "thread",
			 o->tasks_text);
		t->follows_tasks = true;
	} else if (o->command) {
		err = launch_prepare(&t->launch, o->command);
		if (err) {
			say(to, "cannot start '%s': %s", o->command[0], strerror(-err));
			return 1;
		}
		t->has_command = true;
		if (wide_command) {
			t->threads = psc_threadmap__new_any();
			t->per_cpu = true;
			cpus_title(title, title_len, o->cpus);
		} else {
			t->threads = psc_threadmap__new_tid(t->launch.pid);
			command_title(title, title_len, o->command);
		}
	} else {
		t->threads = psc_threadmap__new_any();
		t->per_cpu = true;
		if (o->cgroup) {
			t->cgroup_fd = psc_cgroup__open(o->cgroup);
			if (t->cgroup_fd < 0)
				return cgroup_error(to, o->cgroup, t->cgroup_fd);
			snprintf(title, title_len, "cgroup '%s'", o->cgroup);
		} else {
			cpus_title(title, title_len, o->cpus);
		}
	}
	if (!t->threads)
		goto nomem;
	return 0;
nomem:
	say(to, "out of memory");
	return 1;
}

/* One fd per event, CPU and thread: raise the soft limit toward the hard one when short. */
static int ensure_fd_limit(struct target *t, int nr_events, const struct say *to)
{
	uint64_t need =
		(uint64_t)nr_events * psc_cpumap__nr(t->cpus) * psc_threadmap__nr(t->threads) + 32;
	struct rlimit rl;
	int err = rlimit__raise_nofile(need, &rl);

	if (err == -ERANGE) {
		say(to,
			"%llu file descriptors are needed (one per event, CPU and thread) but "
			"the limit is %llu; raise it (ulimit -n %llu) or count fewer events, CPUs or threads",
			(unsigned long long)need, (unsigned long long)rl.rlim_max,
			(unsigned long long)need);
		return 1;
	}
	if (err < 0) {
		say(to, "cannot raise the open-files limit to %llu: %s",
			(unsigned long long)need, strerror(-err));
		return 1;
	}
	return 0;
}

/*
 * An event's cpus=LIST must name some of the CPUs the run watches (all of them unless -C), or
 * the event would open nowhere: a usage error naming the event and those CPUs.
 */
static int check_event_cpus(const struct target *t, struct psc_evlist *evlist, const struct say *to)
{
	struct psc_evsel *evsel;
	char *cpus = NULL;
	size_t len = 0;
	FILE *f;
	int i, c;

	if (psc_cpumap__nr(t->cpus) < 1 || psc_cpumap__cpu(t->cpus, 0) < 0)
		return 0; /* threads on any CPU: followed on those of the list */
	psc_evlist__for_each(evlist, i, evsel)
	{
		struct psc_cpumap *own = psc_evsel__own_cpus(evsel);
		bool any = false;

		for (c = 0; own && c < psc_cpumap__nr(own); c++)
			any |= psc_cpumap__idx(t->cpus, psc_cpumap__cpu(own, c)) >= 0;
		if (!own || any)
			continue;
		/* the whole list, however many CPUs */
		f = open_memstream(&cpus, &len);
		for (c = 0; f && c < psc_cpumap__nr(t->cpus); c++)
			fprintf(f, "%s%d", c ? "," : "", psc_cpumap__cpu(t->cpus, c));
		if (f)
			fclose(f);
		say(to,
		    "%s: its cpus= names none of the CPUs this run watches (%s); give some of those, "
		    "or widen -C",
		    psc_evsel__name(evsel), cpus ? cpus : "?");
		free(cpus);
		return 2;
	}
	return 0;
}

/*
 * The events this machine cannot count, in one line: without a PMU that is every hardware event,
 * expected, and a line for each (the library logs them at info level: -v) would bury the rest.
 */
static void report_unsupported(struct psc_evlist *evlist, const struct say *to)
{
	struct psc_evsel *evsel;
	struct namelist l;
	char names[sizeof(l.buf) + 32];
	int i;

	namelist__init(&l, NAMELIST_SHORT);
	psc_evlist__for_each(evlist, i, evsel)
	{
		if (!psc_evsel__is_open(evsel) &&
		    psc_errno_is_unsupported(psc_evsel__open_errno(evsel)))
			namelist__add(&l, psc_evsel__name(evsel));
	}
	if (!l.nr)
		return;
	say(to,
	    "not supported on this machine (the CPU, hypervisor or kernel does not provide them), "
	    "not counted: %s (-v: each with its errno)",
	    namelist__str(&l, names, sizeof(names)));
}

int target_open(struct target *t, struct psc_evlist *evlist, const struct say *to)
{
	bool task_command = t->has_command && !t->per_cpu; /* counted from its exec on */
	PSC_OPTS(psc_evlist_open_opts, oo, .skip_unsupported = true,
		 .cgroup_fd = t->cgroup_fd > 0 ? t->cgroup_fd : 0,
		 .inherit = task_command || (t->follows_tasks && t->inherit_followed),
		 .enable_on_exec = task_command);
	char msg[512];
	int err;

	if (ensure_fd_limit(t, psc_evlist__nr(evlist), to))
		return 1;
	if ((err = check_event_cpus(t, evlist, to)))
		return err;
	psc_evlist__set_maps(evlist, t->cpus, t->threads);
	err = psc_evlist__open(evlist, &oo);
	if (err) {
		struct psc_evsel *evsel;
		const char *name = "events";
		int i;

		psc_evlist__for_each(evlist, i, evsel)
		{
			if (psc_evsel__open_errno(evsel) == -err)
				name = psc_evsel__name(evsel);
		}
		say(to, "%s%s", psc_strerror_open(err, name, msg, sizeof(msg)),
			psc_errno_is_unsupported(err) ? "; 'perfscope list' shows what it provides"
						      : "");
		return 1;
	}
	report_unsupported(evlist, to);
	if (psc_evlist__nr_open(evlist) == 0) {
		say(to, "none of the events can be counted on this machine");
		return 1;
	}
	return 0;
}

int target_start(struct target *t, struct psc_evlist *evlist)
{
	int err;

	t->start_errno = 0;
	/* whole CPUs count from now; a command's own events start at its exec */
	if ((!t->has_command || t->per_cpu) && (err = psc_evlist__enable(evlist))) {
		t->start_errno = err < 0 ? -err : EIO;
		t->start_step = "enable the events";
		return 1;
	}
	if (!t->has_command)
		return 0;
	if ((err = launch_go(&t->launch))) {
		if (!t->launch.exec_errno) { /* the command never got the word to go */
			t->start_errno = -err;
			t->start_step = "start the command";
		}
		return launch_exec_exit_code(&t->launch);
	}
	t->launched = true;
	return 0;
}

const char *target_start_error(const struct target *t, char *buf, size_t len)
{
	if (t->start_errno)
		snprintf(buf, len, "cannot %s: %s", t->start_step, strerror(t->start_errno));
	else
		launch_strerror(&t->launch, buf, len);
	return buf;
}

int target_reap(struct target *t, int *status)
{
	if (!t->launched)
		return 0;
	return launch_wait(&t->launch, status, 0) > 0 ? 1 : 0;
}

int target_exited(struct target *t, int *status)
{
	if (!t->launched)
		return 0;
	return launch_exited(&t->launch, status) > 0 ? 1 : 0;
}

int target_wait(struct target *t, int *status)
{
	if (!t->launched)
		return 0;
	return launch_wait(&t->launch, status, 1) > 0 ? 1 : 0;
}

void target_forward_signal(struct target *t, int sig)
{
	if (t->launched)
		launch_kill(&t->launch, sig);
}

int target_stop_command(struct target *t, int *status)
{
	struct pollfd p;
	int fd;

	if (!t->launched || t->launch.pid <= 0) /* not started, or already reaped */
		return 0;
	if (target_reap(t, status) > 0)
		return 1;
	target_forward_signal(t, SIGTERM);
	/* a stopped command (SIGSTOP, Ctrl-Z of its own) handles SIGTERM only once continued */
	target_forward_signal(t, SIGCONT);
	fd = launch_pidfd(&t->launch);
	if (fd >= 0) {
		p = (struct pollfd){ .fd = fd, .events = POLLIN };
		poll(&p, 1, 2000);
		close(fd);
	} else {
		usleep(100 * 1000);
	}
	if (target_reap(t, status) > 0)
		return 1;
	target_forward_signal(t, SIGKILL);
	return target_wait(t, status);
}

/* A thread is alive while /proc/TID/stat exists and its state is not zombie or dead. */
static bool thread_alive(pid_t tid)
{
	char path[64], buf[512];
	const char *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT && errno != ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may hold spaces and parentheses, the state follows the last ')'
	 */
	paren = strrchr(buf, ')');
	return !paren || (paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X');
}

bool target_alive(const struct target *t)
{
	if (!t->follows_tasks)
		return true;
	for (int i = 0; i < psc_threadmap__nr(t->threads); i++)
		if (thread_alive(psc_threadmap__tid(t->threads, i)))
			return true;
	return false;
}

void target_release(struct target *t)
{
	int status;

	if (t->has_command) {
		/* stat's --duration (or a failed write) ends before the command: not left behind */
		target_stop_command(t, &status);
		launch_release(&t->launch);
	}
	if (t->cgroup_fd >= 0)
		close(t->cgroup_fd);
	t->cgroup_fd = -1;
	psc_cpumap__put(t->cpus);
	psc_threadmap__put(t->threads);
	t->cpus = NULL;
	t->threads = NULL;
}
