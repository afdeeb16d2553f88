/* libFuzzer target for psc_parse_events() over a small fake sysfs PMU and tracefs tree. */
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <perfscope/parse.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[PATH_MAX], pmu_dir[PATH_MAX + 8], tracefs_dir[PATH_MAX + 8];

static void put(const char *rel, const char *text)
{
	char path[PATH_MAX * 2];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (char *s = path + strlen(root) + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs(text, f);
	fclose(f);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void cleanup(void)
{
	nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	snprintf(root, sizeof(root), "/tmp/psc_fuzz_parse_XXXXXX");
	if (!mkdtemp(root))
		abort();
	atexit(cleanup);
	snprintf(pmu_dir, sizeof(pmu_dir), "%s/pmu", root);
	snprintf(tracefs_dir, sizeof(tracefs_dir), "%s/tracing", root);
	put("pmu/msr/type", "9\n");
	put("pmu/msr/format/event", "config:0-63\n");
	put("pmu/msr/events/tsc", "event=0x00\n");
	put("pmu/power/type", "23\n");
	put("pmu/power/format/event", "config:0-7\n");
	put("pmu/power/events/energy-pkg", "event=0x02\n");
	put("pmu/power/events/energy-pkg.scale", "2.3283064365386962890625e-10\n");
	put("pmu/power/events/energy-pkg.unit", "Joules\n");
	put("pmu/cpu/type", "4\n");
	put("pmu/cpu/format/event", "config:0-7\n");
	put("pmu/cpu/format/umask", "config:8-15\n");
	put("pmu/cpu/format/split", "config:0-3,8-11\n");
	put("pmu/cpu/format/ldlat", "config1:0-15\n");
	put("pmu/cpu/format/bad", "config9:0-3\n");
	put("pmu/cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3\n");
	put("pmu/cpu/events/broken", "event=0x3c,,nope=1\n");
	put("tracing/events/enable", "0\n");
	put("tracing/events/sched/sched_switch/id", "316\n");
	put("tracing/events/sched/sched_wakeup/id", "318\n");
	put("tracing/events/sched/sched_wakeup_new/id", "317\n");
	put("tracing/events/syscalls/sys_enter_read/id", "600\n");
	put("tracing/events/syscalls/sys_exit_read/id", "601\n");
	put("tracing/events/broken/badid/id", "x\n");
	return 0;
}

/* Every answer is either a non-empty list, or NULL with a message and a position inside the input.
 */
static void check(const char *str, size_t len, const char *tfs)
{
	PSC_OPTS(psc_parse_opts, opts, .pmu_dir = pmu_dir, .tracefs_dir = tfs);
	struct psc_parse_error err;
	struct psc_event_list *list = NULL;
	int ret = psc_parse_events(str, &opts, &list, &err);

	if (!ret) {
		if (!list || list->nr <= 0)
			abort();
		for (int i = 0; i < list->nr; i++) {
			const struct psc_event_spec *s = &list->specs[i];

			if (!s->name || s->leader < 0 || s->leader > i || s->text_pos < 0 ||
			    s->text_pos + s->text_len > (int)len)
				abort();
		}
		psc_event_list__delete(list);
		return;
	}
	if (list || ret >= 0 || !err.msg[0] || err.pos < 0 || err.pos > (int)len ||
	    !memchr(err.msg, '\0', sizeof(err.msg)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *str = malloc(size + 1);

	if (!str)
		return 0;
	memcpy(str, data, size);
	str[size] = '\0';
	check(str, strlen(str), tracefs_dir);
	check(str, strlen(str), "/nonexistent/tracefs");
	free(str);
	return 0;
}
