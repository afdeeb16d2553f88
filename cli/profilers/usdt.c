/* perfscope usdt list|add|del: the USDT (SDT) probes of a binary, added as uprobe trace events
 * named PROVIDER:NAME, as perf-prof's usdt adds them, and removed again. */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <perfscope/perfscope.h>

#include "json.h"
#include "profiler.h"
#include "sdt_notes.h"

static const char usdt_help[] =
	"usage: perfscope usdt {list|add|del} [[PROVIDER:]NAME@]BINARY[@ADDR][' ARGS'] ...\n"
	"\n"
	"User statically-defined tracing: the probes a program or library declares in its\n"
	".note.stapsdt section (DTRACE_PROBE, SystemTap's sys/sdt.h). add makes each one a uprobe\n"
	"trace event PROVIDER:NAME (group PROVIDER) that every profiler takes like any tracepoint,\n"
	"with its semaphore counted by the kernel (so probes guarded by one, as Python's, fire) and\n"
	"its arguments fetched as arg1, arg2, ... (s32, u64: the SDT sizes and signs); del removes\n"
	"them. A probe stays until del removes it. In any profiler's -e,\n"
	"usdt:PROVIDER:NAME@BINARY makes one for the run only (quote a path a filter follows).\n"
	"\n"
	"  list      the probes, one PROVIDER:NAME@BINARY a line (-v: address, semaphore,\n"
	"            arguments and the uprobe_events command add writes)\n"
	"  add       make them uprobe events; one that exists already is an error\n"
	"  del       remove them (closing what traces them first)\n"
	"  PROVIDER:NAME  which probes (shell patterns; NAME alone: any provider); all if omitted\n"
	"  BINARY    a path, a library name such as libc.so.6, or a program in $PATH\n"
	"  @ADDR     only the probe at this address, where a name recurs\n"
	"  ' ARGS'   after a space, the fetch arguments to use instead of arg1..argN, with each %s\n"
	"            the next SDT argument's location: 'filename=+0(%s):string'\n"
	"      --format F  text (default) or json (list: one object per probe and line)\n"
	"  -v, --verbose   list: each probe's details\n"
	"\n"
	"Examples:\n"
	"  perfscope usdt list /usr/bin/python3.11\n"
	"  perfscope usdt list -v 'python:gc*@/usr/bin/python3.11'\n"
	"  perfscope usdt add python:gc__start@/usr/bin/python3.11 && perfscope stat -e python:gc__start -- /usr/bin/python3.11 -c 'import gc; gc.collect()'; perfscope usdt del python:gc__start@/usr/bin/python3.11\n"
	"  perfscope trace -e 'usdt:python:gc__start@\"/usr/bin/python3.11\"/arg1==1/' -- /usr/bin/python3.11 -c 'import gc; gc.collect(1)'\n"
	"  perfscope usdt add 'python:function__entry@/usr/bin/python3.11 file=+0(%s):string func=+0(%s):string' && perfscope trace -e python:function__entry -- /usr/bin/python3.11 -c pass; perfscope usdt del python:function__entry@/usr/bin/python3.11\n"
	"\n"
	"Exit status: 0; 1 when no probe matches, or the kernel refuses a command (the reason is\n"
	"printed); 2 on a usage error.\n";

struct usdt_run {
	const char *action, *glob_prov, *glob_name, *user_args, *typed_bin;
	char path[PATH_MAX];
	uint64_t addr; /* 0: any */
	int verbose, matched, failed;
	enum out_format format;
	struct out *out;
	const char *tracefs;
};

/* One command to uprobe_events, appended (O_TRUNC would clear every probe). */
static int uprobe_command(const char *tracefs, const char *cmd)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, cmd, strlen(cmd));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

/* "p:PROV/NAME PATH:0xOFF(0xSEM) ARGS" */
static int usdt_cmd(struct usdt_run *r, const struct usdt_note *n, char *buf, size_t len,
		    int *dropped)
{
	char args[1024], sem[32] = "";
	int err = usdt__fetch_args(n, r->user_args, args, sizeof(args), dropped);

	if (err)
		return err;
	if (n->sem_off)
		snprintf(sem, sizeof(sem), "(0x%llx)", (unsigned long long)n->sem_off);
	if (snprintf(buf, len, "p:%s/%s %s:0x%llx%s%s%s", n->provider, n->name, r->path,
		     (unsigned long long)n->pc_off, sem, args[0] ? " " : "", args) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static void usdt_list_one(struct usdt_run *r, const struct usdt_note *n, const char *cmd)
{
	if (r->format == FORMAT_JSON) {
		struct json j;

		json__begin(&j, r->out);
		json__key(&j, "provider");
		json__str(&j, n->provider);
		json__key(&j, "name");
		json__str(&j, n->name);
		json__key(&j, "binary");
		json__str(&j, r->path);
		json__key(&j, "address");
		json__hex(&j, n->pc);
		json__key(&j, "semaphore");
		json__hex(&j, n->sem);
		json__key(&j, "arguments");
		json__str(&j, n->args);
		json__key(&j, "uprobe");
		json__str(&j, cmd);
		json__end_line(&j);
		return;
	}
	out__printf(r->out, "%s:%s@%s\n", n->provider, n->name, r->typed_bin);
	if (r->verbose)
		out__printf(r->out,
			    "    Addr: 0x%016llx, Base: 0x%016llx, Semaphore: 0x%016llx\n"
			    "    Arguments: %s\n    Uprobe: %s\n",
			    (unsigned long long)n->pc, (unsigned long long)n->base,
			    (unsigned long long)n->sem, n->args, cmd);
}

static int usdt_one(const struct usdt_note *n, void *ctx)
{
	struct usdt_run *r = ctx;
	char cmd[2048], why[64] = "";
	int dropped = 0, err;

	if ((r->glob_prov && fnmatch(r->glob_prov, n->provider, 0)) ||
	    (r->glob_name && fnmatch(r->glob_name, n->name, 0)) || (r->addr && r->addr != n->pc))
		return 0;
	r->matched++;
	err = usdt_cmd(r, n, cmd, sizeof(cmd), &dropped);
	if (err) {
		fprintf(stderr, "perfscope usdt: %s:%s: %s\n", n->provider, n->name,
			err == -EOPNOTSUPP ? "a %s names an argument uprobes cannot fetch"
			: err == -EINVAL   ? "more %s than the probe has arguments"
					   : strerror(-err));
		r->failed++;
		return 0;
	}
	if (dropped)
		fprintf(stderr,
			"perfscope usdt: %s:%s: %d of its arguments (%s) left out: uprobes cannot "
			"fetch them\n",
			n->provider, n->name, dropped, n->args);
	if (!strcmp(r->action, "list")) {
		usdt_list_one(r, n, cmd);
		return 0;
	}
	if (!strcmp(r->action, "del"))
		snprintf(cmd, sizeof(cmd), "-:%s/%s", n->provider, n->name);
	err = uprobe_command(r->tracefs, cmd);
	if (!err) {
		fprintf(stderr, "perfscope usdt: %s %s:%s\n",
			!strcmp(r->action, "add") ? "added" : "removed", n->provider, n->name);
		return 0;
	}
	if (err == -EBUSY)
		snprintf(why, sizeof(why), " (a perf event still traces it; stop that first)");
	else if (err == -EEXIST)
		snprintf(why, sizeof(why), " (added already; 'usdt del' it first)");
	else if (err == -ENOENT && !strcmp(r->action, "del"))
		snprintf(why, sizeof(why), " (not added)");
	fprintf(stderr, "perfscope usdt: cannot %s %s:%s: %s%s\n", r->action, n->provider, n->name,
		strerror(-err), why);
	r->failed++;
	return 0;
}

/* [[PROVIDER:]NAME@]BINARY[@ADDR][ ARGS] into r; the string is cut in place. */
static int usdt_spec(struct usdt_run *r, char *spec)
{
	char *sp = strchr(spec, ' '), *at[3] = { spec }, *colon, *end;
	int nr = 1;

	r->user_args = NULL;
	if (sp) {
		*sp = '\0';
		r->user_args = sp + 1 + strspn(sp + 1, " ");
		if (!*r->user_args)
			r->user_args = NULL;
	}
	for (char *c = strchr(spec, '@'); c && nr < 3; c = strchr(c + 1, '@')) {
		*c = '\0';
		at[nr++] = c + 1;
	}
	r->glob_prov = r->glob_name = NULL;
	r->addr = 0;
	r->typed_bin = nr == 1 ? at[0] : at[1];
	if (nr > 1) {
		colon = strchr(at[0], ':');
		if (colon) {
			*colon = '\0';
			r->glob_prov = at[0];
			r->glob_name = colon + 1;
		} else {
			r->glob_name = at[0];
		}
	}
	if (nr == 3) {
		errno = 0;
		r->addr = strtoull(at[2], &end, 0);
		if (errno || *end || !r->addr) {
			fprintf(stderr,
				"perfscope usdt: '@%s' is no address; give it as in @0x42512a "
				"(see 'perfscope usdt list -v')\n",
				at[2]);
			return 2;
		}
	}
	if (!*r->typed_bin) {
		fprintf(stderr,
			"perfscope usdt: expected a binary, as in python:gc__start@python3.11\n");
		return 2;
	}
	return 0;
}

static int usdt_run(int argc, char **argv)
{
	struct usdt_run r = { 0 };
	struct cli_opts o;
	int ret, skipped = 0;

	ret = cli_opts_parse(&o, argc, argv, CLI_OPT_FORMAT | CLI_OPT_POSITIONAL, usdt_help);
	if (ret)
		return ret == 1 ? 0 : ret;
	if (!o.positional || !o.positional[1] ||
	    (strcmp(o.positional[0], "list") && strcmp(o.positional[0], "add") &&
	     strcmp(o.positional[0], "del"))) {
		fprintf(stderr,
			"perfscope usdt: give list, add or del and a binary, as in 'perfscope "
			"usdt list /usr/bin/python3.11'; see 'perfscope help usdt'\n");
		return 2;
	}
	cli_setup_log(o.verbose);
	r.action = o.positional[0];
	r.verbose = o.verbose;
	r.format = o.format;
	if (strcmp(r.action, "list")) {
		r.tracefs = psc_tracefs__mount();
		if (!r.tracefs) {
			fprintf(stderr,
				"perfscope usdt: tracefs is not mounted and cannot be: %s\n",
				strerror(errno));
			return 1;
		}
	}
	r.out = out__new(STDOUT_FILENO, 0);
	if (!r.out)
		return 1;
	for (int i = 1; o.positional[i] && !ret; i++) {
		char *spec = strdup(o.positional[i]);
		int err, before = r.matched;

		if (!spec || (ret = usdt_spec(&r, spec))) {
			free(spec);
			ret = ret ? ret : 1;
			break;
		}
		err = psc_probe__find_binary(r.typed_bin, r.path, sizeof(r.path));
		if (!err)
			err = usdt__for_each(r.path, usdt_one, &r, &skipped);
		if (err)
			fprintf(stderr, "perfscope usdt: %s '%s': %s\n",
				err == -EINVAL ? "no ELF file" : "no binary", r.typed_bin,
				err == -EINVAL ? "a USDT probe is in a program or a library"
					       : strerror(-err));
		else if (skipped)
			fprintf(stderr,
				"perfscope usdt: %s: %d probes skipped: their address is in "
				"no loaded segment of the file\n",
				r.path, skipped);
		if (!err && r.matched == before && !r.glob_name)
			fprintf(stderr, "perfscope usdt: %s has no USDT probe (no .note.stapsdt)\n",
				r.path);
		else if (!err && r.matched == before)
			fprintf(stderr, "perfscope usdt: no USDT probe of %s matches '%s%s%s'\n",
				r.path, r.glob_prov ? r.glob_prov : "", r.glob_prov ? ":" : "",
				r.glob_name);
		if (err || r.matched == before)
			r.failed++;
		free(spec);
	}
	if (out__flush(r.out) == 0 && !ret && r.failed)
		ret = 1;
	out__delete(r.out);
	return ret;
}

const struct profiler profiler_usdt = {
	.name = "usdt",
	.summary = "list the USDT probes of a binary, add them as trace events, remove them",
	.help = usdt_help,
	.run = usdt_run,
};
