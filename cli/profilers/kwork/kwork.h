/* kwork: hardirq, softirq and workqueue latency and run time per name, its parts. */
#ifndef PERFSCOPE_CLI_KWORK_H
#define PERFSCOPE_CLI_KWORK_H

#include <stdint.h>

#include "krow.h"
#include "pair.h"

struct ksyms;

enum kw_class { KW_IRQ, KW_SOFTIRQ, KW_WORKQUEUE, KW_NR_CLASSES };
/* The measures of a row (krow.lat[]): queued -> running, running -> done. */
enum { KW_LATENCY, KW_RUNTIME };

/* What each event is to kwork. */
enum kw_role {
	KW_IRQ_ENTRY,
	KW_IRQ_EXIT,
	KW_SI_RAISE,
	KW_SI_ENTRY,
	KW_SI_EXIT,
	KW_WQ_ACTIVATE,
	KW_WQ_START,
	KW_WQ_END,
	KW_NR_ROLES,
};

/* One measure of one class: its pair engine (hardirqs have no latency: NULL). */
struct kw_pair {
	struct pair *pr;
	const char *name; /* "softirq latency" */
};

struct kwork {
	/* options */
	const char *class_text;
	uint64_t than;
	long top;
	const char *top_given;
	bool percpu;
	/* state */
	bool classes[KW_NR_CLASSES];
	int role_idx[KW_NR_ROLES]; /* event index of each role, -1: not traced */
	const struct psc_tp_field *f_id[KW_NR_ROLES]; /* irq, vec or work */
	const struct psc_tp_field *f_name[KW_NR_ROLES]; /* irq name, work function */
	struct kw_pair pairs[KW_NR_CLASSES][2];
	struct krows rows[KW_NR_CLASSES];
	uint64_t coalesced; /* softirq raises while one was pending: the first one counts */
	uint64_t field_errors, over, lost_windows;
	struct ksyms *text_syms; /* work functions' names */
	struct prof *p;
	bool ival;
};

/* kwork_sample.c */
int kwork__sample(struct prof *p, struct kwork *kw, int role, int cpu, const struct psc_sample *s);
extern const struct pair_impl kwork_impl;

#endif
