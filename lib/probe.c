/* Uprobes and kprobes made trace events through tracefs (uprobe_events, kprobe_events), in a
 * group named after the process that made them, and removed again, stale ones included. */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <perfscope/probe.h>
#include <perfscope/tracefs.h>

#include "probe_internal.h"

#define GROUP_PREFIX "perfscope_"
/* the kernel's MAX_EVENT_NAME_LEN is 64, with the terminating NUL */
#define NAME_MAX_LEN 48

struct made {
	char name[64];
	bool kprobe;
	bool removed;
};

struct psc_probes {
	char tracefs[PATH_MAX];
	char group[64];
	struct made *made;
	int nr;
};

static const char *control(bool kprobe)
{
	return kprobe ? "kprobe_events" : "uprobe_events";
}

/* One command to uprobe_events/kprobe_events; O_APPEND, never O_TRUNC (that clears them all). */
static int command(const char *tracefs, bool kprobe, const char *cmd)
{
	char path[PATH_MAX];
	size_t len = strlen(cmd);
	ssize_t n;
	int fd, err = 0;

	if (psc_pathf(path, sizeof(path), "%s/%s", tracefs, control(kprobe)))
		return -ENAMETOOLONG;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

/* The kernel's last error_log line (what it did not like in a probe command), or "". */
static void last_error(const char *tracefs, char *buf, size_t len)
{
	char path[PATH_MAX], line[512];
	FILE *f;

	buf[0] = '\0';
	if (psc_pathf(path, sizeof(path), "%s/error_log", tracefs) || !(f = fopen(path, "re")))
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* "[ts] trace_uprobe: error: Invalid fetch argument" then the command, a caret */
		char *e = strstr(line, "error: ");

		if (e)
			snprintf(buf, len, "%s", e + 7);
	}
	fclose(f);
}

static int read_id(const char *tracefs, const char *group, const char *name, uint64_t *id)
{
	char path[PATH_MAX], buf[32];
	ssize_t n;
	int fd;

	if (psc_pathf(path, sizeof(path), "%s/events/%s/%s/id", tracefs, group, name))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EINVAL;
	buf[n] = '\0';
	*id = strtoull(buf, NULL, 10);
	return *id ? 0 : -EINVAL;
}

/* FUNC as an event name: [A-Za-z0-9_], unique in the group ("malloc", "malloc_ret", "f_2"). */
static void event_name(const struct psc_probes *pr, const struct psc_probe_spec *sp, char *buf,
		       size_t len)
{
	char base[NAME_MAX_LEN + 1];
	size_t n = 0;

	if (!isalpha((unsigned char)sp->func[0]) && sp->func[0] != '_')
		base[n++] = 'p';
	for (const char *c = sp->func; *c && n < NAME_MAX_LEN - 12; c++)
		base[n++] = isalnum((unsigned char)*c) ? *c : '_';
	base[n] = '\0';
	snprintf(buf, len, "%s%s", base, sp->retprobe ? "_ret" : "");
	for (int k = 2;; k++) {
		bool taken = false;

		for (int i = 0; i < pr->nr && !taken; i++)
			taken = !strcmp(pr->made[i].name, buf);
		if (!taken)
			return;
		snprintf(buf, len, "%s%s_%d", base, sp->retprobe ? "_ret" : "", k);
	}
}

/*
 * What each probe fetches: the integer arguments by register and the return address (at the
 * entry it is on top of the stack, x86-64, or in the link register, arm64: a frame-pointer
 * unwind from there misses the direct caller, whose frame is not made yet), or the return value.
 */
#if defined(__x86_64__)
#define ENTRY_ARGS \
	"arg1=%di:x64 arg2=%si:x64 arg3=%dx:x64 arg4=%cx:x64 arg5=%r8:x64 arg6=%r9:x64 caller=$stack0:x64"
#elif defined(__aarch64__)
#define ENTRY_ARGS \
	"arg1=%x0:x64 arg2=%x1:x64 arg3=%x2:x64 arg4=%x3:x64 arg5=%x4:x64 arg6=%x5:x64 caller=%x30:x64"
#else
#define ENTRY_ARGS ""
#endif
#define RET_ARGS "ret=$retval:x64"

static int make_one(struct psc_probes *pr, struct psc_event_spec *spec,
		    struct psc_parse_error *perr)
{
	const struct psc_probe_spec *sp = spec->probe;
	bool kprobe = spec->kind == PSC_EVENT_KPROBE;
	struct made *m = &pr->made[pr->nr];
	char *cmd = NULL, *sys, *ev, why[300];
	uint64_t id;
	int err, n;

	memset(m, 0, sizeof(*m));
	m->kprobe = kprobe;
	event_name(pr, sp, m->name, sizeof(m->name));
	if (kprobe)
		n = asprintf(&cmd, "%c:%s/%s %s+%llu %s\n", sp->retprobe ? 'r' : 'p', pr->group,
			     m->name, sp->func, (unsigned long long)sp->offset,
			     sp->retprobe ? RET_ARGS : ENTRY_ARGS);
	else if (sp->ref_ctr_offset || sp->fetch_args) /* usdt: its semaphore, its arguments */
		n = asprintf(&cmd, "p:%s/%s %s:0x%llx%s%.0llx%s %s\n", pr->group, m->name,
			     sp->binary, (unsigned long long)sp->file_offset,
			     sp->ref_ctr_offset ? "(0x" : "",
			     (unsigned long long)sp->ref_ctr_offset, sp->ref_ctr_offset ? ")" : "",
			     sp->fetch_args ? sp->fetch_args : "");
	else
		n = asprintf(&cmd, "%c:%s/%s %s:0x%llx %s\n", sp->retprobe ? 'r' : 'p', pr->group,
			     m->name, sp->binary, (unsigned long long)sp->file_offset,
			     sp->retprobe ? RET_ARGS : ENTRY_ARGS);
	if (n < 0)
		return -ENOMEM;
	err = command(pr->tracefs, kprobe, cmd);
	free(cmd);
	if (err) {
		last_error(pr->tracefs, why, sizeof(why));
		if (err == -ENOENT && access(pr->tracefs, F_OK) == 0)
			snprintf(why, sizeof(why), "this kernel has no %s (CONFIG_%s_EVENTS)",
				 control(kprobe), kprobe ? "KPROBE" : "UPROBE");
		if (perr) {
			perr->pos = spec->text_pos;
			snprintf(perr->msg, sizeof(perr->msg), "cannot create %s as %s/%s: %s%s%s",
				 spec->name, pr->group, m->name, strerror(-err), why[0] ? ": " : "",
				 why);
		}
		return err;
	}
	pr->nr++;
	err = read_id(pr->tracefs, pr->group, m->name, &id);
	if (err) {
		if (perr) {
			perr->pos = spec->text_pos;
			snprintf(perr->msg, sizeof(perr->msg),
				 "created %s as %s/%s but cannot read its id: %s", spec->name,
				 pr->group, m->name, strerror(-err));
		}
		return err;
	}
	sys = strdup(pr->group);
	ev = strdup(m->name);
	if (!sys || !ev) {
		free(sys);
		free(ev);
		return -ENOMEM;
	}
	free(spec->sys);
	free(spec->event);
	spec->sys = sys;
	spec->event = ev;
	spec->kind = PSC_EVENT_TRACEPOINT;
	spec->attr.type = PERF_TYPE_TRACEPOINT;
	spec->attr.config = id;
	return 0;
}

int psc_probes__create(struct psc_event_list *list, const struct psc_probes_opts *opts,
		       struct psc_probes **out, struct psc_parse_error *perr)
{
	const char *tracefs, *group;
	struct psc_probes *pr;
	int nr = 0, err = 0;

	if (perr) {
		perr->pos = -1;
		perr->msg[0] = '\0';
	}
	if (!out || !list || !OPTS_VALID(opts, psc_probes_opts))
		return -EINVAL;
	*out = NULL;
	for (int i = 0; i < list->nr; i++)
		nr += list->specs[i].probe && list->specs[i].kind != PSC_EVENT_TRACEPOINT;
	if (!nr)
		return 0;
	tracefs = OPTS_GET(opts, tracefs_dir, NULL);
	if (!tracefs)
		tracefs = psc_tracefs__dir();
	if (!tracefs) {
		if (perr)
			snprintf(perr->msg, sizeof(perr->msg),
				 "tracefs is not mounted: probes are made there");
		return -ENODEV;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr || !(pr->made = calloc((size_t)nr, sizeof(*pr->made)))) {
		free(pr);
		return -ENOMEM;
	}
	group = OPTS_GET(opts, group, NULL);
	if (group)
		snprintf(pr->group, sizeof(pr->group), "%s", group);
	else
		snprintf(pr->group, sizeof(pr->group), GROUP_PREFIX "%d", (int)getpid());
	snprintf(pr->tracefs, sizeof(pr->tracefs), "%s", tracefs);
	for (int i = 0; i < list->nr && !err; i++) {
		struct psc_event_spec *spec = &list->specs[i];

		if (spec->probe && spec->kind != PSC_EVENT_TRACEPOINT)
			err = make_one(pr, spec, perr);
	}
	if (err) {
		psc_probes__delete(pr);
		return err;
	}
	*out = pr;
	return 0;
}

int psc_probes__remove(struct psc_probes *pr)
{
	char cmd[160];
	int ret = 0;

	if (!pr)
		return 0;
	for (int i = pr->nr - 1; i >= 0; i--) {
		struct made *m = &pr->made[i];
		int err;

		if (m->removed)
			continue;
		snprintf(cmd, sizeof(cmd), "-:%s/%s\n", pr->group, m->name);
		err = command(pr->tracefs, m->kprobe, cmd);
		if (err == -ENOENT) /* someone else removed it: gone is what was wanted */
			err = 0;
		if (!err)
			m->removed = true;
		else if (!ret)
			ret = err;
	}
	if (!ret)
		pr_debug("removed the %d probes of %s\n", pr->nr, pr->group);
	return ret;
}

void psc_probes__delete(struct psc_probes *pr)
{
	if (!pr)
		return;
	if (psc_probes__remove(pr))
		pr_warn("could not remove every probe of group %s (see %s/%s)\n", pr->group,
			pr->tracefs, "uprobe_events");
	free(pr->made);
	free(pr);
}

int psc_probes__nr(const struct psc_probes *pr)
{
	return pr ? pr->nr : 0;
}

const char *psc_probes__group(const struct psc_probes *pr)
{
	return pr ? pr->group : NULL;
}

/* "p:perfscope_123/malloc /lib/libc.so.6:0x..." of a process that is gone: its "-:G/E". */
static bool stale_line(const char *line, char *cmd, size_t len)
{
	const char *g = strchr(line, ':'), *slash, *sp;
	char *end;
	long pid;

	if (!g || g - line > 8)
		return false;
	g++;
	slash = strchr(g, '/');
	sp = strpbrk(g, " \t\n");
	if (!slash || (sp && sp < slash) || strncmp(g, GROUP_PREFIX, strlen(GROUP_PREFIX)))
		return false;
	errno = 0;
	pid = strtol(g + strlen(GROUP_PREFIX), &end, 10);
	if (errno || end != slash || pid <= 0 || pid > INT_MAX)
		return false;
	/* alive (even if not ours to signal): not stale; pid reuse leaves a probe, never breaks one
	 */
	if (!kill((pid_t)pid, 0) || errno != ESRCH)
		return false;
	snprintf(cmd, len, "-:%.*s\n", (int)((sp ? sp : g + strlen(g)) - g), g);
	return true;
}

int psc_probes__remove_stale(const char *tracefs)
{
	char path[PATH_MAX], line[PATH_MAX + 256], cmd[256];
	int removed = 0;

	if (!tracefs)
		tracefs = psc_tracefs__dir();
	if (!tracefs)
		return -ENODEV;
	for (int k = 0; k < 2; k++) {
		char(*cmds)[256] = NULL;
		int nr = 0;
		FILE *f;

		if (psc_pathf(path, sizeof(path), "%s/%s", tracefs, control(k)))
			return -ENAMETOOLONG;
		f = fopen(path, "re");
		if (!f)
			continue; /* no kprobes here */
		/* collected first: the file is not written while it is read */
		while (fgets(line, sizeof(line), f)) {
			if (!stale_line(line, cmd, sizeof(cmd)))
				continue;
			char(*n)[256] = realloc(cmds, (size_t)(nr + 1) * sizeof(*cmds));

			if (!n)
				break;
			cmds = n;
			memcpy(cmds[nr++], cmd, sizeof(cmd));
		}
		fclose(f);
		for (int i = 0; i < nr; i++) {
			int err = command(tracefs, k, cmds[i]);

			if (!err)
				removed++;
			else
				pr_warn("cannot remove the stale probe %.*s: %s\n",
					(int)strlen(cmds[i]) - 1, cmds[i], strerror(-err));
		}
		free(cmds);
	}
	return removed;
}
