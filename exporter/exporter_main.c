/* perfscope exporter: flags, opening perf events, dropping privileges, serving until SIGTERM. */
#include "exporter.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>

#include <perfscope/common.h>
#include <perfscope/cpumap.h>
#include <perfscope/suggest.h>

#include "collectors/cpuprof.h"
#include "collectors/perf.h"
#include "cpus.h"
#include "expo.h"
#include "http.h"
#include "exporter_log.h"
#include "exporter_profile.h"
#include "rlimit.h"
#include "webconfig.h"

#define DEFAULT_LISTEN "127.0.0.1:9100"

const char exporter_help[] =
	"usage: perfscope exporter [--web.listen-address=ADDR:PORT] [--web.telemetry-path=PATH]\n"
	"                          [--web.config.file=FILE] [--collector.perf.* flags] [--user=USER]\n"
	"\n"
	"Serves Linux perf counters per CPU to Prometheus with the metric names, labels and HELP\n"
	"texts of node_exporter's perf collector, so existing dashboards and alerts keep working.\n"
	"Counters of one kind are read as one group per CPU, scaled for multiplexing; events this\n"
	"machine cannot count are logged at start and reported by node_perf_event_supported.\n"
	"\n"
	"  --web.listen-address=ADDR   where to listen (default " DEFAULT_LISTEN
	": loopback only;\n"
	"                              ':9100' listens on every address; choose another port\n"
	"                              when node_exporter runs beside it)\n"
	"  --web.telemetry-path=PATH   path of the metrics (default /metrics); '/' is a landing page\n"
	"  --web.config.file=FILE      TLS and basic auth, exporter-toolkit's web-config YAML\n"
	"  --web.max-connections=N     connections held at once; a new one beyond drops the one\n"
	"                              waiting the longest for a complete request (default: what\n"
	"                              the open-files limit leaves, at most 16384)\n"
	"  --web.max-connections-per-address=N  an address (IPv6: a /64) holding more drops its\n"
	"                              own longest-waiting one for a new one; never refused\n"
	"                              (default: a quarter of --web.max-connections, at least 64)\n"
	"  --web.connection-timeout=S  a connection not delivering a complete request within S\n"
	"                              seconds is closed, idle or trickling (default 10)\n"
	"  --collector.perf.cpus=CPUS  CPUs to count on: 0-3,6 or strides 0-7:2 (0,2,4,6)\n"
	"                              (default: every online CPU)\n"
	"  --collector.perf.tracepoint=SYS:NAME   also count a tracepoint (repeatable), exported\n"
	"                              as node_perf_<sys>_<name>_total\n"
	"  --collector.perf.disable-hardware-profilers, --collector.perf.disable-software-profilers,\n"
	"  --collector.perf.disable-cache-profilers   leave a kind of event out (also =true, =false\n"
	"                              and kingpin's --no-collector.perf.disable-hardware-profilers ...)\n"
	"  --collector.perf.hardware-profilers=NAME, --collector.perf.software-profilers=NAME,\n"
	"  --collector.perf.cache-profilers=NAME   count only these (repeatable; node_exporter's\n"
	"                              names: CpuCycles, CpuInstr, ..., PageFault, ContextSwitch,\n"
	"                              ..., L1DataReadHit, ...; see perfscope-exporter(8))\n"
	"  --collector.perf.max-group-size=N  hardware/cache events per group (default 4)\n"
	"  --collector.profile         also serve system-wide CPU profiles at\n"
	"                              /debug/pprof/profile?seconds=N (gzipped pprof, as Go's\n"
	"                              net/http/pprof) for Pyroscope, Parca, Grafana Alloy and\n"
	"                              go tool pprof, from a sampler that is always on:\n"
	"                              go tool pprof -top 'http://HOST:PORT/debug/pprof/profile'\n"
	"  --collector.profile.frequency=HZ  samples per second per CPU (default 19)\n"
	"  --collector.profile.max-seconds=S  longest profile served; a longer request is\n"
	"                              refused with HTTP 400 and the reason (default 60)\n"
	"  --collector.profile.max-stacks=N  distinct (stack, process) entries held over the\n"
	"                              window; samples past it are dropped and counted (default 65536)\n"
	"  --collector.profile.bpf=false  read every sample from the perf rings rather than count\n"
	"                              stacks in the kernel with BPF (the default where it loads)\n"
	"  --user=USER                 when started as root: the user to serve as after the perf\n"
	"                              events are open (default nobody; 'root' keeps root)\n"
	"  --log.level=LEVEL           debug, info, warn or error (default info); debug says why\n"
	"                              each unsupported event is\n"
	"  --collector.perf, --collector.disable-defaults   accepted for node_exporter command\n"
	"                              lines; they change nothing\n"
	"  --version                   print the version and exit\n"
	"\n"
	"Examples:\n"
	"  perfscope exporter\n"
	"  perfscope exporter --web.listen-address=:9101 --collector.perf.tracepoint=sched:sched_switch\n"
	"  perfscope exporter --collector.perf.disable-cache-profilers --web.config.file=web.yml\n"
	"  perfscope exporter --collector.profile --web.listen-address=127.0.0.1:9101\n";

enum {
	OPT_LISTEN = 256,
	OPT_PATH,
	OPT_WEBCONFIG,
	OPT_MAXCONN,
	OPT_TIMEOUT,
	OPT_MAXCONN_ADDR,
	OPT_CPUS,
	OPT_TRACEPOINT,
	OPT_DISABLE_HW,
	OPT_DISABLE_SW,
	OPT_DISABLE_CACHE,
	OPT_NO_DISABLE_HW,
	OPT_NO_DISABLE_SW,
	OPT_NO_DISABLE_CACHE,
	OPT_HW,
	OPT_SW,
	OPT_CACHE,
	OPT_GROUP,
	OPT_USER,
	OPT_LOGLEVEL,
	OPT_PROF_HZ,
	OPT_PROF_MAXSEC,
	OPT_PROF_MAXSTACKS,
	OPT_PROF,
	OPT_NO_PROF,
	OPT_PROF_BPF,
	OPT_NO_PROF_BPF,
	OPT_NOOP,
	OPT_VERSION,
};

static const struct option longopts[] = {
	{ "web.listen-address", required_argument, NULL, OPT_LISTEN },
	{ "web.telemetry-path", required_argument, NULL, OPT_PATH },
	{ "web.config.file", required_argument, NULL, OPT_WEBCONFIG },
	{ "web.max-connections", required_argument, NULL, OPT_MAXCONN },
	{ "web.connection-timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "web.max-connections-per-address", required_argument, NULL, OPT_MAXCONN_ADDR },
	{ "collector.perf.cpus", required_argument, NULL, OPT_CPUS },
	{ "collector.perf.tracepoint", required_argument, NULL, OPT_TRACEPOINT },
	{ "collector.perf.disable-hardware-profilers", optional_argument, NULL, OPT_DISABLE_HW },
	{ "collector.perf.disable-software-profilers", optional_argument, NULL, OPT_DISABLE_SW },
	{ "collector.perf.disable-cache-profilers", optional_argument, NULL, OPT_DISABLE_CACHE },
	/* kingpin's negations of boolean flags */
	{ "no-collector.perf.disable-hardware-profilers", no_argument, NULL, OPT_NO_DISABLE_HW },
	{ "no-collector.perf.disable-software-profilers", no_argument, NULL, OPT_NO_DISABLE_SW },
	{ "no-collector.perf.disable-cache-profilers", no_argument, NULL, OPT_NO_DISABLE_CACHE },
	{ "collector.perf.hardware-profilers", required_argument, NULL, OPT_HW },
	{ "collector.perf.software-profilers", required_argument, NULL, OPT_SW },
	{ "collector.perf.cache-profilers", required_argument, NULL, OPT_CACHE },
	{ "collector.perf.max-group-size", required_argument, NULL, OPT_GROUP },
	{ "collector.profile", optional_argument, NULL, OPT_PROF },
	{ "no-collector.profile", no_argument, NULL, OPT_NO_PROF },
	{ "collector.profile.frequency", required_argument, NULL, OPT_PROF_HZ },
	{ "collector.profile.max-seconds", required_argument, NULL, OPT_PROF_MAXSEC },
	{ "collector.profile.max-stacks", required_argument, NULL, OPT_PROF_MAXSTACKS },
	{ "collector.profile.bpf", optional_argument, NULL, OPT_PROF_BPF },
	{ "no-collector.profile.bpf", no_argument, NULL, OPT_NO_PROF_BPF },
	{ "user", required_argument, NULL, OPT_USER },
	{ "log.level", required_argument, NULL, OPT_LOGLEVEL },
	{ "collector.perf", no_argument, NULL, OPT_NOOP },
	{ "collector.disable-defaults", no_argument, NULL, OPT_NOOP },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct exporter {
	struct perf_collector *pc;
	struct cpuprof *cp; /* --collector.profile */
	_Atomic size_t size_hint;
	struct http_server *_Atomic srv; /* NULL until it is started */
	unsigned int max_conn;
};

struct args {
	const char *listen, *path, *webconfig, *cpus, *user;
	unsigned long max_conn, max_per_addr, timeout_s; /* 0: from the open-files limit */
	long max_group;
	const char **lists[PERF_KIND_NR]; /* allow-lists by kind, tracepoints under TRACEPOINT */
	int nr[PERF_KIND_NR];
	bool disable[PERF_KIND_NR];
	bool profile, profile_bpf, user_given;
	unsigned long profile_hz, profile_max_s, profile_max_stacks;
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("perfscope exporter: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("; see 'perfscope help exporter'\n", stderr);
	return 2;
}

static int push(struct args *a, int kind, const char *v)
{
	const char **grown = realloc(a->lists[kind], (size_t)(a->nr[kind] + 1) * sizeof(*grown));

	if (!grown)
		return -ENOMEM;
	a->lists[kind] = grown;
	grown[a->nr[kind]++] = v;
	return 0;
}

/*
 * kingpin-style booleans: "--flag", "--no-flag" or "--flag=VALUE" with what Go's
 * strconv.ParseBool takes (1, t, T, TRUE, true, True and their false counterparts).
 */
static int parse_bool(const char *opt, const char *v, bool *out)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true", "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false", "False" };

	if (!v) {
		*out = true;
		return 0;
	}
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcmp(v, yes[i]) || !strcmp(v, no[i])) {
			*out = !strcmp(v, yes[i]);
			return 0;
		}
	}
	return usage_error("--%s=%s: expected true or false", opt, v);
}

static int parse_ulong(const char *opt, const char *v, unsigned long lo, unsigned long hi,
		       unsigned long *out)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || n < lo || n > hi)
		return usage_error("--%s=%s: expected a whole number from %lu to %lu", opt, v, lo,
				   hi);
	*out = n;
	return 0;
}

/* Flags with one value (lists, booleans and their negations may be repeated). */
static bool single_valued(int opt)
{
	switch (opt) {
	case OPT_LISTEN:
	case OPT_PATH:
	case OPT_WEBCONFIG:
	case OPT_MAXCONN:
	case OPT_TIMEOUT:
	case OPT_MAXCONN_ADDR:
	case OPT_CPUS:
	case OPT_GROUP:
	case OPT_USER:
	case OPT_LOGLEVEL:
	case OPT_PROF_HZ:
	case OPT_PROF_MAXSEC:
	case OPT_PROF_MAXSTACKS:
		return true;
	default:
		return false;
	}
}

/* "did you mean" the closest of the exporter's flags: they are long and dotted, easy to mistype */
static int unknown_option(const char *opt)
{
	const char *word = opt + strspn(opt, "-");
	size_t len = strcspn(word, "=");
	struct psc_suggest sg;
	char hint[448];

	psc_suggest__init(&sg, word, len);
	for (int i = 0; longopts[i].name; i++) {
		char disp[96];

		snprintf(disp, sizeof(disp), "--%s", longopts[i].name);
		psc_suggest__add(&sg, longopts[i].name, disp);
	}
	psc_suggest__format(&sg, hint, sizeof(hint));
	return usage_error("unknown option '%s'%s", opt, hint);
}

static int parse_args(struct args *a, int argc, char **argv)
{
	bool seen[OPT_NOOP - OPT_LISTEN] = { false };
	int opt, idx, ret;
	unsigned long n;

	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":h", longopts, &idx)) != -1) {
		ret = 0;
		/*
		 * As kingpin does: a flag that takes one value may not be given twice (rather
		 * than the last one silently winning, e.g. a second listen address dropped).
		 */
		if (single_valued(opt)) {
			if (seen[opt - OPT_LISTEN])
				return usage_error(
					"--%s given twice; it takes one value%s",
					longopts[idx].name,
					opt == OPT_LISTEN
						? " (one address: ':PORT' listens on all of them)"
						: "");
			seen[opt - OPT_LISTEN] = true;
		}
		switch (opt) {
		case OPT_LISTEN:
			a->listen = optarg;
			break;
		case OPT_PATH:
			if (optarg[0] != '/' || !strcmp(optarg, "/") || strpbrk(optarg, "?# \t"))
				return usage_error(
					"--web.telemetry-path=%s: expected a path like /metrics (not '/', which is the landing page)",
					optarg);
			a->path = optarg;
			break;
		case OPT_WEBCONFIG:
			a->webconfig = optarg;
			break;
		case OPT_MAXCONN:
			ret = parse_ulong("web.max-connections", optarg, 1, 1000000, &a->max_conn);
			break;
		case OPT_TIMEOUT:
			ret = parse_ulong("web.connection-timeout", optarg, 1, 3600, &a->timeout_s);
			break;
		case OPT_MAXCONN_ADDR:
			ret = parse_ulong("web.max-connections-per-address", optarg, 1, 1000000,
					  &a->max_per_addr);
			break;
		case OPT_CPUS:
			a->cpus = optarg;
			break;
		case OPT_TRACEPOINT:
			ret = push(a, PERF_KIND_TRACEPOINT, optarg) ? 1 : 0;
			break;
		case OPT_DISABLE_HW:
			ret = parse_bool(longopts[idx].name, optarg,
					 &a->disable[PERF_KIND_HARDWARE]);
			break;
		case OPT_DISABLE_SW:
			ret = parse_bool(longopts[idx].name, optarg,
					 &a->disable[PERF_KIND_SOFTWARE]);
			break;
		case OPT_DISABLE_CACHE:
			ret = parse_bool(longopts[idx].name, optarg, &a->disable[PERF_KIND_CACHE]);
			break;
		case OPT_NO_DISABLE_HW:
			a->disable[PERF_KIND_HARDWARE] = false;
			break;
		case OPT_NO_DISABLE_SW:
			a->disable[PERF_KIND_SOFTWARE] = false;
			break;
		case OPT_NO_DISABLE_CACHE:
			a->disable[PERF_KIND_CACHE] = false;
			break;
		case OPT_HW:
			ret = push(a, PERF_KIND_HARDWARE, optarg) ? 1 : 0;
			break;
		case OPT_SW:
			ret = push(a, PERF_KIND_SOFTWARE, optarg) ? 1 : 0;
			break;
		case OPT_CACHE:
			ret = push(a, PERF_KIND_CACHE, optarg) ? 1 : 0;
			break;
		case OPT_GROUP:
			ret = parse_ulong("collector.perf.max-group-size", optarg, 1, 64, &n);
			a->max_group = (long)n;
			break;
		case OPT_USER:
			a->user = optarg;
			a->user_given = true;
			break;
		case OPT_PROF:
			ret = parse_bool(longopts[idx].name, optarg, &a->profile);
			break;
		case OPT_NO_PROF:
			a->profile = false;
			break;
		case OPT_PROF_BPF:
			ret = parse_bool(longopts[idx].name, optarg, &a->profile_bpf);
			break;
		case OPT_NO_PROF_BPF:
			a->profile_bpf = false;
			break;
		case OPT_PROF_HZ:
			ret = parse_ulong("collector.profile.frequency", optarg, 1, 1000,
					  &a->profile_hz);
			break;
		case OPT_PROF_MAXSEC:
			ret = parse_ulong("collector.profile.max-seconds", optarg, 1, 3600,
					  &a->profile_max_s);
			break;
		case OPT_PROF_MAXSTACKS:
			ret = parse_ulong("collector.profile.max-stacks", optarg, 1, 100000000,
					  &a->profile_max_stacks);
			break;
		case OPT_LOGLEVEL:
			if (xlog_parse_level(optarg) < 0)
				return usage_error(
					"--log.level=%s: expected debug, info, warn or error",
					optarg);
			xlog_set_level((enum xlog_level)xlog_parse_level(optarg));
			break;
		case OPT_NOOP:
			break;
		case OPT_VERSION:
			printf("perfscope exporter %s\n", psc_version());
			return -1;
		case 'h':
			fputs(exporter_help, stdout);
			return -1;
		case ':':
			return usage_error("option '%s' needs a value", argv[optind - 1]);
		default:
			return unknown_option(argv[optind - 1]);
		}
		if (ret)
			return ret == 1 ? (fputs("perfscope exporter: out of memory\n", stderr), 1)
					: ret;
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	return 0;
}

/*
 * --user names someone who exists: checked before anything is opened, so the answer is not lost
 * after the start-up log (and no events are opened for nothing). Only root switches users.
 */
static int check_user(const char *user)
{
	if (geteuid() != 0 || !strcmp(user, "root"))
		return 0;
	errno = 0;
	if (getpwnam(user))
		return 0;
	fprintf(stderr,
		"perfscope exporter: --user=%s: no such user%s%s; give an existing user to serve as "
		"(the default is nobody), or --user=root to keep root\n",
		user, errno ? ": " : "", errno ? strerror(errno) : "");
	return 1;
}

/*
 * Root opened the perf events; the server itself needs none of root's powers. The fds stay
 * readable after the switch, which is the point of doing it in this order.
 */
static int drop_privileges(const char *user, bool for_profile)
{
	struct passwd *pw;

	if (geteuid() != 0) {
		xlog(XLOG_INFO, "running as uid %d; no privileges to drop", (int)geteuid());
		return 0;
	}
	if (!strcmp(user, "root")) {
		if (for_profile)
			xlog(XLOG_INFO, "serving as root: --collector.profile names the frames of "
					"every process from /proc/PID (--user=USER to drop root)");
		else
			xlog(XLOG_WARN, "--user=root: serving as root; prefer an unprivileged user");
		return 0;
	}
	errno = 0;
	pw = getpwnam(user);
	if (!pw) {
		fprintf(stderr, "perfscope exporter: --user=%s: no such user%s%s\n", user,
			errno ? ": " : "", errno ? strerror(errno) : "");
		return 1;
	}
	if (pw->pw_uid == 0) {
		xlog(XLOG_WARN, "--user=%s has uid 0: serving as root", user);
		return 0;
	}
	if (setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0) {
		fprintf(stderr, "perfscope exporter: cannot become user %s: %s\n", user,
			strerror(errno));
		return 1;
	}
	if (setuid(0) == 0) {
		fprintf(stderr,
			"perfscope exporter: could regain root after dropping to %s; refusing to serve\n",
			user);
		return 1;
	}
	prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
	xlog(XLOG_INFO, "serving as user %s (uid %d, gid %d)", user, (int)pw->pw_uid,
	     (int)pw->pw_gid);
	return 0;
}

/*
 * One fd per event and CPU adds up (node_exporter's 30 events on 64 CPUs are 1920) past the
 * usual soft limit of 1024 open files; Go's runtime lifts node_exporter's soft limit to the hard
 * one, and so does this. The server polls with epoll, so fds above 1024 are fine.
 */
static void raise_nofile(void)
{
	struct rlimit was;

	if (rlimit__raise_nofile(RLIMIT_NOFILE_HARD, &was) > 0)
		xlog(XLOG_DEBUG, "open files limit raised from %llu to %llu",
		     (unsigned long long)was.rlim_cur, (unsigned long long)was.rlim_max);
}

/* The HTTP server's connections: held, slots, and dropped before a complete request, by why. */
static void http_metrics(struct expo *e, struct exporter *x)
{
	struct http_server *srv = atomic_load(&x->srv);
	struct expo_label reason[3] = { { "reason", "timeout" },
					{ "reason", "slots_full" },
					{ "reason", "per_address" } };
	struct http_stats st;

	if (!srv)
		return;
	http_get_stats(srv, &st);
	expo_family(e, "perfscope_exporter_http_connections", EXPO_GAUGE,
		    "Connections the HTTP server holds open.");
	expo_u64(e, NULL, 0, st.open);
	expo_family(e, "perfscope_exporter_http_connection_slots", EXPO_GAUGE,
		    "Connections the HTTP server holds at most (--web.max-connections).");
	expo_u64(e, NULL, 0, x->max_conn);
	expo_family(
		e, "perfscope_exporter_http_connections_dropped", EXPO_COUNTER,
		"Connections closed before they delivered a complete request: no complete "
		"request within --web.connection-timeout (timeout), or the one waiting the "
		"longest dropped for a new connection when every slot was taken (slots_full) or "
		"its address held more than --web.max-connections-per-address (per_address).");
	expo_u64(e, &reason[0], 1, st.dropped_timeout);
	expo_u64(e, &reason[1], 1, st.dropped_full);
	expo_u64(e, &reason[2], 1, st.dropped_per_address);
}

static int scrape(void *ctx, enum expo_format fmt, char **buf, size_t *len)
{
	struct exporter *x = ctx;
	struct expo_label version = { "version", psc_version() };
	struct expo e;
	int ret;

	expo_init(&e, fmt, atomic_load(&x->size_hint));
	ret = perf_collector_scrape(x->pc, &e, NULL);
	if (x->cp)
		cpuprof_metrics(x->cp, &e);
	http_metrics(&e, x);
	expo_family(&e, "perfscope_exporter_build_info", EXPO_GAUGE,
		    "A metric with a constant '1' value labeled by the perfscope version.");
	expo_u64(&e, &version, 1, 1);
	*buf = expo_finish(&e, len);
	if (ret || !*buf) {
		free(*buf);
		*buf = NULL;
		return ret ? ret : -ENOMEM;
	}
	/* Room for a little growth, so the next scrape allocates once. */
	atomic_store(&x->size_hint, *len + *len / 8 + 256);
	return 0;
}

/*
 * Connection slots by default: one per open file the limit still allows once the perf events and
 * the listening socket are open, less a reserve for what the server opens besides (its epoll and
 * inter-thread fds, the log), as node_exporter is bounded by its open-files limit alone. At most
 * SLOTS_MAX: each connection held costs about 4 KiB (5,000 held: RSS 5.7 -> 26.9 MiB), and an
 * idle one is dropped for a new one anyway once they are all taken.
 */
#define SLOTS_RESERVE 32
#define SLOTS_MIN 64
#define SLOTS_MAX 16384

static unsigned long default_slots(void)
{
	struct rlimit rl;
	unsigned long open = 0;
	struct dirent *d;
	DIR *dir;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return SLOTS_MAX;
	dir = opendir("/proc/self/fd");
	while (dir && (d = readdir(dir)))
		open += d->d_name[0] != '.';
	if (dir)
		closedir(dir);
	if (rl.rlim_cur < open + SLOTS_RESERVE + SLOTS_MIN)
		return SLOTS_MIN;
	return rl.rlim_cur - open - SLOTS_RESERVE < SLOTS_MAX ? rl.rlim_cur - open - SLOTS_RESERVE
							      : SLOTS_MAX;
}

static void free_args(struct args *a)
{
	for (int k = 0; k < PERF_KIND_NR; k++)
		free(a->lists[k]);
}

int exporter_main(int argc, char **argv)
{
	struct args a = { .listen = DEFAULT_LISTEN,
			  .path = "/metrics",
			  .user = "nobody",
			  .timeout_s = 10,
			  .max_group = 4,
			  .profile_bpf = true,
			  .profile_hz = CPUPROF_DEFAULT_HZ,
			  .profile_max_s = CPUPROF_DEFAULT_MAX_SECONDS,
			  .profile_max_stacks = CPUPROF_DEFAULT_MAX_STACKS };
	struct perf_config cfg = { 0 };
	struct exporter x = { 0 };
	struct webconfig *wc = NULL;
	struct psc_cpumap *cpus = NULL;
	struct http_server *srv = NULL;
	struct http_opts hopts;
	char err[2048], bound[80];
	sigset_t sigs;
	int ret, fd = -1, sig = 0;

	ret = parse_args(&a, argc, argv);
	if (ret) {
		free_args(&a);
		return ret < 0 ? 0 : ret;
	}
	xlog_attach_library();

	/* Everything that can be a usage error is checked before anything is opened. */
	if (http_check_listen(a.listen, err, sizeof(err))) {
		ret = usage_error("--web.listen-address: %s", err);
		goto out;
	}
	cpus = exporter_parse_cpus(a.cpus, true, err, sizeof(err));
	if (!cpus) {
		fprintf(stderr, "perfscope exporter: %s\n", err);
		ret = 2;
		goto out;
	}
	if (a.webconfig) {
		wc = webconfig_load(a.webconfig, err, sizeof(err));
		if (!wc) {
			fprintf(stderr, "perfscope exporter: --web.config.file: %s\n", err);
			ret = 2;
			goto out;
		}
		if (wc->tls && wc->client_auth != WC_NO_CLIENT_CERT && !wc->client_ca_pem) {
			fprintf(stderr,
				"perfscope exporter: --web.config.file: client_auth_type without client_ca_file: libmicrohttpd asks clients for certificates only when it has CAs to name; add client_ca_file\n");
			ret = 2;
			goto out;
		}
		if (wc->http2)
			xlog(XLOG_DEBUG, "http2 in the web config: perfscope serves HTTP/1.1");
	}
	/*
	 * Symbols of other users' processes need their /proc/PID/maps (and /proc/PID/root for a
	 * container's files and JIT maps), which only root reads: the profile collector keeps root
	 * unless told otherwise.
	 */
	if (a.profile && !a.user_given)
		a.user = "root";
	ret = check_user(a.user);
	if (ret)
		goto out;
	cfg.cpus = cpus;
	for (int k = 0; k < PERF_KIND_TRACEPOINT; k++) {
		cfg.disable[k] = a.disable[k];
		cfg.allow[k] = a.lists[k];
		cfg.nr_allow[k] = a.nr[k];
	}
	cfg.tracepoints = a.lists[PERF_KIND_TRACEPOINT];
	cfg.nr_tracepoints = a.nr[PERF_KIND_TRACEPOINT];
	cfg.max_group_size = (int)a.max_group;

	/* Block the stop signals before any thread starts, so that only sigwait sees them. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	raise_nofile();
	x.pc = perf_collector_new(&cfg, err, sizeof(err));
	if (!x.pc) {
		fprintf(stderr, "perfscope exporter: %s\n", err);
		ret = errno == EINVAL ? 2 : 1;
		goto out;
	}
	xlog(XLOG_INFO, "counting %d perf events on %d CPU(s), read as %d group(s)",
	     perf_collector_nr_open(x.pc), psc_cpumap__nr(cpus), perf_collector_nr_groups(x.pc));
	if (a.profile) {
		struct cpuprof_config c = { .cpus = cpus,
					    .hz = (unsigned int)a.profile_hz,
					    .max_seconds = (unsigned int)a.profile_max_s,
					    .max_stacks = a.profile_max_stacks,
					    .no_bpf = !a.profile_bpf };

		x.cp = exporter_profile_open(&c);
		if (!x.cp) {
			ret = errno == EINVAL ? 2 : 1;
			goto out;
		}
	}
	fd = http_listen(a.listen, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "perfscope exporter: %s\n", err);
		ret = 1;
		goto out;
	}
	http_describe_listen(fd, bound, sizeof(bound));
	ret = drop_privileges(a.user, a.profile && !a.user_given);
	if (ret)
		goto out;
	if (!a.max_conn)
		a.max_conn = default_slots();
	/*
	 * A quarter of the slots, but never below 64: a few slots shared by a NAT's clients are
	 * not an address hoarding them (below 64 slots in all, there is no limit per address).
	 */
	if (!a.max_per_addr)
		a.max_per_addr = a.max_conn / 4 > 64 ? a.max_conn / 4 : 64;
	x.max_conn = (unsigned int)a.max_conn;
	xlog(XLOG_DEBUG, "%lu connection slots, %lu per address", a.max_conn, a.max_per_addr);
	hopts = (struct http_opts){ .telemetry_path = a.path,
				    .webconfig = wc,
				    .max_connections = (unsigned int)a.max_conn,
				    .max_per_address = (unsigned int)a.max_per_addr,
				    .timeout_s = (unsigned int)a.timeout_s,
				    .max_request_bytes = 16384,
				    /*
				     * libmicrohttpd splits the connection limit between its
				     * threads; a thread left with none never stops.
				     */
				    .threads = a.max_conn < 2 ? 1 : 2,
				    .scrape = scrape,
				    .ctx = &x };
	if (x.cp) {
		exporter_profile_hooks(&hopts, x.cp);
		ret = cpuprof_start(x.cp);
		if (ret) {
			fprintf(stderr, "perfscope exporter: cannot start the profile sampler: %s\n",
				strerror(-ret));
			ret = 1;
			goto out;
		}
	}
	srv = http_start(fd, &hopts, err, sizeof(err));
	atomic_store(&x.srv, srv);
	fd = -1;
	if (!srv) {
		fprintf(stderr, "perfscope exporter: %s\n", err);
		ret = 1;
		goto out;
	}
	xlog(XLOG_INFO, "listening on %s%s, metrics at %s", bound, wc && wc->tls ? " (TLS)" : "",
	     a.path);
	while (sigwait(&sigs, &sig) == 0 && sig != SIGINT && sig != SIGTERM)
		;
	xlog(XLOG_INFO, "stopping on signal %d", sig);
	ret = 0;
out:
	cpuprof_cancel_all(x.cp);
	http_stop(srv);
	cpuprof_delete(x.cp);
	if (fd >= 0)
		close(fd);
	perf_collector_delete(x.pc);
	webconfig_free(wc);
	psc_cpumap__put(cpus);
	free_args(&a);
	return ret;
}
