/* bpf_filter: checks the kernel can run profile's sample filters, loads bpf/filter.bpf.c. */
#include "bpf_filter.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perfscope/bpf.h>
#include <perfscope/evsel.h>

static const char *const names[FILTER_NR] = {
	[FILTER_PID] = "exclude_pid",	  [FILTER_NR_RUNNING] = "nr_running_min/max",
	[FILTER_IRQS] = "irqs_disabled",  [FILTER_RESCHED] = "tif_need_resched",
	[FILTER_POLICY] = "sched_policy", [FILTER_PRIO] = "prio",
};

const char *bpf_filter__name(enum filter_reason r)
{
	return r < FILTER_NR ? names[r] : "?";
}

#ifdef HAVE_BPF_SKEL
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "filter.skel.h"

struct bpf_filter {
	struct filter_bpf *skel;
};

/* struct sname has a member mname in the kernel's BTF */
static bool has_member(const struct btf *btf, const char *sname, const char *mname)
{
	int id = btf__find_by_name_kind(btf, sname, BTF_KIND_STRUCT);
	const struct btf_type *t;
	const struct btf_member *m;

	if (id < 0)
		return false;
	t = btf__type_by_id(btf, id);
	m = btf_members(t);
	for (int i = 0; i < btf_vlen(t); i++, m++)
		if (!strcmp(btf__name_by_offset(btf, m->name_off), mname))
			return true;
	return false;
}

static int missing(char *why, size_t whylen, enum filter_reason r, const char *what)
{
	snprintf(why, whylen, "--%s cannot work on this kernel: %s", names[r], what);
	return -ENOENT;
}

int bpf_filter__check(struct filter_cfg *cfg, char *why, size_t whylen)
{
	struct btf *btf;
	int err = 0;

	if (!cfg->on)
		return 0;
#if !defined(__x86_64__) && !defined(__i386__)
	/* the interrupt flag's place in pt_regs, and TIF_NEED_RESCHED's bit, are known for x86 only
	 */
	if (cfg->on & (1u << FILTER_IRQS))
		return missing(why, whylen, FILTER_IRQS, "perfscope reads it on x86 only");
	if (cfg->on & (1u << FILTER_RESCHED))
		return missing(why, whylen, FILTER_RESCHED, "perfscope knows its bit on x86 only");
#else
	/* x86: bit 3 since 2.6 and in the generic TIF bits of 6.17; not in BTF (a #define) */
	cfg->resched_bit = 3;
#endif
	btf = btf__load_vmlinux_btf();
	if (!btf) {
		snprintf(why, whylen,
			 "the sample filters need the kernel's BTF (/sys/kernel/btf/vmlinux, "
			 "CONFIG_DEBUG_INFO_BTF): %s",
			 strerror(errno));
		return -ENOENT;
	}
	if ((cfg->on & (1u << FILTER_RESCHED)) && !has_member(btf, "task_struct", "thread_info"))
		err = missing(why, whylen, FILTER_RESCHED,
			      "its task_struct has no thread_info (CONFIG_THREAD_INFO_IN_TASK)");
	else if ((cfg->on & (1u << FILTER_NR_RUNNING)) &&
		 !(has_member(btf, "sched_entity", "cfs_rq") &&
		   (has_member(btf, "cfs_rq", "rq") || has_member(btf, "cfs_rq", "nr_queued") ||
		    has_member(btf, "cfs_rq", "nr_running"))))
		err = missing(why, whylen, FILTER_NR_RUNNING,
			      "a task's runqueue is not reachable (no sched_entity.cfs_rq: "
			      "CONFIG_FAIR_GROUP_SCHED)");
	else if ((cfg->on & (1u << FILTER_POLICY)) && !has_member(btf, "task_struct", "policy"))
		err = missing(why, whylen, FILTER_POLICY, "its task_struct has no policy");
	else if ((cfg->on & (1u << FILTER_PRIO)) && !has_member(btf, "task_struct", "prio"))
		err = missing(why, whylen, FILTER_PRIO, "its task_struct has no prio");
	btf__free(btf);
	return err;
}

/* libbpf's messages go nowhere: each failure is explained through why instead. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

struct bpf_filter *bpf_filter__new(const struct filter_cfg *cfg, char *why, size_t whylen)
{
	struct bpf_filter *f = calloc(1, sizeof(*f));
	libbpf_print_fn_t old;
	int err;

	if (!f)
		return NULL;
	old = libbpf_set_print(quiet);
	f->skel = filter_bpf__open();
	err = f->skel ? 0 : -errno;
	if (!err) {
		memcpy((void *)&f->skel->rodata->filter_cfg, cfg, sizeof(*cfg));
		err = filter_bpf__load(f->skel);
	}
	libbpf_set_print(old);
	if (err) {
		char buf[512];

		snprintf(why, whylen, "cannot load the sample-filter BPF program: %s",
			 psc_strerror_bpf(err, "profile's sample filters", buf, sizeof(buf)));
		bpf_filter__delete(f);
		errno = -err;
		return NULL;
	}
	return f;
}

void bpf_filter__delete(struct bpf_filter *f)
{
	if (!f)
		return;
	filter_bpf__destroy(f->skel);
	free(f);
}

int bpf_filter__attach(struct bpf_filter *f, struct psc_evsel *evsel, char *why, size_t whylen)
{
	int err = psc_evsel__attach_bpf(evsel, bpf_program__fd(f->skel->progs.filter_sample), NULL);

	if (err)
		psc_strerror_bpf(err, psc_evsel__name(evsel), why, whylen);
	return err;
}

void bpf_filter__counts(const struct bpf_filter *f, struct filter_counts *out)
{
	*out = f->skel->bss->filter_counts;
}

int bpf_filter__prog_fd(const struct bpf_filter *f)
{
	return bpf_program__fd(f->skel->progs.filter_sample);
}

#else /* built with -Dbpf=disabled: every call says so */

struct bpf_filter {
	int unused;
};

int bpf_filter__check(struct filter_cfg *cfg, char *why, size_t whylen)
{
	if (!cfg->on)
		return 0;
	snprintf(why, whylen,
		 "the sample filters are unavailable: this perfscope was built without its BPF "
		 "programs (meson -Dbpf=disabled, or no clang and bpftool when it was built)");
	return -ENOTSUP;
}

struct bpf_filter *bpf_filter__new(const struct filter_cfg *cfg, char *why, size_t whylen)
{
	if (bpf_filter__check((struct filter_cfg *)cfg, why, whylen) == 0)
		snprintf(why, whylen, "no filter asked for");
	errno = ENOTSUP;
	return NULL;
}

void bpf_filter__delete(struct bpf_filter *f)
{
	free(f);
}

int bpf_filter__attach(struct bpf_filter *f, struct psc_evsel *evsel, char *why, size_t whylen)
{
	return -ENOTSUP;
}

void bpf_filter__counts(const struct bpf_filter *f, struct filter_counts *out)
{
	memset(out, 0, sizeof(*out));
}

int bpf_filter__prog_fd(const struct bpf_filter *f)
{
	return -1;
}
#endif
